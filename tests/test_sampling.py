"""Tests for llmmath.sampling: temperature, the top-k/top-p/min-p/typical/ε filters, sample.

The numbers are those of Lesson E §6.1–§6.5 and Exercises 3–4. Cross-checks against
transformers' warpers (float64 rows: same finite entries, bitwise equal values) and
torch.multinomial (in distribution) skip without the reference packages.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from llmmath.sampling import (
    apply_temperature,
    epsilon_filter,
    min_p_filter,
    sample,
    top_k_filter,
    top_p_filter,
    typical_filter,
)
from llmmath.softmax import softmax


def wrong(value: Any) -> Any:
    """An argument of the wrong type, passed on as is (typed ``Any`` for mypy)."""
    return value


PROPS = settings(max_examples=60, deadline=None)
Z = np.array([2.0, 1.0, 0.5, 0.0, -1.0])  # the lesson's running logits
EX4 = np.log([0.42, 0.25, 0.15, 0.10, 0.05, 0.03])  # Exercise 4


def kept(x):
    """The indices of the finite entries of a 1-D filtered row."""
    return np.flatnonzero(np.isfinite(x)).tolist()


def entropy(p):
    return float(-np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)))


# ---------------------------------------------------------------- §6.1 temperature


def test_temperature_values_of_the_lesson():
    assert apply_temperature(Z, 0.5).tolist() == [4.0, 2.0, 1.0, 0.0, -2.0]
    p_half, p1, p2 = (softmax(apply_temperature(Z, T)) for T in (0.5, 1.0, 2.0))
    np.testing.assert_array_equal(p_half.round(4), [0.8292, 0.1122, 0.0413, 0.0152, 0.0021])
    np.testing.assert_array_equal(p2.round(4), [0.3745, 0.2272, 0.1769, 0.1378, 0.0836])
    assert [round(entropy(p), 4) for p in (p_half, p1, p2)] == [0.6086, 1.2065, 1.4915]
    # T -> 0+: uniform over the tied maxima, not greedy
    np.testing.assert_array_equal(
        softmax(apply_temperature([1.0, 1.0, 0.0], 0.01)).round(4), [0.5, 0.5, 0]
    )
    # Exercise 3
    ex3 = [softmax(apply_temperature([1.5, 0.5, 0.0, -2.0], T)).round(4) for T in (0.5, 1, 2)]
    np.testing.assert_array_equal(ex3[0], [0.8431, 0.1141, 0.0420, 0.0008])
    np.testing.assert_array_equal(ex3[1], [0.6168, 0.2269, 0.1376, 0.0186])
    np.testing.assert_array_equal(ex3[2], [0.4439, 0.2692, 0.2097, 0.0771])
    # -inf stays removed; dtype float64 for int and float32 input, longdouble kept
    assert apply_temperature([0.0, -np.inf], 2.0).tolist() == [0.0, -np.inf]
    assert apply_temperature(np.array([1, 2]), 2).dtype == np.float64
    assert apply_temperature(np.ones(2, np.float32), 2).dtype == np.float64
    assert apply_temperature(np.ones(2, np.longdouble), 2).dtype == np.longdouble


# ---------------------------------------------------------------- §6.2 top-k, top-p


def test_top_k_and_top_p_values_of_the_lesson():
    np.testing.assert_array_equal(softmax(top_k_filter(Z, 2)).round(4), [0.7311, 0.2689, 0, 0, 0])
    np.testing.assert_array_equal(
        softmax(top_k_filter(Z, 3))[:3].round(4), [0.6285, 0.2312, 0.1402]
    )
    assert top_k_filter([3.0, 2.0, 2.0, 1.0], 2).tolist() == [3.0, 2.0, 2.0, -np.inf]  # tie kept
    assert kept(top_k_filter(Z, 9)) == [0, 1, 2, 3, 4]  # k >= V keeps everything
    assert kept(top_k_filter(Z, 1, min_keep=3)) == [0, 1, 2]
    np.testing.assert_array_equal(np.cumsum(softmax(Z)).round(3)[:3], [0.563, 0.770, 0.896])
    assert [len(kept(top_p_filter(Z, p))) for p in (0.5, 0.8, 0.9)] == [1, 3, 4]
    np.testing.assert_array_equal(
        softmax(top_p_filter(Z, 0.8))[:3].round(4), [0.6285, 0.2312, 0.1402]
    )
    assert kept(top_p_filter(Z, 0.0)) == [0] and kept(top_p_filter(Z, 0.0, min_keep=2)) == [0, 1]
    assert kept(top_p_filter(Z, 1.0)) == [0, 1, 2, 3, 4]
    # exact boundaries: float64 rounding decides (HF agrees on float64 logits)
    assert 1 - 0.8 == 0.19999999999999996
    assert len(kept(top_p_filter(np.log([0.5, 0.3, 0.2]), 0.8))) == 3  # exact arithmetic: 2
    assert len(kept(top_p_filter(np.log([0.4, 0.3, 0.2, 0.1]), 0.7))) == 2
    assert len(kept(top_p_filter(np.log([0.5, 0.25, 0.25]), 0.75))) == 2


# ---------------------------------------------------------------- §6.3 min-p, ε, typical


def test_min_p_epsilon_typical_values_of_the_lesson():
    p = softmax(Z)
    assert round(0.1 * p.max(), 4) == 0.0563 and round(0.3 * p.max(), 4) == 0.1689
    assert [len(kept(min_p_filter(Z, m))) for m in (0.1, 0.2, 0.3)] == [4, 3, 2]
    assert [len(kept(epsilon_filter(Z, e))) for e in (0.03, 0.1)] == [4, 3]
    H = entropy(p)
    assert round(H, 4) == 1.2065
    np.testing.assert_array_equal(
        np.abs(-np.log(p) - H).round(3), [0.632, 0.368, 0.868, 1.368, 2.368]
    )
    assert kept(typical_filter(Z, 0.2)) == [1]  # the argmax is dropped
    assert kept(typical_filter(Z, 0.5)) == [0, 1]
    assert kept(typical_filter(Z, 0.9)) == [0, 1, 2, 3]
    assert kept(typical_filter(Z, 0.2, min_keep=2)) == [0, 1]
    # ε keeps the min_keep largest even below ε; min-p its min_keep most probable
    assert kept(epsilon_filter(Z, 0.9, min_keep=2)) == [0, 1]
    assert kept(min_p_filter(Z, 1.0, min_keep=3)) == [0, 1, 2]


def test_exercise_4_sets():
    assert kept(top_k_filter(EX4, 3)) == [0, 1, 2]
    assert kept(top_p_filter(EX4, 0.8)) == [0, 1, 2]
    assert round(0.2 * 0.42, 3) == 0.084 and kept(min_p_filter(EX4, 0.2)) == [0, 1, 2, 3]
    assert round(entropy(softmax(EX4)), 4) == 1.4807
    assert kept(typical_filter(EX4, 0.5)) == [0, 1, 2]
    assert kept(epsilon_filter(EX4, 0.04)) == [0, 1, 2, 3, 4]
    kp = top_p_filter(top_k_filter(EX4, 3), 0.8)
    np.testing.assert_array_equal(softmax(kp)[:2].round(4), [0.6269, 0.3731])
    assert len(kept(kp)) == 2 and len(kept(top_k_filter(top_p_filter(EX4, 0.8), 3))) == 3


# ---------------------------------------------------------------- §6.5 order


def test_order_matters_as_in_the_lesson():
    z = np.log([0.4, 0.3, 0.2, 0.1])
    kp, pk = top_p_filter(top_k_filter(z, 3), 0.75), top_k_filter(top_p_filter(z, 0.75), 3)
    assert len(kept(kp)) == 2 and len(kept(pk)) == 3
    np.testing.assert_array_equal(softmax(top_k_filter(z, 3))[:3].round(3), [0.444, 0.333, 0.222])
    np.testing.assert_array_equal(softmax(kp)[:2].round(4), [0.5714, 0.4286])
    # temperature before top-p (HF's order) vs after, p = 0.85
    for T, before, after in ((2.0, 4, 3), (0.5, 2, 3)):
        assert len(kept(top_p_filter(apply_temperature(Z, T), 0.85))) == before
        assert len(kept(apply_temperature(top_p_filter(Z, 0.85), T))) == after


def test_top_k_then_top_p_keeps_a_subset_of_top_p_then_top_k():
    rng = np.random.default_rng(3)
    for _ in range(20):
        z = rng.normal(size=(100, 20)) * rng.uniform(0.5, 3)
        k, p = int(rng.integers(1, 20)), float(rng.uniform(0.05, 0.99))
        a = np.isfinite(top_p_filter(top_k_filter(z, k), p))
        b = np.isfinite(top_k_filter(top_p_filter(z, p), k))
        assert np.all(a <= b)


# ---------------------------------------------------------------- §6.1 sample


def test_sample_frequencies_of_the_lesson():
    p, N = softmax(Z), 100_000
    draws = sample(np.broadcast_to(Z, (N, 5)), np.random.default_rng(0))
    assert draws.shape == (N,) and draws.dtype == np.int64
    dev = np.abs(np.bincount(draws, minlength=5) / N - p).max()
    assert dev <= 4 * np.sqrt(p * (1 - p) / N).max()  # 4 standard errors: 0.0063
    assert round(4 * np.sqrt(p * (1 - p) / N).max(), 4) == 0.0063
    assert round(float(dev), 4) == 0.0013  # the realized value for this seed (§6.1)
    # `size` draws the same uniforms in the same order as a batch of rows
    np.testing.assert_array_equal(sample(Z, np.random.default_rng(0), size=N), draws)


def test_sample_inverse_cdf_rule_shapes_and_determinism():
    u = np.random.default_rng(5).random(4)
    ids = sample(np.log([[0.25, 0.5, 0.25]] * 4), np.random.default_rng(5))
    np.testing.assert_array_equal(ids, np.searchsorted([0.25, 0.75, 1.0], u, side="right"))
    one = sample(Z, np.random.default_rng(1))
    assert isinstance(one, np.integer) and one.shape == ()
    logits = np.random.default_rng(2).normal(size=(2, 3, 7))
    assert sample(logits, np.random.default_rng(0)).shape == (2, 3)
    assert sample(logits, np.random.default_rng(0), size=4).shape == (2, 3, 4)
    a, b = (sample(logits, np.random.default_rng(9), size=50) for _ in range(2))
    np.testing.assert_array_equal(a, b)
    # -inf entries are never drawn, wherever they sit (the last ones included)
    masked = np.array(
        [[-np.inf, 0.0, -np.inf, 1.0, -np.inf], [5.0, -np.inf, -np.inf, -np.inf, -np.inf]]
    )
    draws = sample(masked, np.random.default_rng(0), size=20_000)
    assert set(np.unique(draws[0])) == {1, 3} and set(np.unique(draws[1])) == {0}


def test_sample_batched_rows_follow_their_own_distributions():
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(3, 6)) * 1.5
    logits[1, 2] = -np.inf
    N = 40_000
    draws = sample(logits, np.random.default_rng(11), size=N)
    p = softmax(logits)
    for row in range(3):
        f = np.bincount(draws[row], minlength=6) / N
        assert np.all(np.abs(f - p[row]) <= 4 * np.sqrt(p[row] * (1 - p[row]) / N) + 1e-12)


# ---------------------------------------------------------------- properties

FILTERS = {
    "top_k": lambda z, keep: top_k_filter(z, 2, min_keep=keep),
    "top_p": lambda z, keep: top_p_filter(z, 0.7, min_keep=keep),
    "min_p": lambda z, keep: min_p_filter(z, 0.2, min_keep=keep),
    "typical": lambda z, keep: typical_filter(z, 0.6, min_keep=keep),
    "epsilon": lambda z, keep: epsilon_filter(z, 0.15, min_keep=keep),
}


@st.composite
def masked_logits(draw):
    z = draw(hnp.arrays(np.float64, (3, 6), elements=st.floats(-20, 20)))
    removed = draw(hnp.arrays(np.bool_, (3, 6)))
    removed[:, 0] = False  # at least one finite entry per row
    return np.where(removed, -np.inf, z)


@PROPS
@given(z=masked_logits(), keep=st.integers(1, 7), name=st.sampled_from(sorted(FILTERS)))
def test_filters_only_remove_and_keep_enough(z, keep, name):
    out = FILTERS[name](z, keep)
    assert out.shape == z.shape and out.dtype == np.float64
    fin = np.isfinite(out)
    np.testing.assert_array_equal(out[fin], z[fin])  # survivors untouched
    assert np.all(np.isneginf(out[~fin]))
    assert np.all(fin <= np.isfinite(z))  # a removed token stays removed
    assert np.all(fin.sum(-1) >= np.minimum(keep, np.isfinite(z).sum(-1)))
    if name != "typical":  # a most probable token survives (typical may drop it)
        np.testing.assert_array_equal(out.max(-1), z.max(-1))


@PROPS
@given(z=masked_logits(), a=st.floats(0, 1), b=st.floats(0, 1), k=st.integers(1, 6))
def test_filters_are_monotone_in_their_parameter(z, a, b, k):
    lo, hi = min(a, b), max(a, b)
    fin = np.isfinite
    assert np.all(fin(top_p_filter(z, lo)) <= fin(top_p_filter(z, hi)))
    assert np.all(fin(min_p_filter(z, hi)) <= fin(min_p_filter(z, lo)))
    assert np.all(fin(top_k_filter(z, k)) <= fin(top_k_filter(z, k + 1)))
    if 0 < lo and hi < 1:
        assert np.all(fin(epsilon_filter(z, hi)) <= fin(epsilon_filter(z, lo)))


@PROPS
@given(
    z=masked_logits(), T=st.floats(0.05, 20), c=st.floats(-50, 50), seed=st.integers(0, 2**32 - 1)
)
def test_temperature_shift_invariance_and_samples_are_finite_tokens(z, T, c, seed):
    np.testing.assert_allclose(
        softmax(apply_temperature(z + c, T)), softmax(apply_temperature(z, T)), rtol=0, atol=1e-12
    )
    ids = sample(z, np.random.default_rng(seed), size=5)
    assert np.all(np.isfinite(np.take_along_axis(z, ids, axis=-1)))


# ---------------------------------------------------------------- bad input

RNG = np.random.default_rng(0)
BAD = [
    (
        "temperature-zero",
        lambda: apply_temperature(Z, 0.0),
        ValueError,
        "apply_temperature: temperature",
    ),
    ("temperature-neg", lambda: apply_temperature(Z, -1.0), ValueError, "temperature"),
    ("temperature-nan", lambda: apply_temperature(Z, np.nan), ValueError, "temperature"),
    ("temperature-inf", lambda: apply_temperature(Z, np.inf), ValueError, "temperature"),
    ("temperature-str", lambda: apply_temperature(Z, wrong("hot")), TypeError, "temperature"),
    ("k-zero", lambda: top_k_filter(Z, 0), ValueError, "top_k_filter: k must be >= 1"),
    (
        "k-float",
        lambda: top_k_filter(Z, wrong(3.0)),
        TypeError,
        "top_k_filter: k must be an integer",
    ),
    ("k-min-keep", lambda: top_k_filter(Z, 2, min_keep=0), ValueError, "min_keep"),
    (
        "top-p-min-keep-float",
        lambda: top_p_filter(Z, 0.5, min_keep=wrong(1.0)),
        TypeError,
        "min_keep",
    ),
    (
        "top-p-high",
        lambda: top_p_filter(Z, 1.5),
        ValueError,
        r"top_p_filter: top_p must lie in \[0, 1\]",
    ),
    ("top-p-neg", lambda: top_p_filter(Z, -0.1), ValueError, "top_p"),
    ("top-p-nan", lambda: top_p_filter(Z, np.nan), ValueError, "top_p"),
    ("min-p-high", lambda: min_p_filter(Z, 1.1), ValueError, "min_p_filter: min_p"),
    ("min-p-keep", lambda: min_p_filter(Z, 0.1, min_keep=-1), ValueError, "min_keep"),
    (
        "mass-zero",
        lambda: typical_filter(Z, 0.0),
        ValueError,
        r"typical_filter: mass must lie in \(0, 1\)",
    ),
    ("mass-one", lambda: typical_filter(Z, 1.0), ValueError, "mass"),
    (
        "epsilon-zero",
        lambda: epsilon_filter(Z, 0.0),
        ValueError,
        r"epsilon_filter: epsilon must lie in \(0, 1\)",
    ),
    ("epsilon-one", lambda: epsilon_filter(Z, 1.0), ValueError, "epsilon"),
    ("epsilon-keep", lambda: epsilon_filter(Z, 0.1, min_keep=0), ValueError, "min_keep"),
    (
        "logits-all-inf",
        lambda: top_k_filter([[0.0, 1.0], [-np.inf, -np.inf]], 1),
        ValueError,
        r"logits must keep at least one finite.*\(1,\)",
    ),
    (
        "logits-nan",
        lambda: top_p_filter([0.0, np.nan], 0.5),
        ValueError,
        "top_p_filter: logits must be finite",
    ),
    (
        "logits-posinf",
        lambda: min_p_filter([0.0, np.inf], 0.5),
        ValueError,
        "logits must be finite",
    ),
    ("logits-scalar", lambda: typical_filter(1.0, 0.5), ValueError, "logits must have at least 1"),
    ("logits-empty", lambda: epsilon_filter(np.zeros((2, 0)), 0.5), ValueError, "logits is empty"),
    ("logits-str", lambda: apply_temperature(["a", "b"], 1.0), TypeError, "logits must be numeric"),
    (
        "logits-ragged",
        lambda: sample([[0.0, 1.0], [0.0]], RNG),
        ValueError,
        "logits must be a rectangular",
    ),
    (
        "sample-all-inf",
        lambda: sample([-np.inf, -np.inf], RNG),
        ValueError,
        "sample: logits must keep",
    ),
    (
        "rng-none",
        lambda: sample(Z, wrong(None)),
        TypeError,
        "sample: rng must be a numpy.random.Generator",
    ),
    (
        "rng-seed",
        lambda: sample(Z, wrong(0)),
        TypeError,
        r"rng must be a numpy.random.Generator.*; got int",
    ),
    (
        "rng-legacy",
        lambda: sample(Z, wrong(np.random.RandomState(0))),
        TypeError,
        "got RandomState",
    ),
    ("size-zero", lambda: sample(Z, RNG, size=0), ValueError, "sample: size must be >= 1"),
    ("size-float", lambda: sample(Z, RNG, size=wrong(2.0)), TypeError, "size must be an integer"),
]


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------ cross-checks with torch, transformers


def _hf(warper, z):
    """Apply an HF warper to float64 rows ``z: (R, V)``."""
    import torch

    return warper(torch.zeros((len(z), 1), dtype=torch.long), torch.tensor(z)).numpy()


def _rows(seed, R=120, V=50, removed=0.0):
    """Random float64 rows (no ties almost surely); a fraction of entries set to -inf."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(R, V)) * rng.uniform(0.5, 4, size=(R, 1))
    drop = rng.random((R, V)) < removed
    drop[np.arange(R), z.argmax(-1)] = False
    return np.where(drop, -np.inf, z)


