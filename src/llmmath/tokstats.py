"""Corpus measures of a tokenization: Rényi entropy and efficiency, fertility, premium.

They need only token counts (or tokens per word or sentence), not a lattice, which is why
they live apart from ``llmmath.segment``. Bits per byte is Lesson E's
``llmmath.measures.bits_per_byte`` and Shannon entropy ``llmmath.measures.entropy``:
``renyi_entropy(c, 1, base=b)`` equals ``entropy(c / c.sum(), base=b)``.

References: Rényi 1961; Zouhar et al. 2023 (arXiv:2306.16842), Rényi efficiency with
α = 2.5, as ``tokenization-scorer`` 1.1.8 computes it; Rust et al. 2021
(arXiv:2012.15613), fertility and the proportion of continued words; Petrov et al. 2023
(arXiv:2305.15425), the tokenization premium.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath import _validate
from llmmath.softmax import logsumexp


def _counts(counts: Any, f: str) -> np.ndarray:
    """The nonzero entries of a 1-D, non-negative ``counts`` with a positive sum."""
    c = _validate.float_array(counts, "counts", f)
    if c.ndim != 1:
        raise ValueError(f"{f}: counts must be 1-D (one count per token type); got shape {c.shape}")
    if (c < 0).any():
        raise ValueError(f"{f}: counts must be non-negative; got {c[c < 0][0]}")
    if not c.any():
        raise ValueError(f"{f}: counts must have a positive sum; got all zeros")
    return c[c > 0]


def _alpha(alpha: Any, f: str) -> float:
    a = _validate._real(alpha, "alpha", f)
    if np.isnan(a) or a < 0:
        raise ValueError(f"{f}: alpha must be >= 0 (or inf); got {alpha!r}")
    return a


def _renyi(c: np.ndarray, a: float) -> float:
    """H_α in nats of the distribution ``c / Σ c`` (``c`` positive)."""
    p = c / c.sum()
    if a == 1.0:
        return float(-(p * np.log(p)).sum())
    if np.isinf(a):
        return float(-np.log(p.max()))
    return float(logsumexp(a * np.log(p)) / (1.0 - a))  # log Σ p^α without underflow


def renyi_entropy(counts: Any, alpha: float, *, base: float | None = None) -> float:
    """Rényi entropy ``H_α = log_base(Σ p^α) / (1 − α)`` of ``p = counts / Σ counts``.

    counts: (V,) non-negative, positive sum (zeros are ignored). Nats, or bits with
    ``base=2``. ``α = 1``: Shannon ``−Σ p log p``; ``α = inf``: ``−log max p``; ``α = 0``:
    ``log`` of the number of nonzero counts. Non-increasing in α.

    Examples
    --------
    >>> c = [10, 6, 4, 4, 3, 3, 3, 2, 2]  # corpus A after 8 merges
    >>> [round(renyi_entropy(c, a, base=2), 4) for a in (0.5, 1, 2, 2.5, np.inf)]
    [3.0715, 2.9664, 2.7536, 2.6556, 1.8875]
    """
    f = "renyi_entropy"
    c, a = _counts(counts, f), _alpha(alpha, f)
    if base is None:
        return _renyi(c, a)
    b = _validate.positive_float(base, "base", f)
    if b == 1.0:
        raise ValueError(f"{f}: base must be None or > 0 and != 1; got {base!r}")
    return _renyi(c, a) / float(np.log(b))


def renyi_efficiency(counts: Any, alpha: float = 2.5, *, vocab_size: int | None = None) -> float:
    """Rényi efficiency ``H_α / log n_V`` (Zouhar et al. 2023; the base cancels).

    ``n_V = vocab_size`` or, if None, the number of nonzero counts (the observed types, as
    ``tokenization-scorer`` counts them; its ``vocab=`` is our ``vocab_size``). ``α = 1`` is
    Shannon efficiency. ``n_V ≥ 2`` and ``vocab_size ≥`` the observed types.

    Examples
    --------
    >>> round(renyi_efficiency([3, 2, 1, 1], 2.5), 6)  # the scorer's test text
    0.826506
    >>> c = [10, 6, 4, 4, 3, 3, 3, 2, 2]  # corpus A after 8 merges
    >>> round(renyi_efficiency(c), 4), round(renyi_efficiency(c, vocab_size=264), 4)
    (0.8377, 0.3301)
    """
    f = "renyi_efficiency"
    c, a = _counts(counts, f), _alpha(alpha, f)
    if vocab_size is None:
        if c.size < 2:
            raise ValueError(
                f"{f}: counts has {c.size} observed type; efficiency needs n_V ≥ 2; pass vocab_size"
            )
        n_v = c.size
    else:
        n_v = _validate.positive_int(vocab_size, "vocab_size", f, minimum=2)
        if n_v < c.size:
            raise ValueError(
                f"{f}: vocab_size must be >= the {c.size} observed types in counts; got {n_v}"
            )
    return _renyi(c, a) / float(np.log(n_v))


def fertility(pieces_per_word: Any) -> tuple[float, float]:
    """``(fertility, continued)``: mean pieces per word and the fraction split in ≥ 2 pieces.

    pieces_per_word: (W,) ints ≥ 1, one entry per word occurrence (repeat a word's entry
    for each time it occurs). Rust et al. 2021's subword fertility and proportion of
    continued words.

    Examples
    --------
    >>> per_word = [1] * 5 + [2] * 2 + [4] * 3 + [1] * 6 + [2] * 4 + [1] * 2  # corpus A
    >>> tuple(round(x, 6) for x in fertility(per_word))
    (1.681818, 0.409091)
    """
    f = "fertility"
    n = _validate._asarray(pieces_per_word, "pieces_per_word", f)
    if n.dtype == np.bool_ or not np.issubdtype(n.dtype, np.integer):
        raise TypeError(f"{f}: pieces_per_word must be integers; got dtype {n.dtype}")
    if n.ndim != 1 or n.size == 0:
        raise ValueError(f"{f}: pieces_per_word must be 1-D and non-empty; got shape {n.shape}")
    if (n < 1).any():
        raise ValueError(f"{f}: pieces_per_word must be >= 1 (a word has a piece); got {n.min()}")
    return float(n.mean()), float((n >= 2).mean())


def premium(n_tokens: Any, n_tokens_reference: Any) -> float | np.ndarray:
    """Tokenization premium ``n_tokens / n_tokens_reference`` (Petrov et al. 2023).

    Token counts of the same content (parallel sentences) in a language and in the
    reference language; both positive; arrays broadcast and give per-sentence ratios
    (a float for two scalars). For a corpus pass the totals,
    ``premium(sum(n), sum(n_ref))``: the mean of per-sentence ratios is another number.

    Examples
    --------
    >>> premium(30, 20)
    1.5
    >>> premium([3, 5], [2, 5])
    array([1.5, 1. ])
    """
    f = "premium"
    n = _validate.float_array(n_tokens, "n_tokens", f)
    r = _validate.float_array(n_tokens_reference, "n_tokens_reference", f)
    for name, x in (("n_tokens", n), ("n_tokens_reference", r)):
        if (x <= 0).any():
            raise ValueError(f"{f}: {name} must be positive; got {x[x <= 0][0]}")
    try:
        out = n / r
    except ValueError:
        raise ValueError(
            f"{f}: n_tokens and n_tokens_reference must broadcast; got shapes "
            f"{n.shape} and {r.shape}"
        ) from None
    return float(out) if out.ndim == 0 else out
