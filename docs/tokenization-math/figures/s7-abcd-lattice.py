"""Two paths through the lattice of "abcd" under corpus B's BPE vocabulary.

Corpus B (bc 10, ab 5, cd 4, abcd 1) trains the merges b+c, a+b, c+d, so
the pieces are a, b, c, d, bc, ab, cd: seven arcs over nodes 0 ... 4 and
five paths. The top row highlights BPE's encoding of "abcd" (merge rank),
the bottom row the path with the fewest pieces. Each row also gives the
path's probability under a unigram model fitted to the tokens BPE makes
of corpus B (bc 11, ab 5, cd 4, a 1, d 1).
"""

import math
from collections import Counter

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

corpus_b = {"bc": 10, "ab": 5, "cd": 4, "abcd": 1}
merges_b = lm.bpe_train(corpus_b, 3)
pieces = {"a", "b", "c", "d"} | {(m.left + m.right).decode() for m in merges_b}
text = "abcd"
n = len(text)
edges = [
    (i, j)
    for i in range(n)
    for j in range(i + 1, n + 1)
    if text[i:j] in pieces
]
assert len(edges) == 7 and lm.count_segmentations(text, pieces) == 5

bpe_path = [t.decode() for t in lm.bpe_encode_word(text, merges_b)]
short_path, _ = lm.viterbi(text, {t: -1.0 for t in pieces})
counts = Counter()
for w, c in corpus_b.items():
    for t in lm.bpe_encode_word(w, merges_b):
        counts[t.decode()] += c
total = sum(counts.values())
log_p = {t: math.log(c / total) for t, c in counts.items()}
log_z, _ = lm.forward_backward(text, log_p)

rows = [
    (bpe_path, "BPE (merge rank)", "tab:blue"),
    (short_path, "fewest pieces", "tab:orange"),
]
fig, axes = plt.subplots(2, 1, figsize=(6.0, 4.6), sharex=True)
for ax, (path, name, color) in zip(axes, rows):
    cuts = np.cumsum([0] + [len(t) for t in path])
    on_path = set(zip(cuts[:-1], cuts[1:]))
    for i, j in edges:
        h = 0.25 * (j - i)  # longer pieces arc higher
        xs = np.linspace(i, j, 40)
        ys = h * np.sin(np.pi * (xs - i) / (j - i))
        if (i, j) in on_path:
            ax.plot(xs, ys, color=color, lw=2.6, zorder=2)
            ax.text(
                (i + j) / 2,
                h + 0.04,
                text[i:j],
                ha="center",
                va="bottom",
                fontsize=11,
                color=color,
            )
        else:
            ax.plot(xs, ys, color="0.8", lw=1.0, zorder=1)
    ax.scatter(range(n + 1), np.zeros(n + 1), s=30, color="0.25", zorder=3)
    for k, ch in enumerate(text):
        ax.text(k + 0.5, -0.1, ch, ha="center", va="top", fontsize=11)
    prob = math.exp(sum(log_p[t] for t in path))
    ax.text(
        n + 0.3,
        0.22,
        f"{name}: {'/'.join(path)}\n{len(path)} tokens\n"
        f"unigram P = {prob:.6f}\nposterior {prob / math.exp(log_z):.4f}",
        va="center",
        fontsize=10,
        color=color,
    )
    ax.set_ylim(-0.3, 0.75)
    ax.axis("off")
for k in range(n + 1):
    axes[-1].text(
        k, -0.3, str(k), ha="center", va="top", fontsize=10, color="0.4"
    )
axes[0].set_title(
    'Corpus B: "abcd" has 5 segmentations;\nBPE and the shortest path differ',
    fontsize=11,
)
axes[0].set_xlim(-0.2, n + 2.6)
fig.tight_layout()
