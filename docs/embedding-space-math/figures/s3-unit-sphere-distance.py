"""On the unit sphere, Euclidean distance is a fixed function of cosine."""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(3)
n, d = 300, 16
t = rng.uniform(-1.0, 1.0, size=(n, 1))  # how much v copies u: sets the angle
U = rng.normal(size=(n, d))
V = t * U + 0.6 * rng.normal(size=(n, d))  # pairs at angles across [0, pi]
# unequal norms
U, V = (
    U * rng.uniform(0.1, 0.5, (n, 1)),
    V * rng.uniform(0.1, 0.5, (n, 1)),
)

c_raw, dist_raw = lm.cosine(U, V), lm.euclidean(U, V)
Un, Vn = lm.normalize(U), lm.normalize(V)
c_unit, dist_unit = lm.cosine(Un, Vn), lm.euclidean(Un, Vn)

c = np.linspace(-1, 1, 200)
fig, ax = plt.subplots(figsize=(6.4, 3.6))
ax.scatter(
    c_raw,
    dist_raw,
    s=10,
    color="tab:orange",
    alpha=0.6,
    label="raw pairs (unequal norms)",
)
ax.scatter(
    c_unit,
    dist_unit,
    s=10,
    color="tab:blue",
    zorder=2,
    label="same pairs, normalized",
)
ax.plot(
    c,
    np.sqrt(2 - 2 * c),
    color="black",
    lw=1,
    zorder=1,
    label=r"$\sqrt{2 - 2\cos\theta}$",
)
ax.set(
    xlabel=r"cosine similarity $\cos\theta$",
    ylabel=r"Euclidean distance $\Vert u - v \Vert$",
    title="Normalized pairs fall on one curve; raw pairs scatter",
    xlim=(-1.05, 1.05),
)
ax.legend(frameon=False, loc="upper right")
