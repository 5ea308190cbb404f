"""Calibration and scoring: reliability bins, ECE, temperature scaling, unbiased pass@k.

A classifier is calibrated when, among predictions made with confidence ``c``, a fraction ``c``
is correct. ``reliability_bins`` and ``expected_calibration_error`` measure that with
equal-width bins ``((m − 1)/M, m/M]``; ``fit_temperature`` finds the one scalar ``T`` that
minimizes the NLL of ``softmax(logits / T)`` (fit it on a validation split and score on
another); ``pass_at_k`` estimates the chance that one of ``k`` samples is correct from ``c``
correct out of ``n``.

References: Naeini, Cooper, Hauskrecht 2015 (AAAI), ECE; Guo et al. 2017 (arXiv:1706.04599),
temperature scaling, and their reference code ``gpleiss/temperature_scaling`` (``_ECELoss``,
15 bins ``(lo, hi]``); Chen et al. 2021 (arXiv:2107.03374), the unbiased pass@k estimator and
its numerically stable product form.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from llmmath import _validate
from llmmath.softmax import log_softmax


def _conf_correct(confidences: Any, correct: Any, f: str) -> tuple[np.ndarray, np.ndarray]:
    c = _validate.float_array(confidences, "confidences", f)
    if c.ndim != 1:
        raise ValueError(f"{f}: confidences must be 1-D (n,); got shape {c.shape}")
    if c.min() < 0 or c.max() > 1:
        bad = c.min() if c.min() < 0 else c.max()
        raise ValueError(f"{f}: confidences must lie in [0, 1]; got {bad}")
    ok = _validate._asarray(correct, "correct", f)
    if ok.dtype.kind not in "biuf" or not np.isin(ok, (0, 1)).all():
        raise ValueError(f"{f}: correct must be bool or 0/1; got values {np.unique(ok)[:5]}")
    if ok.shape != c.shape:
        raise ValueError(
            f"{f}: correct must have the shape of confidences {c.shape}; got {ok.shape}"
        )
    return c, ok.astype(np.float64)


def reliability_bins(
    confidences: Any, correct: Any, n_bins: int = 15
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bin ``(counts, mean_confidence, accuracy)`` over equal-width bins, each ``(M,)``.

    confidences: (n,) in ``[0, 1]``; correct: (n,) bool or 0/1. Bin ``m`` (1-based) is
    ``((m − 1)/M, m/M]`` with the edges ``m/M`` rounded once (a confidence of exactly 0 goes
    to the first bin); empty bins have count 0 and NaN means (a reliability diagram skips
    them).

    Examples
    --------
    >>> conf = [0.95, 0.92, 0.88, 0.85, 0.72, 0.68, 0.65, 0.55, 0.52, 0.45]
    >>> counts, mean_conf, acc = reliability_bins(conf, [1, 1, 0, 1, 1, 0, 1, 0, 1, 0], 5)
    >>> counts, np.round(mean_conf, 4), np.round(acc, 4)
    (array([0, 0, 3, 3, 4]), array([   nan,    nan, 0.5067, 0.6833, 0.9   ]), array([   nan,    nan, 0.3333, 0.6667, 0.75  ]))
    """
    f = "reliability_bins"
    c, ok = _conf_correct(confidences, correct, f)
    M = _validate.positive_int(n_bins, "n_bins", f)
    # the bin of c is the number of inner edges m/M strictly below it: (lo, hi]
    b = np.searchsorted(np.arange(1, M) / M, c, side="left")
    counts = np.bincount(b, minlength=M)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.bincount(b, weights=c, minlength=M) / counts
        acc = np.bincount(b, weights=ok, minlength=M) / counts
    return counts, mean_conf, acc


