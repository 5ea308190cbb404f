"""The geometry of embedding spaces: centering, PCA, anisotropy, whitening, probes.

Contextual and static embeddings share a few geometric quirks: all vectors
point into a narrow cone (high *anisotropy*), a few dominant directions carry
little meaning, and linear directions encode features (analogies, probes).

References:

- Ethayarajh 2019, "How Contextual are Contextualized Word Representations?"
  (arXiv:1909.00512) -- anisotropy as the mean cosine between vectors.
- Su, Cao, Liu & Ou 2021, "Whitening Sentence Representations for Better
  Semantics and Faster Retrieval" (arXiv:2103.15316); ``whiten`` matches
  their code (github.com/bojone/BERT-whitening, ``compute_kernel_bias``).
- Mu & Viswanath 2018, "All-but-the-Top: Simple and Effective Postprocessing
  for Word Representations" (arXiv:1702.01417).
- Mikolov, Yih & Zweig 2013, "Linguistic Regularities in Continuous Space
  Word Representations" -- the vector-offset analogy (3CosAdd).
- Alain & Bengio 2016, "Understanding intermediate layers using linear
  classifier probes" (arXiv:1610.01644).
- ``pca`` follows scikit-learn's ``PCA`` (SVD of the centered data, signs
  fixed by ``svd_flip`` on the components).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath import _validate
from llmmath.similarity import normalize, top_k

__all__ = [
    "center",
    "anisotropy",
    "pca",
    "whiten",
    "all_but_the_top",
    "analogy",
    "project_out",
    "fit_probe",
    "probe_accuracy",
]


def center(X: Any) -> np.ndarray:
    """Return ``X`` minus its column mean.

    ``X: (n, d)``; result ``(n, d)`` with every column summing to 0.

    Examples
    --------
    >>> center([[1.0, 10.0], [3.0, 20.0]])
    array([[-1., -5.],
           [ 1.,  5.]])
    """
    X = _validate.matrix(X, "X", "center")
    return X - X.mean(axis=0)


def anisotropy(X: Any) -> float:
    """Return the mean cosine similarity over all pairs of rows ``i != j``.

    ``X: (n, d)`` with ``n >= 2``; result a float in ``[-1/(n-1), 1]``: near 0
    for directions spread evenly, near 1 when all rows share one direction.
    Zero rows count as cosine 0. The sum over pairs uses
    ``sum_{i != j} x_i.x_j = |sum_i x_i|^2 - sum_i |x_i|^2`` on unit rows,
    which equals the off-diagonal mean of the Gram matrix without building it
    (a 50k-token vocabulary would need a 20 GB Gram matrix).

    Examples
    --------
    >>> anisotropy([[1.0, 0.0], [2.0, 0.0], [0.0, 5.0]])
    0.3333333333333333
    """
    X = _validate.matrix(X, "X", "anisotropy")
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"anisotropy: X needs at least 2 rows to form a pair; got shape {X.shape}")
    U = normalize(X)
    off_diagonal = np.sum(U.sum(axis=0) ** 2) - np.sum(U * U)
    return float(off_diagonal / (n * (n - 1)))


def pca(X: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the coordinates of ``X`` on its top ``k`` principal components.

    ``X: (n, d)``, ``1 <= k <= min(n, d)``; result ``(coords (n, k),
    explained_variance_ratio (k,))``. Computed from the SVD of the centered
    ``X``; the ratio divides by the variance of *all* components. Each
    component's sign is flipped so its largest-magnitude loading is positive
    (scikit-learn's ``svd_flip``), which makes the result deterministic.

    Examples
    --------
    >>> coords, ratio = pca([[0.0, 0.0], [2.0, 0.0], [4.0, 1.0], [6.0, 1.0]], 1)
    >>> coords.ravel(), ratio
    (array([-3.03961186, -1.0791857 ,  1.0791857 ,  3.03961186]), array([0.99084591]))
    """
    X = _validate.matrix(X, "X", "pca")
    k = _validate.positive_int(k, "k", "pca")
    if k > min(X.shape):
        raise ValueError(f"pca: k must be at most min(n, d) = {min(X.shape)}; got {k}")
    Xc = X - X.mean(axis=0)
    _, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    total = np.sum(s**2)
    if total == 0:
        raise ValueError("pca: X has zero variance (all rows equal); no principal directions")
    signs = np.sign(Vt[np.arange(Vt.shape[0]), np.argmax(np.abs(Vt), axis=1)])
    Vt = Vt * signs[:, None]
    return Xc @ Vt[:k].T, s[:k] ** 2 / total


