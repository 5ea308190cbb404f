"""Decoding filters that need only the logits, and sampling with an explicit ``rng``.

Each filter maps logits ``(..., V)`` to logits of the same shape (float64, or the input's
wider float) with the removed tokens set to ``-inf``, the rule of Hugging Face's warper of
the same name; ``softmax`` of the result is the renormalized distribution. ``-inf`` in the
input marks a token removed earlier; a row with no finite logit is a ``ValueError``.
``llmmath.processors`` holds what needs the context and ``warp``, the chain in HF's order.

References
----------
- Fan, Lewis & Dauphin 2018 (top-k, arXiv:1805.04833); Holtzman et al. 2020 (nucleus,
  arXiv:1904.09751); Nguyen et al. 2024 (min-p, arXiv:2407.01082); Meister et al. 2023
  (typical, arXiv:2202.00666); Hewitt, Manning & Liang 2022 (ε, arXiv:2210.15191).
- transformers 5.x ``generation/logits_process.py``: ``TemperatureLogitsWarper``,
  ``TopKLogitsWarper``, ``TopPLogitsWarper``, ``MinPLogitsWarper``, ``TypicalLogitsWarper``,
  ``EpsilonLogitsWarper``. On float64 logits the same entries are finite and the finite
  ones are bitwise equal (top-p and typical: away from cumulative sums within rounding of
  the cut, and with HF's ``torch.sort`` order of ties replaced by a stable sort).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath import _validate
from llmmath.softmax import log_softmax, softmax

__all__ = [
    "apply_temperature",
    "top_k_filter",
    "top_p_filter",
    "min_p_filter",
    "typical_filter",
    "epsilon_filter",
    "sample",
]


def _unit(
    value: Any, name: str, func: str, *, open_lo: bool = False, open_hi: bool = False
) -> float:
    """A finite float in [0, 1], with either end excluded on request."""
    v = _validate.finite_float(value, name, func)
    if v < 0 or v > 1 or (open_lo and v == 0) or (open_hi and v == 1):
        span = ("(" if open_lo else "[") + "0, 1" + (")" if open_hi else "]")
        raise ValueError(f"{func}: {name} must lie in {span}; got {value!r}")
    return v


def _remove(z: np.ndarray, remove: np.ndarray) -> np.ndarray:
    return np.where(remove, -np.inf, z)


def _unsort(sorted_mask: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Undo ``take_along_axis(·, order)``: ``out[..., order[..., i]] = sorted_mask[..., i]``."""
    out = np.empty_like(sorted_mask)
    np.put_along_axis(out, order, sorted_mask, axis=-1)
    return out


def _kth_largest(z: np.ndarray, k: int) -> np.ndarray:
    """The ``k``-th largest entry of each row, ``(..., 1)`` (``k`` clipped to ``V``)."""
    V = z.shape[-1]
    k = min(k, V)
    return np.partition(z, V - k, axis=-1)[..., V - k : V - k + 1]


# The cores assume validated arguments; processors.warp calls them with its own names.
def _top_k(z: np.ndarray, k: int, keep: int) -> np.ndarray:
    return _remove(z, z < _kth_largest(z, max(k, keep)))


def _top_p(z: np.ndarray, top_p: float, keep: int) -> np.ndarray:
    order = np.argsort(z, axis=-1, kind="stable")  # ascending, as HF sorts
    cum = np.cumsum(softmax(np.take_along_axis(z, order, axis=-1)), axis=-1)
    drop = cum <= 1 - top_p
    drop[..., -keep:] = False
    return _remove(z, _unsort(drop, order))


def _min_p(z: np.ndarray, min_p: float, keep: int) -> np.ndarray:
    p = softmax(z)
    drop = p < min_p * p.max(axis=-1, keepdims=True)
    top = np.argsort(-p, axis=-1, kind="stable")[..., :keep]
    np.put_along_axis(drop, top, False, axis=-1)
    return _remove(z, drop)


def _typical(z: np.ndarray, mass: float, keep: int) -> np.ndarray:
    lp = log_softmax(z)
    p = np.exp(lp)
    H = -np.sum(p * np.where(p > 0, lp, 0.0), axis=-1, keepdims=True)  # 0 log 0 = 0
    dev = np.abs(-lp - H)  # +inf at a removed token
    order = np.argsort(dev, axis=-1, kind="stable")
    dev_s = np.take_along_axis(dev, order, axis=-1)
    cum = np.cumsum(softmax(np.take_along_axis(z, order, axis=-1)), axis=-1)
    last = np.minimum((cum < mass).sum(axis=-1, keepdims=True), z.shape[-1] - 1)
    drop = dev_s > np.take_along_axis(dev_s, last, axis=-1)
    drop[..., :keep] = False
    return _remove(z, _unsort(drop, order))


