"""Speculative sampling: what a target pass buys, against the draft length.

Left: expected tokens per target pass, (1 - alpha^(g+1)) / (1 - alpha),
for draft lengths g = 1..16 and four acceptance rates alpha, with the
ceiling 1 / (1 - alpha) that no draft length can pass. Right: the walltime
factor at a draft cost of c = 0.05 target steps per token, with each
curve's best integer g marked. Both assume independent acceptances and a
verification pass that costs one target step.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

gammas = np.arange(1, 17)
rates = [0.6, 0.7, 0.8, 0.9]
colors = ["tab:orange", "tab:green", "tab:blue", "tab:purple"]
c = 0.05  # draft cost per token, in target steps

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8.0, 3.6), sharex=True)
for a, color in zip(rates, colors):
    tokens = [lm.expected_tokens_per_step(a, int(g)) for g in gammas]
    ax1.plot(gammas, tokens, "o-", ms=3, color=color, label=f"$\\alpha$ = {a}")
    ax1.axhline(1 / (1 - a), color=color, lw=0.8, ls=":")
    speed = [lm.speculative_speedup(a, int(g), c) for g in gammas]
    best = int(np.argmax(speed))
    ax2.plot(gammas, speed, "o-", ms=3, color=color, label=f"$\\alpha$ = {a}")
    ax2.plot(gammas[best], speed[best], "*", ms=12, color=color)
ax2.axhline(1.0, color="0.5", lw=0.8)  # no gain
ax1.set(
    xlabel="draft length $\\gamma$",
    ylabel="expected tokens per target pass",
    title="Tokens per pass (dotted: $1/(1-\\alpha)$)",
)
ax2.set(
    xlabel="draft length $\\gamma$",
    ylabel="walltime factor",
    title=f"Walltime factor at c = {c} (star: best $\\gamma$)",
)
ax1.legend(frameon=False, fontsize=8, loc="upper left")
ax2.legend(frameon=False, fontsize=8, loc="upper left")
ax1.set_xticks([1, 4, 8, 12, 16])
fig.tight_layout()