def whiten(X: Any, k: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Whiten ``X`` as in BERT-whitening: ``Z = (X - mu) @ W`` has identity covariance.

    ``X: (n, d)`` with ``n >= 2``; ``k`` in ``[1, d]`` keeps the first ``k``
    columns of ``W`` (default ``d``). Result ``(Z (n, k), mu (d,), W (d, k))``.
    ``mu`` is the column mean, ``U, s, _ = svd(cov)`` with ``cov = np.cov(X.T)``
    (``ddof=1``, as in Su et al.'s code) and ``W = U @ diag(1/sqrt(s))``, so
    ``np.cov(Z.T)`` is the identity. New vectors are whitened with
    ``(x - mu) @ W``. A kept eigenvalue that is (near) zero -- at most
    ``s[0] * max(n, d) * eps``, numpy's ``matrix_rank`` rule -- raises
    ``ValueError``: its direction has no variance to scale up to 1.

    Examples
    --------
    >>> Z, mu, W = whiten([[0.0, 0.0], [2.0, 0.0], [0.0, 4.0], [2.0, 4.0]])
    >>> mu, np.allclose(np.cov(Z.T), np.eye(2))
    (array([1., 2.]), True)
    """
    X = _validate.matrix(X, "X", "whiten")
    n, d = X.shape
    k = d if k is None else _validate.positive_int(k, "k", "whiten")
    if k > d:
        raise ValueError(f"whiten: k must be at most d = {d}; got {k}")
    if n < 2:
        raise ValueError(
            f"whiten: X needs at least 2 rows to estimate a covariance; got shape {X.shape}"
        )
    mu = X.mean(axis=0)
    U, s, _ = np.linalg.svd(np.atleast_2d(np.cov(X.T)))
    tol = s[0] * max(n, d) * np.finfo(s.dtype).eps
    if s[k - 1] <= tol:
        rank = int(np.sum(s > tol))
        if rank == 0:
            raise ValueError("whiten: X has zero variance (all rows equal); nothing to whiten")
        raise ValueError(
            f"whiten: the covariance of X has rank {rank} < k = {k} (eigenvalue "
            f"{s[k - 1]:.3g} is ~0, so 1/sqrt(s) would blow up); pass k <= {rank}"
        )
    W = U[:, :k] / np.sqrt(s[:k])
    return (X - mu) @ W, mu, W


def all_but_the_top(X: Any, n_components: int) -> np.ndarray:
    """Center ``X`` and remove its top ``n_components`` principal directions.

    ``X: (n, d)``, ``0 <= n_components <= min(n, d)``; result ``(n, d)``:
    ``x~ - sum_i (u_i . x~) u_i`` with ``x~`` the centered rows and ``u_i`` the
    top principal directions of the centered ``X`` (Mu & Viswanath suggest
    about ``d/100``).

    Examples
    --------
    >>> all_but_the_top([[1.0, 0.0], [3.0, 1.0], [5.0, 1.0], [7.0, 0.0]], 1)
    array([[ 0. , -0.5],
           [ 0. ,  0.5],
           [ 0. ,  0.5],
           [ 0. , -0.5]])
    """
    X = _validate.matrix(X, "X", "all_but_the_top")
    D = _validate.positive_int(n_components, "n_components", "all_but_the_top", minimum=0)
    if D > min(X.shape):
        raise ValueError(
            f"all_but_the_top: n_components must be at most min(n, d) = {min(X.shape)}; got {D}"
        )
    Xc = X - X.mean(axis=0)
    _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
    top = Vt[:D]
    return Xc - (Xc @ top.T) @ top


def analogy(E: Any, a: int, b: int, c: int, k: int = 1, exclude: bool = True) -> np.ndarray:
    """Answer "``a`` is to ``b`` as ``c`` is to ?" by the vector offset (3CosAdd).

    ``E: (V, d)``; ``a, b, c``: token ids; result int64 ``(k,)``: the rows
    with the largest cosine to ``E[b] - E[a] + E[c]``, best first, leaving out
    ``a``, ``b`` and ``c`` when ``exclude`` (as the standard benchmarks do).
    gensim's ``most_similar`` first normalizes the rows: pass ``normalize(E)``
    for that variant.

    Examples
    --------
    >>> E = [[1.0, 0.0], [1.0, 1.0], [3.0, 0.0], [3.0, 1.0], [0.0, 1.0]]
    >>> analogy(E, 0, 1, 2)  # 0:1 :: 2:3
    array([3])
    """
    E = _validate.matrix(E, "E", "analogy")
    a, b, c = _validate.int_ids([a, b, c], E.shape[0], "analogy", "a, b, c")
    k = _validate.positive_int(k, "k", "analogy")
    eligible = E.shape[0] - (len({a, b, c}) if exclude else 0)
    if k > eligible:
        raise ValueError(f"analogy: k must be at most the {eligible} candidate rows; got {k}")
    query = E[b] - E[a] + E[c]
    return top_k(query, E, k, "cosine", exclude=(a, b, c) if exclude else ())[0]


def project_out(X: Any, direction: Any) -> np.ndarray:
    """Remove from every row of ``X`` its component along ``direction``.

    ``X: (..., d)``, ``direction: (d,)`` (normalized first, so its length does
    not matter); result ``(..., d)``, orthogonal to ``direction``. Applying it
    twice changes nothing.

    Examples
    --------
    >>> project_out([[3.0, 4.0], [1.0, -2.0]], [0.0, 5.0])
    array([[3., 0.],
           [1., 0.]])
    """
    X = _validate.float_array(X, "X", "project_out", min_ndim=1)
    u = _validate.float_array(direction, "direction", "project_out")
    if u.ndim != 1:
        raise ValueError(f"project_out: direction must be 1-D (d,); got shape {u.shape}")
    _validate.same_last_dim(X, u, "X and direction", "project_out")
    norm = np.linalg.norm(u)
    if not norm > 0:
        raise ValueError(f"project_out: direction must be a non-zero vector; got norm {norm}")
    u = u / norm
    return X - (X @ u)[..., None] * u


def _labels(y: Any, n: int, func: str) -> np.ndarray:
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"{func}: y must have shape ({n},), one label per row of X; got {y.shape}")
    numeric = y.dtype == np.bool_ or np.issubdtype(y.dtype, np.number)
    if not numeric or not np.isin(y, (0, 1)).all():
        raise ValueError(f"{func}: y must hold labels 0 or 1; got values {np.unique(y)[:5]}")
    return y.astype(np.float64)


def fit_probe(
    X: Any, y: Any, *, steps: int = 500, lr: float = 0.5, l2: float = 0.0
) -> tuple[np.ndarray, float]:
    """Fit a logistic-regression probe by full-batch gradient descent.

    ``X: (n, d)`` features, ``y: (n,)`` labels in {0, 1}; result ``(w (d,), b)``.
    Starting from zero, takes ``steps`` steps of size ``lr`` on
    ``mean(log-loss(sigmoid(X @ w + b), y)) + l2/2 * |w|^2`` (the bias is not
    penalized). Standardize the features first if their scales differ a lot.

    Examples
    --------
    >>> w, b = fit_probe([[-2.0], [-1.0], [1.0], [2.0]], [0, 0, 1, 1], steps=200)
    >>> probe_accuracy([[-3.0], [0.5]], [0, 1], w, b)
    1.0
    """
    X = _validate.matrix(X, "X", "fit_probe")
    y = _labels(y, X.shape[0], "fit_probe")
    steps = _validate.positive_int(steps, "steps", "fit_probe", minimum=0)
    lr = _validate.positive_float(lr, "lr", "fit_probe")
    l2 = float(l2)
    if not (np.isfinite(l2) and l2 >= 0):
        raise ValueError(f"fit_probe: l2 must be a finite number >= 0; got {l2!r}")
    n, d = X.shape
    w, b = np.zeros(d, dtype=X.dtype), 0.0
    for _ in range(steps):
        p = 0.5 * (1.0 + np.tanh(0.5 * (X @ w + b)))  # sigmoid, overflow-free
        err = p - y
        w = w - lr * (X.T @ err / n + l2 * w)
        b = b - lr * float(err.mean())
    return w, b


def probe_accuracy(X: Any, y: Any, w: Any, b: float) -> float:
    """Return the fraction of rows whose predicted label ``X @ w + b > 0`` equals ``y``.

    ``X: (n, d)``, ``y: (n,)`` in {0, 1}, ``w: (d,)``, ``b`` a float; result a float.

    Examples
    --------
    >>> probe_accuracy([[1.0], [-1.0], [2.0]], [1, 0, 0], [1.0], 0.0)
    0.6666666666666666
    """
    X = _validate.matrix(X, "X", "probe_accuracy")
    y = _labels(y, X.shape[0], "probe_accuracy")
    w = _validate.float_array(w, "w", "probe_accuracy")
    if w.shape != (X.shape[1],):
        raise ValueError(f"probe_accuracy: w must have shape ({X.shape[1]},); got {w.shape}")
    b = _validate.finite_float(b, "b", "probe_accuracy")
    return float(np.mean((X @ w + b > 0) == (y == 1)))
