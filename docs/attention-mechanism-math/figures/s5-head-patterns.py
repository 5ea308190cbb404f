"""Per-head attention weights of one constructed 4-head causal layer.

Eight tokens of width 16: columns 0-1 place token i on a circle at angle
0.5 i, column 2 is a constant 1, columns 3-15 are random content. Heads 0-2
read only the circle and the constant (previous token, same token, first
token); head 3 reads only the content, with random projections. All four
run through one call of lm.multi_head_attention, causal.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

T, d, H = 8, 16, 4
dh = d // H
rng = np.random.default_rng(55)
angle = 0.5 * np.arange(T)
X = np.zeros((T, d))
X[:, 0], X[:, 1], X[:, 2] = np.cos(angle), np.sin(angle), 1.0
X[:, 3:] = rng.normal(size=(T, d - 3))

beta = 40.0  # sharpness of the three positional heads
c, s = np.cos(0.5), np.sin(0.5)
w_q, w_k = np.zeros((d, d)), np.zeros((d, d))
# head 0: query at angle 0.5 (i - 1), key at 0.5 j -> previous token
w_q[:2, 0:2] = beta * np.array([[c, -s], [s, c]])
w_k[:2, 0:2] = np.eye(2)
# head 1: query and key at the same angle -> same token
w_q[:2, 4:6] = beta * np.eye(2)
w_k[:2, 4:6] = np.eye(2)
# head 2: a constant query (1, 0) against the key angles -> first token
w_q[2, 8] = beta
w_k[:2, 8:10] = np.eye(2)
# head 3: random projections of the content columns only
w_q[3:, 12:] = rng.normal(size=(d - 3, dh))
w_k[3:, 12:] = rng.normal(size=(d - 3, dh))
w_v, w_o = rng.normal(size=(2, d, d)) / np.sqrt(d)

out, weights = lm.multi_head_attention(X, w_q, w_k, w_v, w_o, H, causal=True)

titles = [
    "head 0: previous token",
    "head 1: same token",
    "head 2: first token",
    "head 3: content (random)",
]
fig, axes = plt.subplots(2, 2, figsize=(6.4, 6.2), constrained_layout=True)
for h, ax in enumerate(axes.flat):
    im = ax.imshow(weights[h], cmap="viridis", vmin=0, vmax=1)
    ax.set_title(titles[h], fontsize=10)
    ax.set_xticks(range(0, T, 2))
    ax.set_yticks(range(0, T, 2))
    ax.tick_params(labelsize=9)
for ax in axes[1]:
    ax.set_xlabel("key j", fontsize=10)
for ax in axes[:, 0]:
    ax.set_ylabel("query i", fontsize=10)
cbar = fig.colorbar(im, ax=axes, shrink=0.8, label="weight A[h, i, j]")
cbar.ax.tick_params(labelsize=9)