def expected_calibration_error(confidences: Any, correct: Any, n_bins: int = 15) -> float:
    """ECE: ``Σ_m (n_m/n)·|acc_m − conf_m|`` over the non-empty bins of ``reliability_bins``.

    The default ``n_bins = 15`` and the ``(lo, hi]`` bins are those of ``_ECELoss`` in Guo et
    al.'s reference code (which drops a confidence of exactly 0; no max-softmax confidence is
    0). Few samples per bin inflate it; a constant confidence equal to the accuracy gives 0.

    Examples
    --------
    >>> conf = [0.95, 0.92, 0.88, 0.85, 0.72, 0.68, 0.65, 0.55, 0.52, 0.45]
    >>> ok = [1, 1, 0, 1, 1, 0, 1, 0, 1, 0]
    >>> [round(expected_calibration_error(conf, ok, M), 4) for M in (5, 10, 15)]
    [0.117, 0.199, 0.323]
    """
    counts, mean_conf, acc = reliability_bins(confidences, correct, n_bins)
    full = counts > 0
    return float((counts[full] / counts.sum() * np.abs(acc[full] - mean_conf[full])).sum())


def _logits_labels(logits: Any, labels: Any, f: str) -> tuple[np.ndarray, np.ndarray]:
    z = _validate.logit_rows(logits, "logits", f)
    if z.ndim != 2:
        raise ValueError(f"{f}: logits must be 2-D (n, K); got shape {z.shape}")
    y = _validate.int_ids(labels, z.shape[1], f, "labels")
    if y.shape != z.shape[:1]:
        raise ValueError(f"{f}: labels must be (n,) = ({z.shape[0]},); got shape {y.shape}")
    return z, y


def _nll(z: np.ndarray, y: np.ndarray, T: float) -> float:
    return float(-log_softmax(z / T)[np.arange(len(y)), y].mean())


def temperature_nll(logits: Any, labels: Any, temperature: float) -> float:
    """Mean NLL of ``softmax(logits / T)`` at the labels: logits (n, K), labels (n,) -> float.

    ``T`` finite and ``> 0``; ``-inf`` logits mark impossible classes (a label there gives
    ``+inf``).

    Examples
    --------
    >>> z, y = [[1.0, 1.0, 0.0], [2.0, 2.0, 0.0]], [0, 1]
    >>> [round(temperature_nll(z, y, T), 4) for T in (1.0, 0.01)]  # tied maxima: -> ln 2
    [0.8103, 0.6931]
    """
    f = "temperature_nll"
    z, y = _logits_labels(logits, labels, f)
    return _nll(z, y, _validate.positive_float(temperature, "temperature", f))


def fit_temperature(logits: Any, labels: Any) -> float:
    """The temperature ``T > 0`` that minimizes ``temperature_nll(logits, labels, T)``.

    logits: (n, K), labels: (n,). The NLL is convex in ``β = 1/T`` (its second derivative is
    ``mean_i Var_{p_β}(z_i) ≥ 0``; it is not convex in ``T``), and its derivative
    ``g(β) = mean_i(E_{p_β}[z_i] − z_{i,y_i})`` rises from ``g(0) = mean_i(mean_v z_{i,v} −
    z_{i,y_i})`` to ``g(∞) = mean_i(max_v z_{i,v} − z_{i,y_i})``. A finite positive minimizer
    exists iff ``g(0) < 0 < g(∞)``, otherwise ``ValueError``: ``g(∞) = 0`` when every label
    attains its row's maximum (ties included; the NLL falls as ``T → 0``), ``g(0) ≥ 0`` when the
    labels are no better than average (the minimum is at ``T = ∞``). The root of ``g`` is
    bracketed by doubling/halving from ``β = 1`` and then bisected to full float precision (a
    few ulps; 1e-10 relative promised). Fit on a validation split, score on another.

    Examples
    --------
    >>> z = np.array([[4.0, 0.0, 0.0], [4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [4.0, 0.0, 0.0]])
    >>> T = fit_temperature(z, [0, 0, 1, 2])  # overconfident: one label in four is wrong
    >>> round(T, 6), round(4 / np.log(6), 6)  # closed form: e^{4/T} = 6
    (2.232443, 2.232443)
    >>> round(float(np.exp(4 / T) / (np.exp(4 / T) + 2)), 6)  # confidence 0.75 = accuracy
    0.75
    """
    f = "fit_temperature"
    z, y = _logits_labels(logits, labels, f)
    if np.isneginf(z[np.arange(len(y)), y]).any():
        raise ValueError(f"{f}: a label sits at a -inf logit, so the NLL is +inf at every T")
    finite = np.isfinite(z)
    d = np.where(finite, z - z[np.arange(len(y)), y][:, None], 0.0)  # z_v − z_y, 0 where -inf
    zs = np.where(
        finite, z - z.max(axis=-1, keepdims=True), -np.inf
    )  # <= 0: β·zs never overflows up

    def g(beta: float) -> float:  # dNLL/dβ = mean_i E_{p_β}[z_i − z_{i,y_i}]
        e = np.exp(beta * zs)
        return float(((e * d).sum(axis=-1) / e.sum(axis=-1)).mean())

    g_inf = float(d.max(axis=-1).mean())
    g_zero = float((d.sum(axis=-1) / finite.sum(axis=-1)).mean())
    if g_inf <= 0:
        raise ValueError(
            f"{f}: every label attains its row's maximum logit (mean(max z − z_y) = 0), so the "
            "NLL keeps falling as T -> 0; no finite temperature minimizes it"
        )
    if g_zero >= 0:
        raise ValueError(
            f"{f}: the labels score no better than the average logit (mean(mean z − z_y) = "
            f"{g_zero:.3g} >= 0), so the NLL is smallest as T -> infinity"
        )
    lo, hi = 1.0, 1.0
    for _ in range(2100):  # bracket: g(lo) < 0 <= g(hi); β spans [2^-1074, 2^1023]
        if g(hi) < 0:
            lo, hi = hi, 2.0 * hi
        elif g(lo) >= 0:
            lo, hi = 0.5 * lo, lo
        else:
            break
    else:  # pragma: no cover - g(0) < 0 < g(∞) makes the loop end
        raise ValueError(f"{f}: could not bracket the minimizer")
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if g(mid) < 0 else (lo, mid)
    return 1.0 / (0.5 * (lo + hi))


