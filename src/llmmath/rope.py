"""Rotary position embeddings (RoPE) and the rules that stretch them to longer contexts.

References, and the implementation each function matches ("HF" = Hugging Face
transformers 5.x, ``modeling_rope_utils.ROPE_INIT_FUNCTIONS`` and ``LlamaRotaryEmbedding``):

- Su et al., "RoFormer" (arXiv:2104.09864): ``rope_frequencies``, ``apply_rope``,
  ``rope_matrix``; ``"interleaved"`` pairs ``(2k, 2k+1)`` as GPT-J's
  ``rotate_every_two``, ``"half"`` pairs ``(k, k+d/2)`` as HF's ``rotate_half``
  (Llama, GPT-NeoX). ``rope_cos_sin`` gives HF's cos/sin caches (float64 here).
- ``rope_weights_to_half``: the ``permute`` of HF's ``convert_llama_weights_to_hf.py``.
- Chen et al., "Position Interpolation" (arXiv:2306.15595): ``linear_scaled_frequencies``
  (HF ``linear``). The NTK-aware base of bloc97 (2023): ``ntk_scaled_base``; its dynamic
  form by emozilla (2023): ``dynamic_ntk_base`` (HF ``dynamic``).
- Peng et al., "YaRN" (arXiv:2309.00071): ``yarn_frequencies``, ``yarn_attention_factor``
  (HF ``yarn`` and the authors' code).
- Llama 3.1 (Meta's ``apply_scaling`` in llama-models, and the model configuration):
  ``llama3_frequencies`` (HF ``llama3``).
- Ding et al., "LongRoPE" (arXiv:2402.13753) and Phi-3 (arXiv:2404.14219):
  ``longrope_frequencies``, ``longrope_attention_factor`` (HF ``longrope``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from llmmath._validate import (
    even_int,
    even_width,
    finite_float,
    float_array,
    matrix,
    option,
    positive_float,
    positive_int,
)

_PAIRS = "RoPE rotates coordinate pairs"
_LAYOUTS = ("interleaved", "half")


def _even_last(x: Any, func: str, min_ndim: int = 1) -> np.ndarray:
    x = float_array(x, "x", func, min_ndim=min_ndim)
    even_width(x.shape[-1], "x", func, _PAIRS)
    return x


def _inv_freq(d: int, base: float) -> np.ndarray:
    """``1 / base**(arange(0, d, 2)/d)``: HF's ``inv_freq`` formula, step for step."""
    return 1.0 / base ** (np.arange(0, d, 2) / d)


def rope_frequencies(d_head: int, base: float = 10000.0) -> np.ndarray:
    """RoPE angular frequencies ``theta_k = base^(-2k/d)``, shape ``(d_head/2,)``.

    Computed as ``1 / base**(arange(0, d, 2)/d)``, exactly like ``inv_freq`` in transformers.

    Examples
    --------
    >>> rope_frequencies(4)
    array([1.  , 0.01])
    """
    d = even_int(d_head, "d_head", "rope_frequencies")
    return _inv_freq(d, positive_float(base, "base", "rope_frequencies"))


def rotate_pairs(x: Any, *, layout: str) -> np.ndarray:
    """``rot(x)``: each pair ``(a, b)`` becomes ``(-b, a)``; ``x: (..., d)``, result like ``x``.

    The partner of ``x`` in the elementwise form ``x * cos + rotate_pairs(x) * sin``
    (``layout="half"`` is HF's ``rotate_half``, ``"interleaved"`` GPT-J's ``rotate_every_two``).

    Examples
    --------
    >>> rotate_pairs([1.0, 2.0, 3.0, 4.0], layout="interleaved")
    array([-2.,  1., -4.,  3.])
    >>> rotate_pairs([1.0, 2.0, 3.0, 4.0], layout="half")
    array([-3., -4.,  1.,  2.])
    """
    x = _even_last(x, "rotate_pairs")
    layout = option(layout, _LAYOUTS, "layout", "rotate_pairs")
    if layout == "half":
        h = x.shape[-1] // 2
        return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = -x[..., 1::2], x[..., 0::2]
    return out


