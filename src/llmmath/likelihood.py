"""Sequence log-probabilities and the training losses of a language model.

Logits are ``(..., V)`` (``(..., T, V)`` for a sequence), ``-inf`` marking a removed
token; a slice with no finite logit raises. Position ``t`` predicts the token at
``t + 1``. ``cross_entropy`` and ``cross_entropy_grad`` moved here from
``llmmath.training``, which still exports them with unchanged defaults.

References
----------
- ``cross_entropy`` matches ``torch.nn.functional.cross_entropy`` (label smoothing as
  Szegedy et al., arXiv:1512.00567: ε over all ``V`` classes), except that a
  ``"mean"`` over zero targets raises instead of returning NaN.
- ``shift_labels`` and ``causal_lm_loss`` follow ``ForCausalLMLoss`` in transformers'
  ``loss/loss_utils.py`` (``num_items`` is its ``num_items_in_batch``).
- ``z_loss``: Chowdhery et al., "PaLM", arXiv:2204.02311 (coefficient 1e-4).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath import _validate
from llmmath.softmax import log_softmax, logsumexp, softmax


def _ignore_index(value: Any, func: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{func}: ignore_index must be an int; got {value!r}")
    return int(value)


def _labels(
    labels: Any, V: int | None, ignore: int | None, func: str, name: str
) -> tuple[np.ndarray, np.ndarray]:
    """Ids in ``[0, V)`` (``V = None``: ``≥ 0``) or ``ignore``: (ids with 0 at ignored, counted)."""
    if ignore is None and V is not None:
        y = _validate.int_ids(labels, V, func, name=name)
        return y, np.ones(y.shape, dtype=bool)
    arr = _validate._asarray(labels, name, func)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{func}: {name} must be integers; got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    valid = arr != ignore
    bad = valid & ((arr < 0) | (arr >= (np.inf if V is None else V)))
    if bad.any():
        value = int(arr[tuple(np.argwhere(bad)[0])])
        where = ">= 0" if V is None else f"in [0, {V})"
        raise IndexError(
            f"{func}: {name} must lie {where} or equal ignore_index={ignore}; got {value}"
            + (" (negative ids are not wrapped)" if value < 0 else "")
        )
    return np.where(valid, arr, 0), valid


def _leading(y: np.ndarray, z: np.ndarray, name: str, func: str) -> None:
    if y.shape != z.shape[:-1]:
        raise ValueError(
            f"{func}: {name} must have the leading shape {z.shape[:-1]} of logits "
            f"{z.shape}; got shape {y.shape}"
        )


def _smoothing(eps: Any, func: str) -> float:
    e = _validate.finite_float(eps, "label_smoothing", func)
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"{func}: label_smoothing must lie in [0, 1]; got {eps!r}")
    return e


def _mask(mask: Any, shape: tuple, func: str) -> np.ndarray:
    """A 0/1 (or boolean) array of exactly ``shape``, returned as booleans."""
    m = _validate._asarray(mask, "mask", func)
    if m.dtype.kind not in "biuf":
        raise TypeError(f"{func}: mask must be numeric 0/1; got dtype {m.dtype}")
    if m.shape != shape:
        raise ValueError(f"{func}: mask must have shape {shape}; got {m.shape}")
    off = (m != 0) & (m != 1)
    if off.any():
        raise ValueError(f"{func}: mask must hold only 0 and 1; got {m[off].flat[0]!r}")
    return m == 1


def _per_token(z: np.ndarray, y: np.ndarray, valid: np.ndarray, eps: float) -> np.ndarray:
    """``(1 − ε)(−log p_y) + ε·mean_v(−log p_v)`` per position, 0 where not ``valid``."""
    lp = log_softmax(z)
    per = np.zeros(y.shape)
    if eps < 1.0:  # skipped at ε = 1 so that 0 · inf (a -inf target logit) never appears
        per = per - (1.0 - eps) * np.take_along_axis(lp, y[..., None], axis=-1)[..., 0]
    if eps > 0.0:  # +inf at a position with a -inf logit, as torch
        per = per - eps * lp.mean(axis=-1)
    return np.where(valid, per, 0.0)


def _count(valid: np.ndarray, func: str) -> int:
    if not valid.any():
        raise ValueError(
            f"{func}: every target equals ignore_index, so the mean is over zero targets "
            "(torch returns NaN); use reduction='sum' or check the labels"
        )
    return int(valid.sum())


def cross_entropy(
    logits: Any,
    targets: Any,
    *,
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    reduction: str = "mean",
) -> Any:
    """Cross-entropy loss ``−log softmax(logits)[targets]``, as ``torch.nn.functional.cross_entropy``.

    logits: (..., V); targets: (...) integer ids in [0, V). Returns a Python
    float (``"mean"`` over the counted positions, or ``"sum"``), or the (...)
    per-position losses for ``reduction="none"``. Targets equal to
    ``ignore_index`` (any int, e.g. -100 or a pad id) count in neither the
    sum nor the mean's divisor and get loss 0. ``label_smoothing=ε``:
    ``(1 − ε)(−log p_y) + ε·mean_v(−log p_v)``, ε spread over all ``V``
    classes (torch's form; ``+inf`` at a position with a ``-inf`` logit).

    Examples
    --------
    >>> round(cross_entropy([[0.0, 0.0], [0.0, 0.0]], [0, 1]), 6)  # log 2
    0.693147
    >>> z = [[2.0, 1.0, 0.5, 0.0, -1.0]]
    >>> round(cross_entropy(z, [0]), 6), round(cross_entropy(z, [0], label_smoothing=0.1), 6)
    (0.574438, 0.724438)
    >>> cross_entropy([[0.0, 0.0], [0.0, 0.0]], [1, -100], ignore_index=-100, reduction="none").round(4)
    array([0.6931, 0.    ])
    """
    f = "cross_entropy"
    z = _validate.logit_rows(logits, "logits", f)
    ignore = None if ignore_index is None else _ignore_index(ignore_index, f)
    y, valid = _labels(targets, z.shape[-1], ignore, f, "targets")
    _leading(y, z, "targets", f)
    eps = _smoothing(label_smoothing, f)
    mode = _validate.option(reduction, ("mean", "sum", "none"), "reduction", f)
    per = _per_token(z, y, valid, eps)
    if mode == "none":
        return per
    return float(per.sum() if mode == "sum" else per.sum() / _count(valid, f))


def cross_entropy_grad(
    logits: Any, targets: Any, *, ignore_index: int | None = None, label_smoothing: float = 0.0
) -> np.ndarray:
    """Gradient of the ``"mean"`` cross-entropy: ``(softmax(z) − q) / N_valid``.

    logits: (..., V); targets: (...) -> (..., V), with
    ``q = (1 − ε) e_y + ε/V``; rows at ignored targets are 0 and every row sums
    to 0. Where an ``-inf`` logit makes the smoothed loss ``+inf`` the gradient
    stays finite (``−ε/(V·N_valid)`` at that entry), as torch autograd's.

    Examples
    --------
    >>> cross_entropy_grad([0.0, 0.0], 1)
    array([ 0.5, -0.5])
    >>> cross_entropy_grad([[0.0, 0.0], [0.0, 0.0]], [1, -100], ignore_index=-100)
    array([[ 0.5, -0.5],
           [ 0. ,  0. ]])
    """
    f = "cross_entropy_grad"
    z = _validate.logit_rows(logits, "logits", f)
    ignore = None if ignore_index is None else _ignore_index(ignore_index, f)
    y, valid = _labels(targets, z.shape[-1], ignore, f, "targets")
    _leading(y, z, "targets", f)
    eps = _smoothing(label_smoothing, f)
    V = z.shape[-1]
    q = (1.0 - eps) * (np.arange(V) == y[..., None]) + eps / V
    return np.where(valid[..., None], softmax(z) - q, 0.0) / _count(valid, f)


def _shift(labels: np.ndarray, ignore: int) -> np.ndarray:
    out = np.full(labels.shape, ignore, dtype=np.int64)
    out[..., :-1] = labels[..., 1:]
    return out


def shift_labels(labels: Any, *, ignore_index: int = -100) -> np.ndarray:
    """Labels aligned with the logits of every position: ``out[..., t] = labels[..., t + 1]``.

    labels: (..., T) integer input ids, ignored positions (masked prompt,
    padding) set to ``ignore_index`` -> (..., T) int64 with ``out[..., −1] =
    ignore_index``: the layout HF's ``ForCausalLMLoss`` builds
    (``pad(labels, (0, 1), value=ignore_index)[..., 1:]``). With no ``V`` to
    check against, every entry must be ``≥ 0`` or equal ``ignore_index``.

    Examples
    --------
    >>> shift_labels([0, 1, 2, 3, 0])
    array([   1,    2,    3,    0, -100])
    """
    f = "shift_labels"
    ignore = _ignore_index(ignore_index, f)
    y, valid = _labels(labels, None, ignore, f, "labels")
    if y.ndim < 1 or y.shape[-1] == 0:
        raise ValueError(f"{f}: labels must be (..., T) with T >= 1; got shape {y.shape}")
    return _shift(np.where(valid, y, ignore), ignore)


def causal_lm_loss(
    logits: Any,
    labels: Any,
    *,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
    num_items: int | None = None,
) -> float:
    """Next-token loss of a causal LM: ``cross_entropy(logits, shift_labels(labels), …)``.

    logits: (..., T, V), computed from the input ids; labels: (..., T), those
    input ids with ignored positions set to ``ignore_index`` (pass the ids
    themselves when nothing is ignored: do not shift them, this does). Position
    ``t`` predicts ``labels[..., t + 1]``. The mean is over the counted targets;
    ``num_items`` (HF's ``num_items_in_batch``, the global count under gradient
    accumulation) replaces that divisor: summed loss / ``num_items``.

    Examples
    --------
    >>> import numpy as np
    >>> ids = np.array([3, 1, 4, 1, 5])
    >>> copy_input = np.where(np.arange(6) == ids[:, None], 20.0, 0.0)  # reads its own input
    >>> round(causal_lm_loss(copy_input, ids), 4)  # cannot predict the next token
    20.0
    """
    f = "causal_lm_loss"
    z = _validate.logit_rows(logits, "logits", f, min_ndim=2)
    ignore = _ignore_index(ignore_index, f)
    y, valid = _labels(labels, z.shape[-1], ignore, f, "labels")
    _leading(y, z, "labels", f)
    eps = _smoothing(label_smoothing, f)
    y = _shift(np.where(valid, y, ignore), ignore)
    valid = y != ignore
    per = _per_token(z, np.where(valid, y, 0), valid, eps)
    if num_items is not None:
        return float(per.sum() / _validate.positive_int(num_items, "num_items", f))
    return float(per.sum() / _count(valid, f))


def _token_logprobs(logits: Any, ids: Any, func: str) -> tuple[np.ndarray, np.ndarray]:
    """The validated ids (..., T) and their teacher-forced log-probabilities (..., T − 1)."""
    z = _validate.logit_rows(logits, "logits", func, min_ndim=2)
    y = _validate.int_ids(ids, z.shape[-1], func)
    _leading(y, z, "ids", func)
    picked = np.take_along_axis(log_softmax(z)[..., :-1, :], y[..., 1:, None], axis=-1)
    return y, picked[..., 0]


def token_logprobs(logits: Any, ids: Any) -> np.ndarray:
    """Teacher-forced log-probability of every target: ``log_softmax(logits[..., t, :])[ids[..., t + 1]]``.

    logits: (..., T, V) from one causal pass over ids: (..., T) -> (..., T − 1),
    the chain rule's factors ``log p(x_{t+1} | x_{≤t})``.

    Examples
    --------
    >>> import numpy as np
    >>> logits = np.log([[0.6, 0.4], [0.3, 0.7], [0.5, 0.5]])
    >>> np.exp(token_logprobs(logits, [0, 1, 0])).round(6)  # p(1 | 0), p(0 | 0 1)
    array([0.4, 0.3])
    """
    return _token_logprobs(logits, ids, "token_logprobs")[1]


def sequence_logprob(logits: Any, ids: Any, *, start: int = 1, mask: Any = None) -> np.ndarray:
    """``log P(ids[start:] | ids[:start])``: the sum of ``token_logprobs`` over the scored targets.

    logits: (..., T, V); ids: (..., T) -> (...). Targets at positions
    ``t ≥ start`` are scored (``start`` = the prompt length: the prompt is
    conditioned on, never scored; ``1 ≤ start ≤ T``, ``start = T`` gives 0);
    ``mask`` (..., T), 0/1 with 1 = real token, drops padded targets.

    Examples
    --------
    >>> import numpy as np
    >>> logits = np.log([[0.5, 0.5], [0.2, 0.8], [0.9, 0.1], [0.5, 0.5]])
    >>> ids = [1, 1, 0, 1]  # prompt [1, 1], answer [0], one pad
    >>> round(float(sequence_logprob(logits, ids, start=2, mask=[1, 1, 1, 0])), 6)  # log 0.2
    -1.609438
    """
    f = "sequence_logprob"
    y, lp = _token_logprobs(logits, ids, f)
    T = y.shape[-1]
    s = _validate.positive_int(start, "start", f)
    if s > T:
        raise ValueError(f"{f}: start must lie in [1, T] = [1, {T}]; got {start}")
    keep = np.arange(1, T) >= s
    if mask is not None:
        keep = keep & _mask(mask, y.shape, f)[..., 1:]
    return np.where(keep, lp, 0.0).sum(axis=-1)


def _z_parts(logits: Any, coef: Any, mask: Any, func: str):
    z = _validate.logit_rows(logits, "logits", func)
    c = _validate.finite_float(coef, "coef", func)
    if c < 0:
        raise ValueError(f"{func}: coef must be >= 0; got {coef!r}")
    keep = np.ones(z.shape[:-1], dtype=bool) if mask is None else _mask(mask, z.shape[:-1], func)
    n = int(keep.sum())
    if n == 0:
        raise ValueError(f"{func}: mask selects no position (all zeros)")
    return z, c, keep, n, logsumexp(z)


def z_loss(logits: Any, *, coef: float = 1e-4, mask: Any = None) -> float:
    """PaLM's auxiliary z-loss ``coef · mean_t lse(z_t)²``, which pulls ``log Z`` toward 0.

    logits: (..., V) -> float, the mean over positions (``mask`` (...), 0/1,
    selects them). Not shift-invariant: that is its purpose.

    Examples
    --------
    >>> z = [2.0, 1.0, 0.5, 0.0, -1.0]
    >>> round(z_loss(z), 8), round(z_loss([v + 10 for v in z]), 6)
    (0.00066277, 0.015812)
    """
    z, c, keep, n, lse = _z_parts(logits, coef, mask, "z_loss")
    return float(c * np.where(keep, lse**2, 0.0).sum() / n)


def z_loss_grad(logits: Any, *, coef: float = 1e-4, mask: Any = None) -> np.ndarray:
    """Gradient of ``z_loss``: ``2·coef·lse(z_t)·softmax(z_t) / N`` at the selected positions.

    logits: (..., V) -> (..., V), 0 at unselected positions. Its rows sum to
    ``2·coef·lse(z_t)/N``, not 0: the z-loss is not shift-invariant.

    Examples
    --------
    >>> z_loss_grad([0.0, 0.0], coef=0.5).round(6)  # lse = ln 2
    array([0.346574, 0.346574])
    """
    z, c, keep, n, lse = _z_parts(logits, coef, mask, "z_loss_grad")
    return np.where(keep[..., None], (2.0 * c / n) * lse[..., None] * softmax(z), 0.0)
