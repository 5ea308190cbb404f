"""From ids to a loss and to a decoded token, with the kernel's shapes.

The toy batch of the conceptual bridge: B = 2 sequences of T = 6 ids over a
vocabulary of V = 16, width d = 8, H = 2 heads of d_h = 4; row 1 ends in one
pad. The trunk runs ids -> embeddings -> one causal attention layer with
RoPE -> final states -> head -> logits; the left branch is training (shifted
labels, masked mean), the right branch decoding (processors and warpers on
the last row, then a sampled token that one cached step appends).
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch

rng = np.random.default_rng(0)
B, T, V, d, H = 2, 6, 16, 8, 2
PAD = 15
ids = np.array([[0, 5, 3, 9, 3, 7], [0, 2, 11, 4, 0, PAD]])
real = ids != PAD
E = rng.normal(size=(V, d))
W_q, W_k, W_v, W_o = rng.normal(size=(4, d, d)) / np.sqrt(d)
W = rng.normal(size=(V, d)) / np.sqrt(d)
x = lm.lookup(E, ids)
q, k, v = (lm.split_heads(x @ w, H) for w in (W_q, W_k, W_v))
q, k = lm.apply_rope(q, np.arange(T)), lm.apply_rope(k, np.arange(T))
o, _ = lm.scaled_dot_product_attention(
    q, k, v, mask=real[:, None, None, :], causal=True
)
h = x + lm.merge_heads(o) @ W_o
logits = h @ W.T
labels = np.where(real, ids, -100)
targets = lm.shift_labels(labels)
logp = lm.token_logprobs(logits, ids)
n_real = int((targets != -100).sum())
loss = lm.causal_lm_loss(logits, labels)
last = logits[:1, -1]  # row 0's last position: (1, V)
warped = lm.warp(
    last,
    context_ids=ids[:1],
    repetition_penalty=1.2,
    temperature=0.8,
    top_k=5,
    top_p=0.9,
)
nxt = lm.sample(warped, np.random.default_rng(1))
assert logits.shape == (B, T, V) and logp.shape == (B, T - 1)
assert np.isclose(loss, -logp[targets[:, :-1] != -100].mean())


def shape(a):
    return "(" + ", ".join(map(str, np.shape(a))) + ")"


style = {
    "array": ("#eeeeee", "0.35"),
    "weight": ("#dbe8f5", "tab:blue"),
    "train": ("#dcefdc", "tab:green"),
    "decode": ("#fde3cc", "tab:orange"),
}
trunk = [  # (y, label)
    (9.0, f"token ids\n$(B, T)$\n{shape(ids)}"),
    (
        7.8,
        f"embeddings $E[\\mathrm{{ids}}]$ (+ positions)\n$(B, T, d)$\n"
        f"{shape(x)}",
    ),
    (
        6.6,
        f"causal attention blocks\nRoPE on $q, k$; $K, V$ cached\n"
        f"$(B, H, T, d_h)$: {shape(k)}",
    ),
    (5.4, f"final states $h$\n$(B, T, d)$\n{shape(h)}"),
    (4.2, f"logits $Z = hW^\\top$\n$(B, T, V)$\n{shape(logits)}"),
]
train = [
    (2.9, f"labels shifted left\n$-100$ = ignored\n{shape(targets)}"),
    (1.7, f"log-probs of targets\n$(B, T-1)$\n{shape(logp)}"),
    (
        0.5,
        f"mean over {n_real} real targets\nscalar loss\n"
        f"{loss:.4f} (ln V = {np.log(V):.4f})",
    ),
]
decode = [
    (2.9, f"last row $z_T$\n$(B, V)$\n{shape(last)}: row 0"),
    (
        1.7,
        f"processors, then warpers\npenalty, $T$, top-k, top-p\n"
        f"{int(np.isfinite(warped).sum())} of {V} ids kept",
    ),
    (0.5, f"sample, search or\nspeculative check\nnext id {int(nxt[0])}"),
]
side = [  # (x, y, label, style, y of the trunk box it feeds)
    (-1.3, 7.8, f"table $E$\n$(V, d)$\n{shape(E)}", "weight", 7.8),
    (
        -1.3,
        4.2,
        f"head $W$\n$(V, d)$\n{shape(W)}\ntied: $W = E$",
        "weight",
        4.2,
    ),
]

fig, ax = plt.subplots(figsize=(7.6, 10.4))


def box(x0, y0, label, s):
    return ax.text(
        x0,
        y0,
        label,
        ha="center",
        va="center",
        fontsize=10.5,
        linespacing=1.3,
        bbox=dict(
            boxstyle="round,pad=0.45", fc=style[s][0], ec=style[s][1], lw=1.5
        ),
    )


def arrow(a, b, color="0.25", ls="-", rad=0.0):
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
            connectionstyle=f"arc3,rad={rad}",
            zorder=5,
        )
    )


t_boxes = [box(0.0, y0, label, "array") for y0, label in trunk]
for a, b in zip(t_boxes[:-1], t_boxes[1:], strict=True):
    arrow(a, b)
l_boxes = [box(-0.95, y0, label, "train") for y0, label in train]
r_boxes = [box(0.95, y0, label, "decode") for y0, label in decode]
for chain, color in [(l_boxes, "tab:green"), (r_boxes, "tab:orange")]:
    arrow(t_boxes[-1], chain[0], color=color)
    for a, b in zip(chain[:-1], chain[1:], strict=True):
        arrow(a, b, color=color)
for x0, y0, label, s, y_to in side:
    target = t_boxes[[y for y, _ in trunk].index(y_to)]
    arrow(box(x0, y0, label, s), target, color=style[s][1], ls="--")
# the loop back: the sampled id is appended and decoded in one cached step
loop_x = 1.8
ax.plot(
    [1.48, loop_x, loop_x],
    [0.5, 0.5, 9.0],
    color="tab:orange",
    ls="--",
    lw=1.3,
)
ax.annotate(
    "",
    xy=(0.36, 9.0),
    xytext=(loop_x, 9.0),
    arrowprops=dict(arrowstyle="-|>", color="tab:orange", ls="--", lw=1.3),
)
ax.text(
    loop_x - 0.08,
    6.0,
    "append the id;\none cached step\nper new token,\nat position id $T$",
    color="tab:orange",
    fontsize=9.5,
    ha="right",
    va="center",
)
for s, name in [
    ("array", "arrays"),
    ("weight", "weights"),
    ("train", "training"),
    ("decode", "decoding"),
]:
    ax.scatter(
        [], [], marker="s", s=90, fc=style[s][0], ec=style[s][1], label=name
    )
ax.legend(
    loc="upper center",
    bbox_to_anchor=(0.5, 0.02),
    ncol=4,
    frameon=False,
    fontsize=10.5,
)
ax.set_title(
    f"From ids to a loss and a token: $B$ = {B}, $T$ = {T}, $V$ = {V},"
    f" $d$ = {d}, $H$ = {H}",
    fontsize=11,
)
ax.set(xlim=(-1.75, 1.95), ylim=(-0.15, 9.65))
ax.axis("off")
