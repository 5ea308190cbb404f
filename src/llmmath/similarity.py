"""Vector similarity and nearest-neighbor retrieval.

Dot product, cosine similarity and Euclidean distance over the last axis,
similarity matrices, exact top-k search, mean pooling of token vectors into
one vector per text, and recall@k for evaluating a retriever.

References:

- Reimers & Gurevych 2019, "Sentence-BERT: Sentence Embeddings using Siamese
  BERT-Networks" (arXiv:1908.10084) -- mean pooling over unmasked tokens.
- Manning, Raghavan & Schuetze 2008, "Introduction to Information Retrieval",
  ch. 8 -- recall at rank k.
- Reference implementations: ``torch.nn.functional.cosine_similarity`` (its
  ``eps`` rule differs, see ``cosine``), ``torch.nn.functional.normalize``
  (same ``eps`` rule as ``normalize``), ``torch.cdist`` (``"euclidean"``),
  sentence-transformers' ``Pooling`` (mean mode).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from llmmath import _validate

__all__ = [
    "dot",
    "cosine",
    "euclidean",
    "normalize",
    "similarity_matrix",
    "top_k",
    "mean_pool",
    "recall_at_k",
]

_METRICS = ("cosine", "dot", "euclidean")


def _pair(u: Any, v: Any, func: str) -> tuple[np.ndarray, np.ndarray]:
    u = _validate.float_array(u, "u", func, min_ndim=1)
    v = _validate.float_array(v, "v", func, min_ndim=1)
    _validate.same_last_dim(u, v, "u and v", func)
    return u, v


def dot(u: Any, v: Any) -> np.ndarray:
    """Return the dot product over the last axis.

    ``u: (..., d)``, ``v: (..., d)``, leading dimensions broadcast; result ``(...)``.

    Examples
    --------
    >>> dot([1.0, 2.0, 3.0], [[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    array([1., 6.])
    """
    u, v = _pair(u, v, "dot")
    return np.einsum("...d,...d->...", u, v)


def cosine(u: Any, v: Any, eps: float = 1e-12) -> np.ndarray:
    """Return ``u.v / max(|u| |v|, eps)`` over the last axis.

    ``u: (..., d)``, ``v: (..., d)``, leading dimensions broadcast; result
    ``(...)`` in ``[-1, 1]`` (clipped against rounding). A zero vector gives 0,
    never NaN.

    ``eps`` clamps the *product* of the norms. Current PyTorch
    (``torch.nn.functional.cosine_similarity``, default ``eps=1e-8``) clamps
    each norm on its own, ``u.v / (max(|u|, eps) * max(|v|, eps))``; clamping
    the product was its earlier rule. Both give 0 for a zero vector and agree
    when nothing is clamped; for tiny norms they differ.

    Examples
    --------
    >>> cosine([1.0, 0.0], [[2.0, 0.0], [0.0, 3.0], [-1.0, 0.0], [0.0, 0.0]])
    array([ 1.,  0., -1.,  0.])
    """
    u, v = _pair(u, v, "cosine")
    eps = _validate.positive_float(eps, "eps", "cosine")
    denom = np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1)
    return np.clip(np.einsum("...d,...d->...", u, v) / np.maximum(denom, eps), -1.0, 1.0)


def euclidean(u: Any, v: Any) -> np.ndarray:
    """Return the Euclidean distance ``|u - v|`` over the last axis.

    ``u: (..., d)``, ``v: (..., d)``, leading dimensions broadcast; result ``(...)``.

    Examples
    --------
    >>> euclidean([0.0, 0.0], [[3.0, 4.0], [1.0, 0.0]])
    array([5., 1.])
    """
    u, v = _pair(u, v, "euclidean")
    return np.linalg.norm(u - v, axis=-1)


def normalize(X: Any, eps: float = 1e-12) -> np.ndarray:
    """Return ``X`` with every vector (last axis) divided by ``max(|x|, eps)``.

    ``X: (..., d)``; result ``(..., d)``: unit rows, zero rows stay zero.

    Examples
    --------
    >>> normalize([[3.0, 4.0], [0.0, 0.0]])
    array([[0.6, 0.8],
           [0. , 0. ]])
    """
    X = _validate.float_array(X, "X", "normalize", min_ndim=1)
    eps = _validate.positive_float(eps, "eps", "normalize")
    return X / np.maximum(np.linalg.norm(X, axis=-1, keepdims=True), eps)


def similarity_matrix(A: Any, B: Any, metric: str = "cosine") -> np.ndarray:
    """Return all pairwise scores between the rows of ``A`` and of ``B``.

    ``A: (n, d)``, ``B: (m, d)``; result ``(n, m)``. ``metric`` is
    ``"cosine"``, ``"dot"`` or ``"euclidean"`` (distances, smaller = closer;
    computed from the differences, exact but using ``n*m*d`` memory).

    Examples
    --------
    >>> similarity_matrix([[1.0, 0.0], [1.0, 1.0]], [[2.0, 0.0], [0.0, 1.0]], "dot")
    array([[2., 0.],
           [2., 1.]])
    """
    func = "similarity_matrix"
    _validate.option(metric, _METRICS, "metric", func)
    A = _validate.matrix(A, "A", func)
    B = _validate.matrix(B, "B", func)
    _validate.same_last_dim(A, B, "A and B", func)
    if metric == "dot":
        return A @ B.T
    if metric == "cosine":
        return np.clip(normalize(A) @ normalize(B).T, -1.0, 1.0)
    return euclidean(A[:, None, :], B[None, :, :])


def top_k(
    query: Any, X: Any, k: int, metric: str = "cosine", exclude: Iterable[int] = ()
) -> tuple[np.ndarray, np.ndarray]:
    """Return the ``k`` rows of ``X`` closest to ``query``, best first.

    ``query: (d,)``, ``X: (n, d)``; result ``(indices, scores)``, int64 ``(k,)``
    and float64 ``(k,)``. Best means the largest similarity for ``"cosine"`` and
    ``"dot"`` and the smallest distance for ``"euclidean"``; equal scores are
    ordered by lower index. Row ids in ``exclude`` (a sequence, set or int
    array) are never returned.
    Uses a partial sort (``np.argpartition``), O(n) rather than O(n log n).

    Examples
    --------
    >>> X = [[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [1.0, 1.0]]
    >>> top_k([1.0, 0.0], X, 3)
    (array([0, 2, 3]), array([1.        , 1.        , 0.70710678]))
    >>> top_k([1.0, 0.0], X, 2, exclude=[0])
    (array([2, 3]), array([1.        , 0.70710678]))
    """
    func = "top_k"
    _validate.option(metric, _METRICS, "metric", func)
    query = _validate.float_array(query, "query", func)
    if query.ndim != 1:
        raise ValueError(f"{func}: query must be 1-D (d,); got shape {query.shape}")
    X = _validate.matrix(X, "X", func)
    _validate.same_last_dim(query, X, "query and X", func)
    excluded = np.asarray(list(exclude) if isinstance(exclude, (set, frozenset)) else exclude)
    if excluded.size == 0:
        excluded = excluded.astype(np.int64)
    excluded = _validate.int_ids(excluded, X.shape[0], func, "exclude")
    k = _validate.positive_int(k, "k", func)

    n = X.shape[0]
    eligible = np.ones(n, dtype=bool)
    eligible[excluded] = False
    n_eligible = int(eligible.sum())
    if k > n_eligible:
        raise ValueError(
            f"{func}: k must be at most the number of eligible rows "
            f"{n_eligible} (n={n}, {n - n_eligible} excluded); got {k}"
        )
    scores = {"cosine": cosine, "dot": dot, "euclidean": euclidean}[metric](X, query)
    cost = scores if metric == "euclidean" else -scores  # smaller is better
    # NaN ranks after every number; excluded rows rank after NaN and are never reached.
    cost = np.where(np.isnan(cost), np.finfo(cost.dtype).max, cost)
    cost[~eligible] = np.inf
    # The k-th smallest cost is a threshold: keeping every row at least that
    # good keeps all ties at the boundary, so lexsort can break them by index.
    threshold = cost[np.argpartition(cost, k - 1)[k - 1]]
    keep = np.flatnonzero(cost <= threshold)
    best = keep[np.lexsort((keep, cost[keep]))[:k]]
    return best, scores[best]


def mean_pool(H: Any, mask: Any = None) -> np.ndarray:
    """Return the mean of the token vectors ``H`` over the unmasked positions.

    ``H: (..., T, d)``; ``mask: (..., T)`` bool or 0/1, ``True``/1 = a real
    token (the ``attention_mask`` convention), default all positions; result
    ``(..., d)``. A text whose mask is all zero raises ``ValueError``.

    Examples
    --------
    >>> H = [[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]
    >>> mean_pool(H, mask=[1, 1, 0])
    array([2., 3.])
    """
    func = "mean_pool"
    H = _validate.float_array(H, "H", func, min_ndim=2)
    if mask is None:
        return H.mean(axis=-2)
    m = np.asarray(mask)
    if m.shape != H.shape[:-1]:
        raise ValueError(
            f"{func}: mask must have shape {H.shape[:-1]} (H without its last axis); got {m.shape}"
        )
    numeric = m.dtype == np.bool_ or np.issubdtype(m.dtype, np.number)
    if not numeric or not np.isin(m, (0, 1)).all():
        raise ValueError(f"{func}: mask must be bool or 0/1; got values {np.unique(m)[:5]}")
    m = m.astype(H.dtype)
    counts = m.sum(axis=-1, keepdims=True)
    if (counts == 0).any():
        where = np.argwhere(counts[..., 0] == 0)[0].tolist()
        raise ValueError(f"{func}: mask is all zero at index {where}; nothing to average")
    return np.einsum("...td,...t->...d", H, m) / counts


def recall_at_k(ranked: Any, relevant: Sequence[Any], k: int) -> float:
    """Return the mean over queries of ``|top-k ∩ relevant| / |relevant|``.

    ``ranked: (n_queries, >= k)`` retrieved ids, best first (e.g. stacked
    ``top_k`` indices); ``relevant``: ``n_queries`` sets (or sequences) of
    relevant ids, or an ``(n_queries,)`` int array with one relevant id each.
    Result: a float in ``[0, 1]``.

    Examples
    --------
    >>> ranked = [[3, 1, 2], [0, 2, 1]]
    >>> recall_at_k(ranked, [1, 1], k=2)
    0.5
    >>> recall_at_k(ranked, [{1, 2}, {0, 1}], k=3)
    1.0
    """
    func = "recall_at_k"
    ranked = np.asarray(ranked)
    if ranked.dtype == np.bool_ or not np.issubdtype(ranked.dtype, np.integer):
        raise TypeError(f"{func}: ranked must be integer ids; got dtype {ranked.dtype}")
    if ranked.ndim != 2 or ranked.size == 0:
        raise ValueError(
            f"{func}: ranked must be a non-empty 2-D (n_queries, k) array; got shape {ranked.shape}"
        )
    n_queries, width = ranked.shape
    k = _validate.positive_int(k, "k", func)
    if k > width:
        raise ValueError(f"{func}: k must be at most the {width} ranked ids per query; got {k}")
    if len(relevant) != n_queries:
        raise ValueError(
            f"{func}: relevant must have one entry per query ({n_queries}); got {len(relevant)}"
        )
    # Flatten the ragged relevant sets into (query, id) pairs; counting is vectorized.
    groups = [
        np.unique(np.asarray(list(r) if isinstance(r, (set, frozenset)) else r)) for r in relevant
    ]
    sizes = np.array([g.size for g in groups])
    if (sizes == 0).any():
        empty = int(np.argmax(sizes == 0))
        raise ValueError(f"{func}: relevant set of query {empty} is empty; recall is undefined")
    ids = np.concatenate(groups)
    if ids.dtype == np.bool_ or not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{func}: relevant must hold integer ids; got dtype {ids.dtype}")
    query = np.repeat(np.arange(n_queries), sizes)
    hit = (ranked[query, :k] == ids[:, None]).any(axis=1)
    return float(np.mean(np.bincount(query, weights=hit) / sizes))
