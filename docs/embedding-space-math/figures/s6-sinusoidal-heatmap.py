"""Sinusoidal position table: positions down, dimensions across."""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

n_positions, d_model = 128, 64
# (128, 64), interleaved sin/cos columns
PE = lm.sinusoidal(n_positions, d_model)

fig, ax = plt.subplots(figsize=(6.4, 4.6))
im = ax.imshow(
    PE, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest"
)
ax.set_xlabel(
    "dimension i (even i: sine, odd i: cosine; frequency falls with i)"
)
ax.set_ylabel("position p")
ax.set_title(f"lm.sinusoidal({n_positions}, {d_model})")
ax.set_xticks(
    np.arange(0, d_model + 1, 16) - 0.5, np.arange(0, d_model + 1, 16)
)
fig.colorbar(im, ax=ax, label="PE[p, i]")
