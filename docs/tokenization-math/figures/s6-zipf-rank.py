"""Rank-frequency of words and of BPE tokens in one real text, log-log.

The text is the help-topic pages that ship with CPython
(``pydoc_data.topics``), split by the GPT-2 pre-tokenizer. Pre-tokens
(words with their leading space) are counted as they are; then 100 BPE
merges are trained on them and the same text is counted in tokens. Each
curve has a dashed Zipf line f(1) / r through its first point.
"""

import pydoc_data.topics as topics
import sys
from collections import Counter

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

text = "\n".join(topics.topics[k] for k in sorted(topics.topics))
words = Counter(lm.pretokenize(text))  # pre-token -> count
merges = lm.bpe_train(words, 100)
tokens = Counter(lm.bpe_encode_text(text, merges).tolist())  # id -> count

fig, ax = plt.subplots(figsize=(6.4, 4.2))
series = [
    (words, "pre-tokens (words)", "tab:blue"),
    (tokens, f"BPE tokens, {len(merges)} merges", "tab:orange"),
]
for counts, label, color in series:
    f = np.sort(np.fromiter(counts.values(), dtype=float))[::-1]
    r = np.arange(1, f.size + 1)
    ax.loglog(r, f, color=color, lw=2, label=f"{label}: {f.size:,} types")
    ax.loglog(r, f[0] / r, color=color, lw=1, ls="--")
ax.plot([], [], color="0.4", lw=1, ls="--", label="Zipf, $f(1)/r$")
py = f"{sys.version_info.major}.{sys.version_info.minor}"
n_bytes = len(text.encode("utf-8"))
ax.set(
    xlabel="rank $r$",
    ylabel="count $f(r)$",
    title=f"Python {py} help topics ({n_bytes:,} bytes)",
)
ax.legend(frameon=False, fontsize=8, loc="lower left")
fig.tight_layout()