def rope_cos_sin(
    positions: Any, inv_freq: Any, *, layout: str, attention_factor: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """The cos and sin caches of the elementwise form, each ``(T, d)``.

    ``positions: (T,)`` (floats allowed), ``inv_freq: (d/2,)``. The angle ``p * theta_k`` is
    laid out as ``cat(theta, theta)`` for ``"half"`` (HF ``LlamaRotaryEmbedding``) or with
    each angle repeated twice for ``"interleaved"``; both caches are multiplied by
    ``attention_factor``. ``layout`` has no default: a cache built for one layout and used
    with the other is a silent bug. Then ``x * cos + rotate_pairs(x, layout=...) * sin``
    equals ``apply_rope(x, positions, inv_freq=inv_freq, layout=...)``.

    Examples
    --------
    >>> cos, sin = rope_cos_sin([0.0, 1.0], [1.0, 0.5], layout="half")
    >>> sin.round(4)
    array([[0.    , 0.    , 0.    , 0.    ],
           [0.8415, 0.4794, 0.8415, 0.4794]])
    """
    f = "rope_cos_sin"
    layout = option(layout, _LAYOUTS, "layout", f)
    p = float_array(positions, "positions", f, min_ndim=1)
    if p.ndim != 1:
        raise ValueError(f"{f}: positions must be 1-D (T,); got shape {p.shape}")
    theta = float_array(inv_freq, "inv_freq", f, min_ndim=1)
    if theta.ndim != 1:
        raise ValueError(f"{f}: inv_freq must be 1-D (d/2,); got shape {theta.shape}")
    scale = finite_float(attention_factor, "attention_factor", f)
    angles = p[:, None] * theta
    if layout == "half":
        angles = np.concatenate([angles, angles], axis=-1)
    else:
        angles = np.repeat(angles, 2, axis=-1)
    return np.cos(angles) * scale, np.sin(angles) * scale


def apply_rope(
    x: Any,
    positions: Any = None,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    inv_freq: Any = None,
) -> np.ndarray:
    """Rotate each coordinate pair of ``x`` by the angle ``theta_k * p`` of its position.

    ``x: (..., T, d)`` with ``d`` even; ``positions: (T,)`` (default ``arange(T)``, floats
    allowed); ``inv_freq: (d/2,)`` overrides ``rope_frequencies(d, base)``. ``layout``:
    ``"interleaved"`` pairs ``(2k, 2k+1)`` (RoFormer, GPT-J); ``"half"`` pairs ``(k, k+d/2)``
    (Llama / GPT-NeoX ``rotate_half``). Returns an array shaped like ``x``.

    Examples
    --------
    >>> apply_rope([[1.0, 0.0], [1.0, 0.0]], positions=[0.0, np.pi / 2], inv_freq=[1.0])
    array([[1., 0.],
           [0., 1.]])
    """
    f = "apply_rope"
    x = _even_last(x, f, min_ndim=2)
    layout = option(layout, _LAYOUTS, "layout", f)
    T, d = x.shape[-2:]
    if positions is None:
        positions = np.arange(T, dtype=np.float64)
    positions = float_array(positions, "positions", f)
    if positions.shape != (T,):
        raise ValueError(
            f"{f}: positions must have shape ({T},) to match x's T axis; got {positions.shape}"
        )
    if inv_freq is None:
        inv_freq = rope_frequencies(d, base)
    inv_freq = float_array(inv_freq, "inv_freq", f)
    if inv_freq.shape != (d // 2,):
        raise ValueError(f"{f}: inv_freq must have shape ({d // 2},); got {inv_freq.shape}")
    angles = positions[:, None] * inv_freq  # (T, d/2): one angle per position and pair
    cos, sin = np.cos(angles), np.sin(angles)
    if layout == "half":
        x1, x2 = x[..., : d // 2], x[..., d // 2 :]
        return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x1 * cos - x2 * sin
    out[..., 1::2] = x2 * cos + x1 * sin
    return out


def rope_matrix(p: float, d_head: int, base: float = 10000.0) -> np.ndarray:
    """The block-diagonal rotation ``R_p`` of shape ``(d_head, d_head)`` (interleaved layout).

    ``R_p @ x`` equals ``apply_rope(x[None], [p])[0]``, and ``R_p.T @ R_s == R_{s-p}``.

    Examples
    --------
    >>> rope_matrix(np.pi / 2, 2)
    array([[ 0., -1.],
           [ 1.,  0.]])
    """
    d = even_int(d_head, "d_head", "rope_matrix")
    angles = finite_float(p, "p", "rope_matrix") * rope_frequencies(d, base)
    even = np.arange(0, d, 2)
    R = np.zeros((d, d))
    R[even, even] = R[even + 1, even + 1] = np.cos(angles)
    R[even, even + 1] = -np.sin(angles)
    R[even + 1, even] = np.sin(angles)
    return R


def interleaved_to_half(x: Any) -> np.ndarray:
    """Reorder the last axis ``(x0, x1, x2, x3, ...)`` to ``(x0, x2, ..., x1, x3, ...)``.

    ``x: (..., d)`` with ``d`` even; result like ``x``. Pair ``(2k, 2k+1)`` moves to ``(k, k+d/2)``,
    so ``apply_rope(x) == half_to_interleaved(apply_rope(interleaved_to_half(x), layout="half"))``.

    Examples
    --------
    >>> interleaved_to_half([0, 1, 2, 3, 4, 5])
    array([0., 2., 4., 1., 3., 5.])
    """
    x = _even_last(x, "interleaved_to_half")
    return np.concatenate([x[..., 0::2], x[..., 1::2]], axis=-1)


def half_to_interleaved(x: Any) -> np.ndarray:
    """Inverse of ``interleaved_to_half``: ``x: (..., d)`` to ``(..., d)``.

    Examples
    --------
    >>> half_to_interleaved([0, 2, 4, 1, 3, 5])
    array([0., 1., 2., 3., 4., 5.])
    """
    x = _even_last(x, "half_to_interleaved")
    d = x.shape[-1]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = x[..., : d // 2], x[..., d // 2 :]
    return out


def rope_weights_to_half(W: Any, n_heads: int) -> np.ndarray:
    """Permute a query/key projection's rows per head from the interleaved to the half layout.

    ``W: (n_heads * d_head, d_in)`` (rows are output features, ``q = W @ x``); within each
    head, rows ``(0, 1, 2, 3, ...)`` become ``(0, 2, ..., 1, 3, ...)``, the ``permute`` of HF's
    Llama conversion script. Scores under ``layout="half"`` with the permuted ``W_q`` and
    ``W_k`` equal scores under ``"interleaved"`` with the originals. Result like ``W``.

    Examples
    --------
    >>> rope_weights_to_half(np.arange(8.0)[:, None], 2).ravel()
    array([0., 2., 1., 3., 4., 6., 5., 7.])
    """
    f = "rope_weights_to_half"
    W = matrix(W, "W", f)
    H = positive_int(n_heads, "n_heads", f)
    rows = W.shape[0]
    if rows % H or (rows // H) % 2:
        raise ValueError(
            f"{f}: W's {rows} rows must split into n_heads = {H} heads of even width "
            f"(RoPE rotates pairs within a head); got shape {W.shape}"
        )
    heads = W.reshape(H, rows // H // 2, 2, W.shape[1])
    return np.swapaxes(heads, 1, 2).reshape(W.shape)


def linear_scaled_frequencies(d_head: int, factor: float, base: float = 10000.0) -> np.ndarray:
    """Position interpolation: ``rope_frequencies(d_head, base) / factor``, shape ``(d_head/2,)``.

    Examples
    --------
    >>> linear_scaled_frequencies(4, 2.0)
    array([0.5  , 0.005])
    """
    factor = positive_float(factor, "factor", "linear_scaled_frequencies")
    return rope_frequencies(d_head, base) / factor


def ntk_scaled_base(base: float, factor: float, d_head: int) -> float:
    """Return the NTK-aware RoPE base ``base * factor^(d/(d-2))`` as a float (``d_head`` even, > 2).

    The exponent makes the slowest pair's frequency exactly ``theta_{d/2-1} / factor``.

    Examples
    --------
    >>> ntk_scaled_base(10000.0, 4.0, 4)
    160000.0
    """
    f = "ntk_scaled_base"
    base, factor = positive_float(base, "base", f), positive_float(factor, "factor", f)
    d = even_int(d_head, "d_head", f, minimum=4)
    return base * factor ** (d / (d - 2))


def dynamic_ntk_base(
    base: float, factor: float, d_head: int, seq_len: int, original_max_positions: int
) -> float:
    """Dynamic NTK base for the current length: a float.

    ``base * ((factor * L / L0) - (factor - 1))^(d/(d-2))`` with ``L = max(seq_len, L0)`` and
    ``L0 = original_max_positions`` (HF ``dynamic``, which reads ``L0`` from
    ``max_position_embeddings``). Equals ``base`` for ``seq_len <= L0``; recomputed from
    ``seq_len`` at every call, with no memory of earlier lengths.

    Examples
    --------
    >>> dynamic_ntk_base(10000.0, 2.0, 4, 100, 100), dynamic_ntk_base(10000.0, 2.0, 4, 200, 100)
    (10000.0, 90000.0)
    """
    f = "dynamic_ntk_base"
    base, factor = positive_float(base, "base", f), positive_float(factor, "factor", f)
    d = even_int(d_head, "d_head", f, minimum=4)
    n = positive_int(seq_len, "seq_len", f)
    L0 = positive_int(original_max_positions, "original_max_positions", f)
    if n <= L0:  # exactly base: the formula's 1.0 can round to 0.999...
        return base
    return base * ((factor * n / L0) - (factor - 1)) ** (d / (d - 2))


def yarn_frequencies(
    d_head: int,
    factor: float,
    original_max_positions: int,
    base: float = 10000.0,
    beta_fast: float = 32,
    beta_slow: float = 1,
) -> np.ndarray:
    """YaRN frequencies ``(d_head/2,)``: ``theta`` for fast pairs, ``theta/factor`` for slow.

    Pair ``k`` completes ``original_max_positions * theta_k / (2 pi)`` turns over the original
    context; pairs with more than ``beta_fast`` turns keep ``theta_k``, pairs with fewer than
    ``beta_slow`` are interpolated, and a linear ramp in the pair index blends in between
    (its ends floored/ceiled, as in transformers' ``yarn`` rope type with ``truncate=True``;
    the paper's Definition 2 ramps linearly in the turn count instead).

    Examples
    --------
    >>> yarn_frequencies(8, 4.0, 64)
    array([1.     , 0.0625 , 0.0025 , 0.00025])
    """
    f = "yarn_frequencies"
    d = even_int(d_head, "d_head", f)
    factor = positive_float(factor, "factor", f)
    L = positive_int(original_max_positions, "original_max_positions", f)
    base = positive_float(base, "base", f)
    if base <= 1:
        raise ValueError(f"{f}: base must be > 1; got {base!r}")
    fast = positive_float(beta_fast, "beta_fast", f)
    slow = positive_float(beta_slow, "beta_slow", f)
    if fast <= slow:
        raise ValueError(f"{f}: beta_fast must exceed beta_slow; got {fast} and {slow}")

    def dim_for(turns: float) -> float:  # pair index (in units of d) that makes `turns` turns
        return d * math.log(L / (turns * 2 * math.pi)) / (2 * math.log(base))

    low = float(max(math.floor(dim_for(fast)), 0))
    high = float(min(math.ceil(dim_for(slow)), d - 1))
    if low == high:
        high += 0.001  # same guard as the reference: avoid dividing by zero
    ramp = np.clip((np.arange(d // 2) - low) / (high - low), 0.0, 1.0)
    theta = rope_frequencies(d, base)
    return theta / factor * ramp + theta * (1.0 - ramp)


def yarn_attention_factor(factor: float) -> float:
    """YaRN's logit temperature fix ``0.1 ln(factor) + 1`` for ``factor > 1``, else ``1.0``.

    transformers multiplies cos and sin by it, scaling every attention logit by its square.

    Examples
    --------
    >>> round(yarn_attention_factor(8.0), 6)
    1.207944
    """
    factor = positive_float(factor, "factor", "yarn_attention_factor")
    return 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0


def llama3_frequencies(
    d_head: int,
    factor: float,
    original_max_positions: int = 8192,
    *,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
    base: float = 500000.0,
) -> np.ndarray:
    """Llama 3.1's frequencies ``(d_head/2,)``, banded by wavelength ``lambda_k = 2 pi/theta_k``.

    Pairs with ``lambda_k > L0/low_freq_factor`` get ``theta_k/factor``; pairs with
    ``lambda_k < L0/high_freq_factor`` keep ``theta_k``; in between ``(1-s) theta_k/factor +
    s theta_k`` with ``s = (L0/lambda_k - low_freq_factor)/(high_freq_factor - low_freq_factor)``
    (HF ``llama3``; Meta's ``apply_scaling``).

    Examples
    --------
    >>> ratio = llama3_frequencies(128, 8.0) / rope_frequencies(128, 500000.0)
    >>> ratio[[0, 32, 63]].round(4)  # kept, blended (s = 0.2813), divided by 8
    array([1.    , 0.3711, 0.125 ])
    """
    f = "llama3_frequencies"
    factor = positive_float(factor, "factor", f)
    L0 = positive_int(original_max_positions, "original_max_positions", f)
    low = positive_float(low_freq_factor, "low_freq_factor", f)
    high = positive_float(high_freq_factor, "high_freq_factor", f)
    if low >= high:
        raise ValueError(f"{f}: low_freq_factor must be < high_freq_factor; got {low} and {high}")
    theta = rope_frequencies(d_head, base)
    wavelen = 2 * math.pi / theta
    s = (L0 / wavelen - low) / (high - low)
    smooth = (1 - s) * theta / factor + s * theta
    out = np.where(wavelen > L0 / low, theta / factor, smooth)
    return np.where(wavelen < L0 / high, theta, out)


def longrope_frequencies(d_head: int, ext_factors: Any, base: float = 10000.0) -> np.ndarray:
    """LongRoPE / Phi-3 frequencies ``theta_k / ext_factors[k]``, shape ``(d_head/2,)``.

    ``ext_factors: (d/2,)`` positive, one rescale factor per pair (HF ``longrope`` uses the
    ``long_factor`` list beyond the original length, ``short_factor`` within it).

    Examples
    --------
    >>> longrope_frequencies(4, [1.0, 4.0])
    array([1.    , 0.0025])
    """
    f = "longrope_frequencies"
    d = even_int(d_head, "d_head", f)
    ext = float_array(ext_factors, "ext_factors", f)
    if ext.shape != (d // 2,):
        raise ValueError(f"{f}: ext_factors must have shape ({d // 2},); got {ext.shape}")
    if (ext <= 0).any():
        raise ValueError(f"{f}: ext_factors must be > 0; got minimum {ext.min()}")
    base = positive_float(base, "base", f)
    return 1.0 / (ext * base ** (np.arange(0, d, 2) / d))  # HF's formula, step for step


def longrope_attention_factor(factor: float, original_max_positions: int) -> float:
    """LongRoPE's default scale ``sqrt(1 + ln(factor)/ln(L0))`` for ``factor > 1``, else 1.

    Like YaRN's factor it multiplies cos and sin (HF ``longrope``); ``L0 >= 2``.

    Examples
    --------
    >>> round(longrope_attention_factor(32.0, 4096), 6)
    1.190238
    """
    f = "longrope_attention_factor"
    factor = positive_float(factor, "factor", f)
    L0 = positive_int(original_max_positions, "original_max_positions", f, minimum=2)
    return math.sqrt(1 + math.log(factor) / math.log(L0)) if factor > 1 else 1.0
