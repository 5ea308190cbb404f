"""Relative positions: offsets and the score terms built on them (Shaw, Transformer-XL, T5, ALiBi).

Offsets are ``j - i`` (key minus query) unless a paper writes ``i - j``; each function
says which. References, and the implementation each function matches ("HF" = Hugging
Face transformers):

- Shaw, Uszkoreit, Vaswani, "Self-Attention with Relative Position Representations"
  (arXiv:1803.02155), eqs. 3-4: ``shaw_attention``.
- Dai et al., "Transformer-XL" (arXiv:1901.02860), section 3.3: ``transformer_xl_terms``.
- Raffel et al., T5 (arXiv:1910.10683), section 2.1, and HF's
  ``T5Attention._relative_position_bucket`` / ``compute_bias``: ``t5_bucket``, ``t5_bias``.
- Press, Smith, Lewis, "Train Short, Test Long" (ALiBi, arXiv:2108.12409) and their
  ``get_slopes`` (also BLOOM's in HF): ``alibi_slopes``, ``alibi_bias``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from llmmath._validate import float_array, matrix, positive_int
from llmmath.attention import scaled_dot_product_attention


def relative_positions(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """Offsets ``R[i, j] = j - i`` (key minus query, the T5 convention), int64 ``(Tq, Tk)``.

    ``n_keys`` defaults to ``n_queries``.

    Examples
    --------
    >>> relative_positions(2, 3)
    array([[ 0,  1,  2],
           [-1,  0,  1]])
    """
    tq = positive_int(n_queries, "n_queries", "relative_positions")
    tk = tq if n_keys is None else positive_int(n_keys, "n_keys", "relative_positions")
    return np.arange(tk, dtype=np.int64)[None, :] - np.arange(tq, dtype=np.int64)[:, None]


def t5_bucket(
    relative_position: Any,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    """T5's bucket for each offset ``key - query``; int64, shaped like ``relative_position``.

    Offsets with ``|r| < max_exact`` get their own bucket; larger ones share
    logarithmically wider buckets up to ``max_distance``. With ``bidirectional`` the
    upper half of the buckets holds positive offsets; otherwise positive offsets map to 0.

    Examples
    --------
    >>> t5_bucket(np.array([-200, -20, -3, 0, 3, 20, 200]))
    array([15, 10,  3,  0, 19, 26, 31])
    """
    f = "t5_bucket"
    r = np.asarray(relative_position)
    if r.dtype == np.bool_ or not np.issubdtype(r.dtype, np.integer):
        raise TypeError(f"{f}: relative_position must be integers; got dtype {r.dtype}")
    if r.size == 0:
        raise ValueError(f"{f}: relative_position is empty (shape {r.shape})")
    nb = positive_int(num_buckets, "num_buckets", f, minimum=4 if bidirectional else 2)
    r = r.astype(np.int64)
    buckets = np.zeros_like(r)
    if bidirectional:
        nb //= 2
        buckets += (r > 0) * nb
        n = np.abs(r)
    else:
        n = -np.minimum(r, 0)
    max_exact = nb // 2
    md = positive_int(max_distance, "max_distance", f, minimum=max_exact + 1)
    # transformers evaluates the log branch in torch float32. In float64, offsets that sit
    # exactly on a bucket edge can land one bucket lower (num_buckets=18: offset -8 gives 4,
    # T5 gives 5), so we replay its float32 steps. The log is taken in float64 and rounded,
    # because numpy's own float32 log can be one ulp off (ln 2.25). torch's float32 log is
    # not correctly rounded everywhere either (ln 1.5 one ulp high on some CPUs), so where
    # the exact value is a whole number T5's own bucket depends on the machine.
    ratio = np.maximum(n, max_exact).astype(np.float32) / np.float32(max_exact)
    log_ratio = np.log(ratio.astype(np.float64)).astype(np.float32)
    scaled = log_ratio / np.float32(math.log(md / max_exact)) * np.float32(nb - max_exact)
    large = np.minimum(max_exact + scaled.astype(np.int64), nb - 1)
    return buckets + np.where(n < max_exact, n, large)


def t5_bias(
    table: Any,
    n_queries: int,
    n_keys: int | None = None,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
    query_offset: int = 0,
) -> np.ndarray:
    """T5's per-head score bias ``(H, Tq, Tk)``: ``out[h, i, j] = table[t5_bucket(j - i), h]``.

    ``table: (num_buckets, H)``, the layout of HF's ``relative_attention_bias.weight``;
    keys count from 0 and queries from ``query_offset`` (0 by default), so this equals
    ``T5Attention.compute_bias(Tq, Tk, past_seen_tokens=query_offset)[0]``. A decode step
    with ``n`` cached tokens is ``t5_bias(table, 1, n + 1, query_offset=n)``: the new query
    sits at position ``n``, not 0. T5 adds the bias to the raw ``q kᵀ`` scores (no ``1/√d``).

    Examples
    --------
    >>> t5_bias(np.arange(8.0)[:, None], 2, 3, num_buckets=8)[0]
    array([[0., 5., 6.],
           [1., 0., 5.]])
    """
    f = "t5_bias"
    table = matrix(table, "table", f)
    nb = positive_int(num_buckets, "num_buckets", f)
    if table.shape[0] != nb:
        raise ValueError(
            f"{f}: table must have num_buckets = {nb} rows (num_buckets, H); got shape "
            f"{table.shape}"
        )
    offset = positive_int(query_offset, "query_offset", f, minimum=0)
    buckets = t5_bucket(
        relative_positions(n_queries, n_keys) - offset,
        bidirectional=bidirectional,
        num_buckets=nb,
        max_distance=max_distance,
    )
    return np.moveaxis(table[buckets], -1, 0)


def _clipped_rows(tq: int, tk: int, K: int) -> np.ndarray:
    """Row ``clip(j - i, -K, K) + K`` of a ``(2K + 1, d)`` relative table, ``(Tq, Tk)``."""
    return np.clip(relative_positions(tq, tk), -K, K) + K


def shaw_attention(
    q: Any,
    k: Any,
    v: Any,
    rel_k: Any,
    rel_v: Any = None,
    *,
    max_distance: int,
    mask: Any = None,
    causal: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Self-attention with Shaw et al.'s relative keys (and values); returns ``(out, weights)``.

    ``q: (..., Tq, d)``, ``k: (..., Tk, d)``, ``v: (..., Tk, dv)``; ``rel_k: (2K + 1, d)`` and
    ``rel_v: (2K + 1, dv)``, row ``r + K`` for the clipped offset ``r = clip(j - i, -K, K)``,
    ``K = max_distance``. Scores ``e_ij = q_i·(k_j + rel_k[r]) / √d``, softmax over ``j`` (with
    ``mask``/``causal`` as in ``scaled_dot_product_attention``), and
    ``out_i = Σ_j w_ij (v_j + rel_v[r])``. One table serves every head.
    Returns out: (..., Tq, dv) and weights: (..., Tq, Tk).

    Examples
    --------
    >>> q = k = v = np.zeros((3, 2))
    >>> rel_k, rel_v = np.zeros((3, 2)), np.array([[1.0, 0], [0, 0], [0, 1.0]])
    >>> shaw_attention(q, k, v, rel_k, rel_v, max_distance=1)[0]  # uniform weights
    array([[0.        , 0.66666667],
           [0.33333333, 0.33333333],
           [0.66666667, 0.        ]])
    """
    f = "shaw_attention"
    K = positive_int(max_distance, "max_distance", f)
    q = float_array(q, "q", f, min_ndim=2)
    k = float_array(k, "k", f, min_ndim=2)
    tq, tk, d = q.shape[-2], k.shape[-2], q.shape[-1]
    rel_k = matrix(rel_k, "rel_k", f)
    if rel_k.shape != (2 * K + 1, d):
        raise ValueError(
            f"{f}: rel_k must have shape (2*max_distance + 1, d) = ({2 * K + 1}, {d}); "
            f"got {rel_k.shape}"
        )
    rows = _clipped_rows(tq, tk, K)
    # q_i · rel_k[r] for every (i, r), then gathered at r = rows[i, j]: (..., Tq, Tk).
    rel_scores = (q @ rel_k.T)[..., np.arange(tq)[:, None], rows] / math.sqrt(d)
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask, bias=rel_scores, causal=causal)
    if rel_v is None:
        return out, weights
    rel_v = matrix(rel_v, "rel_v", f)
    if rel_v.shape != (2 * K + 1, out.shape[-1]):
        raise ValueError(
            f"{f}: rel_v must have shape (2*max_distance + 1, dv) = ({2 * K + 1}, "
            f"{out.shape[-1]}); got {rel_v.shape}"
        )
    # Weight per clipped offset, w_i[r] = Σ_{j: clip(j-i) = r-K} w_ij, from prefix sums:
    # offset r - K covers keys j in [i + r - K, i + r - K + 1), the end rows everything beyond.
    prefix = np.concatenate([np.zeros((*weights.shape[:-1], 1)), weights.cumsum(-1)], -1)
    start = np.arange(tq)[:, None] + np.arange(-K, K + 1)  # (Tq, 2K + 1)
    lo = np.clip(start, 0, tk)
    hi = np.clip(start + 1, 0, tk)
    lo[:, 0], hi[:, -1] = 0, tk
    hi = np.maximum(hi, lo)
    rows_q = np.arange(tq)[:, None]
    per_offset = prefix[..., rows_q, hi] - prefix[..., rows_q, lo]
    return out + per_offset @ rel_v, weights


