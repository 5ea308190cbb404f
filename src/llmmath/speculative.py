"""Speculative sampling: acceptance, the residual, one verification step, expected speedups.

``p`` is the target model's and ``q`` the draft model's next-token distribution: probability
rows ``(..., V)``, non-negative and summing to 1 within 1e-9 (never renormalized silently). A
draft token ``x ~ q`` is accepted with probability ``min(1, p(x)/q(x))``; at the first rejection
the next token is drawn from the residual ``max(p − q, 0)/Σ max(p − q, 0)``, and if all ``γ``
drafts pass, one bonus token from the target. The emitted tokens then follow ``p`` exactly.

References: Leviathan, Kalman, Matias 2023 (arXiv:2211.17192), speculative decoding, its
acceptance rate, expected tokens per step and walltime factor; Chen et al. 2023
(arXiv:2302.01318), speculative sampling; Hugging Face transformers 5.24
``generation.utils._speculative_sampling`` (which takes logits: its ``new_logits = log p``,
``candidate_logits = log q``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath import _validate
from llmmath.sampling import sample


def _pair(p: Any, q: Any, f: str) -> tuple[np.ndarray, np.ndarray]:
    """``p`` and ``q`` checked, then broadcast to one shape."""
    p, q = _validate.prob_pair(p, q, f)
    return tuple(np.broadcast_arrays(p, q))  # type: ignore[return-value]


def _residual(p: np.ndarray, q: np.ndarray, f: str) -> np.ndarray:
    r = np.maximum(p - q, 0.0)
    total = r.sum(axis=-1, keepdims=True)
    if (total == 0).any():
        row = tuple(int(i) for i in np.argwhere(total[..., 0] == 0)[0])
        raise ValueError(
            f"{f}: the residual max(p - q, 0) is 0 in row {row} (p = q there): "
            "no rejection can happen, so there is nothing to resample"
        )
    return r / total


def acceptance_rate(p: Any, q: Any) -> np.ndarray:
    """``Σ_v min(p_v, q_v) = 1 − TV(p, q)``: the probability that one draft token is accepted.

    p, q: (..., V) probability rows (leading axes broadcast) -> (...).

    Examples
    --------
    >>> round(float(acceptance_rate([0.5, 0.3, 0.2], [0.2, 0.5, 0.3])), 12)
    0.7
    """
    p, q = _pair(p, q, "acceptance_rate")
    return np.minimum(p, q).sum(axis=-1)


def residual_distribution(p: Any, q: Any) -> np.ndarray:
    """The distribution sampled after a rejection: ``max(p − q, 0) / Σ max(p − q, 0)``.

    p, q: (..., V) -> (..., V). ``ValueError`` where ``p = q`` (the sum is 0, and a rejection
    cannot happen). Equals the ``p_prime`` of HF's ``_speculative_sampling``.

    Examples
    --------
    >>> np.round(residual_distribution([0.4, 0.35, 0.25], [0.6, 0.2, 0.2]), 12)
    array([0.  , 0.75, 0.25])
    """
    f = "residual_distribution"
    p, q = _pair(p, q, f)
    return _residual(p, q, f)


def speculative_output_distribution(p: Any, q: Any) -> np.ndarray:
    """The exact law of the first emitted token: ``min(p, q) + (1 − α)·residual``, α the acceptance.

    p, q: (..., V) -> (..., V). Equals ``p`` (to rounding) for every ``q``: speculative sampling
    is exact; returns ``min(p, q) = p`` in rows where ``p = q``. Resampling from ``p`` instead of
    the residual would give ``min(p, q) + (1 − α)·p``, which is not ``p``.

    Examples
    --------
    >>> p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.5, 0.3])
    >>> np.round(speculative_output_distribution(p, q), 12)
    array([0.5, 0.3, 0.2])
    """
    p, q = _pair(p, q, "speculative_output_distribution")
    r = np.maximum(p - q, 0.0)
    total = r.sum(axis=-1, keepdims=True)
    reject = 1.0 - np.minimum(p, q).sum(axis=-1, keepdims=True)
    share = np.divide(r, total, out=np.zeros_like(r), where=total > 0)
    return np.minimum(p, q) + reject * share


def speculative_step(
    p: Any, q: Any, draft: Any, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """One verification step of speculative sampling; returns ``(tokens, n_accepted)``.

    p: (γ + 1, V) target distributions at the γ drafted positions and the bonus position;
    q: (γ, V) the draft's; draft: (γ,) int, the drafted ids (``q[i, draft[i]] > 0``). Draws
    ``u = rng.random(γ)`` and accepts draft ``i`` while ``u_i ≤ p_i(x_i)/q_i(x_i)``; then one
    token with ``sample`` (inverse CDF on one more ``rng.random()``) from the residual
    ``max(p_n − q_n, 0)`` at the first rejection ``n``, or from ``p[γ]`` if all were accepted.
    tokens: int64, the accepted drafts plus that token (1 to γ + 1 ids). Same ``n_accepted``
    and same next-token distribution as HF's ``_speculative_sampling`` given the same uniforms.

    Examples
    --------
    >>> p = np.array([[0.5, 0.3, 0.2], [0.5, 0.3, 0.2]])  # target at the draft and bonus slots
    >>> q = np.array([[0.2, 0.5, 0.3]])  # draft model, gamma = 1
    >>> tokens, n = speculative_step(p, q, [0], np.random.default_rng(0))
    >>> n, len(tokens)  # p(0)/q(0) = 2.5 >= u: accepted, plus a bonus token from p[1]
    (1, 2)
    """
    f = "speculative_step"
    p = _validate.prob_rows(p, "p", f, ndim=2)
    q = _validate.prob_rows(q, "q", f, ndim=2)
    g1, V = p.shape
    if g1 < 2:
        raise ValueError(f"{f}: p must be (gamma + 1, V) with gamma >= 1; got shape {p.shape}")
    if q.shape != (g1 - 1, V):
        raise ValueError(
            f"{f}: q must be (gamma, V) = {(g1 - 1, V)} for p of shape {p.shape}; got {q.shape}"
        )
    d = _validate.int_ids(draft, V, f, "draft")
    if d.shape != (g1 - 1,):
        raise ValueError(f"{f}: draft must be (gamma,) = ({g1 - 1},); got shape {d.shape}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{f}: rng must be a numpy.random.Generator (np.random.default_rng(seed)); "
            f"got {type(rng).__name__}"
        )
    rows = np.arange(g1 - 1)
    qx = q[rows, d]
    if (qx <= 0).any():
        i = int(np.argmax(qx <= 0))
        raise ValueError(
            f"{f}: draft[{i}] = {d[i]} has draft probability q[{i}, {d[i]}] = 0; drafts come from q"
        )
    u = rng.random(g1 - 1)
    accepted = u <= p[rows, d] / qx
    n = int(np.argmin(accepted)) if not accepted.all() else g1 - 1
    nxt = _residual(p[n], q[n], f) if n < g1 - 1 else p[n]
    with np.errstate(divide="ignore"):
        t = int(sample(np.log(nxt), rng))
    return np.append(d[:n], t), n


def _rate(accept_rate: Any, f: str) -> float:
    a = _validate.finite_float(accept_rate, "accept_rate", f)
    if not 0.0 <= a <= 1.0:
        raise ValueError(f"{f}: accept_rate must lie in [0, 1]; got {accept_rate!r}")
    return a


def expected_tokens_per_step(accept_rate: float, gamma: int) -> float:
    """Expected tokens per target pass, ``(1 − a^{γ+1})/(1 − a)`` (``γ + 1`` at ``a = 1``).

    Assumes each of the γ drafts is accepted independently with probability ``a``
    (Leviathan et al. 2023's α); then ``n`` accepted drafts plus one token is emitted, with
    ``P(n) = a^n (1 − a)`` for ``n < γ`` and ``a^γ`` for ``n = γ``. Computed as
    ``−expm1((γ+1)·log1p(−(1 − a)))/(1 − a)``, accurate near ``a = 1``. ``γ ≥ 1`` an integer.

    Examples
    --------
    >>> round(expected_tokens_per_step(0.8, 4), 4)
    3.3616
    """
    f = "expected_tokens_per_step"
    a = _rate(accept_rate, f)
    g = _validate.positive_int(gamma, "gamma", f)
    if a == 1.0:
        return float(g + 1)
    with np.errstate(divide="ignore"):
        return float(-np.expm1((g + 1) * np.log1p(-(1.0 - a))) / (1.0 - a))


def speculative_speedup(accept_rate: float, gamma: int, cost_ratio: float) -> float:
    """Expected walltime factor ``expected_tokens_per_step(a, γ) / (γ·c + 1)``.

    ``c = cost_ratio ≥ 0``: the draft's cost per token over the target's (Leviathan et al.
    2023). Assumes one target pass over γ + 1 tokens costs one target step (memory-bound
    decoding) and i.i.d. acceptances; a "2–3×" claim means nothing without ``a`` and ``c``.

    Examples
    --------
    >>> [round(speculative_speedup(0.8, g, 0.1), 4) for g in (5, 6, 7)]  # best gamma: 6
    [2.4595, 2.4696, 2.4477]
    """
    f = "speculative_speedup"
    e = expected_tokens_per_step(_rate(accept_rate, f), _validate.positive_int(gamma, "gamma", f))
    c = _validate.finite_float(cost_ratio, "cost_ratio", f)
    if c < 0:
        raise ValueError(f"{f}: cost_ratio must be >= 0; got {cost_ratio!r}")
    return e / (gamma * c + 1.0)
