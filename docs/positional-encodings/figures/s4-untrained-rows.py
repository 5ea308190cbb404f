"""Row norms of a learned position table after a toy training run.

Only positions below L = 10 ever occur, so rows 10-15 get no gradient:
Adam leaves them at their initial values, AdamW's decoupled weight decay
shrinks them by (1 - lr * wd) per step. Same toy as section 4.2.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

T_max, d, L = 16, 8, 10  # table rows, width, trained length
K, lr, wd = 2000, 1e-2, 0.1  # steps, learning rate, AdamW weight decay
rng = np.random.default_rng(42)
P0 = rng.normal(scale=0.02, size=(T_max, d))  # small init, std 0.02
Y = rng.normal(scale=0.5, size=(T_max, d))  # toy target row per position
lengths = rng.integers(1, L + 1, size=(K, 4))  # 4 sequences per step


def grad(P, lens):
    """Gradient of the mean of 0.5 ||P[p] - Y[p]||^2 over the batch."""
    pos = np.concatenate([np.arange(n) for n in lens])
    G = (lm.lookup(P, pos) - lm.lookup(Y, pos)) / pos.size
    g = np.zeros_like(P)
    np.add.at(g, pos, G)  # scatter-add: only looked-up rows
    return g


def train(decay):
    """Adam (decay=0) or AdamW (decay=wd), PyTorch's update rule."""
    P, m, v = P0.copy(), np.zeros_like(P0), np.zeros_like(P0)
    b1, b2, eps = 0.9, 0.999, 1e-8
    for k, lens in enumerate(lengths, start=1):
        g = grad(P, lens)
        P *= 1 - lr * decay  # decoupled weight decay
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        P -= lr * (m / (1 - b1**k)) / (np.sqrt(v / (1 - b2**k)) + eps)
    return P


norm = {
    "initial": np.linalg.norm(P0, axis=1),
    "Adam": np.linalg.norm(train(0.0), axis=1),
    "AdamW": np.linalg.norm(train(wd), axis=1),
}
p = np.arange(T_max)
fig, ax = plt.subplots(figsize=(6.8, 3.9), constrained_layout=True)
ax.axvspan(L - 0.5, T_max - 0.5, color="0.92", zorder=0)
ax.plot(p, norm["initial"], "_", color="0.35", ms=14, mew=2, label="initial")
ax.plot(p, norm["Adam"], "o", color="tab:blue", ms=6, label="after Adam")
ax.plot(p, norm["AdamW"], "s", color="tab:orange", ms=5, label="after AdamW")
ax.set_yscale("log")
ax.set_xticks(p)
ax.set_xlabel("position p (row of the table)")
ax.set_ylabel(r"row norm $\|P_{p,:}\|$ (log scale)")
shrink = (1 - lr * wd) ** K
ax.text(
    L + 2.5,
    0.25,
    f"never used: no gradient\nAdamW: x {shrink:.3f} of initial",
    ha="center",
    fontsize=9,
)
ax.text(L / 2 - 0.5, 0.25, "used in training (p < L)", ha="center")
ax.legend(loc="center left", fontsize=8, frameon=False)
ax.set_title(
    f"Toy table, {K} steps: rows past L = {L} frozen (Adam) or shrunk (AdamW)"
)