def test_filters_equal_hf_warpers_on_random_rows():
    pytest.importorskip("torch")
    lp = pytest.importorskip("transformers.generation.logits_process")
    for seed, removed in ((0, 0.0), (1, 0.3)):
        z = _rows(seed, removed=removed)
        cases = [(apply_temperature(z, 0.7), lp.TemperatureLogitsWarper(0.7))]
        for keep in (1, 3):
            cases += [
                (top_k_filter(z, k, min_keep=keep), lp.TopKLogitsWarper(k, min_tokens_to_keep=keep))
                for k in (1, 5, 50)
            ]
            cases += [
                (top_p_filter(z, p, min_keep=keep), lp.TopPLogitsWarper(p, min_tokens_to_keep=keep))
                for p in (0.1, 0.5, 0.9, 0.95)
            ]
            cases += [
                (min_p_filter(z, m, min_keep=keep), lp.MinPLogitsWarper(m, min_tokens_to_keep=keep))
                for m in (0.05, 0.1, 0.3)
            ]
            cases += [
                (
                    epsilon_filter(z, e, min_keep=keep),
                    lp.EpsilonLogitsWarper(e, min_tokens_to_keep=keep),
                )
                for e in (3e-4, 0.02, 0.2)
            ]
            cases += [
                (
                    typical_filter(z, m, min_keep=keep),
                    lp.TypicalLogitsWarper(m, min_tokens_to_keep=keep),
                )
                for m in (0.2, 0.5, 0.9)
            ]
        for ours, warper in cases:
            # same finite entries, bitwise equal values (-inf == -inf)
            np.testing.assert_array_equal(ours, _hf(warper, z), err_msg=repr(warper))


