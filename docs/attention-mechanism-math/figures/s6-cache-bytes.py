"""KV-cache bytes against context length for one model size, float16.

A 32-layer model with 32 query heads of width 128 (the shape of Llama 2 7B):
multi-head (32 KV heads), grouped-query (8), multi-query (1), and a latent
cache of d_c + d_h^R = 512 + 64 numbers per token and layer (DeepSeek-V2's
sizes, put on the same 32 layers). Batch 1.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np

L, d_h = 32, 128
lengths = 2 ** np.arange(9, 18)  # 512 ... 131,072 tokens
GiB = 2**30
rows = [
    ("MHA, $H_{kv}=32$", 32, "tab:red", "o-"),
    ("GQA, $H_{kv}=8$", 8, "tab:orange", "s-"),
    ("MQA, $H_{kv}=1$", 1, "tab:blue", "^-"),
]
fig, ax = plt.subplots(figsize=(6.4, 4.2))
for label, h_kv, color, style in rows:
    b = [lm.kv_cache_bytes(L, h_kv, d_h, int(T)) / GiB for T in lengths]
    ax.loglog(lengths, b, style, color=color, label=label)
# MLA caches one latent of d_c numbers and one shared RoPE key of d_h^R
d_c, d_rope = 512, 64
mla = [
    lm.memory_bytes(L * (d_c + d_rope) * int(T), "float16") for T in lengths
]
ax.loglog(
    lengths,
    np.array(mla) / GiB,
    "D--",
    color="tab:green",
    label="MLA latent, $d_c+d_h^R=576$",
)
weights = lm.memory_bytes(6_740_000_000, "float16") / GiB
ax.axhline(weights, color="0.4", ls=":", lw=1.2)
ax.text(
    lengths[0],
    weights * 1.15,
    "float16 weights of 6.74B parameters",
    fontsize=9,
    color="0.3",
)
ax.set_xticks(lengths[::2], [f"{int(T):,}" for T in lengths[::2]])
ax.set_xlabel("context length $T$ (tokens, batch 1)", fontsize=10)
ax.set_ylabel("cache size (GiB)", fontsize=10)
ax.tick_params(labelsize=9)
ax.legend(frameon=False, fontsize=9, loc="lower right")
ax.set_title(
    "KV cache of a 32-layer model, 32 query heads of 128, float16",
    fontsize=10,
)
fig.tight_layout()
