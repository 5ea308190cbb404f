"""Tests for llmmath.calibration: reliability bins, ECE, temperature scaling, pass@k.

The numbers are those of Lesson E §8.2–§8.5 and Exercises 9–10. Cross-checks against a
float64 transcription of Guo et al.'s ``_ECELoss`` (torch), scipy's bounded scalar search and
torch's LBFGS skip without the reference packages; pass@k is checked against exact rational
arithmetic (``math.comb``, ``fractions``).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmmath.calibration import (
    expected_calibration_error,
    fit_temperature,
    pass_at_k,
    reliability_bins,
    temperature_nll,
)
from llmmath.softmax import log_softmax, softmax

PROPS = settings(max_examples=40, deadline=None)


def wrong(value: Any) -> Any:
    """An argument of the wrong type, passed on as is (typed ``Any`` for mypy)."""
    return value


EPS = np.finfo(np.float64).eps
CONF = np.array([0.95, 0.92, 0.88, 0.85, 0.72, 0.68, 0.65, 0.55, 0.52, 0.45])  # §8.3
OK = np.array([1, 1, 0, 1, 1, 0, 1, 0, 1, 0])


@functools.cache
def synthetic(seed, n, K, scale, mult):
    """§8.4 / Exercise 9: true logits ``scale·N(0, 1)`` (one call), labels drawn from them
    (one ``rng.choice`` per row), model logits ``mult × true``."""
    rng = np.random.default_rng(seed)
    true = rng.normal(size=(n, K)) * scale
    y = np.array([rng.choice(K, p=softmax(t)) for t in true])
    return true, y, mult * true


S84 = (0, 5000, 10, 1.5, 2.5)
EX9 = (1, 3000, 5, 1.2, 3.0)


# ---------------------------------------------------------------- unit tests: the lesson


def test_reliability_diagram_of_the_lesson():
    counts, mean_conf, acc = reliability_bins(CONF, OK, 5)
    assert counts.tolist() == [0, 0, 3, 3, 4] and counts.dtype.kind == "i"
    assert np.isnan(mean_conf[:2]).all() and np.isnan(acc[:2]).all()  # empty bins: NaN
    np.testing.assert_array_equal(mean_conf[2:].round(4), [0.5067, 0.6833, 0.9])
    np.testing.assert_array_equal(acc[2:].round(4), [0.3333, 0.6667, 0.75])
    assert (acc[2:] < mean_conf[2:]).all()  # overconfident in every bin
    assert OK.mean() == 0.6 and round(CONF.mean(), 3) == 0.717
    # bool labels give the same; edges (lo, hi]: 0 goes to the first bin, 0.6 to (0.4, 0.6]
    assert reliability_bins(CONF, OK.astype(bool), 5)[0].tolist() == [0, 0, 3, 3, 4]
    assert reliability_bins([0.0, 0.6, 1.0], [1, 1, 1], 5)[0].tolist() == [1, 0, 1, 0, 1]


def test_ece_of_the_lesson():
    ece = {M: round(expected_calibration_error(CONF, OK, M), 4) for M in (1, 2, 5, 10, 15)}
    assert ece == {1: 0.117, 2: 0.117, 5: 0.117, 10: 0.199, 15: 0.323}
    assert abs(expected_calibration_error(CONF, OK) - 0.323) < 1e-12  # default M = 15
    # a constant confidence equal to the accuracy: ECE 0, up to the rounding of a 10-term mean
    assert expected_calibration_error(np.full(10, 0.6), OK) <= 10 * EPS


def test_temperature_scaling_of_the_lesson():
    """§8.4: fit on examples 0–2,499, score on 2,500–4,999."""
    true, y, z = synthetic(*S84)
    T = fit_temperature(z[:2500], y[:2500])
    assert round(T, 6) == 2.431522
    hold_z, hold_y, hold_true = z[2500:], y[2500:], true[2500:]
    nll = [round(temperature_nll(hold_z, hold_y, t), 4) for t in (1.0, T)]
    assert nll == [2.1517, 1.6021] and round(temperature_nll(hold_true, hold_y, 1.0), 4) == 1.6018
    ok = hold_z.argmax(-1) == hold_y
    ece = [round(expected_calibration_error(softmax(hold_z / t).max(-1), ok), 4) for t in (1, T)]
    assert ece == [0.2781, 0.0238] and ok.mean() == 0.4452
    assert ((hold_z / T).argmax(-1) == hold_z.argmax(-1)).all()  # accuracy unchanged
    assert round(fit_temperature(z, y), 6) == 2.460297  # in-sample, for comparison


def test_exercise_9():
    _, y, z = synthetic(*EX9)
    T = fit_temperature(z[:1500], y[:1500])
    assert round(T, 6) == 2.828559
    hz, hy = z[1500:], y[1500:]
    assert [round(temperature_nll(hz, hy, t), 4) for t in (1.0, T)] == [1.7754, 1.2151]
    ok = hz.argmax(-1) == hy
    ece = [round(expected_calibration_error(softmax(hz / t).max(-1), ok), 4) for t in (1, T)]
    assert ece == [0.2674, 0.0385] and ok.mean() == 0.518


def test_no_finite_temperature_when_every_label_attains_its_max():
    z, y = np.array([[1.0, 1.0, 0.0], [2.0, 2.0, 0.0]]), [0, 1]  # ties: no strict argmax label
    nll = [round(temperature_nll(z, y, T), 5) for T in (10, 1, 0.1, 0.01)]
    assert nll == [1.05133, 0.81031, 0.69316, 0.69315]  # falls toward ln 2 as T -> 0
    with pytest.raises(ValueError, match="fit_temperature: every label attains its row's maximum"):
        fit_temperature(z, y)
    with pytest.raises(ValueError, match="T -> infinity"):  # labels at the row minima
        fit_temperature([[3.0, 0.0], [0.0, 3.0]], [1, 0])
    with pytest.raises(ValueError, match="T -> infinity"):  # labels exactly average: g(0) = 0
        fit_temperature([[1.0, 0.0], [0.0, 1.0]], [0, 1] * 0 + [1, 1])


def test_temperature_with_masked_classes():
    z = np.array([[3.0, 0.0, -np.inf], [0.0, 2.0, 0.5], [1.0, -np.inf, 0.0], [0.0, 0.0, 2.0]])
    y = [0, 1, 0, 0]
    T = fit_temperature(z, y)
    finite = np.where(np.isfinite(z), z, -1e300)  # the -inf class as a hugely negative logit
    assert abs(fit_temperature(finite, y) / T - 1) < 1e-12
    assert temperature_nll(z, [2, 1, 0, 0], 1.0) == np.inf  # a label at a removed class


def test_pass_at_k_of_the_lesson():
    assert [round(pass_at_k(20, 3, k), 6) for k in (1, 5, 10)] == [0.15, 0.600877, 0.894737]
    assert abs(pass_at_k(20, 3, 5) - (1 - 6188 / 15504)) < 1e-15
    plug_in = [1 - (1 - 3 / 20) ** k for k in (5, 10)]
    assert [round(x, 6) for x in plug_in] == [0.556295, 0.803126]
    assert isinstance(pass_at_k(20, 3, 5), float)
    # unbiased: its expectation over c ~ Bin(20, 3/20) is exactly 1 − (1 − p)^5
    p = Fraction(3, 20)
    w = [math.comb(20, c) * p**c * (1 - p) ** (20 - c) for c in range(21)]
    expect = sum(float(wc) * pass_at_k(20, c, 5) for c, wc in enumerate(w))
    assert abs(expect - float(1 - (1 - p) ** 5)) < 1e-15 * 21 and round(expect, 6) == 0.556295
    plug = sum(wc * (1 - (1 - Fraction(c, 20)) ** 5) for c, wc in enumerate(w))
    assert round(float(plug), 6) == 0.518236  # the plug-in is biased low
    # Exercise 10
    assert [round(pass_at_k(10, 2, k), 6) for k in (1, 3, 5)] == [0.2, 0.533333, 0.777778]
    w = [math.comb(10, c) * Fraction(1, 5) ** c * Fraction(4, 5) ** (10 - c) for c in range(11)]
    assert round(sum(float(wc) * pass_at_k(10, c, 3) for c, wc in enumerate(w)), 12) == 0.488
    # broadcasting per problem; the benchmark score is the mean
    out = pass_at_k(np.array([20, 20, 20]), 3, np.array([1, 5, 10]))
    assert out.shape == (3,) and out.round(6).tolist() == [0.15, 0.600877, 0.894737]
    assert pass_at_k([[10], [20]], [0, 2], 3).shape == (2, 2)
    assert pass_at_k(5, 3, 3) == 1.0 and pass_at_k(5, 0, 3) == 0.0  # n − c < k; no correct


def test_pass_at_k_large_n_equals_comb():
    exact = 1 - Fraction(math.comb(187, 100), math.comb(200, 100))
    assert abs(pass_at_k(200, 13, 100) - float(exact)) < 1e-15
    assert pass_at_k(200, 13, 100) == 1 - math.comb(187, 100) / math.comb(200, 100)


# ---------------------------------------------------------------- properties


def chen_pass_at_k(n, c, k):
    """Chen et al. 2021's reference code (the numerically stable form)."""
    if n - c < k:
        return 1.0
    return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))


