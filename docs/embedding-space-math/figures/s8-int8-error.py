"""Per-row int8 round trip.

The worst error of each row stays under s/2 = max|x|/254.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(82)
V, d = 300, 64
E = rng.normal(scale=0.02, size=(V, d)) * np.exp(
    rng.normal(scale=0.5, size=(V, 1))
)
spiked = rng.choice(V, size=20, replace=False)
# one large entry in each of these rows
E[spiked, 0] = rng.uniform(0.3, 0.6, size=20)
q, scale = lm.quantize_int8(E)
max_err = np.abs(E - lm.dequantize(q, scale)).max(axis=1)
absmax = np.abs(E).max(axis=1)
plain = np.setdiff1d(np.arange(V), spiked)

fig, ax = plt.subplots(figsize=(6.4, 3.6))
grid = np.geomspace(absmax.min() / 1.3, absmax.max() * 1.3, 50)
ax.plot(
    grid, grid / 254, color="black", lw=1.2, label="bound s/2 = max|x| / 254"
)
ax.scatter(
    absmax[plain],
    max_err[plain],
    s=10,
    color="tab:blue",
    label="ordinary rows",
)
ax.scatter(
    absmax[spiked],
    max_err[spiked],
    s=22,
    marker="^",
    color="tab:orange",
    label="rows with one outlier entry",
)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("largest absolute entry of the row, max|x|")
ax.set_ylabel("max round-trip error in the row")
ax.set_title("Per-row int8 quantization error")
ax.legend(frameon=False, loc="upper left")
fig.tight_layout()
