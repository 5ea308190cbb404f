"""Sinusoidal table at stride 1 and at stride 6: fast pairs alias.

Both panels show 96 rows of lm.sinusoidal(n, 16); the right one keeps
every sixth position, so the 1-rad-per-position pair steps 6 rad a row,
which the eye reads as a slow wave of 6 - 2*pi = -0.28 rad a row.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rows, d, stride = 96, 16, 6
PE = lm.sinusoidal(rows * stride, d)  # (576, 16), interleaved sin/cos
views = [(PE[:rows], 1), (PE[::stride], stride)]

fig, axes = plt.subplots(1, 2, figsize=(7.4, 4.4), constrained_layout=True)
for ax, (table, s) in zip(axes, views):
    im = ax.imshow(
        table,
        cmap="RdBu_r",
        vmin=-1,
        vmax=1,
        aspect="auto",
        interpolation="nearest",
        extent=(-0.5, d - 0.5, s * (rows - 0.5), -0.5 * s),
    )
    ax.set_xlabel("column (pair k = column // 2)")
    ax.set_xticks(np.arange(0, d + 1, 4))
axes[0].set_title("every position: pair 0 wraps\nevery 6.28 rows")
axes[1].set_title(
    f"every {stride}th position: pair 0 shows\na false wave of period 133"
)
axes[0].set_ylabel("position p")
fig.colorbar(im, ax=axes, shrink=0.85, label="PE[p, column]")
