"""Attention outputs lie in the convex hull of the value rows: six 2-D
values (a pentagon and one point inside it), the outputs of 300 random
queries at the default scale and with scores five times sharper.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(2024)
angles = np.pi / 2 + 2 * np.pi * np.arange(5) / 5
corners = np.stack([np.cos(angles), np.sin(angles)], axis=1) * [2.0, 1.6]
V = np.concatenate([corners, [[0.3, -0.2]]])  # (T_k, d_v) = (6, 2)
d_k = 4
K = rng.normal(size=(6, d_k))
Q = rng.normal(size=(300, d_k))

default, _ = lm.scaled_dot_product_attention(Q, K, V)
sharp, _ = lm.scaled_dot_product_attention(Q, K, V, scale=5 / np.sqrt(d_k))

fig, ax = plt.subplots(figsize=(6.4, 4.2))
hull = np.concatenate([corners, corners[:1]])
ax.fill(hull[:, 0], hull[:, 1], color="0.93", zorder=0)
ax.plot(hull[:, 0], hull[:, 1], color="0.45", lw=1, zorder=1)
ax.scatter(
    sharp[:, 0],
    sharp[:, 1],
    s=9,
    color="tab:orange",
    alpha=0.7,
    label="scores 5x sharper",
    zorder=2,
)
ax.scatter(
    default[:, 0],
    default[:, 1],
    s=9,
    color="tab:blue",
    alpha=0.7,
    label="default scale $1/\\sqrt{d_k}$",
    zorder=3,
)
ax.scatter(
    V[:, 0], V[:, 1], s=60, marker="D", color="black", label="values", zorder=4
)
for j, (x, y) in enumerate(V):
    dx, dy = (0.12, 0.08) if j < 5 else (0.1, -0.22)
    ax.annotate(f"$v_{j}$", (x + dx, y + dy), fontsize=12)
ax.set_xlim(-2.5, 2.6)
ax.set_ylim(-1.7, 2.1)
ax.set_xlabel("value coordinate 0", fontsize=11)
ax.set_ylabel("value coordinate 1", fontsize=11)
ax.tick_params(labelsize=10)
ax.legend(
    frameon=False,
    fontsize=10,
    loc="upper center",
    bbox_to_anchor=(0.5, -0.16),
    ncol=3,
)
ax.set_title(
    "Every output is an average of the values: it stays in their hull",
    fontsize=11,
)
fig.tight_layout()
