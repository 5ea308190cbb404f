"""RoPE frequencies and the rules that rescale them for longer contexts.

``llmmath.rope`` re-exports every name here; the rules are documented on its page. References,
and the implementation each function matches ("HF" = Hugging Face transformers 5.x,
``modeling_rope_utils.ROPE_INIT_FUNCTIONS``):

- Su et al., "RoFormer" (arXiv:2104.09864): ``rope_frequencies`` (HF's ``inv_freq``).
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

from llmmath._validate import even_int, float_array, positive_float, positive_int


def rope_frequencies(d_head: int, base: float = 10000.0) -> np.ndarray:
    """RoPE angular frequencies ``theta_k = base^(-2k/d)``, shape ``(d_head/2,)``.

    Computed as ``1 / base**(arange(0, d, 2)/d)``, exactly like ``inv_freq`` in transformers.

    Examples
    --------
    >>> rope_frequencies(4)
    array([1.  , 0.01])
    """
    d = even_int(d_head, "d_head", "rope_frequencies")
    base = positive_float(base, "base", "rope_frequencies")
    return 1.0 / base ** (np.arange(0, d, 2) / d)


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