def _epsilon(z: np.ndarray, epsilon: float, keep: int) -> np.ndarray:
    return _remove(z, (softmax(z) < epsilon) & (z < _kth_largest(z, keep)))


def apply_temperature(logits: Any, temperature: float) -> np.ndarray:
    """Divide the logits by a temperature ``T > 0``: logits ``(..., V)`` -> ``(..., V)``.

    ``T < 1`` sharpens ``softmax(z / T)``, ``T > 1`` flattens it (entropy grows with ``T``).
    ``T = 0`` is not a temperature: as ``T → 0⁺`` the distribution tends to the uniform one
    over the maximal logits, which is greedy decoding only when the maximum is unique (use
    ``llmmath.search.greedy_decode``). Equals ``TemperatureLogitsWarper(T)``.

    Examples
    --------
    >>> apply_temperature([2.0, 1.0, -1.0], 0.5)
    array([ 4.,  2., -2.])
    >>> softmax(apply_temperature([1.0, 1.0, 0.0], 0.01)).round(4)  # tied maxima share
    array([0.5, 0.5, 0. ])
    """
    f = "apply_temperature"
    z = _validate.logit_rows(logits, "logits", f)
    return z / _validate.positive_float(temperature, "temperature", f)


def top_k_filter(logits: Any, k: int, *, min_keep: int = 1) -> np.ndarray:
    """Keep the logits ``≥`` the ``max(k, min_keep)``-th largest: ``(..., V)`` -> ``(..., V)``.

    Every entry tied with that value survives, so more than ``k`` can (HF's rule);
    ``k ≥ V`` keeps everything. Equals ``TopKLogitsWarper(top_k=k, min_tokens_to_keep=min_keep)``.

    Examples
    --------
    >>> top_k_filter([3.0, 2.0, 2.0, 1.0], 2)  # the tie with the 2nd largest stays
    array([  3.,   2.,   2., -inf])
    """
    f = "top_k_filter"
    z = _validate.logit_rows(logits, "logits", f)
    k = _validate.positive_int(k, "k", f)
    return _top_k(z, k, _validate.positive_int(min_keep, "min_keep", f))


def top_p_filter(logits: Any, top_p: float, *, min_keep: int = 1) -> np.ndarray:
    """Nucleus filter, HF's rule: ``(..., V)`` -> ``(..., V)``, ``0 ≤ top_p ≤ 1``.

    Sort the logits ascending (a stable sort), take the cumulative softmax, remove the
    tokens whose cumulative mass is ``≤ 1 − top_p``, always keep the ``min_keep`` largest.
    In exact arithmetic this keeps the smallest set of most probable tokens whose mass
    reaches ``top_p`` (Holtzman et al. 2020); at an exact boundary rounding decides
    (probabilities ``[0.5, 0.3, 0.2]``, ``top_p = 0.8``: 3 kept, since
    ``1 − 0.8 = 0.19999999999999996 < 0.2``, as HF on float64 logits; HF on float32 keeps
    2). Equals ``TopPLogitsWarper(top_p, min_tokens_to_keep=min_keep)``.

    Examples
    --------
    >>> z = [2.0, 1.0, 0.5, 0.0, -1.0]  # cumulative mass 0.563, 0.770, 0.896, ...
    >>> softmax(top_p_filter(z, 0.8)).round(4)
    array([0.6285, 0.2312, 0.1402, 0.    , 0.    ])
    """
    f = "top_p_filter"
    z = _validate.logit_rows(logits, "logits", f)
    top_p = _unit(top_p, "top_p", f)
    return _top_p(z, top_p, _validate.positive_int(min_keep, "min_keep", f))


