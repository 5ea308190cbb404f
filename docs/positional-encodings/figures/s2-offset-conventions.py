"""The two offset conventions for six positions, side by side.

Left: key minus query, j - i (lm.relative_positions; Shaw, T5).
Right: query minus key, i - j (Transformer-XL, ALiBi). The keys a causal
model can see (j <= i) are outlined.
"""

import llmmath as lm
import matplotlib.pyplot as plt
from matplotlib.patches import Polygon

T = 6
R = lm.relative_positions(T)  # R[i, j] = j - i
panels = [
    (R, "key minus query: $j-i$\n(Shaw, T5, relative_positions)"),
    (-R, "query minus key: $i-j$\n(Transformer-XL, ALiBi)"),
]
# outline of the causal region j <= i (lower triangle with diagonal)
stairs = [(-0.5, -0.5)]
for i in range(T):
    stairs += [(i + 0.5, i - 0.5), (i + 0.5, i + 0.5)]
stairs += [(-0.5, T - 0.5)]

fig, axes = plt.subplots(1, 2, figsize=(7.4, 4.1), constrained_layout=True)
for ax, (M, title) in zip(axes, panels):
    im = ax.imshow(
        M, cmap="RdBu_r", vmin=-(T - 1), vmax=T - 1, interpolation="nearest"
    )
    for i in range(T):
        for j in range(T):
            color = "white" if abs(M[i, j]) >= 3 else "black"
            ax.text(j, i, M[i, j], ha="center", va="center", color=color)
    ax.add_patch(Polygon(stairs, closed=True, fill=False, lw=2, ec="black"))
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("key position j")
    ax.set_xticks(range(T))
    ax.set_yticks(range(T))
axes[0].set_ylabel("query position i")
fig.colorbar(im, ax=axes, shrink=0.85, label="offset")
fig.suptitle("One Toeplitz matrix, two signs (outlined: the keys $j \\leq i$)")