def transformer_xl_terms(
    q: Any, k: Any, r: Any, u: Any, v: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The four terms of Transformer-XL's relative score, each ``(T, T)``, offsets ``m = i - j``.

    ``q, k: (T, d)`` (queries and keys aligned, no memory); ``r: (2T - 1, d)`` with row
    ``m + T - 1`` the projected encoding of offset ``m`` (the paper needs ``m >= 0`` only;
    the other rows serve unmasked attention); ``u, v: (d,)`` are the paper's global content
    and position biases (not values). Returns ``(q_i·k_j, q_i·r_{i-j}, u·k_j, v·r_{i-j})``,
    whose sum ``(q_i + u)·k_j + (q_i + v)·r_{i-j}`` is the full score.

    Examples
    --------
    >>> r = [[0.0, 1.0], [0.0, 0.0], [2.0, 0.0]]  # rows for m = -1, 0, 1
    >>> terms = transformer_xl_terms(np.ones((2, 2)), np.eye(2), r, [1.0, 0.0], [0.0, 1.0])
    >>> terms[1]  # q_i · r_{i-j}: m = 1 below the diagonal, m = -1 above
    array([[0., 1.],
           [2., 0.]])
    """
    f = "transformer_xl_terms"
    q, k = matrix(q, "q", f), matrix(k, "k", f)
    if q.shape != k.shape:
        raise ValueError(f"{f}: q and k must both be (T, d); got {q.shape} and {k.shape}")
    T, d = q.shape
    r = matrix(r, "r", f)
    if r.shape != (2 * T - 1, d):
        raise ValueError(f"{f}: r must have shape (2T - 1, d) = ({2 * T - 1}, {d}); got {r.shape}")
    u, v = float_array(u, "u", f), float_array(v, "v", f)
    for name, vec in (("u", u), ("v", v)):
        if vec.shape != (d,):
            raise ValueError(f"{f}: {name} must have shape ({d},); got {vec.shape}")
    rows = T - 1 - relative_positions(T)  # row of offset m = i - j
    content = q @ k.T
    position = (q @ r.T)[np.arange(T)[:, None], rows]
    content_bias = np.broadcast_to(k @ u, (T, T)).copy()
    position_bias = (r @ v)[rows]
    return content, position, content_bias, position_bias


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi head slopes ``m_h``, shape ``(n_heads,)``, as in Press et al.'s ``get_slopes``.

    For ``n`` a power of two, ``m_h = 2^(-8h/n)``, ``h = 1..n``. Otherwise the ``c`` slopes of
    the largest power of two ``c < n`` come first, then the odd-numbered slopes of the
    ``2c`` schedule, ``2^(-8j/(2c))`` for ``j = 1, 3, 5, ...``, until there are ``n``.

    Examples
    --------
    >>> alibi_slopes(4)
    array([0.25      , 0.0625    , 0.015625  , 0.00390625])
    """
    n = positive_int(n_heads, "n_heads", "alibi_slopes")
    c = 1 << (n.bit_length() - 1)  # largest power of two <= n
    first = 2.0 ** (-8.0 * np.arange(1, c + 1) / c)
    rest = 2.0 ** (-8.0 * np.arange(1, 2 * (n - c), 2) / (2 * c))
    return np.concatenate([first, rest])


def alibi_bias(n_heads: int, seq_len: int) -> np.ndarray:
    """ALiBi bias ``(n_heads, T, T)``: ``-m_h (i - j)`` for keys ``j <= i``, ``0`` for ``j > i``.

    Future keys get 0 here; hiding them is the causal mask's job.

    Examples
    --------
    >>> alibi_bias(1, 3)
    array([[[ 0.        ,  0.        ,  0.        ],
            [-0.00390625,  0.        ,  0.        ],
            [-0.0078125 , -0.00390625,  0.        ]]])
    """
    slopes = alibi_slopes(n_heads)
    T = positive_int(seq_len, "seq_len", "alibi_bias")
    return slopes[:, None, None] * np.minimum(relative_positions(T), 0)
