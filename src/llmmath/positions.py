"""Position information: sinusoidal tables, RoPE, ALiBi, T5 buckets, context extension.

References (and the implementation each function matches; "HF" = Hugging Face transformers):
Vaswani et al., "Attention Is All You Need" (arXiv:1706.03762) for ``sinusoidal``
(interleaved, as DistilBERT's table in HF); Su et al., "RoFormer" (arXiv:2104.09864) for
``apply_rope`` (``"interleaved"`` = GPT-J's ``rotate_every_two``, ``"half"`` = the
``rotate_half`` form of Llama / GPT-NeoX in HF); Press et al., "Train Short, Test Long"
(ALiBi, arXiv:2108.12409) and their ``get_slopes``; Raffel et al., T5 (arXiv:1910.10683) and
HF's ``T5Attention._relative_position_bucket``; Chen et al., "Positional Interpolation"
(arXiv:2306.15595) and HF's ``linear`` rope type; Peng et al., "YaRN" (arXiv:2309.00071),
HF's ``yarn`` rope type, and the "NTK-aware" base change discussed there.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from llmmath._validate import even_width, float_array, matrix, option, positive_float, positive_int

_PAIRS = "RoPE rotates coordinate pairs"


def _even_dim(d: Any, name: str, func: str, *, minimum: int = 2) -> int:
    d = positive_int(d, name, func, minimum=minimum)
    if d % 2:
        raise ValueError(f"{func}: {name} must be even (coordinates come in pairs); got {d}")
    return d


def _even_last(x: Any, func: str) -> np.ndarray:
    x = float_array(x, "x", func, min_ndim=1)
    even_width(x.shape[-1], "x", func, _PAIRS)
    return x


def sinusoidal(n_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """Sinusoidal table ``(n_positions, d_model)``, ``d_model`` even.

    ``PE[p, 2k] = sin(p / base^(2k/d))`` and ``PE[p, 2k+1] = cos(p / base^(2k/d))``.

    >>> sinusoidal(2, 4)
    array([[0.        , 1.        , 0.        , 1.        ],
           [0.84147098, 0.54030231, 0.00999983, 0.99995   ]])
    """
    n = positive_int(n_positions, "n_positions", "sinusoidal")
    d = _even_dim(d_model, "d_model", "sinusoidal")
    base = positive_float(base, "base", "sinusoidal")
    angles = np.arange(n)[:, None] / base ** (np.arange(0, d, 2) / d)
    pe = np.empty((n, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


def rope_frequencies(d_head: int, base: float = 10000.0) -> np.ndarray:
    """RoPE angular frequencies ``theta_k = base^(-2k/d)``, shape ``(d_head/2,)``.

    Computed as ``1 / base**(arange(0, d, 2)/d)``, exactly like ``inv_freq`` in transformers.

    >>> rope_frequencies(4)
    array([1.  , 0.01])
    """
    d = _even_dim(d_head, "d_head", "rope_frequencies")
    base = positive_float(base, "base", "rope_frequencies")
    return 1.0 / base ** (np.arange(0, d, 2) / d)


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

    >>> apply_rope([[1.0, 0.0], [1.0, 0.0]], positions=[0.0, np.pi / 2], inv_freq=[1.0])
    array([[1., 0.],
           [0., 1.]])
    """
    f = "apply_rope"
    x = float_array(x, "x", f, min_ndim=2)
    layout = option(layout, ("interleaved", "half"), "layout", f)
    T, d = x.shape[-2:]
    even_width(d, "x", f, _PAIRS)
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

    >>> rope_matrix(np.pi / 2, 2)
    array([[ 0., -1.],
           [ 1.,  0.]])
    """
    d = _even_dim(d_head, "d_head", "rope_matrix")
    angles = float(p) * rope_frequencies(d, base)
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

    >>> interleaved_to_half([0, 1, 2, 3, 4, 5])
    array([0., 2., 4., 1., 3., 5.])
    """
    x = _even_last(x, "interleaved_to_half")
    return np.concatenate([x[..., 0::2], x[..., 1::2]], axis=-1)


