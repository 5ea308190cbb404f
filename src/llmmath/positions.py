"""Absolute positions: the sinusoidal table, its offset map, and learned tables.

References (and the implementation each function matches; "HF" = Hugging Face transformers):
Vaswani et al., "Attention Is All You Need" (arXiv:1706.03762), section 3.5, for
``sinusoidal`` and ``sinusoidal_shift`` (interleaved columns, as DistilBERT's table in HF;
not the concatenated ``[sin, cos]`` halves of tensor2tensor and fairseq); learned tables as
in BERT (Devlin et al., arXiv:1810.04805) and GPT-2, resized by ``interpolate_table``.

The relative and rotary functions that used to live here moved to ``llmmath.relative`` and
``llmmath.rope``; they are still importable from this module under their old names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath._validate import (
    even_int,
    finite_float,
    float_array,
    matrix,
    positive_float,
    positive_int,
)

# Moved to llmmath.relative and llmmath.rope; re-exported so that old imports keep working.
from llmmath.relative import alibi_bias, alibi_slopes, relative_positions, t5_bucket
from llmmath.rope import (
    apply_rope,
    half_to_interleaved,
    interleaved_to_half,
    linear_scaled_frequencies,
    ntk_scaled_base,
    rope_frequencies,
    rope_matrix,
    yarn_attention_factor,
    yarn_frequencies,
)

__all__ = [
    "interpolate_table",
    "sinusoidal",
    "sinusoidal_shift",
    "wavelengths",
    # re-exported from llmmath.relative and llmmath.rope
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "half_to_interleaved",
    "interleaved_to_half",
    "linear_scaled_frequencies",
    "ntk_scaled_base",
    "relative_positions",
    "rope_frequencies",
    "rope_matrix",
    "t5_bucket",
    "yarn_attention_factor",
    "yarn_frequencies",
]


def sinusoidal(n_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """Sinusoidal table ``(n_positions, d_model)``, ``d_model`` even.

    ``PE[p, 2k] = sin(p / base^(2k/d))`` and ``PE[p, 2k+1] = cos(p / base^(2k/d))``.

    Examples
    --------
    >>> sinusoidal(2, 4)
    array([[0.        , 1.        , 0.        , 1.        ],
           [0.84147098, 0.54030231, 0.00999983, 0.99995   ]])
    """
    n = positive_int(n_positions, "n_positions", "sinusoidal")
    d = even_int(d_model, "d_model", "sinusoidal")
    base = positive_float(base, "base", "sinusoidal")
    angles = np.arange(n)[:, None] / base ** (np.arange(0, d, 2) / d)  # (n, d/2)
    pairs = np.empty((n, d // 2, 2))  # (sin, cos) of each pair, written in place
    np.sin(angles, out=pairs[..., 0])
    np.cos(angles, out=pairs[..., 1])
    return pairs.reshape(n, d)


def sinusoidal_shift(delta: float, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The offset map ``M_delta``, ``(d_model, d_model)``: ``PE(p + delta) = M_delta PE(p)``.

    Block diagonal, block ``k`` = ``[[cos w_k delta, sin w_k delta], [-sin w_k delta,
    cos w_k delta]]`` with ``w_k = base^(-2k/d)``, acting on the column vector
    ``(sin w_k p, cos w_k p)`` (interleaved layout). It depends on ``delta`` only, never on
    ``p``; for table rows, ``PE[p + delta] == M @ PE[p] == PE[p] @ M.T``. ``delta`` any real.

    Examples
    --------
    >>> sinusoidal_shift(np.pi / 2, 2)
    array([[ 0.,  1.],
           [-1.,  0.]])
    """
    f = "sinusoidal_shift"
    delta = finite_float(delta, "delta", f)
    d = even_int(d_model, "d_model", f)
    # Block k maps (sin w p, cos w p) to its value at p + delta: the rotation R_p of RoPE's
    # interleaved pairs, by the angle -delta.
    return rope_matrix(-delta, d, positive_float(base, "base", f))


def wavelengths(inv_freq: Any) -> np.ndarray:
    """The period ``2 pi / theta_k``, in positions, of each pair; like ``inv_freq``.

    Examples
    --------
    >>> wavelengths([1.0, 0.01]).round(2)
    array([  6.28, 628.32])
    """
    theta = float_array(inv_freq, "inv_freq", "wavelengths")
    if (theta <= 0).any():
        raise ValueError(f"wavelengths: inv_freq must be > 0; got minimum {theta.min()}")
    return 2 * np.pi / theta


def interpolate_table(P: Any, new_length: int) -> np.ndarray:
    """Resample a learned table ``P: (T, d)`` to ``(new_length, d)``, linearly.

    Row ``i`` of the result sits at position ``i (T-1)/(new_length-1)`` of ``P``, so the first
    and last rows are kept exactly.

    Examples
    --------
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
