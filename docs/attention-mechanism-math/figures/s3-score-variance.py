"""Variance of unscaled and scaled attention scores against the head width.

n = 1,000 independent (q, k) pairs per width, d_k = 4 ... 1024. Isotropic:
entries independent N(0, 1). Anisotropic: the same average variance per
entry, all of it in a quarter of the coordinates (variance 4 there).
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(31)
n = 1000
widths = 2 ** np.arange(2, 11)  # 4 ... 1024
raw, scaled, aniso = [], [], []
for d_k in widths:
    q, k = rng.normal(size=(2, n, 1, d_k))  # n pairs, one query and key each
    s = np.einsum("nid,nid->n", q, k)  # raw scores q . k, (n,)
    raw.append(s.var())
    # The kernel's own scale: attend from q to two keys, k and a zero key
    # (score 0). The log of the weight ratio is then the scaled score.
    two_keys = np.concatenate([k, np.zeros_like(k)], axis=1)  # (n, 2, d_k)
    _, w = lm.scaled_dot_product_attention(q, two_keys, np.zeros((n, 2, 1)))
    scaled.append(np.log(w[:, 0, 0] / w[:, 0, 1]).var())
    spread = np.where(np.arange(d_k) < d_k // 4, 2.0, 0.0)
    qa, ka = rng.normal(size=(2, n, d_k)) * spread
    aniso.append((np.einsum("nd,nd->n", qa, ka) / np.sqrt(d_k)).var())

fig, ax = plt.subplots(figsize=(6.4, 4.0))
ax.loglog(widths, widths, ":", color="0.5", lw=1, label="$d_k$ (theory)")
ax.loglog(
    widths, raw, "o-", color="tab:red", label=r"$\mathbf{q}^\top\mathbf{k}$"
)
ax.loglog(
    widths,
    scaled,
    "s-",
    color="tab:blue",
    label=r"$\mathbf{q}^\top\mathbf{k}/\sqrt{d_k}$, unit-variance entries",
)
ax.loglog(
    widths,
    aniso,
    "^--",
    color="tab:orange",
    label=r"$\mathbf{q}^\top\mathbf{k}/\sqrt{d_k}$, variance 4 in a quarter",
)
ax.set_xticks(widths, [str(w) for w in widths])
ax.set_xlabel("head width $d_k$", fontsize=10)
ax.set_ylabel("variance of the score", fontsize=10)
ax.tick_params(labelsize=9)
ax.set_ylim(0.5, 2048)
ax.legend(frameon=False, fontsize=9, loc="upper left")
ax.set_title(
    "The scale fixes the variance at 1 only for unit-variance entries",
    fontsize=10,
)
fig.tight_layout()