def test_top_k_equals_hf_with_ties():
    pytest.importorskip("torch")
    lp = pytest.importorskip("transformers.generation.logits_process")
    z = np.random.default_rng(2).integers(-3, 4, size=(300, 12)).astype(float)  # many ties
    for k in (1, 2, 5):
        np.testing.assert_array_equal(top_k_filter(z, k), _hf(lp.TopKLogitsWarper(k), z))
        np.testing.assert_array_equal(
            epsilon_filter(z, 0.2, min_keep=k),
            _hf(lp.EpsilonLogitsWarper(0.2, min_tokens_to_keep=k), z),
        )


def test_top_p_boundary_depends_on_dtype_in_hf():
    torch = pytest.importorskip("torch")
    lp = pytest.importorskip("transformers.generation.logits_process")
    z = np.log([[0.5, 0.3, 0.2]])
    ids = torch.zeros((1, 1), dtype=torch.long)
    hf32 = lp.TopPLogitsWarper(0.8)(ids, torch.tensor(z, dtype=torch.float32)).numpy()
    assert (
        np.isfinite(_hf(lp.TopPLogitsWarper(0.8), z)).sum()
        == 3
        == np.isfinite(top_p_filter(z, 0.8)).sum()
    )
    assert np.isfinite(hf32).sum() == 2  # what generate() passes: float32 scores
    z4 = np.log([[0.4, 0.3, 0.2, 0.1]])
    assert (
        np.isfinite(_hf(lp.TopPLogitsWarper(0.7), z4)).sum()
        == 2
        == np.isfinite(top_p_filter(z4, 0.7)).sum()
    )


