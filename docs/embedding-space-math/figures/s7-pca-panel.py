"""Two clusters that overlap on PC1-PC2 separate cleanly on PC3."""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

# The same planted data as the worked example of section 7.4.
rng = np.random.default_rng(7)
n, d = 200, 6
y = np.repeat([0, 1], n // 2)
X = rng.normal(size=(n, d)) * np.array([3.0, 2.5, 0.3, 0.2, 0.2, 0.2])
X[:, 2] += np.where(y == 1, 1.0, -1.0)  # the clusters differ along axis 2 only
R, _ = np.linalg.qr(rng.normal(size=(d, d)))
X = X @ R.T  # a random rotation: no coordinate axis is special any more
coords, evr = lm.pca(X, 3)

fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.8), layout="constrained")
for ax, j in zip(axes, [1, 2]):
    for label, color, marker in [(0, "tab:blue", "o"), (1, "tab:orange", "^")]:
        pts = coords[y == label]
        ax.scatter(
            pts[:, 0],
            pts[:, j],
            s=12,
            color=color,
            marker=marker,
            alpha=0.7,
            label=f"cluster {label}",
        )
    ax.set(
        xlabel=f"PC1 ({evr[0]:.0%} of variance)",
        ylabel=f"PC{j + 1} ({evr[j]:.0%} of variance)",
    )
axes[0].set_title("PC1 vs PC2: clusters overlap")
axes[1].set_title("PC1 vs PC3: clusters separate")
fig.legend(
    *axes[0].get_legend_handles_labels(),
    loc="outside lower center",
    ncol=2,
    frameon=False,
)
