"""Token embedding tables: lookup, one-hot view, tied output logits, resizing.

An embedding table ``E`` has shape ``(V, d)``: row ``i`` is the vector of
token id ``i``. Looking a token up is the same as multiplying its one-hot
vector by ``E``; a model with *tied* embeddings reuses ``E`` as its output
layer, so the logits are ``h @ E.T``.

References:

- Press & Wolf 2017, "Using the Output Embedding to Improve Language Models"
  (arXiv:1608.05859) -- weight tying.
- Hewitt 2021, "Initializing New Word Embeddings for Pretrained Language
  Models" -- new rows from the mean / a normal fitted to the old rows.
- Reference implementation: ``torch.nn.functional.embedding`` (``lookup``),
  ``torch.nn.functional.one_hot`` and Hugging Face transformers'
  ``PreTrainedModel.resize_token_embeddings`` with ``mean_resizing=True``
  (``resize``; see its docstring for the one difference).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from llmmath import _validate

__all__ = ["lookup", "one_hot", "pad_ids", "tied_logits", "param_count", "resize"]

_INITS = ("mean", "normal", "zeros")


def lookup(E: Any, ids: Any) -> np.ndarray:
    """Return the rows of ``E`` selected by ``ids``.

    ``E: (V, d)``, ``ids: (...)`` integers in ``[0, V)``; result ``(..., d)``.
    Negative ids raise ``IndexError`` (they never count from the end).

    Examples
    --------
    >>> E = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    >>> lookup(E, [[2, 0], [1, 1]])
    array([[[4., 5.],
            [0., 1.]],
    <BLANKLINE>
           [[2., 3.],
            [2., 3.]]])
    """
    E = _validate.matrix(E, "E", "lookup")
    ids = _validate.int_ids(ids, E.shape[0], "lookup")
    return E[ids]


def one_hot(ids: Any, vocab_size: int) -> np.ndarray:
    """Return float64 one-hot vectors, so that ``one_hot(ids, V) @ E == lookup(E, ids)``.

    ``ids: (...)`` integers in ``[0, vocab_size)``; result ``(..., vocab_size)``.

    Examples
    --------
    >>> one_hot([2, 0], 3)
    array([[0., 0., 1.],
           [1., 0., 0.]])
    """
    V = _validate.positive_int(vocab_size, "vocab_size", "one_hot")
    ids = _validate.int_ids(ids, V, "one_hot")
    return (ids[..., None] == np.arange(V)).astype(np.float64)


def pad_ids(
    sequences: Sequence[Sequence[int]], pad_id: int = 0, length: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Pad token-id sequences of different lengths into one batch, right-aligned padding.

    ``sequences``: ``B`` lists of integer ids; result ``(ids, mask)``, both
    ``(B, T)``: ``ids`` int64 with ``pad_id`` after each sequence's end, and
    ``mask`` bool, ``True`` on real tokens. ``T`` is ``length`` if given,
    else the longest sequence.

    Examples
    --------
    >>> ids, mask = pad_ids([[5, 2, 7], [4]], pad_id=0)
    >>> ids
    array([[5, 2, 7],
           [4, 0, 0]])
    >>> mask.sum(axis=1)
    array([3, 1])
    """
    func = "pad_ids"
    if not len(sequences):
        raise ValueError(f"{func}: sequences is empty; expected at least one sequence")
    lengths = np.array([len(seq) for seq in sequences], dtype=np.int64)
    T = int(lengths.max()) if length is None else _validate.positive_int(length, "length", func)
    if lengths.max() > T:
        raise ValueError(
            f"{func}: length must be at least the longest sequence ({int(lengths.max())}); got {T}"
        )
    pieces = [np.asarray(seq) for seq in sequences if len(seq)]
    flat = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    if flat.size and (flat.dtype == np.bool_ or not np.issubdtype(flat.dtype, np.integer)):
        raise TypeError(f"{func}: sequences must hold integer ids; got dtype {flat.dtype}")
    if isinstance(pad_id, bool) or not isinstance(pad_id, (int, np.integer)):
        raise TypeError(f"{func}: pad_id must be an integer; got {pad_id!r}")
    mask = np.arange(T) < lengths[:, None]
    ids = np.full(mask.shape, pad_id, dtype=np.int64)
    ids[mask] = flat
    return ids, mask


