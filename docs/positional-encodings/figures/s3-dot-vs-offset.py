"""Dot product of two sinusoidal rows against their offset, d = 512.

The closed form sum_k cos(omega_k * delta) as a line; dots measured from
two anchor positions p fall on it, for negative offsets as for positive.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

d = 512
PE = lm.sinusoidal(6000, d)
omega = lm.rope_frequencies(d)

fig, axes = plt.subplots(1, 2, figsize=(7.4, 3.6), constrained_layout=True)
for ax, reach, step in [(axes[0], 1000, 50), (axes[1], 30, 1)]:
    delta = np.arange(-reach, reach + 1)
    closed = np.cos(np.outer(delta, omega)).sum(axis=1)
    ax.plot(delta, closed, color="gray", lw=1, label="closed form")
    shown = delta[::step]
    for p, color, mark, size in [
        (1000, "tab:blue", "o", 7),
        (4000, "tab:orange", "x", 4),
    ]:
        ax.plot(
            shown,
            PE[p + shown] @ PE[p],
            mark,
            color=color,
            mfc="none",
            ms=size,
            label=f"measured at p = {p}",
        )
    ax.axvline(0, color="gray", lw=0.6)
    ax.set(
        xlabel="offset $\\delta$",
        title=f"offsets $-${reach} to {reach}",
    )
axes[0].set_ylabel("$\\mathrm{PE}_p\\cdot\\mathrm{PE}_{p+\\delta}$")
axes[0].legend(frameon=False, loc="upper right", fontsize=8)
fig.suptitle(
    "Set by the offset alone, and equal for $+\\delta$ and $-\\delta$"
)
