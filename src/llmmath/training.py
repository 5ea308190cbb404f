"""Losses and their gradients for training embeddings: cross-entropy, SGNS, GloVe.

References
----------
- Mikolov et al., "Distributed Representations of Words and Phrases and their
  Compositionality", arXiv:1310.4546 (skip-gram with negative sampling, the
  3/4-power noise distribution); reference implementation: ``word2vec.c``.
- Goldberg & Levy, "word2vec Explained", arXiv:1402.3722 (the SGNS gradients).
- Pennington, Socher & Manning, "GloVe: Global Vectors for Word Representation",
  EMNLP 2014 (no arXiv id; ACL Anthology D14-1162); reference: ``glove.c``
  (which adds a factor 1/2 to the cost; the contract here follows the paper).
- ``cross_entropy`` and ``cross_entropy_grad`` moved to ``llmmath.likelihood``
  (where they gained ``ignore_index``, ``label_smoothing`` and ``reduction``);
  ``softmax``, ``log_softmax`` and ``sigmoid`` moved to ``llmmath.softmax``. All
  five are still importable from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from llmmath import _validate

# Moved to llmmath.likelihood and llmmath.softmax; re-exported so that old imports and
# page links keep working (cross_entropy's defaults are unchanged).
from llmmath.likelihood import cross_entropy as cross_entropy
from llmmath.likelihood import cross_entropy_grad as cross_entropy_grad
from llmmath.softmax import log_softmax as log_softmax
from llmmath.softmax import sigmoid, softmax


def _mean_ce_grad(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    one_hot = np.arange(z.shape[-1]) == y[..., None]
    return (softmax(z) - one_hot) / y.size


def _output_layer(h: Any, W: Any, y: Any, func: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    W = _validate.matrix(W, "W", func)
    h = _validate.float_array(h, "h", func, min_ndim=1)
    _validate.same_last_dim(h, W, "h and W", func)
    y = _validate.int_ids(y, W.shape[0], func, name="y")
    if y.shape != h.shape[:-1]:
        raise ValueError(
            f"{func}: y must have the leading shape {h.shape[:-1]} of h {h.shape} "
            f"(an int for h: (d,), shape (N,) for h: (N, d)); got shape {y.shape}"
        )
    return h, W, _mean_ce_grad(h @ W.T, y)


def output_row_grad(h: Any, W: Any, y: Any) -> np.ndarray:
    """Gradient of the loss with respect to the output matrix: ``∂ℓ/∂W = (p − e_y) hᵀ``.

    ``p = softmax(W h)``. h: (d,) with y an int, or a batch h: (N, d) with
    y: (N,) (then the gradient of the mean loss); W: (V, d) -> (V, d).
    Only row ``y`` gets a push towards ``h``; every row is pulled away by ``p``.

    Examples
    --------
    >>> output_row_grad([1.0, 2.0], [[0.0, 0.0], [0.0, 0.0]], 0)
    array([[-0.5, -1. ],
           [ 0.5,  1. ]])
    """
    h, W, G = _output_layer(h, W, y, "output_row_grad")
    return G.reshape(-1, W.shape[0]).T @ h.reshape(-1, W.shape[1])


def hidden_grad(h: Any, W: Any, y: Any) -> np.ndarray:
    """Gradient of the loss with respect to the hidden state: ``∂ℓ/∂h = Wᵀ(p − e_y)``.

    h: (d,) with y an int, or h: (N, d) with y: (N,) (gradient of the mean
    loss, so each row carries a factor 1/N); W: (V, d) -> like ``h``.

    Examples
    --------
    >>> hidden_grad([1.0, 2.0], [[1.0, 0.0], [0.0, 1.0]], 1).round(4)
    array([ 0.2689, -0.2689])
    """
    h, W, G = _output_layer(h, W, y, "hidden_grad")
    return G @ W


def sgns_loss(
    center: Any, context: Any, negatives: Any
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Skip-gram negative-sampling loss for one (center, context) pair and its gradients.

    ``ℓ = −log σ(u_o·v_c) − Σ_k log σ(−u_k·v_c)`` with center = v_c: (d,),
    context = u_o: (d,), negatives = u_k stacked: (K, d). Returns
    ``(loss, g_center (d,), g_context (d,), g_negatives (K, d))``. Uses
    ``log σ(x) = −logaddexp(0, −x)``, finite for any score.

    Examples
    --------
    >>> loss, g_center, g_context, g_negatives = sgns_loss([0.0, 0.0], [1.0, 0.0], [[0.0, 1.0]])
    >>> round(loss, 6), g_center  # 2 log 2; (σ(0) − 1) u_o + σ(0) u_1
    (1.386294, array([-0.5,  0.5]))
    """
    f = "sgns_loss"
    v = _validate.float_array(center, "center", f)
    u_o = _validate.float_array(context, "context", f)
    U = _validate.matrix(negatives, "negatives", f)
    for name, arr in (("center", v), ("context", u_o)):
        if arr.ndim != 1:
            raise ValueError(f"{f}: {name} must be 1-D (d,); got shape {arr.shape}")
    _validate.same_last_dim(v, u_o, "center and context", f)
    _validate.same_last_dim(v, U, "center and negatives", f)
    s_o, s_k = u_o @ v, U @ v
    loss = np.logaddexp(0.0, -s_o) + np.logaddexp(0.0, s_k).sum()
    d_o = sigmoid(s_o) - 1.0  # ∂ℓ/∂s_o
    d_k = sigmoid(s_k)  # ∂ℓ/∂s_k
    return float(loss), d_o * u_o + d_k @ U, d_o * v, d_k[:, None] * v


