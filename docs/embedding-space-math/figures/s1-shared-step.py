"""One gradient step on a shared linear head, taken for (cat -> sat) only."""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

vocab = ["the", "cat", "sat", "mat", "a", "dog", "ran", "rug"]
E = np.array(
    [
        [-2.0, 1.0],
        [1.6, 1.2],
        [0.2, -1.6],
        [1.8, -1.0],
        [-1.8, 1.3],
        [1.9, 0.9],
        [0.5, -1.9],
        [2.1, -1.3],
    ]
)
a, y, eta = vocab.index("cat"), vocab.index("sat"), 0.5
W = np.random.default_rng(0).normal(scale=0.5, size=(8, 2))  # shared head
W_step = W - eta * lm.output_row_grad(E[a], W, y)
delta = lm.log_softmax(E @ W_step.T)[:, y] - lm.log_softmax(E @ W.T)[:, y]
sim = E @ E[a]  # dot product of every row with the row of "cat"

order = np.argsort(sim)  # tokens from least to most similar to "cat"
fig, ax = plt.subplots(figsize=(6.4, 3.6))
colors = ["tab:blue" if s > 0 else "tab:orange" for s in sim[order]]
bars = ax.bar([vocab[i] for i in order], delta[order], color=colors)
ax.bar_label(
    bars, labels=[f"{s:+.2f}" for s in sim[order]], padding=2, fontsize=8
)
ax.axhline(0, color="0.4", lw=0.8)
ax.bar(
    0, 0, color="tab:blue", label="row has positive dot product with cat's row"
)
ax.bar(
    0,
    0,
    color="tab:orange",
    label="row has negative dot product with cat's row",
)
ax.set(
    xlabel="token b (bar label: dot product of its row with cat's row)",
    ylabel="change in log p(sat | b)",
    ylim=(-1.3, 2.5),
    title=(
        "One step taught on (cat -> sat) moves every token by its similarity"
    ),
)
ax.legend(loc="upper left", fontsize=8, frameon=False)
fig.tight_layout()
