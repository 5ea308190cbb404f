"""The embedding step between tokenization and attention, toy-batch shapes."""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch

# A toy batch through the kernel: B = 2 texts, T = 4 tokens, V = 10 ids, d = 8.
ids = np.array([[3, 7, 7, 1], [0, 2, 9, 4]])
E = np.random.default_rng(0).normal(size=(10, 8))
P = lm.sinusoidal(ids.shape[1], E.shape[1])
H0 = lm.lookup(E, ids) + P
H1 = H0 + lm.scaled_dot_product_attention(H0, H0, H0, causal=True)[0]
logits = lm.tied_logits(H1, E)
shape = lambda a: "(" + ", ".join(map(str, a.shape)) + ")"  # noqa: E731

stage = {
    "tok": ("#eeeeee", "0.35"),
    "emb": ("#dbe8f5", "tab:blue"),
    "attn": ("#fde3cc", "tab:orange"),
}
boxes = [  # (x, y, label, stage), in pipeline order
    (0.0, 1, "text", "tok"),
    (0.9, 1, "tokenizer", "tok"),
    (1.95, 1, f"ids (B, T)\n{shape(ids)}", "tok"),
    (3.1, 1, f"lookup in E (V, d)\n{shape(E)}", "emb"),
    (4.3, 1, f"+ positions P (T, d)\n{shape(P)}", "emb"),
    (4.3, 0, f"residual stream (B, T, d)\n{shape(H0)}", "emb"),
    (2.95, 0, f"attention / MLP\nblocks (B, T, d)\n{shape(H1)}", "attn"),
    (1.75, 0, f"head W (V, d)\ntied: W = E\n{shape(E)}", "emb"),
    (0.35, 0, f"logits (B, T, V)\n{shape(logits)}", "emb"),
]
fig, ax = plt.subplots(figsize=(9.0, 3.4))
texts = [
    ax.text(
        x,
        y,
        label,
        ha="center",
        va="center",
        fontsize=8.5,
        bbox=dict(
            boxstyle="round,pad=0.45", fc=stage[s][0], ec=stage[s][1], lw=1.5
        ),
    )
    for x, y, label, s in boxes
]
for (a, b), arc in [
    (pair, 0.0) for pair in zip(range(8), range(1, 9), strict=True)
] + [((7, 3), -0.25)]:
    ax.add_patch(
        FancyArrowPatch(
            boxes[a][:2],
            boxes[b][:2],
            patchA=texts[a].get_bbox_patch(),
            patchB=texts[b].get_bbox_patch(),
            arrowstyle="<|-|>" if arc else "-|>",
            mutation_scale=12,
            color="tab:blue" if arc else "0.25",
            ls="--" if arc else "-",
            connectionstyle=f"arc3,rad={arc}",
            zorder=5,
        )
    )
ax.text(
    2.55,
    0.5,
    "the same matrix\nwhen tied",
    color="tab:blue",
    fontsize=8,
    va="center",
)
for s, name in [
    ("tok", "tokenization (not in this course)"),
    ("emb", "this lesson"),
    ("attn", "attention (§7 and later lessons)"),
]:
    ax.scatter(
        [], [], marker="s", s=80, fc=stage[s][0], ec=stage[s][1], label=name
    )
ax.legend(
    loc="upper center",
    bbox_to_anchor=(0.5, -0.02),
    ncol=3,
    frameon=False,
    fontsize=8.5,
)
ax.set(
    xlim=(-0.4, 4.9),
    ylim=(-0.45, 1.4),
    title="From text to logits: where the embedding step sits",
)
ax.axis("off")
