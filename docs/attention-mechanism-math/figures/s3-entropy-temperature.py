"""Entropy of a 64-key softmax row against the temperature.

Three rows of scores: a scaled row (q, k standard normal, d_k = 512, divided
by sqrt(d_k)), the same row unscaled, and a row whose two largest scores tie.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(32)
d_k, T_k = 512, 64
q = rng.normal(size=d_k)
K = rng.normal(size=(T_k, d_k))
raw = K @ q  # (T_k,)
tie = rng.normal(size=T_k)
tie[1] = tie[0] = tie.max() + 0.5
rows = [
    (raw / np.sqrt(d_k), "scaled scores ($d_k$ = 512)", "tab:blue", "-"),
    (raw, "unscaled scores ($d_k$ = 512)", "tab:red", "--"),
    (tie, "two tied top scores", "tab:green", "-."),
]
taus = np.geomspace(0.01, 1000, 200)
fig, ax = plt.subplots(figsize=(6.4, 4.0))
for s, label, color, style in rows:
    H = lm.attention_entropy(lm.softmax(s / taus[:, None]))  # (200,)
    ax.semilogx(taus, H, style, color=color, lw=1.6, label=label)
ax.axhline(np.log(T_k), color="0.4", lw=1, ls=":")
ax.text(0.012, np.log(T_k) - 0.3, r"$\ln 64\approx4.16$ (uniform)", fontsize=9)
ax.axhline(np.log(2), color="0.4", lw=1, ls=":")
ax.text(60, np.log(2) + 0.1, r"$\ln 2$ (two-way tie)", fontsize=9)
ax.axvline(np.sqrt(d_k), color="tab:red", lw=0.8, ls=":")
ax.text(
    np.sqrt(d_k) * 1.15,
    0.25,
    r"$\tau=\sqrt{512}$",
    fontsize=9,
    color="tab:red",
)
ax.set_xlabel(r"temperature $\tau$ (scores divided by $\tau$)", fontsize=10)
ax.set_ylabel("entropy of the weights (nats)", fontsize=10)
ax.tick_params(labelsize=9)
ax.set_ylim(0, 4.5)
ax.legend(frameon=False, fontsize=9, loc="center right")
ax.set_title(
    "Softmax entropy rises from its argmax limit to ln 64", fontsize=10
)
fig.tight_layout()
