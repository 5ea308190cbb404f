"""How many segmentations a string of n characters has, on a log scale.

Every substring of at most L characters is a piece. The count N(n) runs
the recursion N(m) = N(m - 1) + ... + N(m - L) of
lm.count_bounded_segmentations; for L >= n it is 2^(n - 1), every inner
gap cut or not. Each bounded curve grows like r^n, with r the largest
root of x^L = x^(L-1) + ... + 1 (printed in the legend).
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

n = np.arange(1, 61)
fig, ax = plt.subplots(figsize=(6.4, 4.0))
series = [
    (2, "tab:blue"),
    (3, "tab:orange"),
    (4, "tab:green"),
    (16, "tab:purple"),
]
for L, color in series:
    counts = [lm.count_bounded_segmentations(int(m), L) for m in n]
    # growth rate: the ratio of two consecutive counts far out
    far = lm.count_bounded_segmentations(401, L)
    rate = far / lm.count_bounded_segmentations(400, L)
    ax.semilogy(
        n,
        np.array(counts, dtype=float),
        color=color,
        lw=2,
        label=f"L = {L}  (growth {rate:.6f} per character)",
    )
ax.semilogy(
    n,
    2.0 ** (n - 1),
    color="black",
    lw=1,
    ls="--",
    label="every substring a piece: $2^{n-1}$",
)
n20 = lm.count_bounded_segmentations(20, 16)
ax.annotate(
    f"n = 20, L = 16: {n20:,}\n(not $2^{{19}}$ = {2**19:,})",
    (20, n20),
    xytext=(22, 30),
    fontsize=8,
    arrowprops={"arrowstyle": "->", "color": "0.4"},
)
n50 = lm.count_bounded_segmentations(50, 4)
ax.plot([50], [n50], "o", color="tab:green", ms=5)
ax.annotate(
    f"n = 50, L = 4: {n50:.4e}",
    (50, n50),
    xytext=(36, 1e7),
    fontsize=8,
    arrowprops={"arrowstyle": "->", "color": "0.4"},
)
ax.set(
    xlabel="string length n (characters)",
    ylabel="segmentations N(n)",
    title="Segmentations when every substring of length at most L is a piece",
    xlim=(1, 60),
)
ax.legend(frameon=False, loc="upper left", fontsize=8)
fig.tight_layout()
