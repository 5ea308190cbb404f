"""Norm and similarity dashboard of an input table.

The table learns a shared (unigram) direction.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(8)  # the same toy run as in section 8.3
V, d = 40, 16
E = rng.normal(scale=0.3, size=(V, d))
W = rng.normal(scale=0.3, size=(V, d))  # frozen head
unigram = 1 / np.arange(1, V + 1)
unigram /= unigram.sum()
xs = np.repeat(np.arange(V), 50)
ys = np.where(
    rng.random(xs.size) < 0.5,
    (xs + 1) % V,
    rng.choice(V, size=xs.size, p=unigram),
)
counts = np.zeros((V, V))
np.add.at(counts, (xs, ys), 1)
log = []
for _step in range(201):
    log.append(lm.norm_report(E))
    E -= 40.0 * (50 * lm.softmax(E @ W.T) - counts) @ W / xs.size
curve = {k: np.array([r[k] for r in log]) for k in log[0]}
steps = np.arange(len(log))

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6.4, 3.6))
ax1.plot(steps, curve["norm_mean"], color="tab:blue", label="mean row norm")
ax1.fill_between(
    steps,
    curve["norm_mean"] - curve["norm_std"],
    curve["norm_mean"] + curve["norm_std"],
    color="tab:blue",
    alpha=0.2,
    label="± std",
)
ax1.plot(
    steps,
    curve["mean_row_norm"],
    color="tab:orange",
    label="norm of the mean row",
)
ax1.set_xlabel("training step")
ax1.set_ylabel("length")
ax1.legend(frameon=False, fontsize=8)
ax2.plot(steps, curve["anisotropy"], color="tab:green")
ax2.set_xlabel("training step")
ax2.set_ylabel("mean pairwise cosine")
fig.suptitle("Embedding dashboard: rows grow in a common direction")
fig.tight_layout()
