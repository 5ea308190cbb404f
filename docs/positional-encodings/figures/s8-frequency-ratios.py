"""Per-pair frequency ratio of four context-extension rules, side by side.

One head with Llama 3.1's settings: d = 128, base 500,000, trained length
L = 8192, factor s = 8 (L' = 65,536). Left: theta'_k / theta_k. Right: the
largest angle over the long window against the largest trained angle.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

d, base, L, s = 128, 500000.0, 8192, 8.0
k = np.arange(d // 2)  # pair index
theta = lm.rope_frequencies(d, base)
rules = {
    "PI": lm.linear_scaled_frequencies(d, s, base),
    "NTK-aware": lm.rope_frequencies(d, lm.ntk_scaled_base(base, s, d)),
    "YaRN": lm.yarn_frequencies(d, s, L, base),
    "Llama 3.1": lm.llama3_frequencies(d, s, L, base=base),
}
styles = {
    "PI": ("tab:gray", "-"),
    "NTK-aware": ("tab:orange", "--"),
    "YaRN": ("tab:blue", "-"),
    "Llama 3.1": ("tab:green", ":"),
}
n_swept = int((theta * (L - 1) >= 2 * np.pi).sum())  # pairs 0..34

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8.4, 3.6), sharex=True)
for name, freqs in rules.items():
    color, ls = styles[name]
    ax1.plot(k, freqs / theta, color=color, ls=ls, lw=2, label=name)
    # largest angle over L' = sL positions / largest trained angle
    stretch = freqs * (s * L - 1) / (theta * (L - 1))
    ax2.plot(k, stretch, color=color, ls=ls, lw=2, label=name)
ax1.set_yscale("log", base=2)
ax1.set_yticks([1, 1 / 2, 1 / 4, 1 / 8], ["1", "1/2", "1/4", "1/8"])
ax1.set(
    xlabel="pair index k",
    ylabel="$\\theta'_k / \\theta_k$",
    title="Frequency ratio per pair",
    xlim=(0, d // 2 - 1),
)
ax1.legend(frameon=False, loc="upper right", fontsize=8)
ax2.set_yscale("log", base=2)
ax2.set_yticks([1, 2, 4, 8], ["1", "2", "4", "8"])
ax2.axvspan(-0.5, n_swept - 0.5, color="tab:gray", alpha=0.15, lw=0)
ax2.text(
    n_swept / 2,
    1.25,
    f"pairs 0-{n_swept - 1} swept the\ncircle in training",
    ha="center",
    fontsize=8,
)
ax2.set(
    xlabel="pair index k",
    ylabel="largest angle / trained largest",
    title=f"Over L' = {int(s * L):,} positions",
)
fig.suptitle(f"d = {d}, base {base:,.0f}, L = {L:,}, factor s = {s:g}")
fig.tight_layout()
