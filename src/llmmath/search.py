"""Deterministic decoding over a step function: greedy and beam search, length penalties, CD scores.

``step_logprobs(prefix) -> (V,)`` is the model: given a 1-D int64 array (prompt plus tokens so
far) it returns normalized next-token log-probabilities (``Σ exp = 1`` within 1e-9; ``-inf``
for an impossible token). With ``no_repeat_ngram_size = n > 0`` the ids ``no_repeat_ngram_mask``
bans for a prefix become ``-inf`` there, without renormalizing (as HF's beam search applies its
processors after ``log_softmax``): scores stay sums of the model's own log-probabilities.

References: Hugging Face transformers 5.24 ``GenerationMixin._beam_search`` (transcribed for one
prompt and one EOS id) and greedy ``generate``; Wu et al. 2016 (arXiv:1609.08144), GNMT's length
penalty; Li et al. 2023 (arXiv:2210.15097), contrastive decoding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from llmmath import _validate
from llmmath.processors import no_repeat_ngram_mask


def _ints(x: Any, name: str, f: str) -> np.ndarray:
    """An int64 array of non-negative integers (no upper bound known yet)."""
    arr = _validate._asarray(x, name, f)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{f}: {name} must be integers; got dtype {arr.dtype}")
    if arr.size and arr.min() < 0:
        raise IndexError(
            f"{f}: {name} must be >= 0; got {arr.min()} (negative ids are not wrapped)"
        )
    return arr.astype(np.int64)


def _setup(prompt: Any, eos_id: Any, ngram: Any, f: str) -> tuple[np.ndarray, int | None, int]:
    prompt = _ints(prompt, "prompt", f)
    if prompt.ndim != 1 or prompt.size == 0:
        raise ValueError(f"{f}: prompt must be a non-empty 1-D id array; got {prompt.shape}")
    if eos_id is not None:
        if isinstance(eos_id, bool) or not isinstance(eos_id, (int, np.integer)):
            raise TypeError(f"{f}: eos_id must be an integer id; got {eos_id!r}")
        if eos_id < 0:
            raise IndexError(
                f"{f}: eos_id must be >= 0; got {eos_id} (negative ids are not wrapped)"
            )
        eos_id = int(eos_id)
    return prompt, eos_id, _validate.positive_int(ngram, "no_repeat_ngram_size", f, minimum=0)


def _step(step_logprobs: Callable, prefixes: np.ndarray, V: int | None, f: str) -> np.ndarray:
    """Call the model on each prefix (rows of ``prefixes``); check and stack: (rows, V)."""
    rows = []
    for prefix in prefixes:
        where = f"step_logprobs at prefix length {prefix.size}"
        lp = _validate.float_array(step_logprobs(prefix.copy()), where, f, neg_inf=True)
        if lp.ndim != 1 or (V is not None and lp.shape[0] != V):
            raise ValueError(f"{f}: {where} must return shape ({V or 'V'},); got {lp.shape}")
        total = np.exp(lp).sum()
        if not abs(total - 1.0) <= 1e-9:
            raise ValueError(
                f"{f}: {where} must return normalized log-probabilities (exp sums to 1 "
                f"within 1e-9); got exp sum {total!r}"
            )
        rows.append(lp)
        V = lp.shape[0]
    return np.stack(rows)


def _after_first_step(prompt: np.ndarray, eos_id: int | None, V: int, f: str) -> None:
    _validate.int_ids(prompt, V, f, "prompt")
    if eos_id is not None and eos_id >= V:
        raise IndexError(f"{f}: eos_id must lie in [0, {V}); got {eos_id}")


def _ban(lp: np.ndarray, prefixes: np.ndarray, n: int) -> np.ndarray:
    if n == 0:
        return lp
    return np.where(no_repeat_ngram_mask(prefixes, n, lp.shape[-1]), -np.inf, lp)


def greedy_decode(
    step_logprobs: Callable[[np.ndarray], Any],
    prompt: Any,
    max_new_tokens: int,
    *,
    eos_id: int | None = None,
    no_repeat_ngram_size: int = 0,
) -> tuple[np.ndarray, float]:
    """Greedy decoding: append the most probable next token until ``eos_id`` or the budget.

    prompt: (P,) ids; returns ``(ids, logprob)``: ids (P + n,) int64 with n ≤ max_new_tokens
    (ending in ``eos_id`` if it was emitted) and the sum of the chosen tokens' log-probabilities.
    Ties go to the lowest id (as ``torch.argmax``). A step at which the n-gram ban leaves no id
    raises ``ValueError``. Equals HF ``generate(do_sample=False, num_beams=1, …)``.

    Examples
    --------
    >>> T = np.array([[0.0, 0.7, 0.2, 0.1], [0.2, 0.05, 0.6, 0.15],
    ...               [0.2, 0.6, 0.05, 0.15], [0.5, 0.2, 0.2, 0.1]])  # 0 = BOS/EOS, a, b, c
    >>> def chain(prefix):
    ...     with np.errstate(divide="ignore"):
    ...         return np.log(T[prefix[-1]])
    >>> greedy_decode(chain, [0], 6, eos_id=0)[0]  # a b a b ...: never stops
    array([0, 1, 2, 1, 2, 1, 2])
    >>> ids, lp = greedy_decode(chain, [0], 12, eos_id=0, no_repeat_ngram_size=2)
    >>> ids, round(lp, 4)  # a b a EOS: ln(0.7 · 0.6 · 0.6 · 0.2)
    (array([0, 1, 2, 1, 0]), -2.9878)
    """
    f = "greedy_decode"
    seq, eos_id, n = _setup(prompt, eos_id, no_repeat_ngram_size, f)
    steps = _validate.positive_int(max_new_tokens, "max_new_tokens", f)
    V, total = None, 0.0
    for step in range(steps):
        lp = _step(step_logprobs, seq[None], V, f)
        if V is None:
            V = lp.shape[-1]
            _after_first_step(seq, eos_id, V, f)
        lp = _ban(lp, seq[None], n)[0]
        if np.isneginf(lp).all():
            raise ValueError(
                f"{f}: the n-gram ban leaves no id at step {step} (prefix {seq.tolist()})"
            )
        t = int(np.argmax(lp))
        total += lp[t]
        seq = np.append(seq, t)
        if t == eos_id:
            break
    return seq, float(total)


def beam_search(
    step_logprobs: Callable[[np.ndarray], Any],
    prompt: Any,
    num_beams: int,
    max_new_tokens: int,
    *,
    eos_id: int,
    length_penalty: float = 1.0,
    early_stopping: bool | str = False,
    no_repeat_ngram_size: int = 0,
) -> list[tuple[np.ndarray, float]]:
    """Beam search as HF 5.24's ``_beam_search`` does it; returns ``[(ids, score), …]``, best first.

    Each step ranks the top ``2·num_beams`` of ``score + log p`` over all running beams and
    tokens (ties: lowest beam · V + token; ``-inf`` candidates dropped). A candidate ending
    in ``eos_id`` or reaching ``max_new_tokens`` is finished if it ranks in the top ``num_beams``,
    scored ``sum_logprob / L**length_penalty`` (L = generated tokens, EOS included); the next
    running beams are the best ``num_beams`` unfinished candidates; the finished pool keeps the
    best ``num_beams``. Stops: ``early_stopping=True`` once ``num_beams`` are finished; ``False``
    once they are and the best running score / (current length)**α cannot beat the worst
    finished; ``"never"`` the same with ``max_new_tokens`` as the length when α > 0. Textbook beam
    search is ``length_penalty=0.0, early_stopping="never"``. ids: int64 (prompt included).
    HF starts from one beam plus placeholders scored −1e9 and keeps ``-inf`` candidates; here
    neither is ever a candidate: nothing changes when each step has ``2·num_beams`` finite
    candidates; otherwise HF's placeholder hypotheses (scores near −1e9) are not returned, and
    with ``early_stopping=True`` they do not count toward the ``num_beams`` finished.

    Examples
    --------
    >>> def tree(prefix):  # 0 = EOS, 1 = A, 2 = B, 3 = BOS; EOS after two tokens
    ...     g = prefix[1:].tolist()
    ...     p = ([0, .6, .4, 0] if g == [] else [0, .55, .45, 0] if g == [1]
    ...          else [0, .1, .9, 0] if g == [2] else [1, 0, 0, 0])
    ...     with np.errstate(divide="ignore"):
    ...         return np.log(p)
    >>> out = beam_search(tree, [3], 2, 5, eos_id=0, length_penalty=0.0, early_stopping="never")
    >>> [(ids.tolist(), round(s, 6)) for ids, s in out]  # B B (ln 0.36), then A A (ln 0.33)
    [([3, 2, 2, 0], -1.021651), ([3, 1, 1, 0], -1.108663)]
    """
    f = "beam_search"
    prompt, eos, n = _setup(prompt, eos_id, no_repeat_ngram_size, f)
    if eos is None:
        raise TypeError(f"{f}: eos_id must be an integer; got None")
    k = _validate.positive_int(num_beams, "num_beams", f)
    steps = _validate.positive_int(max_new_tokens, "max_new_tokens", f)
    alpha = _validate.finite_float(length_penalty, "length_penalty", f)
    if not (early_stopping is True or early_stopping is False or early_stopping == "never"):
        raise ValueError(
            f"{f}: early_stopping must be True, False or 'never'; got {early_stopping!r}"
        )
    seqs, scores = prompt[None], np.zeros(1)  # the running beams, best first
    fin_ids, fin_scores = np.zeros((0, prompt.size), np.int64), np.zeros(0)  # the finished pool
    V = None
    for step in range(steps):
        lp = _step(step_logprobs, seqs, V, f)
        if V is None:
            V = lp.shape[-1]
            _after_first_step(prompt, eos, V, f)
        acc = (_ban(lp, seqs, n) + scores[:, None]).ravel()
        top = np.argsort(-acc, kind="stable")[: 2 * k]
        top = top[np.isfinite(acc[top])]  # a banned (-inf) candidate is no hypothesis
        cand_scores, tok = acc[top], top % V
        cand = np.concatenate([seqs[top // V], tok[:, None]], axis=1)
        hits = (tok == eos) | (step + 1 == steps)
        # the top-k candidates that hit join the pool (HF's guards against adding to a full
        # or settled pool never fire for one prompt: the loop stops at once then)
        new = np.flatnonzero(hits[:k])
        old = np.pad(fin_ids, ((0, 0), (0, 1)), constant_values=-1)  # -1 pads shorter ones
        fin_ids = np.concatenate([old, cand[new]])
        fin_scores = np.concatenate([fin_scores, cand_scores[new] / (step + 1) ** alpha])
        best = np.argsort(-fin_scores, kind="stable")[:k]
        fin_ids, fin_scores = fin_ids[best], fin_scores[best]
        seqs, scores = cand[~hits][:k], cand_scores[~hits][:k]  # the best k unfinished
        if scores.size == 0 or (fin_scores.size == k and early_stopping is True):
            break
        length = steps if early_stopping == "never" and alpha > 0 else step + 1
        if fin_scores.size == k and scores[0] / length**alpha <= fin_scores.min():
            break  # the best running beam cannot beat the worst finished one
    if fin_scores.size == 0:
        raise ValueError(f"{f}: the n-gram ban leaves no continuation of any beam")
    return [(ids[ids >= 0], float(s)) for ids, s in zip(fin_ids, fin_scores, strict=True)]


def _lengths(length: Any, f: str) -> np.ndarray:
    arr = _validate._asarray(length, "length", f)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{f}: length must be integers (token counts); got dtype {arr.dtype}")
    if arr.size == 0 or arr.min() < 1:
        raise ValueError(f"{f}: length must be >= 1; got {arr.min() if arr.size else arr}")
    return arr.astype(np.float64)


def _out(x: np.ndarray) -> float | np.ndarray:
    return float(x) if x.ndim == 0 else x


def length_penalized_score(
    sum_logprob: Any, length: Any, length_penalty: float = 1.0
) -> float | np.ndarray:
    """HF's finished-hypothesis score ``sum_logprob / length**length_penalty`` (broadcasts).

    A positive ``length_penalty`` favors longer outputs, since log-probabilities are negative;
    ``length`` (generated tokens, EOS included) is an integer ≥ 1. A Python float for scalars.

    Examples
    --------
    >>> [length_penalized_score(s, n, 1.0) for s, n in ((-1.2, 2), (-2.5, 5))]  # α = 1: long wins
    [-0.6, -0.5]
    """
    f = "length_penalized_score"
    s = _validate.float_array(sum_logprob, "sum_logprob", f, neg_inf=True)
    n = _lengths(length, f)
    try:
        np.broadcast_shapes(s.shape, n.shape)
    except ValueError:
        raise ValueError(
            f"{f}: sum_logprob and length must broadcast; got shapes {s.shape} and {n.shape}"
        ) from None
    return _out(s / n ** _validate.finite_float(length_penalty, "length_penalty", f))


def gnmt_length_penalty(length: Any, length_penalty: float) -> float | np.ndarray:
    """GNMT's divisor ``((5 + length) / 6)**length_penalty`` (Wu et al. 2016), not HF's ``L**α``.

    length: int or int array, each ≥ 1; a Python float for a scalar.

    Examples
    --------
    >>> [round(-1.2 / gnmt_length_penalty(2, 0.6), 4), round(-2.5 / gnmt_length_penalty(5, 0.6), 4)]
    [-1.094, -1.8401]
    """
    f = "gnmt_length_penalty"
    n = _lengths(length, f)
    return _out(((5.0 + n) / 6.0) ** _validate.finite_float(length_penalty, "length_penalty", f))


def contrastive_scores(
    expert_logprobs: Any, amateur_logprobs: Any, *, alpha: float = 0.1
) -> np.ndarray:
    """Contrastive decoding scores ``log p_E − log p_A`` on ``V_head``, ``-inf`` elsewhere.

    expert_logprobs, amateur_logprobs: (..., V) (leading axes broadcast). ``V_head = {v : p_E(v)
    ≥ alpha · max_u p_E(u)}`` (Li et al. 2023), tested as ``log p_E(v) ≥ log alpha + max log p_E``;
    a token with ``p_E = 0`` is never in it (so ``alpha = 0`` keeps every token the expert allows).
    ``0 ≤ alpha ≤ 1``. An amateur ``-inf`` inside ``V_head`` raises ``ValueError`` (its score
    would be ``+inf``). Pass the amateur's tempered log-probabilities for a temperature.

    Examples
    --------
    >>> pE, pA = np.log([0.50, 0.30, 0.19, 0.01]), np.log([0.60, 0.10, 0.299, 0.001])
    >>> s = contrastive_scores(pE, pA)  # token 3 (p_E = 0.01 < 0.05) leaves V_head
    >>> np.round(s, 4), int(np.argmax(s))
    (array([-0.1823,  1.0986, -0.4534,    -inf]), 1)
    """
    f = "contrastive_scores"
    e = _validate.float_array(expert_logprobs, "expert_logprobs", f, min_ndim=1, neg_inf=True)
    a = _validate.float_array(amateur_logprobs, "amateur_logprobs", f, min_ndim=1, neg_inf=True)
    _validate.same_last_dim(e, a, "expert_logprobs and amateur_logprobs", f)
    try:
        e, a = np.broadcast_arrays(e, a)
    except ValueError:
        raise ValueError(
            f"{f}: expert_logprobs and amateur_logprobs must broadcast; got shapes {e.shape} and {a.shape}"
        ) from None
    al = _validate.finite_float(alpha, "alpha", f)
    if not 0.0 <= al <= 1.0:
        raise ValueError(f"{f}: alpha must lie in [0, 1]; got {alpha!r}")
    top = e.max(axis=-1, keepdims=True)
    if np.isneginf(top).any():
        raise ValueError(f"{f}: expert_logprobs has a row with every entry -inf")
    with np.errstate(divide="ignore"):
        head = (e >= top + np.log(al)) & np.isfinite(e)
    if (head & np.isneginf(a)).any():
        v = tuple(int(i) for i in np.argwhere(head & np.isneginf(a))[0])
        raise ValueError(
            f"{f}: amateur_logprobs is -inf inside V_head at index {v}; its score would be +inf"
        )
    return np.where(head, e - np.where(head, a, 0.0), -np.inf)
