"""GPT-2's byte-to-character map as a 16 x 16 grid of the 256 byte values.

Row = high hex digit, column = low hex digit. Each cell shows the character
the byte is written as; the 188 printable bytes keep their own character,
the 68 others (controls, space, DEL, C1 controls, no-break space, soft
hyphen) move to U+0100 ... U+0143 in increasing byte order.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

b2u = lm.bytes_to_unicode()
moved = np.array([b2u[b] != chr(b) for b in range(256)]).reshape(16, 16)

fig, ax = plt.subplots(figsize=(7.0, 7.0))
ax.imshow(
    moved, cmap=ListedColormap(["#e8eef7", "tab:orange"]), vmin=0, vmax=1
)
for b in range(256):
    r, c = divmod(b, 16)
    ax.text(
        c,
        r,
        b2u[b],
        ha="center",
        va="center",
        fontsize=11,
        color="black",
        fontweight="bold" if moved[r, c] else "normal",
    )
hexdigits = [f"{d:X}" for d in range(16)]
ax.set_xticks(range(16), hexdigits)
ax.set_yticks(range(16), [f"{d:X}_" for d in range(16)])
ax.tick_params(length=0)
ax.xaxis.set_ticks_position("top")
ax.set_xticks(np.arange(-0.5, 16), minor=True)
ax.set_yticks(np.arange(-0.5, 16), minor=True)
ax.grid(which="minor", color="white", lw=1.5)
ax.tick_params(which="minor", length=0)
for side in ax.spines.values():
    side.set_visible(False)
ax.set_xlabel(
    f"orange: {int(moved.sum())} bytes moved to U+0100 ... U+0143 "
    f"(space 0x20 -> {b2u[32]}, newline 0x0A -> {b2u[10]}); "
    f"blue: {int((~moved).sum())} bytes kept",
    fontsize=9,
)
ax.set_ylabel("high hex digit of the byte")
ax.set_title(
    "Byte value (row, column in hex) and the character it is written as"
)
fig.tight_layout()