def test_exercise_4_sets_equal_hf():
    pytest.importorskip("torch")
    lp = pytest.importorskip("transformers.generation.logits_process")
    z = EX4[None]
    pairs = [
        (top_k_filter(z, 3), lp.TopKLogitsWarper(3)),
        (top_p_filter(z, 0.8), lp.TopPLogitsWarper(0.8)),
        (min_p_filter(z, 0.2), lp.MinPLogitsWarper(0.2)),
        (typical_filter(z, 0.5), lp.TypicalLogitsWarper(0.5)),
        (epsilon_filter(z, 0.04), lp.EpsilonLogitsWarper(0.04)),
    ]
    for ours, warper in pairs:
        np.testing.assert_array_equal(ours, _hf(warper, z))


def test_sample_agrees_with_torch_multinomial_in_distribution():
    torch = pytest.importorskip("torch")
    z = np.array([1.0, 0.2, -np.inf, -0.5, 0.9, -2.0])
    p, N = softmax(z), 100_000
    ours = np.bincount(sample(z, np.random.default_rng(0), size=N), minlength=6) / N
    gen = torch.Generator().manual_seed(0)
    draws = torch.multinomial(torch.tensor(p), N, replacement=True, generator=gen).numpy()
    theirs = np.bincount(draws, minlength=6) / N
    se = np.sqrt(p * (1 - p) / N)
    assert np.all(np.abs(ours - p) <= 4 * se) and np.all(np.abs(theirs - p) <= 4 * se)
    assert ours[2] == theirs[2] == 0
