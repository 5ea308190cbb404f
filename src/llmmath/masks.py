"""Attention masks: causal (two alignments), padding, sliding window, prefix LM, packing.

Every mask is boolean with ``True`` = "query ``i`` may attend key ``j``" (the convention
of ``scaled_dot_product_attention``; PyTorch's ``nn.MultiheadAttention`` uses the
opposite one, ``True`` = blocked). ``mask_to_bias`` turns a mask into the additive
0 / ``fill`` form that eager implementations add to the scores.

References (and the implementation each function matches):

- ``causal_mask``: ``align="top-left"`` is PyTorch's ``is_causal=True``;
  ``align="bottom-right"`` is ``torch.nn.attention.bias.causal_lower_right``.
- ``sliding_window_mask``: the sliding-window causal mask of Hugging Face transformers
  5.x ``masking_utils`` (``sliding_window_causal_mask_function``), which its Mistral
  implementation uses: ``window`` keys, the query's own included. The Mistral paper
  (Jiang et al. 2023, arXiv:2310.06825) writes positions ``i − W … i``, one key more:
  its ``W`` is ``window − 1`` here.
- ``prefix_lm_mask``: the prefix LM of Raffel et al. 2020 (T5, arXiv:1910.10683).
- ``document_mask``: the block-diagonal mask of packed sequences, the mask that
  ``llmmath.attention.packed_position_ids`` needs beside it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath import _validate

ALIGNS = ("top-left", "bottom-right")


def _sizes(n_queries: Any, n_keys: Any, f: str) -> tuple[int, int]:
    tq = _validate.positive_int(n_queries, "n_queries", f)
    tk = tq if n_keys is None else _validate.positive_int(n_keys, "n_keys", f)
    return tq, tk


def causal_mask(
    n_queries: int, n_keys: int | None = None, *, align: str = "top-left"
) -> np.ndarray:
    """Causal mask: bool ``(Tq, Tk)``, ``True`` where query ``i`` may attend key ``j``.

    n_queries = Tq, n_keys = Tk (default Tq).
    ``align="top-left"``: ``j <= i`` (PyTorch's ``is_causal=True``; query 0 sees key 0
    even when Tk > Tq). ``align="bottom-right"``: ``j <= i + (Tk - Tq)``, so the last
    query sees every key (PyTorch's ``causal_lower_right``): the mask of ``Tq`` new
    tokens appended after ``Tk - Tq`` cached ones (a chunked prefill or a decode step).
    The two agree when ``Tq == Tk``. With ``Tq > Tk`` and bottom-right alignment the
    first ``Tq - Tk`` rows see no key.

    Examples
    --------
    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    >>> causal_mask(2, 4, align="bottom-right").astype(int)  # 2 new tokens after 2 cached
    array([[1, 1, 1, 0],
           [1, 1, 1, 1]])
    """
    f = "causal_mask"
    tq, tk = _sizes(n_queries, n_keys, f)
    _validate.option(align, ALIGNS, "align", f)
    offset = 0 if align == "top-left" else tk - tq
    return np.arange(tk)[None, :] <= np.arange(tq)[:, None] + offset


def key_padding_mask(attention_mask: Any) -> np.ndarray:
    """Key mask from a 0/1 padding mask ``(B, T)``: bool ``(B, 1, 1, T)``, ``True`` at real tokens.

    The shape broadcasts against head-split scores ``(B, H, Tq, Tk)`` with ``Tk = T``:
    every query of every head ignores the padded keys. For head-less scores
    ``(B, Tq, Tk)`` use ``key_padding_mask(m)[:, 0]``, shape ``(B, 1, T)``. On its own
    it leaves a padded query row attending the real keys (its output is simply
    unused); combined with a causal mask under left padding, the leading pad rows
    see no key at all (zero weights in ``scaled_dot_product_attention``).

    Examples
    --------
    >>> key_padding_mask([[1, 1, 0], [1, 1, 1]]).shape
    (2, 1, 1, 3)
    >>> key_padding_mask([[1, 1, 0], [1, 1, 1]])[:, 0, 0].astype(int)
    array([[1, 1, 0],
           [1, 1, 1]])

    Left padding under a causal mask: the two pad rows see no key.

    >>> both = key_padding_mask([[0, 0, 1, 1]])[:, 0] & causal_mask(4)
    >>> both.sum(axis=-1)  # visible keys per query
    array([[0, 0, 1, 2]])
    """
    f = "key_padding_mask"
    m = _validate._asarray(attention_mask, "attention_mask", f)
    if m.dtype.kind not in "biuf":
        raise TypeError(f"{f}: attention_mask must be numeric 0/1; got dtype {m.dtype}")
    if m.ndim != 2 or m.size == 0:
        raise ValueError(
            f"{f}: attention_mask must be a non-empty (B, T) array; got shape {m.shape}"
        )
    ok = (m == 0) | (m == 1)
    if not ok.all():
        raise ValueError(f"{f}: attention_mask must hold only 0 and 1; got {m[~ok].flat[0]}")
    return (m == 1)[:, None, None, :]


def sliding_window_mask(n_queries: int, n_keys: int | None = None, *, window: int) -> np.ndarray:
    """Causal sliding-window mask: bool ``(Tq, Tk)``; each query sees itself and ``window − 1`` keys before.

    n_queries = Tq, n_keys = Tk (default Tq), window >= 1. Bottom-right aligned: query
    ``i`` sits at position ``i' = i + Tk − Tq`` and may attend key ``j`` when
    ``i' − window < j <= i'``. Equals the sliding-window causal mask of transformers
    5.x for a Mistral config with ``sliding_window=window``. ``window >= Tk`` gives
    ``causal_mask(Tq, Tk, align="bottom-right")``.

    Examples
    --------
    >>> sliding_window_mask(4, window=2).astype(int)
    array([[1, 0, 0, 0],
           [1, 1, 0, 0],
           [0, 1, 1, 0],
           [0, 0, 1, 1]])
    """
    f = "sliding_window_mask"
    tq, tk = _sizes(n_queries, n_keys, f)
    w = _validate.positive_int(window, "window", f)
    pos = np.arange(tq)[:, None] + (tk - tq)
    j = np.arange(tk)[None, :]
    return (j <= pos) & (j > pos - w)


def prefix_lm_mask(n: int, prefix_length: int) -> np.ndarray:
    """Prefix-LM mask: bool ``(n, n)``, ``True`` where ``j <= i`` or ``j < prefix_length``.

    n = sequence length, 0 <= prefix_length <= n. The prefix (an input, a prompt)
    attends bidirectionally within itself; every later token attends causally and sees
    the whole prefix. ``prefix_length`` 0 or 1 gives the causal mask, ``n`` the full one.

    Examples
    --------
    >>> prefix_lm_mask(4, 2).astype(int)
    array([[1, 1, 0, 0],
           [1, 1, 0, 0],
           [1, 1, 1, 0],
           [1, 1, 1, 1]])
    """
    f = "prefix_lm_mask"
    n = _validate.positive_int(n, "n", f)
    p = _validate.positive_int(prefix_length, "prefix_length", f, minimum=0)
    if p > n:
        raise ValueError(f"{f}: prefix_length must lie in [0, n] = [0, {n}]; got {p}")
    j = np.arange(n)[None, :]
    return (j <= np.arange(n)[:, None]) | (j < p)


def document_mask(lengths: Any, *, causal: bool = True) -> np.ndarray:
    """Mask of documents packed into one row: bool ``(N, N)``, ``N = sum(lengths)``.

    lengths: ``(n_docs,)`` positive integers (as ``packed_position_ids``). ``True``
    where tokens ``i`` and ``j`` belong to the same document, and ``j <= i`` when
    ``causal``: block-diagonal, so no token attends across a document boundary.

    Examples
    --------
    >>> document_mask([2, 3]).astype(int)
    array([[1, 0, 0, 0, 0],
           [1, 1, 0, 0, 0],
           [0, 0, 1, 0, 0],
           [0, 0, 1, 1, 0],
           [0, 0, 1, 1, 1]])
    """
    f = "document_mask"
    n = _validate._asarray(lengths, "lengths", f)
    if n.ndim != 1 or n.size == 0:
        raise ValueError(f"{f}: lengths must be a non-empty 1-D array; got shape {n.shape}")
    if n.dtype == np.bool_ or not np.issubdtype(n.dtype, np.integer):
        raise TypeError(f"{f}: lengths must be integers; got dtype {n.dtype}")
    if (n < 1).any():
        raise ValueError(f"{f}: lengths must be >= 1; got {int(n.min())}")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"{f}: causal must be True or False; got {causal!r}")
    doc = np.repeat(np.arange(n.size), n.astype(np.int64))
    same = doc[:, None] == doc[None, :]
    if causal:
        idx = np.arange(doc.size)
        same &= idx[None, :] <= idx[:, None]
    return same


def mask_to_bias(mask: Any, *, fill: float = -np.inf) -> np.ndarray:
    """Additive form of a boolean mask: float64 like ``mask``, 0.0 where ``True``, ``fill`` where ``False``.

    ``bias=mask_to_bias(m)`` gives the same attention as ``mask=m``. A huge finite
    ``fill`` such as ``np.finfo(np.float32).min`` (what transformers' eager path fills)
    matches on every query row with at least one visible key, since ``exp`` of it
    underflows to 0; a row with none gets equal scores (the fill swamps ``q·k`` in
    floating point), so uniform weights (the mean of the values) instead of the zero row
    of ``mask=m``. A moderate fill such as −100 only approximates the mask. ``fill`` is
    a finite number or ``-inf``.

    Examples
    --------
    >>> mask_to_bias(causal_mask(2))
    array([[  0., -inf],
           [  0.,   0.]])
    >>> mask_to_bias([True, False], fill=-100.0)
    array([   0., -100.])
    """
    f = "mask_to_bias"
    m = _validate._asarray(mask, "mask", f)
    if m.dtype != np.bool_:
        raise TypeError(f"{f}: mask must be boolean (True = may attend); got dtype {m.dtype}")
    if m.size == 0:
        raise ValueError(f"{f}: mask is empty (shape {m.shape})")
    v = _validate._real(fill, "fill", f)
    if not (np.isfinite(v) or v == -np.inf):
        raise ValueError(f"{f}: fill must be finite or -inf; got {fill!r}")
    return np.where(m, 0.0, v)
