"""What reads the context: repetition penalty, n-gram ban, classifier-free guidance, and ``warp``.

``context_ids`` is ``(..., L)`` with the leading shape of ``logits`` (one context per
row, as Hugging Face's ``input_ids``), or 1-D ``(L,)``, shared by every row; the prompt
counts as context. ``warp`` chains the processors and the filters of
``llmmath.sampling`` in the order ``generate`` builds them.

References
----------
- Keskar et al. 2019 (CTRL, arXiv:1909.05858) introduced the repetition penalty by
  dividing every penalized logit; transformers multiplies the negative ones instead
  (issue #2302, PR #2303), and ``repetition_penalty`` follows transformers.
- Sanchez et al. 2024 (classifier-free guidance for language models, ICML 2024,
  arXiv:2306.17806).
- transformers 5.x ``generation/logits_process.py``: ``RepetitionPenaltyLogitsProcessor``,
  ``NoRepeatNGramLogitsProcessor``, ``UnbatchedClassifierFreeGuidanceLogitsProcessor``;
  ``generation/utils.py``'s ``_get_logits_processor`` for the order in ``warp``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath import _validate
from llmmath.sampling import (
    _epsilon,
    _min_p,
    _top_k,
    _top_p,
    _typical,
    _unit,
)
from llmmath.softmax import log_softmax

__all__ = ["repetition_penalty", "no_repeat_ngram_mask", "cfg_logprobs", "warp"]


def _context(context_ids: Any, lead: tuple | None, V: int, func: str) -> np.ndarray:
    """Int ids ``(L,)`` or ``(*lead, L)`` in ``[0, V)``; ``lead=None`` accepts any ``(..., L)``."""
    ids = _validate.int_ids(context_ids, V, func, name="context_ids")
    if ids.ndim == 0 or (lead is not None and ids.ndim > 1 and ids.shape[:-1] != lead):
        want = "(L,) or (..., L)" if lead is None else f"(L,) or {(*lead, 'L')}"
        raise ValueError(
            f"{func}: context_ids must be {want} (one context per row of logits, or one "
            f"shared 1-D context); got shape {ids.shape}"
        )
    return ids


def _seen(ids: np.ndarray, V: int) -> np.ndarray:
    """Bool ``(..., V)``: ``True`` at every id that occurs in the row's context."""
    seen = np.zeros((*ids.shape[:-1], V), dtype=bool)
    np.put_along_axis(seen, ids, True, axis=-1)
    return seen


def _penalize(z: np.ndarray, ids: np.ndarray, penalty: float) -> np.ndarray:
    return np.where(_seen(ids, z.shape[-1]), np.where(z < 0, z * penalty, z / penalty), z)


def _banned(ids: np.ndarray, n: int, V: int) -> np.ndarray:
    """Bool ``(..., V)``: the ids that would complete an ``n``-gram already in the context."""
    L = ids.shape[-1]
    if L < n:  # no complete n-gram yet
        return np.zeros((*ids.shape[:-1], V), dtype=bool)
    windows = np.lib.stride_tricks.sliding_window_view(ids, n, axis=-1)  # (..., L-n+1, n)
    prefix = ids[..., L - n + 1 :]  # the last n-1 ids, which the next id would extend
    match = (windows[..., :-1] == prefix[..., None, :]).all(axis=-1)
    # an unmatched window points to a spare column V, dropped at the end (as HF)
    return _seen(np.where(match, windows[..., -1], V), V + 1)[..., :V]


