"""Probability of not having stopped after n steps, for two EOS hazards.

A constant EOS probability of 0.1 stops every string sooner or later; a
hazard 1/(t+1)^2 that shrinks too fast leaves half the mass on strings
that never end. The bigram toy's survival is drawn for comparison.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

n_max = 10**4
t = np.arange(1, n_max + 1)  # step t emits EOS with probability eps_t
constant = np.cumprod(np.full(n_max, 1 - 0.1))  # eps_t = 0.1
quadratic = np.cumprod(1 - 1.0 / (t + 1) ** 2)  # eps_t = 1/(t+1)^2

# the bigram toy (ids 0 = BOS/EOS, 1 the, 2 cat, 3 sat): survival by DP
P = np.array(
    [
        [0.1, 0.6, 0.2, 0.1],
        [0.1, 0.1, 0.7, 0.1],
        [0.2, 0.1, 0.1, 0.6],
        [0.5, 0.3, 0.1, 0.1],
    ]
)
step = lm.softmax(np.log(P))  # rows are already distributions
alive = step[0, 1:]  # after step 1: in state the, cat or sat
toy = [alive.sum()]
for _ in range(n_max - 1):
    alive = alive @ step[1:, 1:]
    toy.append(alive.sum())

fig, ax = plt.subplots(figsize=(6.4, 3.8))
ax.semilogx(
    t,
    quadratic,
    color="tab:orange",
    lw=2,
    label=r"$\varepsilon_t = 1/(t+1)^2$: leaks",
)
ax.semilogx(
    t, constant, color="tab:blue", lw=2, label=r"$\varepsilon_t = 0.1$: tight"
)
ax.semilogx(
    t,
    toy,
    color="tab:green",
    lw=1.5,
    ls="--",
    label="bigram toy (EOS $\\geq 0.1$ from every state)",
)
ax.axhline(0.5, color="gray", lw=1, ls=":")
ax.text(
    60, 0.43, "1/2: mass on strings that never end", color="gray", fontsize=8
)
ax.set(
    xlabel="steps n",
    ylabel="P(no EOS in the first n steps)",
    title="Survival under two EOS hazards",
    xlim=(1, n_max),
    ylim=(0, 1),
)
ax.legend(frameon=False, loc="lower left", fontsize=8)
fig.tight_layout()
