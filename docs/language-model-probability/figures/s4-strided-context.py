"""Context seen by each scored token under three evaluation protocols.

A 64-token text of period 8 (the copy toy of section 4.4). Full context
scores every token after all that precede it; disjoint chunks of 16
restart the context at 0 in every chunk and never score a chunk's first
token; a window of 16 moved by a stride of 8 always leaves at least
16 - 8 = 8 tokens of context, enough to reach the copy source 8 back.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

N, period = 64, 8


def context_per_target(max_length, stride):
    """(positions, tokens of context) for every scored target."""
    pos, ctx = [], []
    for begin, end, first in lm.strided_windows(N, max_length, stride):
        t = np.arange(first, end)
        pos.append(t)
        ctx.append(t - begin)  # tokens in the window before the target
    return np.concatenate(pos), np.concatenate(ctx)


fig, ax = plt.subplots(figsize=(6.8, 3.8))
full = np.arange(1, N)
ax.plot(full, full, color="0.6", lw=1.5, label="full context: 63 scored")
series = [
    (16, 16, "tab:orange", "o", "disjoint chunks $L=s=16$"),
    (16, 8, "tab:blue", "s", "window $L=16$, stride $s=8$"),
]
for max_length, stride, color, marker, name in series:
    p, c = context_per_target(max_length, stride)
    for begin, end, first in lm.strided_windows(N, max_length, stride):
        t = np.arange(first, end)  # one line per window
        ax.plot(t, t - begin, color=color, lw=1.5, marker=marker, ms=3)
    ax.plot(
        [], [], color=color, marker=marker, label=f"{name}: {p.size} scored"
    )
    if stride == max_length:
        skipped = np.setdiff1d(np.arange(1, N), p)
        ax.plot(
            skipped,
            np.zeros_like(skipped),
            "x",
            color=color,
            ms=7,
            mew=2,
            label="never scored (a chunk's first token)",
        )
ax.axhline(period, color="tab:red", lw=1, ls="--")
ax.fill_between([0, N], -1, period, color="tab:red", alpha=0.06, lw=0)
ax.text(
    63,
    19.5,
    "shaded: the copy source,\n8 tokens back, is out of reach",
    color="tab:red",
    fontsize=8,
    ha="right",
    va="top",
)
ax.set(
    xlabel="position of the scored token",
    ylabel="tokens of context it sees",
    xlim=(0, N),
    ylim=(-1, 20),
    title="Context per scored token, N = 64",
)
ax.legend(frameon=False, fontsize=8, loc="upper left")
fig.tight_layout()