def repetition_penalty(logits: Any, context_ids: Any, penalty: float) -> np.ndarray:
    """Penalize every id seen in the context, HF's rule: ``(..., V)`` -> ``(..., V)``.

    For each distinct id in the row's ``context_ids`` (``(..., L)`` or shared ``(L,)``;
    however often it occurs, once): ``z / θ`` if ``z > 0``, else ``z · θ``, with
    ``θ = penalty > 0`` (``θ > 1`` discourages repeats). This lowers the penalized
    logits, yet a penalized token's probability can rise when another penalized token
    loses more; and it is not shift-invariant (``z + c`` can take the other branch).
    CTRL divides every penalized logit, which raises a negative one. Equals
    ``RepetitionPenaltyLogitsProcessor(θ)`` with ``input_ids = context_ids``.

    Examples
    --------
    >>> repetition_penalty([2.0, -1.0, 0.5], [1, 0, 1, 1], 1.5)
    array([ 1.33333333, -1.5       ,  0.5       ])
    """
    f = "repetition_penalty"
    z = _validate.logit_rows(logits, "logits", f)
    ids = _context(context_ids, z.shape[:-1], z.shape[-1], f)
    return _penalize(z, ids, _validate.positive_float(penalty, "penalty", f))


def no_repeat_ngram_mask(context_ids: Any, n: int, vocab_size: int) -> np.ndarray:
    """Ids that would repeat an ``n``-gram of the context: bool ``(..., V)``.

    context_ids: (..., L) ints in ``[0, V)``, one context per row (or ``(L,)`` -> ``(V,)``).
    ``True`` at every id ``v`` such that the last ``n − 1`` ids followed by ``v`` already
    occur as an ``n``-gram in the row (``n = 1``: every id seen); nothing is banned while
    ``L < n``. Set those logits to ``-inf`` to apply the ban; equals the ``-inf`` set of
    ``NoRepeatNGramLogitsProcessor(n)``.

    Examples
    --------
    >>> no_repeat_ngram_mask([1, 2, 1], 2, 4)  # after 1, the bigram (1, 2) was seen
    array([False, False,  True, False])
    """
    f = "no_repeat_ngram_mask"
    n = _validate.positive_int(n, "n", f)
    V = _validate.positive_int(vocab_size, "vocab_size", f)
    return _banned(_context(context_ids, None, V, f), n, V)


def cfg_logprobs(cond_logits: Any, uncond_logits: Any, guidance_scale: float) -> np.ndarray:
    """Classifier-free guidance: ``(..., V)`` -> ``(..., V)``, unnormalized log-probabilities.

    ``log_softmax(u) + γ·(log_softmax(c) − log_softmax(u))`` with ``c = cond_logits``,
    ``u = uncond_logits`` (broadcast to ``c``'s shape) and ``γ = guidance_scale``
    (Sanchez et al. 2024; ``γ = 1`` returns ``log_softmax(c)``, no guidance; ``γ > 1``
    pushes away from the unconditional branch; any finite ``γ``). For ``γ ≠ 1`` a token
    that is ``-inf`` in either branch is ``-inf`` (HF gives NaN where ``u`` is ``-inf``);
    elsewhere equals ``UnbatchedClassifierFreeGuidanceLogitsProcessor(γ, model)``.

    Examples
    --------
    >>> from llmmath.softmax import softmax
    >>> c, u = np.log([0.5, 0.3, 0.2]), np.log([0.6, 0.2, 0.2])
    >>> softmax(cfg_logprobs(c, u, 1.5)).round(4)
    array([0.4458, 0.3589, 0.1953])
    """
    f = "cfg_logprobs"
    c = _validate.logit_rows(cond_logits, "cond_logits", f)
    u = _validate.logit_rows(uncond_logits, "uncond_logits", f)
    _validate.same_last_dim(c, u, "cond_logits and uncond_logits", f)
    try:
        ok = np.broadcast_shapes(c.shape, u.shape) == c.shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"{f}: uncond_logits must broadcast to the shape {c.shape} of cond_logits; "
            f"got shape {u.shape}"
        )
    gamma = _validate.finite_float(guidance_scale, "guidance_scale", f)
    lc = log_softmax(c)
    if gamma == 1:
        return lc
    lu = log_softmax(u)
    with np.errstate(invalid="ignore"):  # inf - inf and 0·inf, overwritten below
        out = gamma * (lc - lu) + lu  # HF's expression
    return np.where(np.isneginf(lc) | np.isneginf(lu), -np.inf, out)


