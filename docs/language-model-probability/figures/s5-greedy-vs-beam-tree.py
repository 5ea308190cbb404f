"""The two-step tree of Section 5: greedy takes A twice, beam search finds B B.

First step A 0.6, B 0.4; after A: A 0.55, B 0.45; after B: A 0.1, B 0.9;
then EOS. Every edge carries its conditional probability and every leaf
its string probability; the paths are the kernel's greedy and textbook
beam-search outputs (ids 0 = EOS, 1 = A, 2 = B, 3 = BOS).
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

STEP = {  # generated prefix -> next-token probabilities over (EOS, A, B, BOS)
    (): [0.0, 0.6, 0.4, 0.0],
    (1,): [0.0, 0.55, 0.45, 0.0],
    (2,): [0.0, 0.1, 0.9, 0.0],
}


def tree(prefix):
    """Next-token log-probabilities; EOS is certain after two tokens."""
    probs = STEP.get(tuple(int(t) for t in prefix[1:]), [1.0, 0.0, 0.0, 0.0])
    with np.errstate(divide="ignore"):
        return np.log(probs)


greedy, _ = lm.greedy_decode(tree, [3], 5, eos_id=0)
beams = lm.beam_search(
    tree, [3], 2, 5, eos_id=0, length_penalty=0.0, early_stopping="never"
)
greedy_path = tuple(greedy[1:-1].tolist())  # (1, 1)
beam_path = tuple(beams[0][0][1:-1].tolist())  # (2, 2)

name = {1: "A", 2: "B"}
pos = {(): (0.0, 0.0)}  # node -> (x, y)
for a, y in [(1, 1.0), (2, -1.0)]:
    pos[(a,)] = (1.0, y)
    for b, dy in [(1, 0.5), (2, -0.5)]:
        pos[(a, b)] = (2.0, y + dy)


def on(path, node):
    return tuple(path[: len(node)]) == node


fig, ax = plt.subplots(figsize=(6.4, 4.0))
for node, (x, y) in pos.items():
    if node:
        parent = node[:-1]
        px, py = pos[parent]
        p = np.exp(tree(np.array([3, *parent]))[node[-1]])
        color, lw = "0.6", 1.2
        if on(greedy_path, node):
            color, lw = "tab:orange", 3.0
        if on(beam_path, node):
            color, lw = "tab:blue", 3.0
        ax.plot([px, x], [py, y], color=color, lw=lw, zorder=1)
        ax.text(
            (px + x) / 2,
            (py + y) / 2 + 0.1,
            f"{name[node[-1]]} {p:.2f}",
            ha="center",
            fontsize=9,
            bbox=dict(fc="white", ec="none", pad=1),
        )
    label = "BOS" if not node else " ".join(name[t] for t in node)
    ax.text(
        x,
        y,
        label,
        ha="center",
        va="center",
        fontsize=10,
        zorder=2,
        bbox=dict(boxstyle="round,pad=0.3", fc="#eeeeee", ec="0.35"),
    )
    if len(node) == 2:  # a leaf: the string's probability, EOS included
        ids = np.array([3, *node, 0])
        logp = sum(tree(ids[: t + 1])[ids[t + 1]] for t in range(3))
        ax.text(2.25, y, f"P = {np.exp(logp):.2f}", va="center", fontsize=9)
ax.text(
    2.65,
    pos[greedy_path][1],
    "greedy",
    va="center",
    color="tab:orange",
    fontsize=10,
)
ax.text(
    2.65,
    pos[beam_path][1],
    "beam 2: the mode",
    va="center",
    color="tab:blue",
    fontsize=10,
)
ax.set(
    xlim=(-0.3, 3.5),
    ylim=(-1.8, 1.8),
    title="Greedy takes the better first step; beam search keeps B alive",
)
ax.axis("off")
fig.tight_layout()
