"""Exact attention computed another way: online softmax, blockwise (Flash) attention,
the attention backward pass, linear attention, and two diagnostics of attention maps.

References
----------
- Milakov & Gimelshein, "Online normalizer calculation for softmax",
  arXiv:1805.02867 (the running max and normalizer of ``online_softmax_stats``).
- Dao et al., "FlashAttention", arXiv:2205.14135 (tiling over key blocks), and
  Dao, "FlashAttention-2", arXiv:2307.08691 (the unnormalized output rescaled
  per block and divided once at the end, and the row log-sum-exp kept for the
  backward pass): ``blockwise_attention``; its output equals
  ``llmmath.attention.scaled_dot_product_attention``, hence PyTorch's SDPA.
- ``sdpa_backward`` equals PyTorch autograd through SDPA (math backend, float64).
- Katharopoulos et al., "Transformers are RNNs", arXiv:2006.16236
  (``linear_attention`` with ``φ(x) = elu(x) + 1``).
- Abnar & Zuidema, "Quantifying Attention Flow in Transformers",
  arXiv:2005.00928 (``attention_rollout``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath import _validate
from llmmath.attention import _attention_inputs, scaled_dot_product_attention

# The contract lists these two here; they live with softmax (re-exported).
from llmmath.softmax import logsumexp as logsumexp
from llmmath.softmax import softmax_jacobian as softmax_jacobian


def online_softmax_stats(scores: Any, *, block_size: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Row max ``m`` and normalizer ``l = Σ exp(s − m)`` in one pass over blocks.

    scores: (..., n), ``-inf`` = masked -> ``(m, l)``, each (...). The last axis is
    read in blocks of ``block_size`` (a loop over blocks, the algorithm being shown);
    after each block the running values are updated as
    ``m' = max(m, max block)``, ``l ← l·exp(m − m') + Σ exp(block − m')``
    (Milakov & Gimelshein 2018). The result equals ``(max s, Σ exp(s − max s))``
    for any block size; a row of only ``-inf`` gives ``m = -inf, l = 0``.

    Examples
    --------
    >>> m, l = online_softmax_stats([1.0, 3.0, 2.0], block_size=2)
    >>> float(m), bool(np.isclose(l, 1 + np.exp(-1) + np.exp(-2)))
    (3.0, True)
    """
    f = "online_softmax_stats"
    s = _validate.float_array(scores, "scores", f, min_ndim=1, neg_inf=True)
    b = _validate.positive_int(block_size, "block_size", f)
    m = np.full(s.shape[:-1], -np.inf)
    l = np.zeros(s.shape[:-1])  # noqa: E741 (the paper's name)
    for start in range(0, s.shape[-1], b):
        block = s[..., start : start + b]
        m_new = np.maximum(m, block.max(axis=-1))
        shift = np.where(np.isfinite(m_new), m_new, 0.0)  # all -inf so far: exp gives 0
        l = l * np.exp(m - shift) + np.exp(block - shift[..., None]).sum(axis=-1)  # noqa: E741
        m = m_new
    return m, l


