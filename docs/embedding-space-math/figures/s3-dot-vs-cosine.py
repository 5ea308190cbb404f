"""Dot vs cosine: a long row beats the aligned row under the dot product."""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

h = np.array([2.0, 0.0])  # query (a hidden state), shape (d,) = (2,)
# rows w_j, shape (4, 2)
W = np.array([[1.0, 0.0], [3.0, 3.0], [0.6, 0.8], [-2.0, 1.0]])
names = ["w0 aligned", "w1 long", "w2 unit", "w3 opposed"]
dots, coss = lm.dot(W, h), lm.cosine(W, h)

fig, (ax1, ax2) = plt.subplots(
    1, 2, figsize=(7.2, 3.6), gridspec_kw={"width_ratios": [1, 1.3]}
)
ax1.annotate(
    "",
    xy=h,
    xytext=(0, 0),
    arrowprops={"arrowstyle": "->", "color": "gray", "lw": 5},
)
ax1.text(*h, "  h", va="center")
for (x, y), name, color in zip(
    W, names, ["tab:blue", "tab:orange", "tab:green", "tab:purple"]
):
    ax1.annotate(
        "",
        xy=(x, y),
        xytext=(0, 0),
        arrowprops={"arrowstyle": "->", "color": color, "lw": 2},
    )
    ax1.text(x, y + 0.15, name.split()[0], color=color, ha="center")
ax1.set(
    xlim=(-2.5, 3.5),
    ylim=(-0.5, 3.5),
    aspect="equal",
    xlabel="coordinate 1",
    ylabel="coordinate 2",
    title="Query h and four rows",
)

x = np.arange(len(W))
ax2.bar(
    x - 0.2, dots, 0.4, color="tab:orange", label="dot product $h^\\top w_j$"
)
ax2.bar(x + 0.2, coss, 0.4, color="tab:blue", label="cosine $\\cos\\theta_j$")
ax2.axhline(0, color="gray", lw=0.8)
ax2.set_xticks(x, names, rotation=20)
ax2.set(ylabel="score", title="Dot ranks w1 first, cosine ranks w0 first")
ax2.legend(frameon=False, loc="lower left")
fig.tight_layout()
