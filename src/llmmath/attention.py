"""Scaled dot-product attention, causal masks and multi-head reshapes.

References
----------
- Vaswani et al., "Attention Is All You Need", arXiv:1706.03762
  (``softmax(q kᵀ / √d) v`` and multi-head attention).
- Position ids for padded and packed batches: Hugging Face transformers 5.x
  (``generate``'s ids from the attention mask; ``DataCollatorWithFlattening``).
- Reference implementation: ``torch.nn.functional.scaled_dot_product_attention``
  (math backend); ``scaled_dot_product_attention`` here returns the same output
  to 1e-10 in float64, including its treatment of fully masked query rows;
  ``causal=True`` is its ``is_causal`` mask (top-left aligned).

``causal_mask`` moved to ``llmmath.masks`` (where it gained ``align=``); it is
still importable from this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath import _validate

# Moved to llmmath.masks (gaining align=); re-exported so that old imports keep working.
from llmmath.masks import causal_mask


def _broadcast_to_scores(x: np.ndarray, scores_shape: tuple, name: str, hint: str, f: str) -> tuple:
    if x.ndim > len(scores_shape) > 2:  # e.g. a (B, 1, 1, Tk) mask, (B, Tq, Tk) scores
        raise ValueError(
            f"{f}: {name} of shape {x.shape} has more dimensions than the attention "
            f"scores of shape {scores_shape} (..., Tq, Tk); its extra axes would pair "
            "every batch or head of the scores with every one of its own"
        )
    try:
        shape = np.broadcast_shapes(x.shape, scores_shape)
    except ValueError:
        shape = None
    if shape is None or shape[-2:] != scores_shape[-2:]:
        raise ValueError(
            f"{f}: {name} of shape {x.shape} does not broadcast to the attention scores "
            f"of shape {scores_shape} (..., Tq, Tk){hint}"
        )
    return shape


def _attention_inputs(
    q: Any, k: Any, v: Any, mask: Any, bias: Any, scale: Any, f: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any, Any, float, tuple]:
    """Validated ``q, k, v, mask, bias, scale`` of an attention call named ``f``,
    and the broadcast shape of its scores (..., Tq, Tk)."""
    q = _validate.float_array(q, "q", f, min_ndim=2)
    k = _validate.float_array(k, "k", f, min_ndim=2)
    v = _validate.float_array(v, "v", f, min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"{f}: q and k must share the last dimension d; got q {q.shape} and k {k.shape}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"{f}: k and v must have the same number of keys Tk (axis -2); "
            f"got k {k.shape} and v {v.shape}"
        )
    try:
        lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"{f}: the leading (batch, head) dimensions of q, k and v must broadcast; "
            f"got q {q.shape}, k {k.shape}, v {v.shape}"
        ) from None
    shape = (*lead, q.shape[-2], k.shape[-2])
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[-1])
    else:
        scale = _validate.finite_float(scale, "scale", f)
    if bias is not None:
        bias = _validate.float_array(bias, "bias", f, neg_inf=True)
        shape = _broadcast_to_scores(bias, shape, "bias", "", f)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            raise TypeError(
                f"{f}: mask must be boolean (True = may attend); got dtype {mask.dtype}. "
                "To add a float (0 / -inf) mask to the scores, pass it as bias="
            )
        shape = _broadcast_to_scores(mask, shape, "mask", "; True = may attend", f)
    return q, k, v, mask, bias, float(scale), shape


def scaled_dot_product_attention(
    q: Any,
    k: Any,
    v: Any,
    *,
    mask: Any = None,
    bias: Any = None,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Attention ``softmax(scale · q kᵀ + bias, masked) v``; returns ``(out, weights)``.

    q: (..., Tq, d), k: (..., Tk, d), v: (..., Tk, dv); leading dims broadcast.
    mask: bool, broadcastable to (..., Tq, Tk), ``True`` = may attend.
    bias: float, broadcastable to (..., Tq, Tk), added to the scores (ALiBi,
    relative-position biases, or an additive 0/−inf mask).
    A mask or bias may add leading axes to head-less (Tq, Tk) scores (an
    (H, Tq, Tk) ALiBi bias for (T, d) inputs), but not once the scores have a
    batch or head axis: a (B, 1, 1, Tk) mask against (B, Tq, Tk) scores raises
    ``ValueError`` instead of broadcasting to a cross-batch (B, B, Tq, Tk).
    causal: also apply ``causal_mask(Tq, Tk)`` (ANDed with ``mask``).
    scale: defaults to ``1/√d``.
    Returns out: (..., Tq, dv) and weights: (..., Tq, Tk), each row summing to 1
    (0 for a query with no visible key, below).

    A query row that may attend no key at all (everything masked, or every
    score −inf) gets all-zero weights and a zero output, as PyTorch's
    ``scaled_dot_product_attention`` returns since its ``_safe_softmax``
    (checked with torch 2.13, math backend, float64), rather than NaN.

    Examples
    --------
    >>> out, w = scaled_dot_product_attention([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]],
    ...                                       [[1.0], [0.0]], scale=np.log(3))
    >>> w, out  # scores (log 3, 0): weights (3/4, 1/4)
    (array([[0.75, 0.25]]), array([[0.75]]))
    """
    f = "scaled_dot_product_attention"
    q, k, v, mask, bias, scale, shape = _attention_inputs(q, k, v, mask, bias, scale, f)
    tq, tk = shape[-2:]
    scores = scale * (q @ np.swapaxes(k, -1, -2))
    if bias is not None:
        scores = scores + bias
    allowed = mask
    if causal:
        cm = causal_mask(tq, tk)
        allowed = cm if allowed is None else allowed & cm
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    scores = np.broadcast_to(scores, shape)

    # Softmax that leaves rows with no finite score at exactly zero (no NaN).
    row_max = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(row_max), row_max, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total > 0, total, 1.0)
    return weights @ v, weights


