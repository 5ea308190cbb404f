"""Practical checks on embedding tables: int8 quantization, memory, norms, remapping.

References:

- Dettmers, Lewis, Belkada & Zettlemoyer 2022, "LLM.int8(): 8-bit Matrix
  Multiplication for Transformers at Scale" (arXiv:2208.07339) -- symmetric
  absmax quantization (here per row, i.e. per token vector).
- Ethayarajh 2019, "How Contextual are Contextualized Word Representations?"
  (arXiv:1909.00512) -- anisotropy, reported by ``norm_report``.
- Reference implementation: ``remap_rows`` initializes new rows like Hugging
  Face transformers' ``resize_token_embeddings(mean_resizing=True)`` (see
  ``llmmath.embeddings.resize``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from llmmath import _validate
from llmmath.embeddings import _new_rows
from llmmath.geometry import anisotropy
from llmmath.similarity import cosine

__all__ = [
    "quantize_int8",
    "dequantize",
    "memory_bytes",
    "norm_report",
    "outlier_rows",
    "remap_rows",
    "row_drift",
]

_BITS = {"float64": 64, "float32": 32, "float16": 16, "bfloat16": 16, "int8": 8, "int4": 4}


def quantize_int8(E: Any) -> tuple[np.ndarray, np.ndarray]:
    """Quantize each row of ``E`` to int8 with its own absmax scale.

    ``E: (V, d)``; result ``(q int8 (V, d), scale float (V, 1))`` with
    ``scale = max|row| / 127`` (1.0 for an all-zero row) and
    ``q = round(E / scale)`` (half to even) in ``[-127, 127]``.

    Examples
    --------
    >>> q, scale = quantize_int8([[0.5, -1.27, 0.01], [0.0, 0.0, 0.0]])
    >>> q
    array([[  50, -127,    1],
           [   0,    0,    0]], dtype=int8)
    >>> scale
    array([[0.01],
           [1.  ]])
    """
    E = _validate.matrix(E, "E", "quantize_int8")
    scale = np.abs(E).max(axis=1, keepdims=True) / 127.0
    scale = np.where(scale > 0, scale, 1.0)  # zero rows (and absmax/127 underflowing to 0)
    q = np.clip(np.round(E / scale), -127, 127).astype(np.int8)
    return q, scale


def dequantize(q: Any, scale: Any) -> np.ndarray:
    """Return ``q * scale`` as floats, undoing ``quantize_int8`` up to ``scale/2`` per entry.

    ``q: (V, d)`` integers, ``scale: (V, 1)`` (or anything broadcasting to
    ``q`` without enlarging it); result float ``(V, d)``.

    Examples
    --------
    >>> dequantize([[50, -127, 1]], [[0.01]])
    array([[ 0.5 , -1.27,  0.01]])
    """
    q = np.asarray(q)
    if q.dtype == np.bool_ or not np.issubdtype(q.dtype, np.integer):
        raise TypeError(f"dequantize: q must be integers (from quantize_int8); got dtype {q.dtype}")
    q = _validate.matrix(q, "q", "dequantize")
    scale = _validate.float_array(scale, "scale", "dequantize")
    try:
        fits = scale.ndim <= 2 and np.broadcast_shapes(q.shape, scale.shape) == q.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"dequantize: scale must have shape ({q.shape[0]}, 1) to match q {q.shape}; "
            f"got {scale.shape}"
        )
    return q * scale


def memory_bytes(n_params: int, dtype: str) -> int:
    """Return the bytes needed to store ``n_params`` numbers of type ``dtype``.

    ``dtype`` is ``"float64"``, ``"float32"``, ``"float16"``, ``"bfloat16"``,
    ``"int8"`` or ``"int4"`` (two per byte, rounded up); result a Python int.
    Quantization scales are not included.

    Examples
    --------
    >>> memory_bytes(50257 * 768, "float32")  # GPT-2's token table
    154389504
    >>> memory_bytes(3, "int4")
    2
    """
    n = _validate.positive_int(n_params, "n_params", "memory_bytes", minimum=0)
    _validate.option(dtype, tuple(_BITS), "dtype", "memory_bytes")
    return -(-n * _BITS[dtype] // 8)


def norm_report(E: Any) -> dict[str, float]:
    """Summarize the row norms and the direction spread of ``E``.

    ``E: (V, d)`` with ``V >= 2``; result a dict of Python floats:
    ``norm_mean``, ``norm_std`` (``ddof=0``), ``norm_min``, ``norm_max`` of
    the row norms, ``mean_row_norm`` (the norm of the mean row: large when
    every row shares a common offset) and ``anisotropy`` (mean pairwise cosine).

    Examples
    --------
    >>> norm_report([[3.0, 4.0], [0.0, 1.0]])
    {'norm_mean': 3.0, 'norm_std': 2.0, 'norm_min': 1.0, 'norm_max': 5.0,
     'mean_row_norm': 2.9154759474226504, 'anisotropy': 0.8}
    """
    E = _validate.matrix(E, "E", "norm_report")
    if E.shape[0] < 2:
        raise ValueError(
            f"norm_report: E needs at least 2 rows for anisotropy; got shape {E.shape}"
        )
    norms = np.linalg.norm(E, axis=1)
    return {
        "norm_mean": float(norms.mean()),
        "norm_std": float(norms.std()),
        "norm_min": float(norms.min()),
        "norm_max": float(norms.max()),
        "mean_row_norm": float(np.linalg.norm(E.mean(axis=0))),
        "anisotropy": anisotropy(E),
    }


def outlier_rows(E: Any, z: float = 3.0) -> np.ndarray:
    """Return the ids of rows whose norm z-score exceeds ``z`` in absolute value.

    ``E: (V, d)``; result sorted int64 ``(n_outliers,)``. The z-score uses the
    mean and the ``ddof=0`` standard deviation of all row norms; if all norms
    are equal nothing is an outlier. With ``V`` rows no |z-score| can exceed
    ``sqrt(V - 1)``, so tiny tables never have 3-sigma outliers.

    Examples
    --------
    >>> E = np.ones((20, 2)); E[7] = 10.0
    >>> outlier_rows(E)
    array([7])
    """
    E = _validate.matrix(E, "E", "outlier_rows")
    z = _validate.positive_float(z, "z", "outlier_rows")
    norms = np.linalg.norm(E, axis=1)
    std = norms.std()
    if std == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.abs(norms - norms.mean()) / std > z).astype(np.int64)


def _vocab(vocab: Any, name: str) -> np.ndarray:
    tokens = np.asarray(vocab)
    if tokens.ndim != 1 or tokens.size == 0 or tokens.dtype.kind != "U":
        raise ValueError(
            f"remap_rows: {name} must be a non-empty sequence of token strings; "
            f"got array of shape {tokens.shape} and dtype {tokens.dtype}"
        )
    unique, counts = np.unique(tokens, return_counts=True)
    if (counts > 1).any():
        repeated = unique[counts > 1][:5].tolist()
        raise ValueError(f"remap_rows: {name} must hold distinct tokens; got repeats {repeated}")
    return tokens


def remap_rows(
    E_old: Any,
    old_vocab: Sequence[str],
    new_vocab: Sequence[str],
    *,
    init: str = "mean",
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """Build an embedding table for ``new_vocab`` from one trained on ``old_vocab``.

    ``E_old: (len(old_vocab), d)``; vocabularies are sequences of distinct
    token strings (position = id). Result ``(len(new_vocab), d)``: tokens in
    both vocabularies keep their old row (at their new position); the rest
    are initialized from all old rows as in ``embeddings.resize``
    (``init`` is ``"mean"``, ``"normal"`` (needs ``rng``) or ``"zeros"``).

    Examples
    --------
    >>> E_old = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> remap_rows(E_old, ["a", "b", "c"], ["c", "new", "a"])
    array([[1.        , 1.        ],
           [0.66666667, 0.66666667],
           [1.        , 0.        ]])
    """
    E_old = _validate.matrix(E_old, "E_old", "remap_rows")
    old = _vocab(old_vocab, "old_vocab")
    new = _vocab(new_vocab, "new_vocab")
    if old.size != E_old.shape[0]:
        raise ValueError(
            f"remap_rows: old_vocab must have one token per row of E_old "
            f"({E_old.shape[0]}); got {old.size}"
        )
    order = np.argsort(old)
    pos = np.minimum(np.searchsorted(old, new, sorter=order), old.size - 1)
    src = order[pos]
    found = old[src] == new
    out = np.empty((new.size, E_old.shape[1]), dtype=E_old.dtype)
    out[found] = E_old[src[found]]
    out[~found] = _new_rows(E_old, int(np.sum(~found)), init, rng, "remap_rows")
    return out


def row_drift(E_before: Any, E_after: Any) -> np.ndarray:
    """Return ``1 - cosine`` between matching rows of two versions of a table.

    ``E_before: (V, d)``, ``E_after: (V, d)``; result ``(V,)`` in ``[0, 2]``:
    0 for a row that only changed length, 1 for a row turned orthogonal (or
    zero in either table), 2 for a row that flipped.

    Examples
    --------
    >>> row_drift([[1.0, 0.0], [1.0, 0.0]], [[2.0, 0.0], [0.0, 1.0]])
    array([0., 1.])
    """
    A = _validate.matrix(E_before, "E_before", "row_drift")
    B = _validate.matrix(E_after, "E_after", "row_drift")
    if A.shape != B.shape:
        raise ValueError(
            f"row_drift: E_before and E_after must have the same shape; got {A.shape} and {B.shape}"
        )
    return 1.0 - cosine(A, B)
