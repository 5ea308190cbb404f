"""T5 bucket id against the offset j - i, encoder against decoder.

32 buckets, max_distance 128 (T5's settings), offsets -300..300.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

offsets = np.arange(-300, 301)  # key minus query, j - i
enc = lm.t5_bucket(offsets, bidirectional=True)
dec = lm.t5_bucket(offsets, bidirectional=False)
# first magnitude in the last bucket of each side (91 and 113)
enc_last = int(-offsets[enc == 15].max())
dec_last = int(-offsets[dec == 31].max())

fig, axes = plt.subplots(
    1, 2, figsize=(7.6, 3.4), sharey=True, constrained_layout=True
)
panels = [
    (axes[0], enc, "encoder (bidirectional)", "tab:blue", enc_last),
    (axes[1], dec, "decoder (causal)", "tab:orange", dec_last),
]
for ax, buckets, title, color, last in panels:
    ax.step(offsets, buckets, where="mid", color=color, linewidth=1.4)
    for x in (-128, 128):
        ax.axvline(x, color="0.6", linestyle=":", linewidth=1)
    ax.axvline(-last, color="0.3", linestyle="--", linewidth=1)
    ax.set_title(title)
    ax.set_xlabel("offset j - i (key minus query)")
    ax.set_xticks([-300, -128, 0, 128, 300])
axes[0].axvline(enc_last, color="0.3", linestyle="--", linewidth=1)
axes[0].text(
    -enc_last - 8,
    3,
    f"last bucket\nfrom |j-i| = {enc_last}",
    ha="right",
    fontsize=8,
)
axes[1].text(
    -dec_last - 8,
    3,
    f"last bucket\nfrom j-i = -{dec_last}",
    ha="right",
    fontsize=8,
)
axes[1].text(40, 2, "every future key:\nbucket 0", fontsize=8)
# bucket 16 would be "offset +0": no key ahead has that offset
axes[0].axhline(16, color="0.6", linestyle=":", linewidth=1)
axes[0].text(-290, 16.6, "bucket 16: never used", fontsize=8)
axes[0].text(110, 6, "keys behind: 0-15\nkeys ahead: 17-31", fontsize=8)
axes[0].set_ylabel("bucket id")
axes[0].set_yticks(range(0, 32, 4))
fig.suptitle(
    "T5 buckets: exact near 0, log-spaced farther out, flat past the "
    "last edge (dotted: max_distance 128)",
    fontsize=9,
)