def noise_distribution(counts: Any, power: float = 0.75) -> np.ndarray:
    """Negative-sampling distribution ``counts**power / Σ counts**power``.

    counts: (V,) non-negative, not all zero -> (V,) probabilities. Words with
    count 0 keep probability 0 (even for ``power=0``, which gives uniform
    noise over the words seen).

    Examples
    --------
    >>> noise_distribution([1, 0, 16], power=0.5)
    array([0.2, 0. , 0.8])
    """
    f = "noise_distribution"
    c = _validate.float_array(counts, "counts", f, min_ndim=1)
    if c.ndim != 1:
        raise ValueError(f"{f}: counts must be 1-D (V,); got shape {c.shape}")
    if not np.all(np.isfinite(c)) or c.min() < 0:
        raise ValueError(f"{f}: counts must be finite and >= 0; got min {c.min()}")
    if not c.any():
        raise ValueError(f"{f}: counts must not be all zero; got {c.size} zeros")
    power = float(power)
    if not np.isfinite(power) or power < 0:
        raise ValueError(f"{f}: power must be a finite number >= 0; got {power!r}")
    w = np.where(c > 0, c**power, 0.0)
    return w / w.sum()


def glove_weight(x: Any, x_max: float = 100.0, alpha: float = 0.75) -> np.ndarray:
    """GloVe weighting ``f(x) = min(1, (x / x_max)**alpha)``; ``f(0) = 0``.

    x: any shape, non-negative co-occurrence counts -> same shape.

    Examples
    --------
    >>> glove_weight([0.0, 50.0, 100.0, 500.0], alpha=1.0)
    array([0. , 0.5, 1. , 1. ])
    """
    f = "glove_weight"
    x = _validate.float_array(x, "x", f)
    x_max = _validate.positive_float(x_max, "x_max", f)
    alpha = _validate.positive_float(alpha, "alpha", f)
    if np.isnan(x).any() or x.min() < 0:
        raise ValueError(f"{f}: x must be >= 0 (co-occurrence counts); got min {x.min()}")
    return np.minimum(1.0, (x / x_max) ** alpha)


