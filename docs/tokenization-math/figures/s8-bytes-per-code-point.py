"""One greeting per script: code points, UTF-8 bytes and tokens.

For each sample the bars give its length in code points, in UTF-8 bytes
and in tokens under corpus A's eight merges (lm.bpe_encode_text). The
merges were learned on English words, so outside ASCII every token is a
single byte and the token count equals the byte count; the label above
each group is the number of bytes per code point.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

corpus_a = {
    "low": 5,
    "lower": 2,
    "lowest": 3,
    "newer": 6,
    "wider": 4,
    "new": 2,
}
merges = lm.bpe_train(corpus_a, 8)
samples = [
    ("hello", "English"),
    ("привет", "Russian"),
    ("مرحبا", "Arabic"),
    ("नमस्ते", "Hindi"),
    ("こんにちは", "Japanese"),
    ("\N{GRINNING FACE}", "emoji"),
]
cps = np.array([len(s) for s, _ in samples])
nbytes = np.array([len(s.encode("utf-8")) for s, _ in samples])
ntok = np.array([len(lm.bpe_encode_text(s, merges)) for s, _ in samples])

x = np.arange(len(samples))
w = 0.27
fig, ax = plt.subplots(figsize=(6.0, 4.0))
ax.bar(x - w, cps, w, color="tab:gray", label="code points")
ax.bar(x, nbytes, w, color="tab:blue", label="UTF-8 bytes")
ax.bar(x + w, ntok, w, color="tab:orange", label="tokens, corpus A merges")
for k in x:
    ax.text(
        k,
        max(nbytes[k], ntok[k]) + 0.5,
        f"{nbytes[k] / cps[k]:.2f} B/cp",
        ha="center",
        fontsize=9.5,
    )
ax.set_xticks(x, [name for _, name in samples])
ax.set(
    ylabel="length",
    ylim=(0, 21),
    title="Bytes per code point set where byte-level BPE starts",
)
ax.legend(frameon=False, loc="upper left", fontsize=9.5)
fig.tight_layout()
