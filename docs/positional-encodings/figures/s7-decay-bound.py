"""§7.5: RoFormer's relative upper bound against distance, and one real score.

Left: (1/(d/2)) sum_j |S_j| for d = 128, base 10^4 and 5 * 10^5.
Right: a query/key pair whose score peaks 500 positions back, under the
full bound (max_k |h_{k+1} - h_k|) sum_j |S_j|.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

d = 128


def partial_sums(distance, theta):
    """S_1..S_{d/2} for every distance: shape (len(distance), d/2)."""
    return np.cumsum(np.exp(1j * np.outer(distance, theta)), axis=1)


fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.8, 3.6))
far = np.unique(np.geomspace(1, 2e5, 1200).astype(int))
bases = [
    (1e4, "tab:blue", "base $10^4$"),
    (5e5, "tab:orange", "base $5\\cdot 10^5$"),
]
for base, color, label in bases:
    theta = lm.rope_frequencies(d, base)
    rel = np.abs(partial_sums(far, theta)).mean(axis=1)
    ax1.semilogx(far, rel, color=color, lw=0.8, label=label)
ax1.set(
    xlabel="relative distance |m - n|",
    ylabel="$(1/(d/2))\\sum_j |S_j|$",
    title="The paper's relative upper bound",
)
ax1.legend(frameon=False)

rng = np.random.default_rng(75)
theta = lm.rope_frequencies(d)
q = rng.normal(size=d)
k = lm.rope_matrix(500, d) @ q  # built to match q 500 positions back
near = np.arange(0, 1501)
h = (q[0::2] + 1j * q[1::2]) * np.conj(k[0::2] + 1j * k[1::2])
score = np.real(np.exp(1j * np.outer(near, theta)) @ h)  # query - key = m - n
step = np.abs(np.diff(np.append(h, 0))).max()
bound = step * np.abs(partial_sums(near, theta)).sum(axis=1)
ax2.semilogy(near, bound, color="0.4", lw=0.8, label="bound on |score|")
ax2.semilogy(near, np.abs(score), color="tab:green", lw=0.8, label="|score|")
ax2.axvline(500, color="0.6", linestyle=":", lw=1)
ax2.set(
    xlabel="distance m - n (key behind the query)",
    ylabel="$|(R_m q)^\\top (R_n k)|$",
    title="Actual score against the bound",
    ylim=(3, 2e5),
)
ax2.legend(frameon=False, loc="upper right", ncols=2)
fig.tight_layout()