def _cols(x: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Key columns ``start:stop`` of a mask or bias (a broadcast key axis stays whole)."""
    if x.shape[-1] == 1:
        return x
    return x[..., start:stop]


def blockwise_attention(
    q: Any,
    k: Any,
    v: Any,
    *,
    block_size: int,
    mask: Any = None,
    bias: Any = None,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Attention over key blocks, FlashAttention-2's forward: ``(out, lse)``.

    q: (..., Tq, d), k: (..., Tk, d), v: (..., Tk, dv); ``mask``, ``bias``,
    ``causal`` (top-left) and ``scale`` (default ``1/√d``) as in
    ``scaled_dot_product_attention``. Returns out: (..., Tq, dv), equal to that
    function's output (rtol 1e-12, atol 1e-12·max|v|), and lse: (..., Tq), each
    row's log-sum-exp of ``scale·q kᵀ + bias`` over its visible keys.

    The only loop runs over key blocks of ``block_size`` (Dao 2023): each block's
    scores, a (..., Tq, block_size) buffer, update a running row max ``m``,
    normalizer ``l`` and unnormalized output ``acc``, the old values rescaled by
    ``exp(m − m')``; ``out = acc / l`` once at the end, ``lse = m + ln l``. The
    full (Tq, Tk) score matrix never exists, nor does a (Tq, Tk) causal mask:
    ``causal`` is applied block by block from the indices. A row with no visible key gets
    ``out = 0`` and ``lse = -inf``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(3, 5, 4))
    >>> out, lse = blockwise_attention(q, k, v, block_size=2, causal=True)
    >>> from llmmath.attention import scaled_dot_product_attention as sdpa
    >>> bool(np.allclose(out, sdpa(q, k, v, causal=True)[0], rtol=1e-12, atol=1e-12))
    True
    >>> out.shape, lse.shape
    ((5, 4), (5,))
    """
    f = "blockwise_attention"
    q, k, v, mask, bias, scale, shape = _attention_inputs(q, k, v, mask, bias, scale, f)
    b = _validate.positive_int(block_size, "block_size", f)
    m = np.full(shape[:-1], -np.inf)
    l = np.zeros(shape[:-1])  # noqa: E741 (the paper's name)
    acc = np.zeros((*shape[:-1], v.shape[-1]))
    for start in range(0, shape[-1], b):
        stop = min(start + b, shape[-1])
        s = q @ np.swapaxes(k[..., start:stop, :], -1, -2)  # (..., Tq, block)
        s *= scale
        if bias is not None:
            s = s + _cols(bias, start, stop)
        if mask is not None:
            s = np.where(_cols(mask, start, stop), s, -np.inf)
        if causal:  # this block's part of the top-left causal mask, from indices
            s = np.where(np.arange(start, stop) <= np.arange(shape[-2])[:, None], s, -np.inf)
        m_new = np.maximum(m, s.max(axis=-1))
        shift = np.where(np.isfinite(m_new), m_new, 0.0)  # no visible key yet: exp gives 0
        if s.shape[:-1] == shift.shape:
            s -= shift[..., None]  # in place: one (..., Tq, block) buffer
        else:  # a leading axis that v alone carries: shift has it, q kᵀ does not
            s = s - shift[..., None]
        p = np.exp(s, out=s)
        alpha = np.exp(m - shift)
        l = l * alpha + p.sum(axis=-1)  # noqa: E741
        acc = acc * alpha[..., None] + p @ v[..., start:stop, :]
        m = m_new
    seen = l > 0
    out = acc / np.where(seen, l, 1.0)[..., None]
    with np.errstate(divide="ignore"):
        lse = np.where(seen, m + np.log(np.where(seen, l, 1.0)), -np.inf)
    return out, lse


def _unbroadcast(x: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``x`` over the axes that broadcasting added to an array of ``shape``."""
    x = x.sum(axis=tuple(range(x.ndim - len(shape))))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and x.shape[i] != 1)
    return x.sum(axis=axes, keepdims=True) if axes else x


def sdpa_backward(
    q: Any,
    k: Any,
    v: Any,
    grad_out: Any,
    *,
    mask: Any = None,
    bias: Any = None,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients ``(dq, dk, dv)`` of ``Σ grad_out ⊙ out`` for scaled dot-product attention.

    q: (..., Tq, d), k: (..., Tk, d), v: (..., Tk, dv), grad_out: the shape of
    ``out``, (..., Tq, dv); the other arguments as in
    ``scaled_dot_product_attention``. With ``A`` its weights (0 on rows with no
    visible key): ``dA = grad_out vᵀ``, ``dS = A ⊙ (dA − rowsum(dA ⊙ A))``,
    ``dq = scale·dS k``, ``dk = scale·dSᵀ q``, ``dv = Aᵀ grad_out``, each summed
    over the leading axes it was broadcast along, so shaped like q, k, v (as
    autograd returns). No gradient for ``mask`` or ``bias``.

    Examples
    --------
    >>> q, k, v = np.eye(2), np.eye(2), np.array([[1.0], [3.0]])
    >>> dq, dk, dv = sdpa_backward(q, k, v, np.ones((2, 1)))
    >>> dv.shape, bool(np.isclose(dv.sum(), 2.0))  # each query's weights sum to 1
    ((2, 1), True)
    >>> bool(np.allclose(dq.sum(axis=-1), 0.0))  # dS rows sum to 0, and k = I
    True
    """
    f = "sdpa_backward"
    q, k, v, mask, bias, scale, shape = _attention_inputs(q, k, v, mask, bias, scale, f)
    g = _validate.float_array(grad_out, "grad_out", f, min_ndim=2)
    out_shape = (*shape[:-1], v.shape[-1])
    if g.shape != out_shape:
        raise ValueError(
            f"{f}: grad_out must have the shape of the output (..., Tq, dv) = {out_shape}; "
            f"got {g.shape}"
        )
    # the weights A (..., Tq, Tk) of the forward pass, 0 on rows with no visible key
    _, a = scaled_dot_product_attention(q, k, v, mask=mask, bias=bias, causal=causal, scale=scale)
    da = g @ np.swapaxes(v, -1, -2)
    ds = a * (da - (da * a).sum(axis=-1, keepdims=True))
    dq = scale * (ds @ k)
    dk = scale * (np.swapaxes(ds, -1, -2) @ q)
    dv = np.swapaxes(a, -1, -2) @ g
    return _unbroadcast(dq, q.shape), _unbroadcast(dk, k.shape), _unbroadcast(dv, v.shape)


def _elu_plus_one(x: np.ndarray) -> np.ndarray:
    """``φ(x) = elu(x) + 1``: ``x + 1`` for ``x > 0``, ``exp(x)`` otherwise (always > 0)."""
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def linear_attention(
    q: Any, k: Any, v: Any, *, causal: bool = False, mode: str = "parallel"
) -> np.ndarray:
    """Linear attention of Katharopoulos et al. (2020), ``φ(x) = elu(x) + 1``.

    q: (..., Tq, d), k: (..., Tk, d), v: (..., Tk, dv) -> (..., Tq, dv), with
    ``out_i = φ(q_i)ᵀ S / φ(q_i)ᵀ z``, ``S = Σ_j φ(k_j) v_jᵀ`` (d, dv) and
    ``z = Σ_j φ(k_j)`` (d,), the sums over ``j ≤ i`` when ``causal`` (which
    needs Tq = Tk). No ``1/√d`` scale and no ε in the denominator (φ > 0).

    ``mode="parallel"``: non-causal, ``φ(Q) S`` with ``S`` formed once (cost
    linear in T); causal, the masked (Tq, Tk) kernel matrix ``φ(Q) φ(K)ᵀ``
    (quadratic; Katharopoulos et al. train in linear time with cumulative sums
    instead). ``mode="recurrent"``: the running states
    ``S_t = S_{t−1} + φ(k_t) v_tᵀ``, ``z_t = z_{t−1} + φ(k_t)`` as cumulative
    sums over tokens (no Python loop), a (..., T, d, dv) array; non-causal uses
    the final state for every query. The two modes agree to 1e-12.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(3, 6, 4))
    >>> a = linear_attention(q, k, v, causal=True)
    >>> b = linear_attention(q, k, v, causal=True, mode="recurrent")
    >>> a.shape, bool(np.allclose(a, b, rtol=0, atol=1e-12))
    ((6, 4), True)
    """
    f = "linear_attention"
    mode = _validate.option(mode, ("parallel", "recurrent"), "mode", f)
    q, k, v, *_ = _attention_inputs(q, k, v, None, None, None, f)
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"{f}: causal needs as many queries as keys (axis -2); got q {q.shape} and k {k.shape}"
        )
    fq, fk = _elu_plus_one(q), _elu_plus_one(k)
    if mode == "parallel":
        if not causal:
            state = np.swapaxes(fk, -1, -2) @ v  # (..., d, dv)
            return (fq @ state) / (fq * fk.sum(axis=-2)[..., None, :]).sum(axis=-1, keepdims=True)
        t = q.shape[-2]
        kern = np.where(np.tri(t, dtype=bool), fq @ np.swapaxes(fk, -1, -2), 0.0)
        return (kern @ v) / kern.sum(axis=-1, keepdims=True)
    states = fk[..., :, :, None] * v[..., :, None, :]  # (..., Tk, d, dv): φ(k_t) v_tᵀ
    if causal:
        s_t, z_t = np.cumsum(states, axis=-3), np.cumsum(fk, axis=-2)
    else:
        s_t, z_t = states.sum(axis=-3)[..., None, :, :], fk.sum(axis=-2)[..., None, :]
    num = (fq[..., :, None, :] @ s_t)[..., 0, :]  # (..., Tq, dv)
    return num / (fq * z_t).sum(axis=-1, keepdims=True)


def attention_entropy(weights: Any) -> np.ndarray:
    """Entropy of each attention row, ``−Σ_j a_j ln a_j`` in nats (``0 ln 0 = 0``).

    weights: (..., Tq, Tk), non-negative rows (summing to 1, or all zero for a
    query with no visible key) -> (..., Tq). Between 0 (one key takes all the
    weight; also a row of zeros) and ``ln`` of the number of visible keys
    (uniform weights).

    Examples
    --------
    >>> h = attention_entropy([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 0.0]])
    >>> bool(np.allclose(h, [0.0, np.log(2.0), 0.0]))
    True
    """
    f = "attention_entropy"
    a = _validate.float_array(weights, "weights", f, min_ndim=1)
    if (a < 0).any():
        raise ValueError(f"{f}: weights must be non-negative; got {a.min()}")
    terms = np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0)
    return 0.0 - terms.sum(axis=-1)  # 0.0 - x, never -0.0