def _counts(x: Any, name: str, f: str) -> np.ndarray:
    arr = _validate._asarray(x, name, f)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{f}: {name} must be integers; got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError(f"{f}: {name} is empty (shape {arr.shape})")
    return arr.astype(np.int64)


def pass_at_k(n: Any, c: Any, k: Any) -> float | np.ndarray:
    """Unbiased pass@k: ``1 − C(n − c, k)/C(n, k)`` from ``c`` correct of ``n`` samples.

    Computed as ``1 − Π_{i = n−c+1}^{n} (1 − k/i)`` (Chen et al. 2021's numerically stable
    form), 1.0 when ``n − c < k``. Integer arrays broadcast (one value per problem; the
    benchmark score is their mean); a Python float for scalars. ``0 ≤ c ≤ n``, ``1 ≤ k ≤ n``.
    The plug-in ``1 − (1 − c/n)^k`` is biased low.

    Examples
    --------
    >>> [round(pass_at_k(20, 3, k), 6) for k in (1, 5, 10)]
    [0.15, 0.600877, 0.894737]
    """
    f = "pass_at_k"
    n, c, k = (_counts(v, name, f) for v, name in ((n, "n"), (c, "c"), (k, "k")))
    try:
        n, c, k = np.broadcast_arrays(n, c, k)
    except ValueError:
        raise ValueError(
            f"{f}: n, c and k must broadcast; got shapes {n.shape}, {c.shape}, {k.shape}"
        ) from None
    for name, bad, want in (
        ("n", n < 1, ">= 1"),
        ("c", c < 0, ">= 0"),
        ("c", c > n, "<= n"),
        ("k", k < 1, ">= 1"),
        ("k", k > n, "<= n"),
    ):
        if bad.any():
            i = tuple(int(j) for j in np.argwhere(bad)[0]) if bad.ndim else ()
            raise ValueError(f"{f}: {name} must be {want}; got n={n[i]}, c={c[i]}, k={k[i]}")
    width = int(c.max()) if c.size else 0
    j = np.arange(width)
    i = (n - c + 1)[..., None] + j  # the factors' i, padded with 1.0 beyond each c
    factors = np.where(j < c[..., None], 1.0 - k[..., None] / np.maximum(i, 1), 1.0)
    out = np.where(n - c < k, 1.0, 1.0 - factors.prod(axis=-1))
    return float(out) if out.ndim == 0 else out
