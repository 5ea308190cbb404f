"""Token ids on the integer line next to their rows in a toy 2-D table."""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

vocab = ["the", "cat", "sat", "mat", "a", "dog", "ran", "rug"]
E = np.array(
    [
        [-2.0, 1.0],
        [1.6, 1.2],
        [0.2, -1.6],
        [1.8, -1.0],
        [-1.8, 1.3],
        [1.9, 0.9],
        [0.5, -1.9],
        [2.1, -1.3],
    ]
)
ids = np.arange(len(vocab))
rows = lm.lookup(E, ids)
pairs = [(5, 6, "tab:orange"), (1, 5, "tab:blue")]  # dog-ran, cat-dog

fig, (ax_id, ax_row) = plt.subplots(
    1, 2, figsize=(8.0, 3.6), width_ratios=[1, 1.3]
)
ax_id.scatter(ids, np.zeros_like(ids), color="0.3", zorder=3)
for i, w in enumerate(vocab):
    ax_id.annotate(
        w, (i, 0), xytext=(0, 8), textcoords="offset points", ha="center"
    )
ax_row.scatter(rows[:, 0], rows[:, 1], color="0.3", zorder=3)
for i, w in enumerate(vocab):
    below = w in ("the", "ran")  # keep labels of nearby points apart
    ax_row.annotate(
        w, rows[i], xytext=(6, -12 if below else 4), textcoords="offset points"
    )
for a, b, c in pairs:
    gap = abs(a - b)
    dist = float(lm.euclidean(rows[a], rows[b]))
    label = f"{vocab[a]}-{vocab[b]}: id gap {gap}, row distance {dist:.2f}"
    ax_id.plot([a, b], [-0.15 - 0.1 * gap / 4] * 2, color=c, lw=3, label=label)
    ax_row.plot(rows[[a, b], 0], rows[[a, b], 1], color=c, lw=3)
ax_id.set(
    title="Token ids: integers on a line",
    xlabel="token id",
    ylim=(-0.5, 0.6),
    yticks=[],
    xticks=ids,
)
ax_row.set(
    title="Rows of E: points in the plane",
    xlabel="coordinate 0",
    ylabel="coordinate 1",
    xlim=(-2.8, 3.2),
    ylim=(-2.6, 2.2),
)
ax_id.legend(loc="upper center", fontsize=8, frameon=False)
fig.tight_layout()
