"""Embedding parameters of three familiar models, output layer tied/untied."""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch

# name, vocabulary size V, width d, learned position rows, output layer tied?
models = [
    ("GPT-2 small", 50257, 768, 1024, True),
    ("BERT-base", 30522, 768, 512, True),
    ("LLaMA 7B", 32000, 4096, 0, False),
]
x = np.arange(len(models))
tied = [
    lm.param_count(V, d, tied=True, n_positions=P) / 1e6
    for _, V, d, P, _ in models
]
untied = [
    lm.param_count(V, d, tied=False, n_positions=P) / 1e6
    for _, V, d, P, _ in models
]

fig, ax = plt.subplots(figsize=(6.4, 3.6))
w = 0.38
bars_t = ax.bar(x - w / 2, tied, w, color="tab:blue")
bars_u = ax.bar(x + w / 2, untied, w, color="tab:orange")
for k, (*_, ties) in enumerate(models):
    used = bars_t[k] if ties else bars_u[k]
    used.set_edgecolor("black")
    used.set_linewidth(1.5)
    used.set_hatch("//")
ax.bar_label(bars_t, labels=[f"{v:.1f}" for v in tied], fontsize=8, padding=2)
ax.bar_label(
    bars_u, labels=[f"{v:.1f}" for v in untied], fontsize=8, padding=2
)
ax.set_xticks(x, [m[0] for m in models])
ax.set_ylabel("embedding parameters (millions)")
ax.set_ylim(0, max(untied) * 1.15)
ax.set_title("Token (+ learned position) embedding parameters")
handles = [
    Patch(color="tab:blue", label="tied: output layer is E"),
    Patch(color="tab:orange", label="untied: separate W"),
    Patch(
        facecolor="white",
        edgecolor="black",
        hatch="//",
        label="the model's actual choice",
    ),
]
ax.legend(handles=handles, frameon=False, loc="upper left")
fig.tight_layout()
