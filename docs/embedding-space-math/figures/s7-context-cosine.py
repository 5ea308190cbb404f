"""Cosine between one token's states in two contexts, layer by layer.

Measured in random residual stacks.
"""

import llmmath as lm
import matplotlib.pyplot as plt
import numpy as np


def context_cosines(seed, sigma=0.5, n_layers=8, d=16):
    """The toy stack of §7.3: random causal attention layers plus residuals."""
    rng = np.random.default_rng(seed)
    E = rng.normal(size=(10, d))  # embedding table (V=10, d)
    Ws = rng.normal(scale=sigma / np.sqrt(d), size=(n_layers, 4, d, d))
    # both contexts as a batch: (2, T=4, d)
    H = lm.lookup(E, [[1, 2, 3, 0], [4, 5, 6, 0]])
    states = [H[:, -1]]  # the shared token's two states, (2, d) per layer
    for W_Q, W_K, W_V, W_O in Ws:  # one toy attention sublayer f_l
        f = (
            lm.scaled_dot_product_attention(
                H @ W_Q, H @ W_K, H @ W_V, causal=True
            )[0]
            @ W_O
        )
        H = H + f  # residual update, (2, T, d)
        states.append(H[:, -1])
    states = np.stack(states)  # (n_layers + 1, 2, d)
    return lm.cosine(states[:, 0], states[:, 1])  # (n_layers + 1,)


C = np.stack([context_cosines(seed) for seed in range(100)])
fig, ax = plt.subplots(figsize=(6.4, 3.6))
for row in C[:20]:
    ax.plot(row, color="tab:blue", alpha=0.3, lw=1)
ax.plot(
    [], color="tab:blue", alpha=0.3, label="single random stacks (20 of 100)"
)
ax.plot(C.mean(axis=0), color="tab:orange", lw=3, label="mean over 100 stacks")
ax.set(
    xlabel="layer ℓ (0 = embedding row)",
    ylabel="cos(h_A, h_B) of the shared token",
    title="Context pulls one token's two states apart with depth",
)
ax.legend(frameon=False, loc="lower left")
fig.tight_layout()
