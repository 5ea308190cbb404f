"""Attention weights change with the input; a convolution's do not.

The toy of section 1.2: one causal attention head over six positions run
on two random inputs, beside the Toeplitz matrix of a causal three-tap
convolution (weights 0.5, 0.3, 0.2 at lags 0, 1, 2), which is the same
for every input.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(12)
T, d = 6, 4
X1, X2 = rng.normal(size=(2, T, d))  # two inputs over the same positions
W_Q, W_K = 2 * rng.normal(size=(2, d, d)) / np.sqrt(d)


def weights(X):
    """Causal attention weights (T, T) of the toy head on input X."""
    _, A = lm.scaled_dot_product_attention(X @ W_Q, X @ W_K, X, causal=True)
    return A


taps = np.array([0.5, 0.3, 0.2])  # w_0, w_1, w_2
lag = -lm.relative_positions(T)  # i - j
conv = np.where((lag >= 0) & (lag < 3), taps[np.clip(lag, 0, 2)], 0.0)

panels = [
    (weights(X1), "attention,\ninput 1"),
    (weights(X2), "attention,\ninput 2"),
    (conv, "convolution,\nany input"),
]
visible = lm.causal_mask(T)
fig, axes = plt.subplots(1, 3, figsize=(6.4, 2.9), constrained_layout=True)
for ax, (M, title) in zip(axes, panels):
    im = ax.imshow(
        np.where(visible, M, np.nan),
        cmap="viridis",
        vmin=0.0,
        vmax=1.0,
        interpolation="nearest",
    )
    for i, j in zip(*np.nonzero(visible)):
        ax.text(
            j,
            i,
            "0" if M[i, j] == 0 else f"{M[i, j]:.1f}".lstrip("0"),
            ha="center",
            va="center",
            fontsize=9,
            color="white" if M[i, j] < 0.55 else "black",
        )
    ax.set_title(title, fontsize=10)
    ax.set_xticks(range(T))
    ax.set_yticks(range(T))
    ax.tick_params(labelsize=9)
    ax.set_xlabel("key j", fontsize=9)
axes[0].set_ylabel("query i", fontsize=9)
fig.colorbar(im, ax=axes, shrink=0.8, label="weight")
