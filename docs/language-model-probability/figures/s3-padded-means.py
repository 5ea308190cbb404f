"""Four ways to average the per-token losses of one padded batch.

Two sequences, the second with two padded slots whose loss would be 0.1
if counted. Left: the 2 x 4 grid of losses, pads hatched. Right: the
token mean over the six real targets against three common mistakes.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

# per-token losses; the last two slots of row 1 are padding
losses = np.array([[1.0, 2.0, 0.5, 0.5], [3.0, 1.0, 0.1, 0.1]])
real = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=bool)
# two-class logits [0, a] whose loss at target 0 is exactly the given one
logits = np.stack([np.zeros_like(losses), np.log(np.expm1(losses))], -1)
labels = np.where(real, 0, -100)

means = {
    "token mean\n(real targets only)": lm.cross_entropy(
        logits, labels, ignore_index=-100
    ),
    "pads counted": lm.cross_entropy(logits, np.zeros_like(labels)),
    "pads zeroed,\ndivided by 8": lm.cross_entropy(
        logits, labels, ignore_index=-100, reduction="sum"
    )
    / labels.size,
    "mean of sequence means\n(= two micro-batches)": np.mean(
        [
            lm.cross_entropy(logits[b], labels[b], ignore_index=-100)
            for b in (0, 1)
        ]
    ),
}

fig, (ax0, ax1) = plt.subplots(
    1, 2, figsize=(7.2, 3.4), gridspec_kw={"width_ratios": [1, 1.5]}
)
for b in range(2):
    for t in range(4):
        pad = not real[b, t]
        ax0.add_patch(
            plt.Rectangle(
                (t, 1 - b),
                1,
                1,
                facecolor="0.92" if pad else "tab:blue",
                alpha=1.0 if pad else 0.25 + 0.2 * losses[b, t],
                hatch="//" if pad else None,
                edgecolor="0.3",
            )
        )
        ax0.text(
            t + 0.5,
            1.5 - b,
            f"{losses[b, t]:g}" + ("\npad" if pad else ""),
            ha="center",
            va="center",
            fontsize=9,
        )
ax0.set(xlim=(0, 4), ylim=(0, 2), xticks=[], yticks=[0.5, 1.5])
ax0.set_yticklabels(["sequence 1", "sequence 0"])
ax0.set_title("per-token losses", fontsize=10)
ax0.set_aspect("equal")

names = list(means)
values = [means[k] for k in names]
colors = ["tab:green"] + ["tab:orange"] * 3
y = np.arange(len(names))[::-1]
ax1.barh(y, values, color=colors, height=0.6)
for yi, v in zip(y, values):
    ax1.text(v + 0.03, yi, f"{v:.4f}", va="center", fontsize=9)
ax1.set_yticks(y)
ax1.set_yticklabels(names, fontsize=8)
ax1.set(xlim=(0, 1.9), xlabel="loss (nats per target)")
ax1.set_title("what the mean is over", fontsize=10)
fig.tight_layout()
