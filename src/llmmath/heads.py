"""Multi-head and grouped-query attention, their parameter, FLOP and KV-cache counts.

Weights follow NumPy's row convention, ``Q = x @ w_q``: a PyTorch ``nn.Linear`` weight
is our ``w.T``. Heads are column blocks of the projection: head ``h`` owns columns
``h·dh … (h+1)·dh − 1`` (``split_heads``).

References: Vaswani et al. 2017 (arXiv:1706.03762), multi-head attention, as
``torch.nn.MultiheadAttention(bias=False)`` computes it; Shazeer 2019 (arXiv:1911.02150),
multi-query, and Ainslie et al. 2023 (arXiv:2305.13245), grouped-query attention with the
head map ``h -> h // (H / Hkv)`` of transformers' ``repeat_kv`` and PyTorch's
``enable_gqa=True``; sliding-window caches (Mistral, arXiv:2310.06825) and attention sinks
(Xiao et al. 2023, StreamingLLM, arXiv:2309.17453) for ``append_kv``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath import _validate
from llmmath.attention import merge_heads, scaled_dot_product_attention, split_heads
from llmmath.diagnostics import _BITS, memory_bytes


def _divides(k: int, n: int, k_name: str, n_name: str, f: str) -> None:
    if n % k:
        raise ValueError(f"{f}: {k_name} = {k} must divide {n_name} = {n}; got remainder {n % k}")


def _scores_arg(a: Any, name: str, shape: tuple, f: str) -> np.ndarray:
    """A mask (bool) or bias (float, -inf allowed) that lines up with the per-head scores."""
    if name == "mask":
        a = _validate._asarray(a, name, f)
        if a.dtype != np.bool_:
            raise TypeError(f"{f}: mask must be boolean (True = may attend); got dtype {a.dtype}")
    else:
        a = _validate.float_array(a, name, f, neg_inf=True)
    if a.ndim not in (2, len(shape)):
        head = (
            f" (no head axis H: pass a per-batch (B, Tq, Tk) {name} as {name}[:, None], "
            f"a per-head (H, Tq, Tk) one as {name}[None])"
            if a.ndim == len(shape) - 1
            else ""
        )
        raise ValueError(
            f"{f}: {name} must be (Tq, Tk) or have the {len(shape)} dimensions of the per-head "
            f"scores (..., H, Tq, Tk) = {shape}; got shape {a.shape}{head}"
        )
    if any(n not in (1, t) for n, t in zip(a.shape[::-1], shape[::-1], strict=False)):
        raise ValueError(
            f"{f}: {name} of shape {a.shape} does not broadcast to the per-head scores "
            f"(..., H, Tq, Tk) = {shape}"
        )
    return a


def multi_head_attention(
    x: Any,
    w_q: Any,
    w_k: Any,
    w_v: Any,
    w_o: Any,
    n_heads: int,
    *,
    n_kv_heads: int | None = None,
    context: Any = None,
    mask: Any = None,
    causal: bool = False,
    bias: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head (or grouped-query) attention; returns ``(out, weights)``.

    x: (..., T, d); context: (..., Tk, d), default ``x`` (keys and values are projected
    from it: cross-attention); w_q: (d, H·dh); w_k, w_v: (d, Hkv·dh); w_o: (H·dh, d).
    n_heads = H; n_kv_heads = Hkv (default H) must divide H; query head ``h`` uses KV
    head ``h // (H / Hkv)`` (``repeat_kv``). mask (bool, ``True`` = attend) and bias
    broadcast against the scores (..., H, Tq, Tk): pass ``(Tq, Tk)`` or a full-rank
    array such as ``(B, 1, Tq, Tk)`` or ``key_padding_mask``'s ``(B, 1, 1, Tk)``.
    causal: top-left, as in ``scaled_dot_product_attention``; when Tq != Tk pass
    ``mask=causal_mask(Tq, Tk, align="bottom-right")`` instead. No projection biases.
    Returns out: (..., T, d) and weights: (..., H, T, Tk): ``scaled_dot_product_attention``
    per head on ``split_heads(x @ w_q, H)`` and the repeated KV heads, merged, times w_o.

    Examples
    --------
    >>> d, H = 4, 2
    >>> eye = np.eye(d)
    >>> out, w = multi_head_attention(np.ones((3, d)), eye, eye, eye, eye, H)
    >>> out.shape, w.shape
    ((3, 4), (2, 3, 3))
    >>> w[0, 0]  # identical tokens: uniform weights over the 3 keys
    array([0.33333333, 0.33333333, 0.33333333])
    """
    f = "multi_head_attention"
    x = _validate.float_array(x, "x", f, min_ndim=2)
    ctx = x if context is None else _validate.float_array(context, "context", f, min_ndim=2)
    d = x.shape[-1]
    if ctx.shape[-1] != d:
        raise ValueError(f"{f}: context must have the width d = {d} of x; got shape {ctx.shape}")
    H = _validate.positive_int(n_heads, "n_heads", f)
    Hkv = H if n_kv_heads is None else _validate.positive_int(n_kv_heads, "n_kv_heads", f)
    _divides(Hkv, H, "n_kv_heads", "n_heads", f)
    ws = {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o}
    ws = {name: _validate.matrix(w, name, f) for name, w in ws.items()}
    _divides(H, ws["w_q"].shape[1], "n_heads", "the width of w_q", f)
    dh = ws["w_q"].shape[1] // H
    want = {"w_q": (d, H * dh), "w_k": (d, Hkv * dh), "w_v": (d, Hkv * dh), "w_o": (H * dh, d)}
    for name, w in ws.items():
        if w.shape != want[name]:
            raise ValueError(
                f"{f}: {name} must have shape {want[name]} (d = {d}, H = {H}, Hkv = {Hkv}, "
                f"dh = {dh}); got {w.shape}"
            )
    try:
        lead = np.broadcast_shapes(x.shape[:-2], ctx.shape[:-2])
    except ValueError:
        raise ValueError(
            f"{f}: the leading (batch) dimensions of x and context must broadcast; "
            f"got x {x.shape} and context {ctx.shape}"
        ) from None
    shape = (*lead, H, x.shape[-2], ctx.shape[-2])
    mask = None if mask is None else _scores_arg(mask, "mask", shape, f)
    bias = None if bias is None else _scores_arg(bias, "bias", shape, f)
    q = split_heads(x @ ws["w_q"], H)
    k = repeat_kv(split_heads(ctx @ ws["w_k"], Hkv), H // Hkv)
    v = repeat_kv(split_heads(ctx @ ws["w_v"], Hkv), H // Hkv)
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask, bias=bias, causal=causal)
    return merge_heads(out) @ ws["w_o"], weights


def repeat_kv(x: Any, n_rep: int) -> np.ndarray:
    """Repeat each KV head ``n_rep`` times consecutively: (..., Hkv, T, d) -> (..., Hkv·n_rep, T, d).

    Head ``g`` becomes heads ``g·n_rep … (g+1)·n_rep − 1`` (``repeat_interleave`` on the
    head axis, as transformers' ``repeat_kv``; never ``tile``, which would interleave
    the groups), so query head ``h`` meets KV head ``h // n_rep``.

    Examples
    --------
    >>> kv = np.array([[[1.0]], [[2.0]]])  # Hkv = 2 heads, T = 1, d = 1
    >>> repeat_kv(kv, 2)[:, 0, 0]
    array([1., 1., 2., 2.])
    """
    f = "repeat_kv"
    x = _validate.float_array(x, "x", f, min_ndim=3)
    n = _validate.positive_int(n_rep, "n_rep", f)
    return np.repeat(x, n, axis=-3)


def mean_pool_kv_heads(w: Any, n_heads: int, n_groups: int) -> np.ndarray:
    """Mean-pool a key or value projection's heads into groups: (d, H·dh) -> (d, G·dh).

    w: (d, n_heads·dh); n_groups = G must divide n_heads = H. Group ``g`` is the mean of
    the columns of heads ``g·H/G … (g+1)·H/G − 1`` (consecutive heads, matching
    ``repeat_kv``). Ainslie et al. 2023 initialize a GQA model from a multi-head
    checkpoint this way before uptraining; ``G = 1`` gives multi-query attention.

    Examples
    --------
    >>> w = np.array([[1.0, 3.0, 10.0, 20.0]])  # d = 1, H = 4 heads of dh = 1
    >>> mean_pool_kv_heads(w, 4, 2)
    array([[ 2., 15.]])
    """
    f = "mean_pool_kv_heads"
    w = _validate.matrix(w, "w", f)
    H = _validate.positive_int(n_heads, "n_heads", f)
    G = _validate.positive_int(n_groups, "n_groups", f)
    d, width = w.shape
    _divides(H, width, "n_heads", "the width of w", f)
    _divides(G, H, "n_groups", "n_heads", f)
    dh = width // H
    return w.reshape(d, G, H // G, dh).mean(axis=2).reshape(d, G * dh)


def mha_param_count(
    d_model: int,
    n_heads: int,
    *,
    n_kv_heads: int | None = None,
    d_head: int | None = None,
    bias: bool = False,
) -> int:
    """Parameters of one attention layer's projections (a Python int).

    ``d·H·dh + 2·d·Hkv·dh + H·dh·d`` (Q, K, V, output), plus ``H·dh + 2·Hkv·dh + d``
    with ``bias``. d_head = dh defaults to d_model / n_heads (which must then be an
    integer); n_kv_heads = Hkv (default H) must divide H.

    Examples
    --------
    >>> mha_param_count(768, 12)  # GPT-2 small's attention, no biases: 4 d^2
    2359296
    >>> mha_param_count(4096, 32, n_kv_heads=8)  # Llama-style GQA
    41943040
    """
    f = "mha_param_count"
    d = _validate.positive_int(d_model, "d_model", f)
    H = _validate.positive_int(n_heads, "n_heads", f)
    Hkv = H if n_kv_heads is None else _validate.positive_int(n_kv_heads, "n_kv_heads", f)
    _divides(Hkv, H, "n_kv_heads", "n_heads", f)
    if d_head is None and d % H:
        raise ValueError(f"{f}: d_head defaults to d_model / n_heads, an integer; got {d} / {H}")
    dh = d // H if d_head is None else _validate.positive_int(d_head, "d_head", f)
    if not isinstance(bias, (bool, np.bool_)):
        raise TypeError(f"{f}: bias must be True or False; got {bias!r}")
    n = d * H * dh + 2 * d * Hkv * dh + H * dh * d
    return n + (H * dh + 2 * Hkv * dh + d if bias else 0)


def attention_flops(n_queries: int, d_model: int, *, n_keys: int | None = None) -> int:
    """Forward FLOPs of one multi-head attention layer (``H·dh = d``; a multiply-add is 2).

    ``8·Tq·d²`` for the Q, K, V and output projections of the Tq new tokens (the other
    ``Tk − Tq`` keys and values count as cached) plus ``4·Tq·Tk·d`` for the scores and
    the weighted sum; n_keys = Tk defaults to Tq and must be >= Tq; no causal
    discount; softmax not counted. A cached decode step is ``n_queries=1, n_keys=t``:
    ``8d² + 4td``. Cross-attention over a fresh context and GQA are not covered.

    Examples
    --------
    >>> attention_flops(1024, 768)  # 8·1024·768² + 4·1024²·768
    8053063680
    >>> attention_flops(1, 768, n_keys=1024)  # one decode step after 1023 tokens
    7864320
    """
    f = "attention_flops"
    tq = _validate.positive_int(n_queries, "n_queries", f)
    d = _validate.positive_int(d_model, "d_model", f)
    tk = tq if n_keys is None else _validate.positive_int(n_keys, "n_keys", f)
    if tk < tq:
        raise ValueError(f"{f}: n_keys must be >= n_queries = {tq}; got {tk}")
    return 8 * tq * d * d + 4 * tq * tk * d


def kv_cache_bytes(
    n_layers: int,
    n_kv_heads: int,
    d_head: int,
    seq_len: int,
    *,
    batch: int = 1,
    dtype: str = "float16",
) -> int:
    """Bytes of a KV cache: ``2·L·Hkv·dh·T·B·b`` (keys and values), a Python int.

    ``b`` is the size of ``dtype`` as in ``memory_bytes`` (``"float64"``, ``"float32"``,
    ``"float16"``, ``"bfloat16"``, ``"int8"``, ``"int4"``; int4 total rounded up to
    whole bytes). Grows linearly in seq_len T and batch B; GQA divides it by H / Hkv.

    Examples
    --------
    >>> kv_cache_bytes(32, 8, 128, 8192)  # Llama-3-8B-like, 8k tokens, fp16: 1 GiB
    1073741824
    """
    f = "kv_cache_bytes"
    n = 2  # keys and values
    names = ("n_layers", "n_kv_heads", "d_head", "seq_len", "batch")
    for name, value in zip(names, (n_layers, n_kv_heads, d_head, seq_len, batch), strict=True):
        n *= _validate.positive_int(value, name, f)
    _validate.option(dtype, tuple(_BITS), "dtype", f)
    return memory_bytes(n, dtype)


def _cache(a: Any, name: str, f: str) -> np.ndarray:
    """A cache ``(..., T, d)`` that may be empty only along ``T`` (a decode's start)."""
    arr = _validate._asarray(a, name, f)
    if arr.ndim < 2 or arr.shape[-1] == 0 or 0 in arr.shape[:-2]:
        raise ValueError(f"{f}: {name} must be (..., T, d) with T >= 0 and d >= 1; got {arr.shape}")
    if arr.shape[-2] == 0:  # float_array refuses empty input: check one dummy row instead
        _validate.float_array(np.zeros_like(arr, shape=(1, 1)), name, f)
        return arr.astype(np.promote_types(arr.dtype, np.float64))
    return _validate.float_array(arr, name, f)


def append_kv(
    cache_k: Any,
    cache_v: Any,
    k_new: Any,
    v_new: Any,
    *,
    window: int | None = None,
    n_sink: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Append new keys and values to a cache along axis −2; returns new ``(k, v)``.

    cache_k: (..., T, dk), cache_v: (..., T, dv) (``T = 0`` for an empty cache);
    k_new: (..., c, dk), v_new: (..., c, dv). The inputs are never modified. With
    ``window``: if the concatenation has more than ``window`` entries, keep its first
    ``n_sink`` (attention sinks) and last ``window − n_sink``, otherwise all of it: the
    cache the newest token attends to (``0 <= n_sink < window``). For one new token
    with ``n_sink = 0`` this reproduces ``sliding_window_mask(1, T + 1, window=window)``;
    for a chunk of ``c > 1`` tokens, attend over the untruncated concatenation with
    ``sliding_window_mask(c, T + c, window=window)`` before truncating. Keys are kept as
    given (no re-rotation of positions, unlike StreamingLLM's in-cache positions).

    Examples
    --------
    >>> k = v = np.zeros((0, 1))  # an empty cache: T = 0, d = 1
    >>> for t in range(5):
    ...     k, v = append_kv(k, v, [[float(t)]], [[float(t)]], window=3, n_sink=1)
    >>> k[:, 0]  # the sink (token 0) and the last 2 tokens
    array([0., 3., 4.])
    """
    f = "append_kv"
    ck, cv = _cache(cache_k, "cache_k", f), _cache(cache_v, "cache_v", f)
    kn = _validate.float_array(k_new, "k_new", f, min_ndim=2)
    vn = _validate.float_array(v_new, "v_new", f, min_ndim=2)
    if ck.shape[-2] != cv.shape[-2] or kn.shape[-2] != vn.shape[-2]:
        raise ValueError(
            f"{f}: keys and values must have the same length T (axis -2); got cache_k "
            f"{ck.shape}, cache_v {cv.shape}, k_new {kn.shape}, v_new {vn.shape}"
        )
    for name, c, n in (("k_new", ck, kn), ("v_new", cv, vn)):
        if c.shape[:-2] != n.shape[:-2] or c.shape[-1] != n.shape[-1]:
            raise ValueError(
                f"{f}: {name} must match its cache on every axis but -2; got cache "
                f"{c.shape} and {name} {n.shape}"
            )
    s = _validate.positive_int(n_sink, "n_sink", f, minimum=0)
    if window is None and s:
        raise ValueError(f"{f}: n_sink needs a window; got n_sink={s} with window=None")
    w = None if window is None else _validate.positive_int(window, "window", f)
    if w is not None and s >= w:
        raise ValueError(f"{f}: n_sink must lie in [0, window) = [0, {w}); got {s}")
    k, v = np.concatenate([ck, kn], axis=-2), np.concatenate([cv, vn], axis=-2)
    T = k.shape[-2]
    if w is None or T <= w:
        return k, v
    keep = np.concatenate([np.arange(s), np.arange(T - (w - s), T)])
    return k[..., keep, :], v[..., keep, :]
