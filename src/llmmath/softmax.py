"""The softmax family: softmax, log-softmax, sigmoid, log-sum-exp and the softmax Jacobian.

These used to live in ``llmmath.training``; they moved here when the attention
lesson added ``logsumexp`` and ``softmax_jacobian``, and ``llmmath.training``
still exports ``softmax``, ``log_softmax`` and ``sigmoid`` under their old names.
Import from it by name (``from llmmath.softmax import logsumexp``): the
attribute ``llmmath.softmax`` of the package is the function ``softmax``.

References
----------
- ``softmax`` and ``log_softmax`` match ``torch.nn.functional.softmax`` and
  ``log_softmax`` (except that a slice of only ``-inf`` raises here, where torch
  returns NaN); ``logsumexp`` matches ``torch.logsumexp`` (a row of ``-inf``
  gives ``-inf``); ``softmax_jacobian`` matches ``torch.func.jacrev`` of softmax.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath import _validate


def _masked_logits(z: Any, axis: int, func: str) -> np.ndarray:
    """Logits that may be ``-inf`` (masked), with at least one finite entry per slice."""
    z = _validate.float_array(z, "z", func, min_ndim=1, neg_inf=True)
    if np.isneginf(z.max(axis=axis)).any():
        raise ValueError(f"{func}: z has a slice along axis {axis} with every logit -inf")
    return z


def softmax(z: Any, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``, stable for huge logits (the max is subtracted first).

    z: (..., V) -> (..., V), each slice along ``axis`` sums to 1. ``-inf`` marks a masked
    logit (weight 0); NaN, ``+inf`` or a slice with no finite logit raise ``ValueError``.

    Examples
    --------
    >>> softmax([1000.0, 1000.0, -1000.0])
    array([0.5, 0.5, 0. ])
    """
    z = _masked_logits(z, axis, "softmax")
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(z: Any, axis: int = -1) -> np.ndarray:
    """``log(softmax(z))`` computed as ``z - max - log Σ exp(z - max)``: finite at ±1e4.

    z: (..., V) -> (..., V).

    Examples
    --------
    >>> log_softmax([0.0, 1e4])
    array([-10000.,      0.])
    """
    z = _masked_logits(z, axis, "log_softmax")
    shifted = z - z.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def sigmoid(x: Any) -> np.ndarray:
    """Logistic function ``1 / (1 + exp(-x))`` without overflow for large ``|x|``.

    x: any shape -> same shape.

    Examples
    --------
    >>> sigmoid([-1000.0, 0.0, 1000.0])
    array([0. , 0.5, 1. ])
    """
    x = _validate.float_array(x, "x", "sigmoid")
    e = np.exp(-np.abs(x))  # never overflows
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def logsumexp(x: Any, axis: int = -1) -> np.ndarray:
    """``m + ln Σ exp(x − m)`` along ``axis`` with ``m`` the slice's max: no overflow.

    x: (..., n) -> (...) (the ``axis`` removed). ``-inf`` entries are masked
    (they add nothing); a slice of only ``-inf`` gives ``-inf``, as
    ``torch.logsumexp`` does. NaN and ``+inf`` raise ``ValueError``.

    Examples
    --------
    >>> bool(np.isclose(logsumexp([1000.0, 1000.0]), 1000.0 + np.log(2.0)))
    True
    >>> logsumexp([[0.0, -np.inf], [-np.inf, -np.inf]])
    array([  0., -inf])
    """
    x = _validate.float_array(x, "x", "logsumexp", min_ndim=1, neg_inf=True)
    m = x.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)  # an all -inf slice: exp gives 0, log gives -inf
    with np.errstate(divide="ignore"):
        out = np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m
    return np.squeeze(out, axis=axis)


def softmax_jacobian(a: Any) -> np.ndarray:
    """Jacobian ``∂a/∂z = diag(a) − a aᵀ`` of ``a = softmax(z)``, from the output ``a``.

    a: (..., n), a softmax output (each row non-negative, summing to 1) ->
    (..., n, n) with entry ``[i, j] = ∂a_i/∂z_j = a_i (δ_ij − a_j)``: symmetric,
    each row and column summing to 0 (adding a constant to ``z`` changes nothing).

    Examples
    --------
    >>> softmax_jacobian([0.5, 0.5])
    array([[ 0.25, -0.25],
           [-0.25,  0.25]])
    """
    a = _validate.float_array(a, "a", "softmax_jacobian", min_ndim=1)
    return a[..., :, None] * np.eye(a.shape[-1]) - a[..., :, None] * a[..., None, :]
