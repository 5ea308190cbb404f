"""Temperature scaling's objective in beta = 1/T (convex) and in T (not).

The synthetic model of the lesson's section 8.4, on its fitting split
(examples 0-2,499). Left: mean NLL against beta, a convex curve with its
minimum at beta* = 1/T*. Right: the same NLL against T, which rises toward
ln 10 and bends over (concave) for large T; the dashed line marks where the
reference script's single LBFGS step stops (T = 1.7010, measured with
PyTorch 2.13, not computed here).
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(0)
true = rng.normal(size=(5000, 10)) * 1.5
labels = np.array([rng.choice(10, p=lm.softmax(row)) for row in true])
logits, y = 2.5 * true[:2500], labels[:2500]  # the fitting split
T_star = lm.fit_temperature(logits, y)

betas = np.linspace(0.02, 2.0, 120)
nll_beta = [lm.temperature_nll(logits, y, 1 / b) for b in betas]
temps = np.linspace(1.0, 20.0, 200)
nll_T = [lm.temperature_nll(logits, y, t) for t in temps]
best = lm.temperature_nll(logits, y, T_star)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8.0, 3.6))
ax1.plot(betas, nll_beta, color="tab:blue", lw=2)
ax1.plot(
    1 / T_star,
    best,
    "*",
    color="tab:orange",
    ms=12,
    label=f"$\\beta^*$ = {1 / T_star:.4f}",
)
ax1.axvline(1.0, color="0.6", lw=0.8, ls=":", label="$\\beta = 1$ (unscaled)")
ax1.set(
    xlabel="$\\beta = 1/T$",
    ylabel="mean NLL (nats)",
    title="NLL against $\\beta$: convex",
)
ax2.plot(temps, nll_T, color="tab:blue", lw=2)
ax2.plot(
    T_star, best, "*", color="tab:orange", ms=12, label=f"$T^*$ = {T_star:.4f}"
)
ax2.axvline(
    1.7010,
    color="tab:red",
    lw=1,
    ls="--",
    label="reference script stops: 1.7010",
)
ax2.axhline(np.log(10), color="0.5", lw=0.8, ls=":", label="ln 10")
ax2.set(
    xlabel="temperature $T$",
    ylabel="mean NLL (nats)",
    title="NLL against $T$: not convex",
)
ax1.legend(frameon=False, fontsize=8, loc="upper center")
ax2.legend(frameon=False, fontsize=8, loc="lower right")
fig.tight_layout()