@PROPS
@given(n=st.integers(1, 80), data=st.data())
def test_pass_at_k_equals_exact_rational_arithmetic(n, data):
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    got = pass_at_k(n, c, k)
    exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    # c factors, each rounded twice: the product's absolute error is at most about c·2ε
    assert abs(got - float(exact)) <= (2 * c + 2) * EPS
    assert abs(got - chen_pass_at_k(n, c, k)) <= (2 * c + 2) * EPS
    assert 0.0 <= got <= 1.0
    if c < n:
        assert pass_at_k(n, c + 1, k) >= got  # more correct samples never lower it
    if k < n:
        assert pass_at_k(n, c, k + 1) >= got


@PROPS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), M=st.integers(1, 30))
def test_bins_partition_the_predictions(seed, n, M):
    rng = np.random.default_rng(seed)
    conf, ok = rng.random(n), rng.random(n) < 0.5
    conf[: n // 10] = np.round(conf[: n // 10] * M) / M  # some confidences on the edges m/M
    counts, mean_conf, acc = reliability_bins(conf, ok, M)
    assert counts.sum() == n and counts.shape == mean_conf.shape == acc.shape == (M,)
    m = np.flatnonzero(counts)
    lo, hi = m / M, (m + 1) / M  # every bin's mean lies in it: (lo, hi], 0 in the first
    assert ((mean_conf[m] > lo) | (m == 0)).all() and (mean_conf[m] <= hi).all()
    ece = expected_calibration_error(conf, ok, M)
    assert 0 <= ece <= 1
    perm = rng.permutation(n)
    assert abs(expected_calibration_error(conf[perm], ok[perm], M) - ece) <= 4 * n * EPS
    # every prediction correct with confidence 1: perfectly calibrated
    assert expected_calibration_error(np.ones(n), np.ones(n), M) == 0.0


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(5, 200), K=st.integers(2, 8))
def test_fit_temperature_is_the_stationary_point(seed, n, K):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, K)) * rng.uniform(0.5, 4)
    y = np.where(rng.random(n) < 0.7, z.argmax(-1), rng.integers(0, K, n))
    gap_inf = (z.max(-1) - z[np.arange(n), y]).mean()
    gap_zero = (z.mean(-1) - z[np.arange(n), y]).mean()
    if not (gap_zero < 0 < gap_inf):
        with pytest.raises(ValueError, match="fit_temperature"):
            fit_temperature(z, y)
        return
    T = fit_temperature(z, y)
    nll = temperature_nll(z, y, T)
    assert nll <= temperature_nll(z, y, T * 1.001) and nll <= temperature_nll(z, y, T / 1.001)
    p = softmax(z / T)
    g = ((p * z).sum(-1) - z[np.arange(n), y]).mean()  # dNLL/dβ at the optimum
    assert abs(g) <= 1e-12 * np.abs(z).max()
    # rescaling the logits rescales the temperature
    assert abs(fit_temperature(3.0 * z, y) / (3.0 * T) - 1) <= 1e-12