def attention_rollout(weights: Any, *, residual: float = 0.5) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020): how much each token draws on each input.

    weights: (L, T, T) or (L, H, T, T) (heads averaged first), layer 0 first, each
    row summing to 1 -> (T, T). Each layer becomes
    ``Ã_ℓ = residual·I + (1 − residual)·A_ℓ`` (the residual path), rows
    renormalized, and the rollout is the product ``Ã_{L−1} ⋯ Ã_0``; its rows sum
    to 1. ``residual`` in [0, 1]; rows that do not sum to 1 (to 1e-6), such as a
    fully masked row of zeros, raise ``ValueError``.

    Examples
    --------
    >>> A = np.array([[[1.0, 0.0], [0.5, 0.5]]] * 2)  # two causal layers
    >>> attention_rollout(A)  # Ã = [[1, 0], [.25, .75]]; Ã @ Ã
    array([[1.    , 0.    ],
           [0.4375, 0.5625]])
    """
    f = "attention_rollout"
    a = _validate.float_array(weights, "weights", f)
    r = _validate.finite_float(residual, "residual", f)
    if not 0.0 <= r <= 1.0:
        raise ValueError(f"{f}: residual must lie in [0, 1]; got {residual!r}")
    if a.ndim not in (3, 4) or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{f}: weights must be (L, T, T) or (L, H, T, T); got shape {a.shape}")
    if (a < 0).any():
        raise ValueError(f"{f}: weights must be non-negative; got {a.min()}")
    err = np.abs(a.sum(axis=-1) - 1.0)
    if (err > 1e-6).any():
        where = tuple(int(i) for i in np.argwhere(err > 1e-6)[0])
        raise ValueError(
            f"{f}: every row of weights must sum to 1 (to 1e-6); the row at {where} "
            f"sums to {a.sum(axis=-1)[where]}"
        )
    if a.ndim == 4:
        a = a.mean(axis=1)
    t = a.shape[-1]
    a = r * np.eye(t) + (1.0 - r) * a
    a = a / a.sum(axis=-1, keepdims=True)
    if a.shape[0] == 1:
        return a[0]
    return np.linalg.multi_dot(list(a[::-1]))
