"""One blockwise pass over 12 keys in 4 blocks of 3, for 3 queries.

Top: the scores S (3 queries x 12 keys), rounded to one decimal so the
numbers drawn are the numbers used; thick lines separate the key blocks.
Bottom: after each block j, the running max m and normalizer l of each
query row, computed by lm.online_softmax_stats on the prefix of the row that
ends with block j. A shaded tile marks a block that raised the max, so the
normalizer carried in was rescaled by exp(m - m') before the block's terms
were added. The last column equals (max S, sum exp(S - max S)).
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(8)
n_q, n_blocks, b = 3, 4, 3
S = np.round(rng.normal(scale=1.5, size=(n_q, n_blocks * b)), 1)
stats = [
    lm.online_softmax_stats(S[:, : b * (j + 1)], block_size=b)
    for j in range(n_blocks)
]
m = np.stack([s[0] for s in stats], axis=1)  # (n_q, n_blocks)
ell = np.stack([s[1] for s in stats], axis=1)
raised = np.zeros_like(m, dtype=bool)
raised[:, 1:] = m[:, 1:] > m[:, :-1]

fig, (top, bot) = plt.subplots(
    2,
    1,
    figsize=(6.4, 5.2),
    layout="constrained",
    gridspec_kw={"height_ratios": [1, 1.25]},
)
top.imshow(S, cmap="RdBu_r", vmin=-5, vmax=5, aspect="auto")
for i in range(n_q):
    for j in range(S.shape[1]):
        top.text(j, i, f"{S[i, j]:.1f}", ha="center", va="center", fontsize=9)
for j in range(1, n_blocks):
    top.axvline(j * b - 0.5, color="black", lw=2.5)
top.set_xticks(range(S.shape[1]))
top.set_yticks(range(n_q))
top.tick_params(labelsize=9, length=2)
top.set_xlabel("key", fontsize=10)
top.set_ylabel("query", fontsize=10)
top.set_title("scores $S$, read in key blocks of 3", fontsize=11)

bot.imshow(raised.astype(int), cmap="Greys", vmin=0, vmax=5, aspect="auto")
for i in range(n_q):
    for j in range(n_blocks):
        bot.text(
            j,
            i,
            f"m = {m[i, j]:.1f}\nℓ = {ell[i, j]:.2f}",
            ha="center",
            va="center",
            fontsize=9,
        )
for j in range(1, n_blocks):
    bot.axvline(j - 0.5, color="black", lw=2.5)
for i in range(1, n_q):
    bot.axhline(i - 0.5, color="white", lw=2)
bot.set_xticks(range(n_blocks), [f"after block {j + 1}" for j in range(4)])
bot.set_yticks(range(n_q))
bot.tick_params(labelsize=9, length=2)
bot.set_ylabel("query", fontsize=10)
bot.set_title(
    "running max $m$ and normalizer $\\ell$ (shaded: the max rose)",
    fontsize=11,
)
