"""ALiBi attention mass by distance, at the training length and at 4x.

8 heads, L = 512 and L' = 2048, the last query of each sequence. Left:
weight per distance with zero content scores (log scale). Right: mass
within distance, random content scores (q, k ~ N(0, 1), d_k = 64).
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

H, L, d_k = 8, 512, 64
slopes = lm.alibi_slopes(H)
heads = [(0, "tab:blue"), (3, "tab:green"), (6, "tab:orange"), (7, "tab:red")]
rng = np.random.default_rng(63)
q = rng.normal(size=(1, d_k))
K = rng.normal(size=(4 * L, d_k))


def last_row_bias(T):
    """Bias row of the last query, (H, 1, T): -m_h (T - 1 - j)."""
    return -slopes[:, None, None] * np.arange(T - 1, -1, -1)


def mass_by_distance(T, content):
    """Weights of the last query, (H, T), index = distance i - j."""
    keys = K[-T:] if content else np.zeros((T, d_k))
    query = q if content else np.zeros((1, d_k))
    _, w = lm.scaled_dot_product_attention(
        query, keys, np.zeros((T, 1)), bias=last_row_bias(T)
    )
    return w[:, 0, ::-1]


fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.8, 3.6))
for h, color in heads:
    label = f"m = 1/{round(1 / slopes[h])}"
    for T, style in ((4 * L, "-"), (L, "--")):
        w0 = mass_by_distance(T, content=False)[h]
        ax1.semilogy(np.arange(T), w0, style, color=color, lw=1.1)
        cum = np.cumsum(mass_by_distance(T, content=True)[h])
        ax2.plot(np.arange(T), cum, style, color=color, lw=1.1)
    ax1.plot([], [], color=color, label=label)
for ax in (ax1, ax2):
    ax.axvline(L, color="0.5", linestyle=":", lw=1)
    ax.set_xlabel("distance i - j from the last query")
    ax.set_xticks([0, 512, 1024, 1536, 2048])
ax1.set_ylim(1e-6, 1)
ax1.set(ylabel="attention weight", title="zero content: weight per distance")
ax2.set(ylabel="mass within distance", title="random content: cumulative")
ax2.set_ylim(0, 1.02)
ax1.plot([], [], "k-", lw=1.1, label="L' = 2048 (4x)")
ax1.plot([], [], "k--", lw=1.1, label="L = 512 (1x)")
ax1.legend(frameon=False, fontsize=7, loc="upper right")
ax2.text(560, 0.55, "dotted: training\nlength 512", fontsize=8)
fig.suptitle(
    "Steep heads see the same distances at 4x; only the two shallowest "
    "put mass past 512",
    fontsize=9,
)
fig.tight_layout()
