"""Which positions reach the last of 48 tokens after 1, 2 and 3 layers.

Two causal patterns with the same local window of l = 6 keys (the query and
the 5 before it): the window alone, and the window plus every l-th earlier
position (a variant of the strided pattern of Child et al. 2019, whose local
part max(0, i - l) ... i has l + 1 keys). Reach after L layers is the last
row of the L-th boolean power of the mask.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

T, l = 48, 6
local = lm.sliding_window_mask(T, window=l)
i, j = np.indices((T, T))
strided = lm.causal_mask(T) & ((i - j) % l == 0)
patterns = [
    ("local window, $l=6$ keys", local),
    ("local window + every $l$-th position", local | strided),
]

fig, axes = plt.subplots(2, 1, figsize=(6.4, 3.6), sharex=True)
cmap = ListedColormap(["0.93", "tab:blue"])
for ax, (title, mask) in zip(axes, patterns):
    m = mask.astype(int)
    rows, power = [], np.eye(T, dtype=int)
    for _ in range(3):
        power = np.minimum(power @ m, 1)  # boolean matrix product
        rows.append(power[-1])
    ax.imshow(np.array(rows), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    ax.set_yticks(range(3), ["1 layer", "2 layers", "3 layers"], fontsize=9)
    for r, row in enumerate(rows):
        ax.text(T - 0.3, r, f" {row.sum()} of {T}", va="center", fontsize=9)
    ax.set_title(title, fontsize=10, loc="left")
    ax.set_xticks(np.arange(-0.5, T, 1), minor=True)
    ax.grid(which="minor", axis="x", color="white", lw=0.6)
    ax.tick_params(which="minor", length=0)
    ax.tick_params(labelsize=9)
axes[-1].set_xticks(range(0, T, 6))
axes[-1].set_xlabel(
    "key position $j$ (blue: reaches the output at position 47)", fontsize=10
)
fig.tight_layout()