def split_heads(X: Any, n_heads: int) -> np.ndarray:
    """Split the model width into heads: (..., T, H·dh) -> (..., H, T, dh).

    X: (..., T, H·dh); n_heads = H must divide the last dimension.
    Head ``h`` holds columns ``h·dh … (h+1)·dh − 1``, as ``x.view(B, T, H, dh)
    .transpose(1, 2)`` in PyTorch implementations.

    Examples
    --------
    >>> split_heads(np.arange(8.0).reshape(2, 4), 2)[1]  # head 1: columns 2, 3
    array([[2., 3.],
           [6., 7.]])
    """
    f = "split_heads"
    X = _validate.float_array(X, "X", f, min_ndim=2)
    H = _validate.positive_int(n_heads, "n_heads", f)
    *lead, T, width = X.shape
    if width % H:
        raise ValueError(
            f"{f}: n_heads = {H} must divide the last dimension of X; got width {width}"
        )
    return np.swapaxes(X.reshape(*lead, T, H, width // H), -2, -3)


def merge_heads(X: Any) -> np.ndarray:
    """Concatenate heads back into the model width: (..., H, T, dh) -> (..., T, H·dh).

    X: (..., H, T, dh); the inverse of ``split_heads``.

    Examples
    --------
    >>> merge_heads(split_heads(np.arange(8.0).reshape(2, 4), 2))
    array([[0., 1., 2., 3.],
           [4., 5., 6., 7.]])
    """
    X = _validate.float_array(X, "X", "merge_heads", min_ndim=3)
    *lead, H, T, dh = X.shape
    return np.swapaxes(X, -2, -3).reshape(*lead, T, H * dh)


def position_ids(attention_mask: Any) -> np.ndarray:
    """Position ids from a 0/1 padding mask: int64, shaped like the mask ``(..., T)``.

    ``cumsum(mask) - 1`` at real tokens, so each row's first real token is position 0
    whether the row is padded on the left or the right; padded slots get 0
    (transformers 5.x ``generate``; 4.x filled them with 1). A new token decoded after
    the row gets the row's real-token count.

    Examples
    --------
    >>> position_ids([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    array([[0, 0, 0, 1, 2],
           [0, 1, 2, 3, 4]])
    """
    f = "position_ids"
    m = np.asarray(attention_mask)
    if m.dtype == object or not (np.issubdtype(m.dtype, np.number) or m.dtype == np.bool_):
        raise TypeError(f"{f}: attention_mask must be numeric 0/1; got dtype {m.dtype}")
    if m.ndim < 1 or m.size == 0:
        raise ValueError(f"{f}: attention_mask must be a non-empty (..., T) array; got {m.shape}")
    if not np.isin(m, (0, 1)).all():
        bad = m[~np.isin(m, (0, 1))].flat[0]
        raise ValueError(f"{f}: attention_mask must hold only 0 and 1; got {bad}")
    m = m.astype(np.int64)
    return np.where(m == 1, np.cumsum(m, axis=-1) - 1, 0)


def packed_position_ids(lengths: Any) -> np.ndarray:
    """Position ids for documents packed into one row: int64 ``(sum(lengths),)``.

    ``lengths: (n_docs,)`` positive integers; ids restart at 0 for each document (as
    transformers' ``DataCollatorWithFlattening``). Restarting ids does not keep the
    documents apart: the attention mask must do that too (block-diagonal, causal).

    Examples
    --------
    >>> packed_position_ids([3, 2, 4])
    array([0, 1, 2, 0, 1, 0, 1, 2, 3])
    """
    f = "packed_position_ids"
    n = np.asarray(lengths)
    if n.dtype == np.bool_ or not np.issubdtype(n.dtype, np.integer):
        raise TypeError(f"{f}: lengths must be integers; got dtype {n.dtype}")
    if n.ndim != 1 or n.size == 0:
        raise ValueError(f"{f}: lengths must be a non-empty 1-D array; got shape {n.shape}")
    if (n < 1).any():
        raise ValueError(f"{f}: lengths must be >= 1; got {int(n.min())}")
    n = n.astype(np.int64)
    starts = np.cumsum(n) - n
    return np.arange(int(n.sum()), dtype=np.int64) - np.repeat(starts, n)
