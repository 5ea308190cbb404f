"""The masks of section 4 side by side, each drawn from the kernel.

Top: the causal mask for 3 queries and 7 keys (3 new tokens after 4 cached
ones), top-left aligned (PyTorch's is_causal) and bottom-right aligned (what
a chunked prefill needs). Then, over 8 tokens: a key-padding mask with two
left pads, broadcast over the queries; a block-diagonal causal mask for
three packed documents of lengths 3, 2 and 3; a causal sliding window of 3
keys; and the padding mask ANDed with the causal mask (section 4.5), whose
first two rows are empty. Dark cells: the query (row) may attend the key
(column).
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

T = 8
tq, tk = 3, 7
pad = lm.key_padding_mask([[0, 0, 1, 1, 1, 1, 1, 1]])  # (1, 1, 1, T)
panels = [
    ("causal, top-left (is_causal)", lm.causal_mask(tq, tk)),
    ("causal, bottom-right", lm.causal_mask(tq, tk, align="bottom-right")),
    ("padding: 2 left pads", np.broadcast_to(pad[0, 0], (T, T))),
    ("documents 3 + 2 + 3", lm.document_mask([3, 2, 3])),
    ("sliding window, w = 3", lm.sliding_window_mask(T, window=3)),
    ("padding AND causal", (pad & lm.causal_mask(T))[0, 0]),
]

cmap = ListedColormap(["#eceff1", "#1f5fa8"])  # blocked, may attend
fig, axes = plt.subplots(
    3,
    2,
    figsize=(6.4, 8.2),
    layout="constrained",
    gridspec_kw={"height_ratios": [0.62, 1, 1]},
)
for ax, (title, mask) in zip(axes.flat, panels):
    n_q, n_k = mask.shape
    ax.imshow(mask.astype(int), cmap=cmap, vmin=0, vmax=1)
    ax.set_xticks(np.arange(-0.5, n_k), minor=True)
    ax.set_yticks(np.arange(-0.5, n_q), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="minor", length=0)
    ax.set_xticks(range(n_k))
    ax.set_yticks(range(n_q))
    ax.tick_params(labelsize=10, length=2)
    ax.set_title(title, fontsize=11)
    ax.set_xlabel("key j", fontsize=10)
    ax.set_ylabel("query i", fontsize=10)
