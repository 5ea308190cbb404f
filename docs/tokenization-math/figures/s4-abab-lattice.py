"""The segmentation lattice of "abab" under the unigram toy model.

Nodes 0 ... 4 are the positions between characters; an arc i -> j is a
piece text[i:j] of the vocabulary {a, b, ab, ba}. Each row highlights one
of the five paths from 0 to 4 (one segmentation), with its probability
P(x) and its posterior P(x) / P("abab"); the Viterbi path is in orange.
"""

import math

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

p = {"a": 0.3, "b": 0.2, "ab": 0.4, "ba": 0.1}
log_p = {t: math.log(v) for t, v in p.items()}
text = "abab"
n = len(text)


def segmentations(s):
    """Every way to write s as a sequence of pieces of p."""
    if not s:
        return [[]]
    return [
        [s[:k]] + rest
        for k in range(1, len(s) + 1)
        if s[:k] in p
        for rest in segmentations(s[k:])
    ]


paths = segmentations(text)
assert len(paths) == lm.count_segmentations(text, p)
log_z, _ = lm.forward_backward(text, log_p)
best, _ = lm.viterbi(text, log_p)
prob = [math.exp(sum(log_p[t] for t in x)) for x in paths]
# most probable first; equal probabilities keep enumeration order
order = np.argsort(-np.round(prob, 12), kind="stable")
edges = [
    (i, j) for i in range(n) for j in range(i + 1, n + 1) if text[i:j] in p
]

fig, axes = plt.subplots(len(paths), 1, figsize=(5.6, 6.8), sharex=True)
for ax, r in zip(axes, order):
    x = paths[r]
    cuts = np.cumsum([0] + [len(t) for t in x])
    on_path = set(zip(cuts[:-1], cuts[1:]))
    color = "tab:orange" if x == best else "tab:blue"
    for i, j in edges:
        h = 0.22 * (j - i)  # longer pieces arc higher
        xs = np.linspace(i, j, 40)
        ys = h * np.sin(np.pi * (xs - i) / (j - i))
        if (i, j) in on_path:
            ax.plot(xs, ys, color=color, lw=2.6, zorder=2)
            ax.text(
                (i + j) / 2,
                h + 0.05,
                f"{text[i:j]} {p[text[i:j]]}",
                ha="center",
                va="bottom",
                fontsize=11,
                color=color,
            )
        else:
            ax.plot(xs, ys, color="0.82", lw=1.0, zorder=1)
    ax.scatter(range(n + 1), np.zeros(n + 1), s=30, color="0.25", zorder=3)
    for k, ch in enumerate(text):
        ax.text(k + 0.5, -0.12, ch, ha="center", va="top", fontsize=11)
    post = prob[r] / math.exp(log_z)
    ax.text(
        n + 0.25,
        0.18,
        f"P(x) = {prob[r]:.4g}\nposterior {post:.4f}",
        va="center",
        fontsize=10.5,
        color=color,
    )
    ax.set_ylim(-0.3, 0.75)
    ax.axis("off")
for k in range(n + 1):  # node numbers under the last row
    axes[-1].text(
        k, -0.3, str(k), ha="center", va="top", fontsize=10, color="0.4"
    )
axes[0].set_title(
    f'The 5 paths of "abab": P("abab") = {math.exp(log_z):.4f}\n'
    "Viterbi path in orange",
    fontsize=11,
)
axes[0].set_xlim(-0.2, n + 1.7)
fig.tight_layout()