def half_to_interleaved(x: Any) -> np.ndarray:
    """Inverse of ``interleaved_to_half``: ``x: (..., d)`` to ``(..., d)``.

    >>> half_to_interleaved([0, 2, 4, 1, 3, 5])
    array([0., 1., 2., 3., 4., 5.])
    """
    x = _even_last(x, "half_to_interleaved")
    d = x.shape[-1]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = x[..., : d // 2], x[..., d // 2 :]
    return out


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi head slopes ``m_h``, shape ``(n_heads,)``, as in Press et al.'s ``get_slopes``.

    For ``n`` a power of two, ``m_h = 2^(-8h/n)``, ``h = 1..n``. Otherwise the ``c`` slopes of
    the largest power of two ``c < n`` come first, then the odd-numbered slopes of the
    ``2c`` schedule, ``2^(-8j/(2c))`` for ``j = 1, 3, 5, ...``, until there are ``n``.

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

    >>> alibi_bias(1, 3)
    array([[[ 0.        ,  0.        ,  0.        ],
            [-0.00390625,  0.        ,  0.        ],
            [-0.0078125 , -0.00390625,  0.        ]]])
    """
    slopes = alibi_slopes(n_heads)
    T = positive_int(seq_len, "seq_len", "alibi_bias")
    return slopes[:, None, None] * np.minimum(relative_positions(T), 0)


def relative_positions(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """Offsets ``R[i, j] = j - i`` (key minus query, the T5 convention), int64 ``(Tq, Tk)``.

    ``n_keys`` defaults to ``n_queries``.

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
    # because numpy's own float32 log can be one ulp off (ln 2.25) where torch's is not.
    ratio = np.maximum(n, max_exact).astype(np.float32) / np.float32(max_exact)
    log_ratio = np.log(ratio.astype(np.float64)).astype(np.float32)
    scaled = log_ratio / np.float32(math.log(md / max_exact)) * np.float32(nb - max_exact)
    large = np.minimum(max_exact + scaled.astype(np.int64), nb - 1)
    return buckets + np.where(n < max_exact, n, large)


def interpolate_table(P: Any, new_length: int) -> np.ndarray:
    """Resample a learned table ``P: (T, d)`` to ``(new_length, d)``, linearly.

    Row ``i`` of the result sits at position ``i (T-1)/(new_length-1)`` of ``P``, so the first
    and last rows are kept exactly.

    >>> interpolate_table([[0.0, 10.0], [1.0, 20.0]], 3)
    array([[ 0. , 10. ],
           [ 0.5, 15. ],
           [ 1. , 20. ]])
    """
    P = matrix(P, "P", "interpolate_table")
    if P.shape[0] < 2:
        raise ValueError(f"interpolate_table: P needs at least 2 rows; got shape {P.shape}")
    m = positive_int(new_length, "new_length", "interpolate_table", minimum=2)
    s = np.linspace(0.0, P.shape[0] - 1, m)
    lo = np.minimum(np.floor(s).astype(np.int64), P.shape[0] - 2)
    frac = (s - lo)[:, None]
    return P[lo] * (1.0 - frac) + P[lo + 1] * frac


def linear_scaled_frequencies(d_head: int, factor: float, base: float = 10000.0) -> np.ndarray:
    """Position interpolation: ``rope_frequencies(d_head, base) / factor``, shape ``(d_head/2,)``.

    >>> linear_scaled_frequencies(4, 2.0)
    array([0.5  , 0.005])
    """
    factor = positive_float(factor, "factor", "linear_scaled_frequencies")
    return rope_frequencies(d_head, base) / factor


def ntk_scaled_base(base: float, factor: float, d_head: int) -> float:
    """Return the NTK-aware RoPE base ``base * factor^(d/(d-2))`` as a float (``d_head`` even, > 2).

    The exponent makes the slowest pair's frequency exactly ``theta_{d/2-1} / factor``.

    >>> ntk_scaled_base(10000.0, 4.0, 4)
    160000.0
    """
    f = "ntk_scaled_base"
    base, factor = positive_float(base, "base", f), positive_float(factor, "factor", f)
    d = _even_dim(d_head, "d_head", f, minimum=4)
    return base * factor ** (d / (d - 2))


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
    ``beta_slow`` are interpolated, and a linear ramp blends in between (the ramp's ends are
    floored/ceiled, as in transformers' ``yarn`` rope type with ``truncate=True``).

    >>> yarn_frequencies(8, 4.0, 64)
    array([1.     , 0.0625 , 0.0025 , 0.00025])
    """
    f = "yarn_frequencies"
    d = _even_dim(d_head, "d_head", f)
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

    >>> round(yarn_attention_factor(8.0), 6)
    1.207944
    """
    factor = positive_float(factor, "factor", "yarn_attention_factor")
    return 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
