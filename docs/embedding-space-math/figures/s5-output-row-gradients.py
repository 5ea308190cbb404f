"""One softmax step in 2-D.

The target row is pulled along h, the other rows pushed against it.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

# output rows w_0, w_1, w_2
W = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5]])
h = np.array([1.0, 0.5])  # hidden state
y = 1  # target token
lr = 1.0
step = -lr * lm.output_row_grad(h, W, y)  # (V, d): the SGD update of each row
p = lm.softmax(W @ h)

fig, ax = plt.subplots(figsize=(6.4, 4.2))
arrow = dict(angles="xy", scale_units="xy", scale=1, width=0.008)
ax.quiver(0, 0, *h, color="black", label="hidden state $h$", **arrow)
colors = ["tab:blue", "tab:orange", "tab:purple"]
for j, (w, s, c) in enumerate(zip(W, step, colors)):
    role = "target" if j == y else "other"
    ax.quiver(0, 0, *w, color=c, alpha=0.45, **arrow)
    ax.quiver(
        *w,
        *s,
        color=c,
        label=f"$w_{j}$ ({role}, $p_{j}$={p[j]:.2f}) and its step",
        **arrow,
    )
    ax.plot(*(w + s), "o", color=c, markersize=4)
ax.axhline(0, color="0.85", lw=0.8)
ax.axvline(0, color="0.85", lw=0.8)
ax.set_xlim(-1.6, 1.6)
ax.set_ylim(-0.9, 1.6)
ax.set_aspect("equal")
ax.set_xlabel("coordinate 1")
ax.set_ylabel("coordinate 2")
ax.set_title(
    r"Step $-\eta\,(p_j - 1[j=y])\,h$ on each output row ($\eta = 1$)"
)
ax.legend(loc="lower left", fontsize=8, frameon=False)
