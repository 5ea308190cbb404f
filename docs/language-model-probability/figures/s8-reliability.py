"""Reliability diagrams of an overconfident model, before and after scaling.

The synthetic model of the lesson's section 8.4: 5,000 examples with 10
classes (default_rng(0)), true logits 1.5 * N(0, 1), labels drawn from
their softmax, model logits 2.5 times the true ones. The temperature is
fitted on examples 0-2,499; both panels show examples 2,500-4,999 in
M = 15 equal-width bins: accuracy per bin (bars), mean confidence per bin
(dots), and the diagonal of perfect calibration.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(0)
true = rng.normal(size=(5000, 10)) * 1.5
labels = np.array([rng.choice(10, p=lm.softmax(row)) for row in true])
logits = 2.5 * true
fit, held = slice(0, 2500), slice(2500, 5000)
T = lm.fit_temperature(logits[fit], labels[fit])

M = 15
lo = np.arange(M) / M  # left edges of the bins
correct = logits[held].argmax(-1) == labels[held]
panels = [("before: T = 1", 1.0), (f"after: T = {T:.2f}", T)]

fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.8), sharey=True)
for ax, (name, temp) in zip(axes, panels):
    conf = lm.softmax(logits[held] / temp).max(-1)
    counts, mean_conf, acc = lm.reliability_bins(conf, correct, M)
    ece = lm.expected_calibration_error(conf, correct, M)
    full = counts > 0  # empty bins are skipped
    ax.bar(
        lo[full],
        acc[full],
        width=1 / M,
        align="edge",
        color="tab:blue",
        edgecolor="white",
        label="accuracy in bin",
    )
    ax.plot(
        mean_conf[full],
        acc[full],
        "o",
        color="tab:orange",
        ms=4,
        label="(mean confidence, accuracy)",
    )
    ax.plot([0, 1], [0, 1], color="0.4", lw=1, ls="--", label="calibrated")
    ax.set(
        xlim=(0, 1),
        ylim=(0, 1),
        xlabel="confidence (max softmax probability)",
        title=f"{name}, ECE = {ece:.4f}",
    )
axes[0].set_ylabel("accuracy")
axes[0].legend(frameon=False, fontsize=8, loc="upper left")
fig.suptitle(
    "Held-out reliability, 15 bins (overconfident: below the diagonal)"
)
fig.tight_layout()
