"""ALiBi slopes of a 12-head model: the paper's geometric rule against
the reference code's rule (get_slopes), which checkpoints such as BLOOM use.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

H = 12
heads = np.arange(H)  # array index: the paper's head h is entry h - 1
reference = lm.alibi_slopes(H)
geometric = 2.0 ** (-8 * (heads + 1) / H)

fig, ax = plt.subplots(figsize=(7.4, 3.4))
ax.plot(
    heads,
    np.log2(geometric),
    "o-",
    color="tab:orange",
    lw=1,
    label="paper's rule $2^{-8h/12}$",
)
ax.plot(
    heads[:8],
    np.log2(reference[:8]),
    "s-",
    color="tab:blue",
    lw=1,
    label="reference code: the 8-head slopes ...",
)
ax.plot(
    heads[8:],
    np.log2(reference[8:]),
    "D-",
    color="tab:green",
    lw=1,
    label="... then odd slopes of the 16-head rule",
)
ax.set_xticks(heads)
ax.set_yticks(range(-8, 1))
ax.set_yticklabels([f"$2^{{{k}}}$" if k else "1" for k in range(-8, 1)])
ax.set(
    xlabel="head index in the checkpoint (0-based)",
    ylabel="slope $m$ (log scale)",
)
ax.grid(axis="y", color="0.9")
ax.legend(frameon=False, fontsize=8, loc="lower left")
ax.set_title("12 heads: the two rules give no head the same slope", fontsize=9)
fig.tight_layout()