def min_p_filter(logits: Any, min_p: float, *, min_keep: int = 1) -> np.ndarray:
    """Remove tokens with ``p_v < min_p · max_u p_u``: ``(..., V)`` -> ``(..., V)``.

    ``0 ≤ min_p ≤ 1``; the ``min_keep`` most probable tokens always stay (Nguyen et al.
    2024). Equals ``MinPLogitsWarper(min_p, min_tokens_to_keep=min_keep)``.

    Examples
    --------
    >>> z = [2.0, 1.0, 0.5, 0.0, -1.0]  # p = [0.563, 0.207, 0.126, 0.076, 0.028]
    >>> np.isfinite(min_p_filter(z, 0.1))  # threshold 0.0563
    array([ True,  True,  True,  True, False])
    """
    f = "min_p_filter"
    z = _validate.logit_rows(logits, "logits", f)
    min_p = _unit(min_p, "min_p", f)
    return _min_p(z, min_p, _validate.positive_int(min_keep, "min_keep", f))


def typical_filter(logits: Any, mass: float, *, min_keep: int = 1) -> np.ndarray:
    """Locally typical filter (Meister et al. 2023): ``(..., V)`` -> ``(..., V)``.

    Order the tokens by ``|−log p_v − H(p)|`` ascending, keep them up to and including
    the first whose cumulative probability reaches ``mass``, every token tied with it in
    that score, and at least the first ``min_keep``; ``0 < mass < 1``. It may drop the
    most probable token. Equals ``TypicalLogitsWarper(mass, min_tokens_to_keep=min_keep)``.

    Examples
    --------
    >>> z = [2.0, 1.0, 0.5, 0.0, -1.0]  # H = 1.2065; token 1 is closest to it
    >>> np.isfinite(typical_filter(z, 0.2))
    array([False,  True, False, False, False])
    """
    f = "typical_filter"
    z = _validate.logit_rows(logits, "logits", f)
    mass = _unit(mass, "mass", f, open_lo=True, open_hi=True)
    return _typical(z, mass, _validate.positive_int(min_keep, "min_keep", f))


def epsilon_filter(logits: Any, epsilon: float, *, min_keep: int = 1) -> np.ndarray:
    """Remove tokens with ``p_v < ε`` unless among the ``min_keep`` largest logits.

    logits ``(..., V)`` -> ``(..., V)``; ``0 < ε < 1`` (Hewitt et al. 2022). Equals
    ``EpsilonLogitsWarper(ε, min_tokens_to_keep=min_keep)``.

    Examples
    --------
    >>> np.isfinite(epsilon_filter([2.0, 1.0, 0.5, 0.0, -1.0], 0.1))
    array([ True,  True,  True, False, False])
    """
    f = "epsilon_filter"
    z = _validate.logit_rows(logits, "logits", f)
    epsilon = _unit(epsilon, "epsilon", f, open_lo=True, open_hi=True)
    return _epsilon(z, epsilon, _validate.positive_int(min_keep, "min_keep", f))


def sample(logits: Any, rng: np.random.Generator, *, size: int | None = None) -> Any:
    """Draw token ids from ``softmax(logits)`` by inverse CDF: int ``(...)`` or ``(..., size)``.

    logits: (..., V). Per row, with ``c`` the cumulative sum of ``softmax(logits)`` and
    ``u = rng.random(...)`` (one uniform per draw, in C order over ``(..., size)``), the id
    is the number of entries of ``c`` that are ``≤ u · c[-1]``: id ``v`` has probability
    ``p_v``, and a ``-inf`` logit (probability 0) is never drawn. Deterministic given the
    state of ``rng``, a ``numpy.random.Generator`` (required). One 1-D row without
    ``size`` gives a numpy int. Agrees with ``torch.multinomial`` in distribution only.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> draws = sample([0.0, -np.inf, np.log(3.0)], rng, size=10_000)
    >>> np.bincount(draws, minlength=3) / 10_000  # p = [0.25, 0, 0.75]
    array([0.2524, 0.    , 0.7476])
    """
    f = "sample"
    z = _validate.logit_rows(logits, "logits", f)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{f}: rng must be a numpy.random.Generator (np.random.default_rng(seed)); "
            f"got {type(rng).__name__}"
        )
    c = np.cumsum(softmax(z), axis=-1)
    lead = z.shape[:-1]
    shape = lead if size is None else (*lead, _validate.positive_int(size, "size", f))
    u = rng.random(shape)
    if z.ndim == 1:  # c is non-decreasing, so this counts the entries <= u·c[-1]
        return np.searchsorted(c, u * c[-1], side="right").astype(np.int64)
    if size is not None:
        c = c[..., None, :]
    return (c <= (u * c[..., -1])[..., None]).sum(axis=-1).astype(np.int64)
