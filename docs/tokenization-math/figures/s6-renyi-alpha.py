"""Rényi efficiency against alpha for two tokenizations of corpus A.

Corpus A in single bytes (no merges) and after its 8 BPE merges. Top:
efficiency normalized by the observed types (tokenization-scorer's
default); bottom: by the vocabulary size, 256 and 264 (the paper's
normalizer). The dotted line marks alpha = 2.5.
"""

from collections import Counter

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

corpus_a = {
    "low": 5,
    "lower": 2,
    "lowest": 3,
    "newer": 6,
    "wider": 4,
    "new": 2,
}


def token_counts(merges):
    """Counts of the token types of corpus A under a merge list."""
    counts = Counter()
    for w, c in corpus_a.items():
        for t in lm.bpe_encode_word(w, merges):
            counts[t] += c
    return np.array(list(counts.values()))


merges = lm.bpe_train(corpus_a, 8)
tokenizers = [
    ("bytes, no merges", token_counts([]), 256, "tab:blue", "-"),
    ("8 merges", token_counts(merges), 264, "tab:orange", "--"),
]
alphas = np.linspace(0.0, 10.0, 201)

fig, axes = plt.subplots(2, 1, figsize=(6.0, 6.4), sharex=True)
for ax, by_vocab in zip(axes, (False, True)):
    for name, c, n_v, color, ls in tokenizers:
        size = n_v if by_vocab else None
        e = [lm.renyi_efficiency(c, a, vocab_size=size) for a in alphas]
        e25 = lm.renyi_efficiency(c, 2.5, vocab_size=size)
        label = f"{name}: {e25:.4f} at 2.5"
        ax.plot(alphas, e, color=color, lw=2, ls=ls, label=label)
    ax.axvline(2.5, color="0.4", lw=1, ls=":")
    norm = "vocabulary size, 256 and 264" if by_vocab else "observed types"
    ax.set_title(f"normalized by {norm}", fontsize=11)
    ax.legend(frameon=False, fontsize=10, loc="upper right")
    ax.set_ylabel("Rényi efficiency $E_\\alpha$", fontsize=11)
    ax.tick_params(labelsize=10)
axes[-1].set_xlabel("order $\\alpha$", fontsize=11)
fig.tight_layout()
