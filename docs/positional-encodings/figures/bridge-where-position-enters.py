"""Where each position scheme enters one attention layer, toy-batch shapes."""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, Rectangle

# A toy batch through the kernel: B = 2, T = 5, V = 10, d = 8, H = 2 heads.
# It runs three schemes at once only to read off the shapes; a model has one.
rng = np.random.default_rng(0)
B, T, V, d, H = 2, 5, 10, 8, 2
ids = rng.integers(0, V, size=(B, T))
X = lm.lookup(rng.normal(size=(V, d)), ids) + lm.sinusoidal(T, d)
W_q, W_k, W_v, W_o = rng.normal(size=(4, d, d)) / np.sqrt(d)
proj = [X @ W for W in (W_q, W_k, W_v)]  # each (B, T, d)
q, k, v = (lm.split_heads(a, H) for a in proj)
q, k = lm.apply_rope(q), lm.apply_rope(k)
out, weights = lm.scaled_dot_product_attention(
    q, k, v, bias=lm.alibi_bias(H, T), causal=True
)
Y = lm.merge_heads(out) @ W_o
shape = lambda a: "(" + ", ".join(map(str, a.shape)) + ")"  # noqa: E731

style = {
    "core": ("#eeeeee", "0.35"),
    "add": ("#dbe8f5", "tab:blue"),
    "rope": ("#fde3cc", "tab:orange"),
    "bias": ("#dcefdc", "tab:green"),
    "shaw": ("#ece2f3", "tab:purple"),
}
main = [  # (y, label, style): the path, top to bottom
    (8, f"token ids (B, T)\n{shape(ids)}", "core"),
    (7, f"embedding lookup (B, T, d)\n{shape(X)}", "core"),
    (6, f"Q, K, V projections\n3 × {shape(proj[0])}", "core"),
    (5, f"split heads (B, H, T, d_k)\n{shape(v)}", "core"),
    (4, f"RoPE rotates q and k, not v\n{shape(q)}", "rope"),
    (3, f"scores q·k / √d_k (B, H, T, T)\n{shape(weights)}", "core"),
    (2, f"softmax over keys (decoder: causal mask)\n{shape(weights)}", "core"),
    (1, f"weighted sum of v (B, H, T, d_k)\n{shape(out)}", "core"),
    (0, f"merge heads, output projection (B, T, d)\n{shape(Y)}", "core"),
]
side = [  # (y, label, style, y of the main box it feeds)
    (
        7,
        "+ sinusoidal or learned table\nP (T, d), once, before layer 1",
        "add",
        7,
    ),
    (
        3.45,
        "Shaw: + q·a$^K$ of clip(j − i)\ninside the dot product",
        "shaw",
        3,
    ),
    (2.55, "T5 / ALiBi: + bias (H, T, T)\nadded to the scores", "bias", 3),
    (1, "Shaw: + a$^V$ of clip(j − i)\nin the weighted sum", "shaw", 1),
]
fig, ax = plt.subplots(figsize=(7.6, 7.2))


def box(x, y, label, s):
    return ax.text(
        x,
        y,
        label,
        ha="center",
        va="center",
        fontsize=8.5,
        bbox=dict(
            boxstyle="round,pad=0.45",
            fc=style[s][0],
            ec=style[s][1],
            lw=1.5,
            ls="--" if s == "rope" else "-",
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
            mutation_scale=12,
            color=color,
            ls=ls,
            zorder=5,
        )
    )


mains = {y: box(0.0, y, label, s) for y, label, s in main}
for y in range(8, 0, -1):
    arrow(mains[y], mains[y - 1])
for y, label, s, y_to in side:
    arrow(box(1.55, y, label, s), mains[y_to], color=style[s][1], ls="--")
ax.add_patch(  # the part that repeats in every layer
    Rectangle((-0.95, -0.45), 1.9, 6.9, fill=False, ec="0.55", ls=":", lw=1.2)
)
ax.text(-0.91, 6.32, "every layer", fontsize=8.5, color="0.35", va="top")
for s, name in [
    ("add", "added to the input"),
    ("rope", "rotation of q, k"),
    ("bias", "score bias"),
    ("shaw", "relative vectors"),
]:
    ax.scatter(
        [], [], marker="s", s=80, fc=style[s][0], ec=style[s][1], label=name
    )
ax.legend(
    loc="upper center",
    bbox_to_anchor=(0.5, 0.0),
    ncol=4,
    frameon=False,
    fontsize=8.5,
)
ax.set(
    xlim=(-1.0, 2.35),
    ylim=(-0.6, 8.5),
    title="Where each position scheme enters the computation",
)
ax.axis("off")
