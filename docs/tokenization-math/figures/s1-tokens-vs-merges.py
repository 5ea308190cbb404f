"""Corpus A's length in tokens after 0 to 8 BPE merges, with bytes per token.

Each step is labeled with the token its merge creates; the second axis
shows the compression T_0 / T_k that the same merges buy.
"""

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
merges = lm.bpe_train(corpus_a, 8)


def corpus_tokens(prefix):
    """Tokens of corpus A under a prefix of the merge list."""
    return sum(
        len(lm.bpe_encode_word(w, prefix)) * c for w, c in corpus_a.items()
    )


k = np.arange(len(merges) + 1)
T = np.array([corpus_tokens(merges[:j]) for j in k])
names = [(m.left + m.right).decode() for m in merges]

fig, (ax, ax2) = plt.subplots(
    2, 1, figsize=(6.0, 5.0), sharex=True, height_ratios=(2, 1)
)
ax.plot(k, T, color="tab:blue", marker="o", lw=2)
for j in k:
    ax.annotate(
        str(T[j]),
        (j, T[j]),
        textcoords="offset points",
        xytext=(0, 7),
        ha="center",
        fontsize=9.5,
        color="tab:blue",
    )
for j, name in enumerate(names, start=1):
    ax.annotate(
        f"+{name}",
        (j, T[j]),
        textcoords="offset points",
        xytext=(0, -16),
        ha="center",
        fontsize=9.5,
        color="0.3",
    )
ax.set(
    ylabel="tokens $T_k$",
    title="Corpus A (99 bytes): length after each merge",
    ylim=(0, 112),
)
rho = T[0] / T
ax2.plot(k, rho, color="tab:orange", marker="s", ms=4, lw=2)
for j in (0, len(k) - 1):
    ax2.annotate(
        f"{rho[j]:.2f}",
        (j, rho[j]),
        textcoords="offset points",
        xytext=(0, 7),
        ha="center",
        fontsize=9.5,
        color="tab:orange",
    )
ax2.set(
    xlabel="merges applied k  (vocabulary size 256 + k)",
    ylabel="bytes per token",
    xticks=k,
    ylim=(0, 3.2),
)
fig.tight_layout()
