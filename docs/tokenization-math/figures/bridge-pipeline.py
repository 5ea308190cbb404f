"""From text to rows of the embedding table: "héllo" under corpus A's merges.

Each box is one stage of the pipeline with its symbolic shape, the values
the kernel produced for "héllo" (the example of §1.1) and their length or
shape; the label beside each arrow is the call that makes the next stage.
The last box is where Embedding Space Math starts: a toy table E of width
d = 8 with one row per id of the 264-token vocabulary.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch

A = {"low": 5, "lower": 2, "lowest": 3, "newer": 6, "wider": 4, "new": 2}
M_A = lm.bpe_train(A, 8)
vocab = lm.bpe_vocab(M_A)
text = "héllo"
points = [ord(c) for c in text]
raw = list(text.encode("utf-8"))
chunks = lm.pretokenize(text)
tokens = [t for c in chunks for t in lm.bpe_encode_word(c, M_A)]
ids = lm.bpe_encode_text(text, M_A)
assert ids.tolist() == [vocab[t] for t in tokens]
d = 8
E = np.random.default_rng(0).normal(size=(len(vocab), d))  # (|V|, d)
X = lm.lookup(E, ids)  # (k, d)


def shape(a):
    return str(tuple(np.shape(a)))  # (5,) for a vector, (5, 8) for a matrix


def show(t):
    """A token's bytes: printable ASCII as is, other bytes in hex."""
    return "".join(chr(b) if 32 < b < 127 else f"\\x{b:02x}" for b in t)


stage = {
    "tok": ("#eeeeee", "0.35"),
    "emb": ("#dbe8f5", "tab:blue"),
}
steps = [  # (label, stage, call that leads to the next box)
    (
        f'text (str of code points)\n"{text}"  {points}\n'
        f"{len(points)} code points",
        "tok",
        'text.encode("utf-8")',
    ),
    (
        f"UTF-8 bytes $\\mathbf{{b}}\\in\\{{0,\\dots,255\\}}^n$\n{raw}\n"
        f"$n$ = {len(raw)}",
        "tok",
        "lm.pretokenize",
    ),
    (
        f"pre-tokens $u_1 \\cdots u_m$\n{chunks}\n$m$ = {len(chunks)}",
        "tok",
        "lm.bpe_encode_word(u, $M_A$)",
    ),
    (
        "tokens $\\mathbf{t}\\in\\mathcal{V}^k$\n"
        + "  ·  ".join(show(t) for t in tokens)
        + f"\n$k$ = {len(tokens)}",
        "tok",
        "lm.bpe_vocab($M_A$): byte $b$ → $b$, merge $j$ → 256 + $j$",
    ),
    (
        "ids $\\mathbf{i}\\in[0, |\\mathcal{V}|)^k$\n"
        f"{ids.tolist()}\nshape {shape(ids)}",
        "tok",
        "lm.lookup(E, ids)",
    ),
    (
        f"rows of $E$: $X = E[\\mathbf{{i}}]$\n$E$: $(|\\mathcal{{V}}|, d)$"
        f" = {E.shape}\n$X$: $(k, d)$ = {X.shape}",
        "emb",
        None,
    ),
]

fig, ax = plt.subplots(figsize=(6.4, 8.6))
n = len(steps)
boxes = [
    ax.text(
        -0.45,
        n - 1 - j,
        label,
        ha="center",
        va="center",
        fontsize=10.5,
        linespacing=1.35,
        bbox=dict(
            boxstyle="round,pad=0.45",
            fc=stage[s][0],
            ec=stage[s][1],
            lw=1.5,
        ),
    )
    for j, (label, s, _) in enumerate(steps)
]
for j, (_, _, call) in enumerate(steps[:-1]):
    a, b = boxes[j], boxes[j + 1]
    ax.add_patch(
        FancyArrowPatch(
            a.get_position(),
            b.get_position(),
            patchA=a.get_bbox_patch(),
            patchB=b.get_bbox_patch(),
            arrowstyle="-|>",
            mutation_scale=13,
            color="0.25",
            zorder=5,
        )
    )
    ax.text(
        -0.39,
        n - 1.5 - j,
        call,
        ha="left",
        va="center",
        fontsize=9,
        family="monospace",
        color="0.25",
    )
for s, name in [
    ("tok", "this lesson: tokenization"),
    ("emb", "Embedding Space Math"),
]:
    ax.scatter(
        [], [], marker="s", s=90, fc=stage[s][0], ec=stage[s][1], label=name
    )
ax.legend(
    loc="upper center",
    bbox_to_anchor=(0.5, 0.03),
    ncol=2,
    frameon=False,
    fontsize=10,
)
ax.set_title(
    f'"{text}" with corpus A\'s {len(M_A)} merges,'
    f" $|\\mathcal{{V}}|$ = {len(vocab)}, $d$ = {d}",
    fontsize=11,
)
ax.set(xlim=(-1.0, 1.0), ylim=(-0.6, n - 0.4))
ax.axis("off")
