"""Forward and reverse KL fits of one Gaussian to a two-mode target.

The target is an even mixture of N(-2, 0.5^2) and N(2, 0.5^2). As on the
page, each Gaussian is scored by lm.kl_divergence on a grid of step 0.01
over [-8, 8], and the best mean and standard deviation on a search grid
are kept for KL(p || q) and for KL(q || p); the curves are drawn on a grid
of step 0.005.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

x = np.linspace(-8.0, 8.0, 3201)  # step 0.005, for drawing
dx = x[1] - x[0]
x_fit = np.linspace(-8.0, 8.0, 1601)  # step 0.01, for the search


def gauss(mu, sd, grid=x):
    """Normalized Gaussian weights on the grid, one row per mean."""
    g = np.exp(-0.5 * ((grid - np.asarray(mu)[..., None]) / sd) ** 2)
    return g / g.sum(axis=-1, keepdims=True)


p = 0.5 * gauss(-2.0, 0.5) + 0.5 * gauss(2.0, 0.5)
p_fit = 0.5 * gauss(-2.0, 0.5, x_fit) + 0.5 * gauss(2.0, 0.5, x_fit)
mus = np.linspace(-3.0, 3.0, 61)
sds = np.linspace(0.3, 3.0, 271)
forward, reverse = np.empty((2, sds.size, mus.size))
for k, sd in enumerate(sds):
    q = gauss(mus, sd, x_fit)
    forward[k] = lm.kl_divergence(p_fit, q)
    reverse[k] = lm.kl_divergence(q, p_fit)
i, j = np.unravel_index(np.argmin(forward), forward.shape)
fwd_mu, fwd_sd = mus[j], sds[i]
i, j = np.unravel_index(np.argmin(reverse), reverse.shape)
rev_mu, rev_sd = abs(mus[j]), sds[i]  # +2 and -2 tie by symmetry

fig, ax = plt.subplots(figsize=(6.8, 3.8))
ax.fill_between(x, p / dx, color="0.8", label="target $p$ (two modes)")
ax.plot(
    x,
    gauss(fwd_mu, fwd_sd) / dx,
    color="tab:blue",
    lw=2,
    label=rf"forward KL$(p\Vert q)$: $\mu={fwd_mu:.2f}$, "
    rf"$\sigma={fwd_sd:.2f}$",
)
ax.plot(
    x,
    gauss(rev_mu, rev_sd) / dx,
    color="tab:orange",
    lw=2,
    label=rf"reverse KL$(q\Vert p)$: $\mu={rev_mu:.2f}$, "
    rf"$\sigma={rev_sd:.2f}$",
)
ax.plot(
    x,
    gauss(-rev_mu, rev_sd) / dx,
    color="tab:orange",
    lw=1.2,
    ls="--",
    label=r"the other reverse fit, $\mu=-2$ (same KL)",
)
ax.set(
    xlabel="$x$",
    ylabel="density",
    xlim=(-6, 6),
    title="Mass-covering against mode-seeking",
)
ax.legend(frameon=False, fontsize=8, loc="upper left")
fig.tight_layout()