def _glove_parts(W: Any, W_ctx: Any, b: Any, b_ctx: Any, X: Any, func: str):
    W = _validate.matrix(W, "W", func)
    W_ctx = _validate.matrix(W_ctx, "W_ctx", func)
    V = W.shape[0]
    if W_ctx.shape != W.shape:
        raise ValueError(f"{func}: W_ctx must have the shape {W.shape} of W; got {W_ctx.shape}")
    b = _validate.float_array(b, "b", func)
    b_ctx = _validate.float_array(b_ctx, "b_ctx", func)
    X = _validate.float_array(X, "X", func)
    for name, arr, shape in (("b", b, (V,)), ("b_ctx", b_ctx, (V,)), ("X", X, (V, V))):
        if arr.shape != shape:
            raise ValueError(f"{func}: {name} must have shape {shape}; got {arr.shape}")
    if np.isnan(X).any() or X.min() < 0:
        raise ValueError(f"{func}: X must be >= 0 (co-occurrence counts); got min {X.min()}")
    seen = X > 0
    log_x = np.log(np.where(seen, X, 1.0))
    residual = np.where(seen, W @ W_ctx.T + b[:, None] + b_ctx[None, :] - log_x, 0.0)
    return W, W_ctx, glove_weight(X), residual


def glove_loss(W: Any, W_ctx: Any, b: Any, b_ctx: Any, X: Any) -> float:
    """GloVe objective ``J = Σ_{X_ij>0} f(X_ij) (w_i·w̃_j + b_i + b̃_j − log X_ij)²``.

    W, W_ctx: (V, d) word and context vectors; b, b_ctx: (V,) biases;
    X: (V, V) non-negative co-occurrence counts -> Python float. Entries with
    ``X_ij = 0`` contribute nothing (``f(0) = 0`` and ``log 0`` is never taken).

    Examples
    --------
    >>> round(glove_loss([[0.0], [0.0]], [[0.0], [0.0]], [0.0, 0.0], [0.0, 0.0],
    ...                  [[100.0, 0.0], [0.0, 1.0]]), 4)  # 1 · (log 100)² + f(1) · 0
    21.2076
    """
    _, _, fx, r = _glove_parts(W, W_ctx, b, b_ctx, X, "glove_loss")
    return float((fx * r**2).sum())


def glove_grads(
    W: Any, W_ctx: Any, b: Any, b_ctx: Any, X: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Exact gradients of ``glove_loss``: ``(gW (V, d), gW_ctx (V, d), gb (V,), gb_ctx (V,))``.

    Arguments as in ``glove_loss``. With ``g_ij = 2 f(X_ij) r_ij`` (``r`` the
    residual): ``gW = g W_ctx``, ``gW_ctx = gᵀ W``, ``gb = Σ_j g_ij``,
    ``gb_ctx = Σ_i g_ij``.

    Examples
    --------
    >>> glove_grads([[0.0], [0.0]], [[0.0], [0.0]], [0.0, 0.0], [0.0, 0.0],
    ...             [[100.0, 0.0], [0.0, 1.0]])[2].round(4)  # 2 · 1 · (0 − log 100)
    array([-9.2103,  0.    ])
    """
    W, W_ctx, fx, r = _glove_parts(W, W_ctx, b, b_ctx, X, "glove_grads")
    g = 2.0 * fx * r
    return g @ W_ctx, g.T @ W, g.sum(axis=1), g.sum(axis=0)


def directional_derivative(
    f: Callable[[np.ndarray], float], x: Any, v: Any, eps: float = 1e-6
) -> float:
    """Central finite difference ``(f(x + eps v) − f(x − eps v)) / (2 eps)``.

    x, v: same shape (any); ``f`` maps such an array to a scalar -> float.
    To check an analytic gradient ``g`` of ``f`` at ``x``, compare
    ``np.sum(g * v)`` with this for a few random directions ``v``: one call per
    direction instead of one per coordinate (error O(eps²)).

    Examples
    --------
    >>> round(directional_derivative(lambda x: float(x @ x), [1.0, 2.0], [1.0, 0.0]), 6)
    2.0
    """
    func = "directional_derivative"
    x = _validate.float_array(x, "x", func)
    v = _validate.float_array(v, "v", func)
    if v.shape != x.shape:
        raise ValueError(f"{func}: v must have the shape {x.shape} of x; got {v.shape}")
    eps = _validate.positive_float(eps, "eps", func)
    return float((f(x + eps * v) - f(x - eps * v)) / (2.0 * eps))
