"""Frequency ladder of the sinusoidal table, d = 512, on a log scale.

The correct exponent 2k/d against the mistaken k/d, with the paper's
loose top rung 2*pi*10^4 and a 512-token context as reference lines.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

d, context = 512, 512
k = np.arange(d // 2)  # pair index
lam = lm.wavelengths(lm.rope_frequencies(d))  # 2*pi*10000**(2k/d)
# the mistaken exponent k/d stops two decades short
lam_wrong = lm.wavelengths(10000.0 ** (-k / d))

fig, ax = plt.subplots(figsize=(6.4, 3.8))
ax.semilogy(k, lam, color="tab:blue", lw=2, label="exponent $2k/d$ (paper)")
ax.semilogy(
    k, lam_wrong, color="tab:orange", lw=2, ls="--", label="exponent $k/d$"
)
ax.axhline(
    2 * np.pi * 1e4, color="gray", lw=1, ls=":", label="$2\\pi\\cdot10^4$"
)
ax.axhline(context, color="tab:red", lw=1, label=f"context of {context}")
n_wrap = int((lam < context).sum())  # pairs that turn fully within it
ax.axvline(n_wrap - 0.5, color="tab:red", lw=0.8, ls="-.")
ax.text(
    n_wrap + 3,
    12,
    f"{n_wrap} pairs left of here\nturn at least once\nin {context} positions",
    color="tab:red",
    fontsize=8,
)
ax.set(
    xlabel="pair index k",
    ylabel="wavelength $\\lambda_k$ (positions)",
    title=f"Wavelength per pair, d = {d}",
    xlim=(0, d // 2 - 1),
)
ax.legend(frameon=False, loc="upper left", fontsize=8)
fig.tight_layout()
