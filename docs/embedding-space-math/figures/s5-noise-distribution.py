"""Negative-sampling noise.

Raising counts to the 3/4 power moves mass from frequent to rare words.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

# toy unigram counts, most frequent first
counts = np.array([1000, 300, 100, 30, 10, 1])
ranks = np.arange(len(counts))
p_unigram = lm.noise_distribution(counts, power=1.0)
p_noise = lm.noise_distribution(counts, power=0.75)

fig, ax = plt.subplots(figsize=(6.4, 3.6))
ax.bar(
    ranks - 0.2,
    p_unigram,
    width=0.4,
    color="tab:blue",
    label="power 1 (unigram)",
)
ax.bar(
    ranks + 0.2,
    p_noise,
    width=0.4,
    color="tab:orange",
    label="power 0.75 (word2vec)",
)
ax.set_yscale("log")
ax.set_xticks(ranks, [f"w{r}\n({c})" for r, c in zip(ranks, counts)])
ax.set_xlabel("word (count)")
ax.set_ylabel("sampling probability (log scale)")
ax.set_title("Noise distribution for negative sampling")
ax.legend(frameon=False)