def tied_logits(h: Any, E: Any) -> np.ndarray:
    """Return output logits ``h @ E.T`` of a model whose output layer is ``E``.

    ``h: (..., d)`` hidden states, ``E: (V, d)``; result ``(..., V)``: the
    logit of token ``i`` is the dot product of ``h`` with its embedding row.

    Examples
    --------
    >>> tied_logits([1.0, 2.0], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    array([1., 2., 3.])
    """
    h = _validate.float_array(h, "h", "tied_logits", min_ndim=1)
    E = _validate.matrix(E, "E", "tied_logits")
    _validate.same_last_dim(h, E, "h and E", "tied_logits")
    return h @ E.T


def param_count(vocab_size: int, d_model: int, *, tied: bool = True, n_positions: int = 0) -> int:
    """Return the number of embedding parameters, as a Python int.

    ``V*d`` for the token table, doubled when the output layer is a separate
    (untied) matrix, plus ``n_positions*d`` for a learned position table.
    All sizes are non-negative integers.

    Examples
    --------
    >>> param_count(50257, 768, n_positions=1024)  # GPT-2 small
    39383808
    >>> param_count(50257, 768, tied=False)
    77194752
    """
    V = _validate.positive_int(vocab_size, "vocab_size", "param_count", minimum=0)
    d = _validate.positive_int(d_model, "d_model", "param_count", minimum=0)
    P = _validate.positive_int(n_positions, "n_positions", "param_count", minimum=0)
    return V * d * (1 if tied else 2) + P * d


def _new_rows(E: np.ndarray, n_new: int, init: str, rng: Any, func: str) -> np.ndarray:
    """Return ``(n_new, d)`` fresh rows for a table built from the rows of ``E: (V, d)``.

    ``init``: ``"mean"`` repeats the mean row, ``"zeros"`` gives zeros,
    ``"normal"`` draws from N(mean, cov) with the population covariance
    (``ddof=0``) of the rows, so ``V == 1`` gives a zero covariance.
    Options are checked even when ``n_new == 0``. Shared with
    ``diagnostics.remap_rows``.
    """
    _validate.option(init, _INITS, "init", func)
    if init == "normal":
        if rng is None:
            raise ValueError(f'{func}: init="normal" needs rng, a numpy.random.Generator; got None')
        if not isinstance(rng, np.random.Generator):
            raise TypeError(
                f"{func}: rng must be a numpy.random.Generator; got {type(rng).__name__}"
            )
    d = E.shape[1]
    if init == "zeros":
        return np.zeros((n_new, d), dtype=E.dtype)
    mu = E.mean(axis=0)
    if init == "mean":
        return np.broadcast_to(mu, (n_new, d)).copy()
    cov = np.atleast_2d(np.cov(E, rowvar=False, ddof=0))
    return rng.multivariate_normal(mu, cov, size=n_new, method="eigh").astype(E.dtype)


def resize(
    E: Any, new_vocab_size: int, *, init: str = "mean", rng: np.random.Generator | None = None
) -> np.ndarray:
    """Return a copy of ``E`` with ``new_vocab_size`` rows.

    ``E: (V, d)``; result ``(new_vocab_size, d)``. The first ``min(V, V')``
    rows are unchanged; rows added when growing are initialized by ``init``:

    - ``"mean"``: the mean of the old rows (Hewitt 2021). A new token then
      starts with logit ``h @ mean`` = the average old logit, so it does not
      steal probability mass before training.
    - ``"normal"``: independent draws from N(mean, cov), where ``cov`` is the
      population covariance (``ddof=0``) of the old rows; needs ``rng``.
      Hugging Face's ``mean_resizing`` uses the same mean and covariance but
      scales the covariance by ``1e-9``; here the full covariance is used.
    - ``"zeros"``: zero rows.

    Examples
    --------
    >>> resize([[1.0, 2.0], [3.0, 6.0]], 3)
    array([[1., 2.],
           [3., 6.],
           [2., 4.]])
    >>> resize([[1.0, 2.0], [3.0, 6.0]], 1)
    array([[1., 2.]])
    """
    E = _validate.matrix(E, "E", "resize")
    n = _validate.positive_int(new_vocab_size, "new_vocab_size", "resize")
    V = E.shape[0]
    extra = _new_rows(E, max(n - V, 0), init, rng, "resize")
    return np.concatenate([E[: min(n, V)], extra], axis=0)
