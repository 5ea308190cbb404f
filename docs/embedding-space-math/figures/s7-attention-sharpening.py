"""Attention weights over six keys sharpen as the temperature falls.

They gather onto the top-scoring key.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

# The same query and unit-norm keys as the worked example of section 7.2.
K = np.array(
    [
        [1.0, 0.0, 0.0, 0.0],
        [0.8, 0.6, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
        [-1.0, 0.0, 0.0, 0.0],
    ]
)
q = np.array([2.0, 1.0, 0.0, 0.0])
V = np.eye(6)  # one-hot values: the output equals the weight vector
temperatures = [4.0, 1.0, 0.25, 1 / 16]
labels = ["4", "1", "1/4", "1/16"]
colors = ["tab:blue", "tab:orange", "tab:green", "tab:purple"]

fig, ax = plt.subplots(figsize=(6.4, 3.6))
x = np.arange(len(K))
width = 0.2
for i, (tau, label, color) in enumerate(zip(temperatures, labels, colors)):
    _, w = lm.scaled_dot_product_attention(
        q[None], K, V, scale=1 / (tau * np.sqrt(4))
    )
    ax.bar(
        x + (i - 1.5) * width, w[0], width, color=color, label=f"τ = {label}"
    )
scores = K @ q
ax.set_xticks(x, [f"key {j}\nq·k = {s:g}" for j, s in enumerate(scores)])
ax.set(
    ylabel="attention weight",
    ylim=(0, 1),
    title="Lower temperature moves the weight onto key 1 (largest q·k)",
)
ax.legend(frameon=False, title="temperature")
fig.tight_layout()
