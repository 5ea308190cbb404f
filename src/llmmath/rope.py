"""Rotary position embeddings (RoPE) and the rules that stretch them to longer contexts.

The frequencies and their context-extension rules are written in ``llmmath.scaling`` and
re-exported here, so every one of them is ``llmmath.rope.<name>`` as well.

References, and the implementation each function matches ("HF" = Hugging Face
transformers 5.x, ``modeling_rope_utils.ROPE_INIT_FUNCTIONS`` and ``LlamaRotaryEmbedding``):

- Su et al., "RoFormer" (arXiv:2104.09864): ``rope_frequencies``, ``apply_rope``,
  ``rope_matrix``; ``"interleaved"`` pairs ``(2k, 2k+1)`` as GPT-J's
  ``rotate_every_two``, ``"half"`` pairs ``(k, k+d/2)`` as HF's ``rotate_half``
  (Llama, GPT-NeoX). ``rope_cos_sin`` gives HF's cos/sin caches (float64 here).
- ``rope_weights_to_half``: the ``permute`` of HF's ``convert_llama_weights_to_hf.py``.
- The context-extension rules (position interpolation, NTK-aware and dynamic NTK, YaRN,
  Llama 3.1, LongRoPE) and their papers: see ``llmmath.scaling``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath._validate import (
    even_int,
    even_width,
    finite_float,
    float_array,
    matrix,
    option,
    positive_int,
)
from llmmath.scaling import (
    dynamic_ntk_base,
    linear_scaled_frequencies,
    llama3_frequencies,
    longrope_attention_factor,
    longrope_frequencies,
    ntk_scaled_base,
    rope_frequencies,
    yarn_attention_factor,
    yarn_frequencies,
)

__all__ = [
    "apply_rope",
    "half_to_interleaved",
    "interleaved_to_half",
    "rope_cos_sin",
    "rope_matrix",
    "rope_weights_to_half",
    "rotate_pairs",
    # written in llmmath.scaling
    "rope_frequencies",
    "linear_scaled_frequencies",
    "ntk_scaled_base",
    "dynamic_ntk_base",
    "yarn_frequencies",
    "yarn_attention_factor",
    "llama3_frequencies",
    "longrope_frequencies",
    "longrope_attention_factor",
]

_PAIRS = "RoPE rotates coordinate pairs"
_LAYOUTS = ("interleaved", "half")


def _even_last(x: Any, func: str, min_ndim: int = 1) -> np.ndarray:
    x = float_array(x, "x", func, min_ndim=min_ndim)
    even_width(x.shape[-1], "x", func, _PAIRS)
    return x


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
    return _rotate(x, option(layout, _LAYOUTS, "layout", "rotate_pairs"))


def _rotate(x: np.ndarray, layout: str) -> np.ndarray:
    if layout == "half":
        h = x.shape[-1] // 2
        return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = -x[..., 1::2], x[..., 0::2]
    return out


def _cos_sin(positions: np.ndarray, theta: np.ndarray, layout: str) -> tuple:
    """cos and sin of ``p * theta_k``, ``(T, d/2)``, laid out over ``(T, d)`` for ``layout``."""
    angles = positions[:, None] * theta
    cos, sin = np.cos(angles), np.sin(angles)
    if layout == "half":
        return np.concatenate([cos, cos], axis=-1), np.concatenate([sin, sin], axis=-1)
    return np.repeat(cos, 2, axis=-1), np.repeat(sin, 2, axis=-1)


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
    cos, sin = _cos_sin(p, theta, layout)
    return cos * scale, sin * scale


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
    cos, sin = _cos_sin(positions, inv_freq, layout)  # (T, d) each: the elementwise form
    return x * cos + _rotate(x, layout) * sin


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
