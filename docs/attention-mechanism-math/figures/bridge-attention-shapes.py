"""One multi-head self-attention call, box by box, with the kernel's shapes.

A toy batch of B = 2 sequences of T = 5 tokens, width d = 8, H = 2 heads of
d_h = 4. Each box names an array, its symbolic shape and the shape the
kernel produced; side boxes are the weights and the optional mask or bias.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch

rng = np.random.default_rng(0)
B, T, d, H = 2, 5, 8, 2
d_h = d // H
x = rng.normal(size=(B, T, d))
w_q, w_k, w_v, w_o = rng.normal(size=(4, d, d)) / np.sqrt(d)
q, k, v = (lm.split_heads(x @ w, H) for w in (w_q, w_k, w_v))
O, A = lm.scaled_dot_product_attention(q, k, v, causal=True)
concat = lm.merge_heads(O)
y, weights = lm.multi_head_attention(x, w_q, w_k, w_v, w_o, H, causal=True)
assert np.allclose(y, concat @ w_o) and np.allclose(weights, A)


def shape(a):
    return "(" + ", ".join(map(str, np.shape(a))) + ")"


style = {
    "array": ("#eeeeee", "0.35"),
    "weight": ("#dbe8f5", "tab:blue"),
    "mask": ("#dcefdc", "tab:green"),
}
main = [  # (y, label): the path of one call, top to bottom
    (7, f"input $x$\n$(B, T, d)$\n{shape(x)}"),
    (6, f"$Q, K, V$ in heads\n$(B, H, T, d_h)$\n3 × {shape(q)}"),
    (
        5,
        f"scores $S = QK^\\top/\\sqrt{{d_h}}$\n$(B, H, T_q, T_k)$\n{shape(A)}",
    ),
    (4, f"$A$ = softmax over keys\n$(B, H, T_q, T_k)$\n{shape(weights)}"),
    (3, f"$O = AV$\n$(B, H, T_q, d_h)$\n{shape(O)}"),
    (2, f"concat heads\n$(B, T, H\\cdot d_h)$\n{shape(concat)}"),
    (1, f"output $[O_1,\\dots,O_H]\\,W_O$\n$(B, T, d)$\n{shape(y)}"),
]
side = [  # (y, label, style, y of the box it feeds)
    (6, f"$W_Q, W_K, W_V$\n$(d, H\\cdot d_h)$\n{shape(w_q)}", "weight", 6),
    (
        4.5,
        f"mask or bias\n$(T_q, T_k)$\n{shape(lm.causal_mask(T))}",
        "mask",
        5,
    ),
    (1, f"$W_O$\n$(H\\cdot d_h, d)$\n{shape(w_o)}", "weight", 1),
]

fig, ax = plt.subplots(figsize=(5.0, 9.6))


def box(x0, y0, label, s):
    return ax.text(
        x0,
        y0,
        label,
        ha="center",
        va="center",
        fontsize=11.5,
        linespacing=1.3,
        bbox=dict(
            boxstyle="round,pad=0.45", fc=style[s][0], ec=style[s][1], lw=1.5
        ),
    )


def arrow(a, b, color="0.25", ls="-"):
    ax.add_patch(
        FancyArrowPatch(
            a.get_position(),
            b.get_position(),
            patchA=a.get_bbox_patch(),
            patchB=b.get_bbox_patch(),
            arrowstyle="-|>",
            mutation_scale=13,
            color=color,
            ls=ls,
            zorder=5,
        )
    )


boxes = {y0: box(0.0, y0, label, "array") for y0, label in main}
for y0 in range(7, 1, -1):
    arrow(boxes[y0], boxes[y0 - 1])
for y0, label, s, y_to in side:
    arrow(box(1.25, y0, label, s), boxes[y_to], color=style[s][1], ls="--")
for s, name in [("array", "arrays"), ("weight", "weights"), ("mask", "mask")]:
    ax.scatter(
        [], [], marker="s", s=90, fc=style[s][0], ec=style[s][1], label=name
    )
ax.legend(
    loc="upper center",
    bbox_to_anchor=(0.5, 0.02),
    ncol=3,
    frameon=False,
    fontsize=11,
)
ax.set_title(
    f"One attention call: $B$ = {B}, $T$ = {T}, $d$ = {d}, $H$ = {H},"
    f" $d_h$ = {d_h}",
    fontsize=11,
)
ax.set(xlim=(-0.75, 1.8), ylim=(0.45, 7.55))
ax.axis("off")