def warp(
    logits: Any,
    *,
    context_ids: Any = None,
    repetition_penalty: float = 1.0,
    no_repeat_ngram_size: int = 0,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float = 1.0,
    min_p: float | None = None,
    typical_p: float = 1.0,
    epsilon_cutoff: float = 0.0,
    min_keep: int = 1,
) -> np.ndarray:
    """HF ``generate``'s processors and warpers, in its order: ``(..., V)`` -> ``(..., V)``.

    Repetition penalty → no-repeat n-gram ban → temperature → top-k → top-p → min-p →
    typical → ε, each only when active, as ``generate`` skips them: ``repetition_penalty
    ≠ 1``, ``no_repeat_ngram_size > 0`` (both need ``context_ids``, ``(..., L)`` or
    ``(L,)``), ``temperature ≠ 1``, ``top_k`` not None or 0, ``top_p < 1``, ``min_p`` not
    None, ``typical_p < 1``, ``0 < epsilon_cutoff < 1``; ``min_keep`` goes to every filter.
    Keyword names are ``generate``'s. Equals HF's ``LogitsProcessorList`` of the same
    classes in that order. Not included: classifier-free guidance and sequence bias
    (``generate`` applies them first) and HF's top-h and η warpers. Unlike ``generate``
    with ``do_sample=True``, no ``top_k=50`` is filled in: pass it to reproduce that.

    Examples
    --------
    >>> z = [2.0, 1.0, 0.5, 0.0, -1.0]
    >>> int(np.isfinite(warp(z, temperature=2.0, top_p=0.85)).sum())  # temperature first
    4
    >>> z = np.log([0.4, 0.3, 0.2, 0.1])
    >>> int(np.isfinite(warp(z, top_k=3, top_p=0.75)).sum())  # top-k renormalizes first
    2
    """
    f = "warp"
    z = _validate.logit_rows(logits, "logits", f)
    penalty = _validate.positive_float(repetition_penalty, "repetition_penalty", f)
    n = _validate.positive_int(no_repeat_ngram_size, "no_repeat_ngram_size", f, minimum=0)
    T = _validate.positive_float(temperature, "temperature", f)
    k = 0 if top_k is None else _validate.positive_int(top_k, "top_k", f, minimum=0)
    top_p = _unit(top_p, "top_p", f)
    min_p = None if min_p is None else _unit(min_p, "min_p", f)
    typical_p = _unit(typical_p, "typical_p", f, open_lo=True)
    eps = _unit(epsilon_cutoff, "epsilon_cutoff", f, open_hi=True)
    keep = _validate.positive_int(min_keep, "min_keep", f)
    ids = None if context_ids is None else _context(context_ids, z.shape[:-1], z.shape[-1], f)
    if penalty != 1 or n > 0:
        if ids is None:
            raise ValueError(
                f"{f}: context_ids is needed for repetition_penalty != 1 or "
                f"no_repeat_ngram_size > 0; got None (repetition_penalty={penalty}, "
                f"no_repeat_ngram_size={n})"
            )
        if penalty != 1:
            z = _penalize(z, ids, penalty)
        if n > 0:
            z = np.where(_banned(ids, n, z.shape[-1]), -np.inf, z)
            if np.isneginf(z.max(axis=-1)).any():
                raise ValueError(
                    f"{f}: no_repeat_ngram_size={n} bans every token left in a row; "
                    f"got a row of only -inf after the ban"
                )
    if T != 1:
        z = z / T
    if k:
        z = _top_k(z, k, keep)
    if top_p < 1:
        z = _top_p(z, top_p, keep)
    if min_p is not None:
        z = _min_p(z, min_p, keep)
    if typical_p < 1:
        z = _typical(z, typical_p, keep)
    if eps > 0:
        z = _epsilon(z, eps, keep)
    return z
