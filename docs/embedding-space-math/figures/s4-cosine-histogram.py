"""§4.3: pairwise cosines, before and after centering.

The rows share a mean offset.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

rng = np.random.default_rng(2)
n, d = 300, 64
mean_dir = lm.normalize(rng.normal(size=d))
# isotropic cloud pushed along one direction
X = rng.normal(size=(n, d)) + 8.0 * mean_dir
pairs = np.triu_indices(n, k=1)  # each pair i < j once

fig, ax = plt.subplots(figsize=(6.4, 3.6))
for M, name, color in [
    (X, "raw", "tab:orange"),
    (lm.center(X), "centered", "tab:blue"),
]:
    cos = lm.similarity_matrix(M, M)[pairs]
    ax.hist(
        cos,
        bins=60,
        range=(-1, 1),
        alpha=0.6,
        color=color,
        label=f"{name}: anisotropy {lm.anisotropy(M):.3f}",
    )
ax.set_xlabel("cosine similarity of a pair of rows")
ax.set_ylabel("number of pairs")
ax.set_title("A shared offset lifts every cosine; centering undoes it")
ax.legend()
fig.tight_layout()