def test_nll_is_convex_in_beta_not_in_t():
    _, y, z = synthetic(*S84)
    y, z = y[:2500], z[:2500]
    betas = np.linspace(0.05, 3, 150)
    f = np.array([temperature_nll(z, y, 1 / b) for b in betas])
    # second differences of a convex function are >= 0, up to rounding of values near 2
    assert np.diff(f, 2).min() >= -1e-13
    ts = np.linspace(0.2, 5, 150)
    assert np.diff([temperature_nll(z, y, t) for t in ts], 2).min() < -1e-6


# ---------------------------------------------------------------- bad inputs

Z2 = np.array([[2.0, 0.0], [0.0, 1.0]])

BAD = [
    ("conf-above-1", lambda: reliability_bins([0.5, 1.2], [1, 0]), ValueError, r"reliability_bins: confidences must lie in \[0, 1\]; got 1.2"),
    ("conf-negative", lambda: expected_calibration_error([-0.1], [1]), ValueError, r"confidences must lie in \[0, 1\]"),
    ("conf-nan", lambda: reliability_bins([np.nan], [1]), ValueError, "confidences must be finite"),
    ("conf-2d", lambda: reliability_bins([[0.5]], [[1]]), ValueError, r"confidences must be 1-D"),
    ("conf-empty", lambda: reliability_bins([], []), ValueError, "confidences is empty"),
    ("correct-values", lambda: reliability_bins([0.5, 0.6], [1, 2]), ValueError, "correct must be bool or 0/1"),
    ("correct-str", lambda: reliability_bins([0.5], ["yes"]), ValueError, "correct must be bool or 0/1"),
    ("correct-shape", lambda: reliability_bins([0.5, 0.6], [1]), ValueError, r"correct must have the shape of confidences \(2,\)"),
    ("bins-zero", lambda: reliability_bins([0.5], [1], 0), ValueError, "n_bins must be >= 1"),
    ("bins-float", lambda: expected_calibration_error([0.5], [1], wrong(15.0)), TypeError, "n_bins"),
    ("T-zero", lambda: temperature_nll(Z2, [0, 1], 0.0), ValueError, "temperature_nll: temperature must be a finite number > 0"),
    ("T-inf", lambda: temperature_nll(Z2, [0, 1], np.inf), ValueError, "temperature"),
    ("logits-1d", lambda: temperature_nll([1.0, 2.0], [0], 1.0), ValueError, r"logits must be 2-D \(n, K\)"),
    ("logits-nan", lambda: fit_temperature([[np.nan, 0.0]], [0]), ValueError, "fit_temperature: logits must be finite"),
    ("logits-row-neginf", lambda: fit_temperature([[-np.inf, -np.inf]], [0]), ValueError, "every logit -inf"),
    ("labels-float", lambda: fit_temperature(Z2, [0.0, 1.0]), TypeError, "labels must be integers"),
    ("labels-range", lambda: fit_temperature(Z2, [0, 2]), IndexError, r"labels must lie in \[0, 2\)"),
    ("labels-negative", lambda: temperature_nll(Z2, [0, -1], 1.0), IndexError, "negative ids are not wrapped"),
    ("labels-shape", lambda: fit_temperature(Z2, [0]), ValueError, r"labels must be \(n,\) = \(2,\)"),
    ("label-at-neginf", lambda: fit_temperature([[0.0, -np.inf], [1.0, 0.0]], [1, 0]), ValueError, "label sits at a -inf logit"),
    ("pass-c-above-n", lambda: pass_at_k(5, 6, 1), ValueError, "pass_at_k: c must be <= n; got n=5, c=6, k=1"),
    ("pass-k-above-n", lambda: pass_at_k(5, 1, 6), ValueError, "k must be <= n"),
    ("pass-k-zero", lambda: pass_at_k(5, 1, 0), ValueError, "k must be >= 1"),
    ("pass-c-negative", lambda: pass_at_k(5, -1, 2), ValueError, "c must be >= 0"),
    ("pass-n-negative", lambda: pass_at_k(-3, 0, 1), ValueError, "n must be >= 1"),
    ("pass-array-bad", lambda: pass_at_k([5, 5], [1, 7], 1), ValueError, r"c must be <= n; got n=5, c=7"),
    ("pass-float", lambda: pass_at_k(20.0, 3, 5), TypeError, "n must be integers"),
    ("pass-bool", lambda: pass_at_k(20, True, 5), TypeError, "c must be integers"),
    ("pass-shapes", lambda: pass_at_k([5, 5], [1, 2, 3], 1), ValueError, "must broadcast"),
]  # fmt: skip


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------ cross-checks: gpleiss ECE, scipy, torch LBFGS


