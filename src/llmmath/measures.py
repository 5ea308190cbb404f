"""Measuring a language model: entropy, cross-entropy, KL, perplexity, bits per byte, strides.

Probability vectors are ``(..., V)`` rows, non-negative and summing to 1 within
1e-9 (no silent renormalization); ``0 log 0 = 0``. Results are in nats, or in
bits with ``base=2``. Perplexity and bits per byte take NLLs in nats.

References
----------
- Shannon, "A Mathematical Theory of Communication", Bell System Technical
  Journal 27 (1948). ``entropy`` and ``kl_divergence`` match
  ``torch.distributions.Categorical(probs=p).entropy()`` and
  ``torch.distributions.kl_divergence`` (``+inf`` where ``q_v = 0 < p_v``).
- Gao et al., "The Pile", arXiv:2101.00027 (bits per UTF-8 byte).
- Hugging Face transformers, ``docs/source/en/perplexity.md`` (the strided
  evaluation loop that ``strided_windows`` and ``accounting="hf_guide"``
  transcribe).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from llmmath import _validate


def _log_base(base: Any, func: str) -> float:
    """``ln(base)``, the divisor that turns nats into ``base`` units (1 for nats)."""
    if base is None:
        return 1.0
    b = _validate.finite_float(base, "base", func)
    if b <= 0 or b == 1:
        raise ValueError(
            f"{func}: base must be None (nats) or a number > 0 other than 1; got {base!r}"
        )
    return float(np.log(b))


def _log_where_positive(x: np.ndarray) -> np.ndarray:
    """``log x`` where ``x > 0``, ``-inf`` at zeros (no warning)."""
    with np.errstate(divide="ignore"):
        return np.log(x)


def entropy(p: Any, *, base: float | None = None) -> np.ndarray:
    """Shannon entropy ``H(p) = −Σ_v p_v log p_v`` with ``0 log 0 = 0``.

    p: (..., V) probability rows -> (...). Nats, or bits with ``base=2``.

    Examples
    --------
    >>> round(float(entropy([0.5, 0.25, 0.25], base=2)), 6)
    1.5
    >>> entropy([[1.0, 0.0], [0.5, 0.5]], base=2).round(6)
    array([0., 1.])
    """
    f = "entropy"
    p = _validate.prob_rows(p, "p", f)
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return (0.0 - terms.sum(axis=-1)) / _log_base(base, f)


def cross_entropy_dist(p: Any, q: Any, *, base: float | None = None) -> np.ndarray:
    """Cross-entropy between distributions ``H(p, q) = −Σ_v p_v log q_v`` (0 where ``p_v = 0``).

    p, q: (..., V) probability rows (leading dimensions broadcast) -> (...);
    ``+inf`` where ``q_v = 0 < p_v``. ``H(p, q) = H(p) + KL(p ‖ q) ≥ H(p)``.
    Named to stay apart from the loss ``cross_entropy(logits, targets)``.

    Examples
    --------
    >>> round(float(cross_entropy_dist([0.5, 0.25, 0.25], [0.7, 0.2, 0.1], base=2)), 6)
    1.668251
    """
    f = "cross_entropy_dist"
    p, q = _validate.prob_pair(p, q, f)
    terms = p * np.where(p > 0, -_log_where_positive(q), 0.0)
    return (0.0 + terms.sum(axis=-1)) / _log_base(base, f)


def kl_divergence(p: Any, q: Any, *, base: float | None = None) -> np.ndarray:
    """Kullback–Leibler divergence ``KL(p ‖ q) = Σ_v p_v (log p_v − log q_v)``.

    p, q: (..., V) probability rows (leading dimensions broadcast) -> (...);
    0 where ``p_v = 0``, ``+inf`` where ``q_v = 0 < p_v`` (as torch).

    Examples
    --------
    >>> round(float(kl_divergence([0.5, 0.25, 0.25], [0.7, 0.2, 0.1])), 6)  # nats
    0.116622
    >>> p, q = [[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]], [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]
    >>> kl_divergence(p, q, base=2).round(6)  # q misses part of p's support: +inf
    array([inf,  1.])
    """
    f = "kl_divergence"
    p, q = _validate.prob_pair(p, q, f)
    pos = p > 0
    diff = np.where(pos, np.log(np.where(pos, p, 1.0)) - _log_where_positive(q), 0.0)
    return (0.0 + (p * diff).sum(axis=-1)) / _log_base(base, f)


def perplexity(nll: Any, n_tokens: int | None = None) -> float:
    """Perplexity ``exp(mean NLL)``: the geometric mean of ``1/p`` over the scored tokens.

    nll: per-token NLLs in nats (any shape, averaged over every entry), or, with
    ``n_tokens``, one summed NLL (a scalar) -> ``exp(nll / n_tokens)``. There is
    no way to pass several perplexities: the mean of per-sequence perplexities is
    not a perplexity (pool the NLLs and the counts instead).

    Examples
    --------
    >>> import numpy as np
    >>> round(perplexity(-np.log([0.5, 0.25, 0.125, 0.5])), 4)  # 2 ** 1.75
    3.3636
    >>> round(perplexity(-np.log([0.5, 0.5, 0.1, 0.1, 0.1, 0.1]).sum(), 6), 4)  # not 6
    5.848
    """
    f = "perplexity"
    x = _validate.float_array(nll, "nll", f)
    if n_tokens is None:
        return float(np.exp(x.mean()))
    n = _validate.positive_int(n_tokens, "n_tokens", f)
    if x.ndim:
        raise ValueError(
            f"{f}: with n_tokens, nll must be one summed NLL (a scalar); got shape {x.shape} "
            "(pass per-token NLLs without n_tokens, or their sum with the count)"
        )
    return float(np.exp(x / n))


def bits_per_byte(nll: Any, n_bytes: int) -> float:
    """Bits per UTF-8 byte ``nll / (ln 2 · n_bytes)``: a score that does not depend on the tokenizer.

    nll: the summed NLL in nats of a whole text (a scalar); n_bytes: that text's
    length in UTF-8 bytes, ``len(text.encode("utf-8"))`` (not characters).

    Examples
    --------
    >>> n = len("héllo wörld".encode("utf-8"))  # 11 characters, 13 bytes
    >>> n, round(bits_per_byte(9.0, n), 6)
    (13, 0.998789)
    """
    f = "bits_per_byte"
    x = _validate.float_array(nll, "nll", f)
    if x.ndim:
        raise ValueError(f"{f}: nll must be one summed NLL in nats (a scalar); got shape {x.shape}")
    n = _validate.positive_int(n_bytes, "n_bytes", f)
    return float(x / (np.log(2.0) * n))


def _windows(n_tokens: int, max_length: Any, stride: Any, func: str) -> np.ndarray:
    L = _validate.positive_int(max_length, "max_length", func, minimum=2)
    s = _validate.positive_int(stride, "stride", func)
    if s > L:
        raise ValueError(
            f"{func}: stride must be <= max_length (a larger stride skips tokens); "
            f"got stride {s} > max_length {L}"
        )
    begin = np.arange(0, n_tokens, s, dtype=np.int64)
    end = np.minimum(begin + L, n_tokens)
    n_win = int(np.argmax(end == n_tokens)) + 1  # stop after the window that reaches the end
    begin, end = begin[:n_win], end[:n_win]
    previous_end = np.concatenate([[0], end[:-1]])
    return np.stack([begin, end, np.maximum(previous_end, begin + 1)], axis=1)


def strided_windows(n_tokens: int, max_length: int, stride: int) -> np.ndarray:
    """Windows ``(begin, end, first)`` of the HF perplexity guide's strided evaluation.

    ``begin = 0, s, 2s, …``, ``end = min(begin + L, N)``, stopping after the
    window with ``end = N``; ``first = max(previous end, begin + 1)`` is the first
    position the window scores (its targets are ``first … end − 1``; position 0
    has no context). With ``s < L`` every position ``1 … N − 1`` is scored exactly
    once; with ``s = L`` (disjoint chunks) each window's first token is context
    only, so ``N − W`` positions are scored. Returns int64 ``(W, 3)``. Requires
    ``n_tokens ≥ 2``, ``max_length ≥ 2`` and ``1 ≤ stride ≤ max_length``.

    Examples
    --------
    >>> strided_windows(10, 4, 2)
    array([[ 0,  4,  1],
           [ 2,  6,  4],
           [ 4,  8,  6],
           [ 6, 10,  8]])
    >>> strided_windows(10, 4, 4)  # disjoint: positions 4 and 8 are context only
    array([[ 0,  4,  1],
           [ 4,  8,  5],
           [ 8, 10,  9]])
    """
    f = "strided_windows"
    n = _validate.positive_int(n_tokens, "n_tokens", f, minimum=2)
    return _windows(n, max_length, stride, f)


def strided_nll(
    window_logprobs: Callable[[np.ndarray], Any],
    ids: Any,
    max_length: int,
    stride: int,
    *,
    accounting: str = "exact",
) -> tuple[float, int]:
    """Summed NLL over ``strided_windows``, one ``window_logprobs`` call per window.

    ``window_logprobs(ids[begin:end])`` must return ``(end − begin, V)``
    log-probabilities, row ``t`` predicting ``ids[begin + t + 1]``; ids: (N,)
    integer ids in ``[0, V)``. Returns ``(nll_sum, n_scored)``:

    - ``accounting="exact"``: the summed ``−log p`` of every scored target and
      their count, so ``perplexity(nll_sum, n_scored)`` is the token-level
      perplexity under these windows.
    - ``accounting="hf_guide"``: the HF perplexity guide's recipe, which weights
      each window's mean NLL by ``trg_len − 1`` (``trg_len = end − previous end``):
      ``(Σ_w mean_w·(trg_len_w − 1), Σ_w (trg_len_w − 1))``. For a later window
      with ``stride < max_length`` that is one less than the ``trg_len`` targets it
      scores; the two modes agree only when ``stride = max_length``.

    Examples
    --------
    >>> import numpy as np
    >>> uniform = lambda w: np.full((len(w), 4), np.log(0.25))
    >>> total, n = strided_nll(uniform, [0, 1, 2, 3, 0, 1], 4, 2)
    >>> n, round(total / n, 6)  # every one of the 5 targets at ln 4
    (5, 1.386294)
    >>> strided_nll(uniform, [0, 1, 2, 3, 0, 1], 4, 2, accounting="hf_guide")[1]
    4
    """
    f = "strided_nll"
    if not callable(window_logprobs):
        raise TypeError(f"{f}: window_logprobs must be callable; got {type(window_logprobs)}")
    exact = _validate.option(accounting, ("exact", "hf_guide"), "accounting", f) == "exact"
    x = _validate._asarray(ids, "ids", f)
    if x.dtype == np.bool_ or not np.issubdtype(x.dtype, np.integer):
        raise TypeError(f"{f}: ids must be integers; got dtype {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"{f}: ids must be 1-D (N,); got shape {x.shape}")
    if x.size < 2:
        raise ValueError(
            f"{f}: ids must hold n_tokens >= 2 tokens (nothing is scored); got {x.size}"
        )
    x = _validate.int_ids(x, np.iinfo(np.int64).max, f)  # sign check; the range once V is known
    total, count, V, previous_end = 0.0, 0, None, 0
    for begin, end, first in _windows(x.size, max_length, stride, f):
        name = f"window_logprobs(ids[{begin}:{end}])"
        lp = _validate.float_array(window_logprobs(x[begin:end].copy()), name, f, neg_inf=True)
        if lp.ndim != 2 or lp.shape[0] != end - begin or (V is not None and lp.shape[1] != V):
            want = f"({end - begin}, {'V' if V is None else V})"
            raise ValueError(f"{f}: {name} must have shape {want}; got {lp.shape}")
        if V is None:
            V = lp.shape[1]
            _validate.int_ids(x, V, f)
        pos = np.arange(first, end)
        nll = -lp[pos - begin - 1, x[pos]]
        if exact:
            total, count = total + nll.sum(), count + pos.size
        else:  # the guide: window mean × (trg_len − 1); a window that scores nothing adds 0
            weight = int(end - previous_end) - 1
            total, count = total + (nll.mean() * weight if pos.size else 0.0), count + weight
        previous_end = end
    return float(total), int(count)
