"""One token repeated in every slot: the scores under three position schemes.

Learned rows added to the input, an ALiBi bias on the scores, and RoPE on
queries and keys; 16 positions, causal (keys after the query left blank).
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(1)
T, d, d_k = 16, 16, 8
x = rng.normal(size=d)  # the same token vector in every slot
X = np.tile(x, (T, 1))  # (T, d)
W_q, W_k = rng.normal(size=(2, d, d_k)) / np.sqrt(d)
P = 0.8 * rng.normal(size=(T, d))  # learned position rows (random here)


def scores(Q, K):
    return Q @ K.T / np.sqrt(d_k)


added = scores((X + P) @ W_q, (X + P) @ W_k)
alibi = scores(X @ W_q, X @ W_k) + lm.alibi_bias(4, T)[1]  # slope 1/16
rope = scores(lm.apply_rope(X @ W_q), lm.apply_rope(X @ W_k))

panels = [
    (added, "learned rows\nadded to input"),
    (alibi, "ALiBi bias\non scores"),
    (rope, "RoPE rotating\nq and k"),
]
allowed = lm.causal_mask(T)
# Drawn 6.6 in wide (not 9.6): on a 390 px phone the figure is squeezed to the
# text column, and its labels must stay legible there (issue #54).
fig, axes = plt.subplots(1, 3, figsize=(6.6, 3.1), constrained_layout=True)
for ax, (S, title) in zip(axes, panels):
    im = ax.imshow(
        np.where(allowed, S, np.nan), cmap="viridis", interpolation="nearest"
    )
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("key position j")
    ax.set_xticks(range(0, T, 5))
    ax.set_yticks(range(0, T, 5))
    bar = fig.colorbar(im, ax=ax, location="bottom", shrink=0.9, aspect=12)
    bar.ax.tick_params(labelsize=9)
    bar.ax.locator_params(nbins=4)
axes[0].set_ylabel("query position i")
fig.suptitle(
    "Same token in every slot: only the relative schemes\n"
    "give constant diagonals",
    fontsize=11,
)