@pytest.fixture
def torch():
    """torch on one thread: its intra-op threads make tiny ops slow on a busy machine."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(threads)


def ece_loss_float64(torch, logits, labels, n_bins=15):
    """``_ECELoss.forward`` of gpleiss/temperature_scaling, transcribed, run in float64."""
    F = torch.nn.functional
    boundaries = torch.linspace(0, 1, n_bins + 1, dtype=torch.float64)
    softmaxes = F.softmax(logits, dim=1)
    confidences, predictions = torch.max(softmaxes, 1)
    accuracies = predictions.eq(labels)
    ece = torch.zeros(1, dtype=torch.float64)
    for lo, hi in zip(boundaries[:-1], boundaries[1:]):
        in_bin = confidences.gt(lo.item()) * confidences.le(hi.item())
        prop_in_bin = in_bin.double().mean()
        if prop_in_bin.item() > 0:
            accuracy_in_bin = accuracies[in_bin].double().mean()
            avg_confidence_in_bin = confidences[in_bin].mean()
            ece += torch.abs(avg_confidence_in_bin - accuracy_in_bin) * prop_in_bin
    return ece.item(), confidences.numpy(), accuracies.numpy()


def test_ece_equals_gpleiss_ece_loss_in_float64(torch):
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(100):
        N, K = int(rng.integers(5, 200)), int(rng.integers(2, 12))
        Z = rng.normal(size=(N, K)) * rng.uniform(0.3, 4)
        y = rng.integers(0, K, size=N)
        ref, conf, ok = ece_loss_float64(torch, torch.tensor(Z), torch.tensor(y))
        worst = max(worst, abs(expected_calibration_error(conf, ok) - ref))
    # per-bin means of up to N terms summed in different orders: a rigorous bound is about
    # N·ε (4.4e-14 at N = 200); the evidence measured 3.9e-16
    assert worst <= 200 * EPS


def test_fit_temperature_equals_scipy_bounded_search_and_brentq():
    so = pytest.importorskip("scipy.optimize")
    for args, n in ((S84, 2500), (EX9, 1500)):
        _, y, z = synthetic(*args)
        z, y = z[:n], y[:n]
        T = fit_temperature(z, y)
        r = so.minimize_scalar(
            lambda t, z=z, y=y: temperature_nll(z, y, t),
            bounds=(0.05, 20),
            method="bounded",
            options={"xatol": 1e-10},
        )
        # from function values alone a minimizer is located to about sqrt(ε) ≈ 1.5e-8
        assert abs(r.x / T - 1) <= 1e-7
        zy = z[np.arange(n), y]

        def g(beta, z=z, zy=zy):
            return ((np.exp(log_softmax(beta * z)) * z).sum(-1) - zy).mean()

        beta = so.brentq(g, 1e-6, 50, xtol=1e-15, rtol=4 * EPS)
        assert abs(T * beta - 1) <= 1e-12  # both find the root of dNLL/dβ to rounding


def test_fit_temperature_equals_converged_lbfgs_and_the_reference_script_stops_early(torch):
    _, y, z = synthetic(*S84)
    tz, ty = torch.tensor(z[:2500]), torch.tensor(y[:2500])
    log_t = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS(
        [log_t], lr=1, max_iter=500, tolerance_grad=1e-15, tolerance_change=1e-18,
        line_search_fn="strong_wolfe",
    )  # fmt: skip

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(tz / log_t.exp(), ty)
        loss.backward()
        return loss

    opt.step(closure)
    T = fit_temperature(z[:2500], y[:2500])
    assert abs(log_t.exp().item() / T - 1) <= 1e-7
    # temperature_scaling.py: T0 = 1.5, LBFGS(lr=0.01, max_iter=50), one step
    t = torch.full((1,), 1.5, dtype=torch.float64, requires_grad=True)
    opt2 = torch.optim.LBFGS([t], lr=0.01, max_iter=50)

    def closure2():
        opt2.zero_grad()
        loss = torch.nn.functional.cross_entropy(tz / t, ty)
        loss.backward()
        return loss

    opt2.step(closure2)
    assert round(t.item(), 4) == 1.701 and round(T, 4) == 2.4315
