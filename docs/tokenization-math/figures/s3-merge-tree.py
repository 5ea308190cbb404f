"""The eight merges of corpus A drawn as the trees of the tokens they build.

Each merged token sits at the height of its merge index k, above the two
tokens it joins; single bytes sit at the bottom. The left axis lists each
merge with its pair count, the right axis the corpus length after it.
"""

import llmmath as lm
import matplotlib.pyplot as plt

A = {"low": 5, "lower": 2, "lowest": 3, "newer": 6, "wider": 4, "new": 2}
M_A = lm.bpe_train(A, 8)
rank = {m.left + m.right: k for k, m in enumerate(M_A)}
parts = {m.left + m.right: (m.left, m.right) for m in M_A}
used = {p for m in M_A for p in (m.left, m.right)}
roots = [t for t in rank if t not in used]  # tokens no later merge uses


def corpus_tokens(merges):
    """Tokens of corpus A, each word encoded with the given merges."""
    return sum(c * len(lm.bpe_encode_word(w, merges)) for w, c in A.items())


T = [corpus_tokens(M_A[:k]) for k in range(len(M_A) + 1)]  # T_0 ... T_8

fig, ax = plt.subplots(figsize=(6.0, 5.0))
next_x = [0.0]


def draw(token):
    """Draw the tree of token; return the x position of its node."""
    if token not in parts:  # a single byte: a leaf
        x, y = next_x[0], -1
        next_x[0] += 1.0
    else:
        xs = [draw(p) for p in parts[token]]
        x, y = sum(xs) / 2, rank[token]
        for p, xc in zip(parts[token], xs):
            yc = rank.get(p, -1)
            ax.plot([xc, x], [yc, y], color="0.55", lw=1.2, zorder=1)
    merged = token in parts
    ax.text(
        x,
        y,
        token.decode(),
        ha="center",
        va="center",
        fontsize=11,
        zorder=2,
        bbox={
            "boxstyle": "round,pad=0.25",
            "fc": "tab:blue" if merged else "white",
            "ec": "tab:blue" if merged else "0.5",
            "alpha": 0.9 if merged else 1.0,
        },
        color="white" if merged else "black",
    )
    return x


for root in roots:
    draw(root)
    next_x[0] += 0.8  # gap between trees

labels = [
    f"{k}: {m.left.decode()}+{m.right.decode()}  ({m.count})"
    for k, m in enumerate(M_A)
]
ax.set_yticks(range(-1, len(M_A)), ["bytes"] + labels, fontsize=10)
ax.set_ylim(-1.7, len(M_A) - 0.3)
ax.set_xlim(-0.8, next_x[0] - 0.5)
ax.set_xticks([])
ax.spines["bottom"].set_visible(False)
ax.set_ylabel("merge index k: pair (count)")
right = ax.twinx()
right.set_ylim(ax.get_ylim())
right.set_yticks(range(-1, len(M_A)), [f"T = {t}" for t in T])
right.tick_params(labelsize=10)
right.spines["bottom"].set_visible(False)
right.set_ylabel("corpus tokens after the merge")
ax.set_title("Corpus A: eight merges build low, newer and ider")
fig.tight_layout()
