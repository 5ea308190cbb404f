"""One logits row under each warper, and under two orders of two warpers.

The lesson's logits z = [2, 1, 0.5, 0, -1]: the first two rows of panels
apply one kernel filter each and show the renormalized distribution
(grey bars are removed tokens); the last row applies two warpers in both
orders, with the number of surviving tokens in each title.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

z = np.array([2.0, 1.0, 0.5, 0.0, -1.0])
panels = [
    ("no warper", z),
    ("temperature 0.5", lm.apply_temperature(z, 0.5)),
    ("temperature 2", lm.apply_temperature(z, 2.0)),
    ("top-k, k = 2", lm.top_k_filter(z, 2)),
    ("top-p, p = 0.8", lm.top_p_filter(z, 0.8)),
    ("min-p 0.3", lm.min_p_filter(z, 0.3)),
    ("typical, mass 0.5", lm.typical_filter(z, 0.5)),
    ("epsilon 0.1", lm.epsilon_filter(z, 0.1)),
    ("top-k 3, then top-p 0.85", lm.top_p_filter(lm.top_k_filter(z, 3), 0.85)),
    ("top-p 0.85, then top-k 3", lm.top_k_filter(lm.top_p_filter(z, 0.85), 3)),
    (
        "T = 2, then top-p 0.85",
        lm.top_p_filter(lm.apply_temperature(z, 2.0), 0.85),
    ),
    (
        "top-p 0.85, then T = 2",
        lm.apply_temperature(lm.top_p_filter(z, 0.85), 2.0),
    ),
]

fig, axes = plt.subplots(3, 4, figsize=(8.0, 6.4), sharex=True, sharey=True)
ids = np.arange(len(z))
for ax, (title, logits) in zip(axes.ravel(), panels):
    kept = np.isfinite(logits)
    p = lm.softmax(logits)
    ax.bar(ids, np.where(kept, p, 0.0), color="tab:blue")
    ax.bar(ids, np.where(kept, 0.0, 0.03), color="0.8")  # a stub: removed
    ax.set_title(f"{title}\n{int(kept.sum())} kept", fontsize=8.5)
    ax.set_xticks(ids)
    ax.set_ylim(0, 1)
for ax in axes[-1]:
    ax.set_xlabel("token id", fontsize=8)
for ax in axes[:, 0]:
    ax.set_ylabel("probability", fontsize=8)
for ax in axes[2]:
    ax.set_facecolor("#f4f4f4")  # the order comparisons
fig.suptitle("Warpers on z = [2, 1, 0.5, 0, -1] (grey stubs: removed)")
fig.tight_layout()
