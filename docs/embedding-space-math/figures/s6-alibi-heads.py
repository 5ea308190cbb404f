"""ALiBi biases of a steep and a shallow head, on one color scale.

Heads 0 and 7 of 8, over 12 positions.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

n_heads, T = 8, 12
bias = lm.alibi_bias(n_heads, T)  # (8, 12, 12)
slopes = lm.alibi_slopes(n_heads)  # 1/2, 1/4, ..., 1/256
allowed = lm.causal_mask(T)  # the causal mask hides j > i: drawn blank

fig, axes = plt.subplots(1, 2, figsize=(7.4, 3.5), constrained_layout=True)
for ax, h in zip(axes, [0, n_heads - 1]):
    shown = np.where(allowed, bias[h], np.nan)
    im = ax.imshow(
        shown,
        cmap="viridis",
        vmin=bias.min(),
        vmax=0.0,
        interpolation="nearest",
    )
    ax.set_title(f"head {h}: slope m = 1/{round(1 / slopes[h])}")
    ax.set_xlabel("key position j")
    ax.set_xticks(range(0, T, 2))
    ax.set_yticks(range(0, T, 2))
axes[0].set_ylabel("query position i")
fig.colorbar(im, ax=axes, shrink=0.85, label="bias $-m\\,(i-j)$")
fig.suptitle(
    "ALiBi: the steep head fades with distance, the shallow head barely does"
)
