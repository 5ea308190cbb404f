"""§7.1: RoPE turns each coordinate pair by its own angle per position.

Left: pairs 0 and 1 of one 8-d vector at positions 0..6 (theta = 1, 0.1).
Right: the angle theta_k * p of every pair of a 64-d head at three positions.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

d, T = 8, 7
q = np.tile([1.0, 0.4], d // 2)  # every pair starts at (1, 0.4)
rotated = lm.apply_rope(np.tile(q, (T, 1)), np.arange(T))  # (7, 8) rows
theta = lm.rope_frequencies(d)  # 1, 0.1, 0.01, 0.001

fig, (ax1, ax2) = plt.subplots(
    1, 2, figsize=(7.6, 3.7), gridspec_kw={"width_ratios": [1, 1.35]}
)
radius = np.hypot(*q[:2])
circle = np.linspace(0, 2 * np.pi, 200)
ax1.plot(radius * np.cos(circle), radius * np.sin(circle), color="0.8")
for k, color in [(0, "tab:blue"), (1, "tab:orange")]:
    xs, ys = rotated[:, 2 * k], rotated[:, 2 * k + 1]
    ax1.plot(
        xs,
        ys,
        "o",
        color=color,
        label=f"pair {k}: {theta[k]:g} rad per position",
    )
    for p in range(T):
        if k == 0 or p in (0, T - 1):
            off = 1.22 if k == 0 else 0.8
            ax1.text(
                off * xs[p], off * ys[p], str(p), color=color, ha="center"
            )
ax1.set(
    xlim=(-1.6, 1.6),
    ylim=(-1.6, 1.9),
    aspect="equal",
    xlabel="first coordinate of the pair",
    ylabel="second coordinate",
    title="Pairs 0 and 1, positions 0 to 6",
)
ax1.legend(frameon=False, loc="upper center", fontsize=8)

d_head = 64
k_idx = np.arange(d_head // 2)
theta64 = lm.rope_frequencies(d_head)
for p, color in [(1, "tab:blue"), (100, "tab:orange"), (4096, "tab:green")]:
    ax2.semilogy(k_idx, theta64 * p, "o-", ms=3, color=color, label=f"p={p}")
ax2.axhline(2 * np.pi, color="0.3", linestyle="--", linewidth=1)
ax2.text(31, 2 * np.pi * 1.4, "one full turn", ha="right", color="0.3")
ax2.set(
    xlabel="pair index k",
    ylabel="angle $\\theta_k p$ (radians)",
    title="Angle per pair, d = 64, base $10^4$",
)
ax2.legend(frameon=False, loc="lower left")
fig.tight_layout()
