"""Tests for llmmath.tokstats: Rényi entropy and efficiency, fertility, premium."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmmath.tokstats import fertility, premium, renyi_efficiency, renyi_entropy

PROPS = settings(max_examples=60, deadline=None)

# Corpus A {low 5, lower 2, lowest 3, newer 6, wider 4, new 2} encoded with its 8 merges
# (er, lo, low, ew, new, newer, der, ider): low → [low], lower → [low, er],
# lowest → [low, e, s, t], newer → [newer], wider → [w, ider], new → [new].
A_COUNTS = {"low": 10, "newer": 6, "w": 4, "ider": 4, "e": 3, "s": 3, "t": 3, "er": 2, "new": 2}
C_A = np.array(list(A_COUNTS.values()))
A_PIECES = {
    "low": (5, 1),
    "lower": (2, 2),
    "lowest": (3, 4),
    "newer": (6, 1),
    "wider": (4, 2),
    "new": (2, 1),
}
PER_WORD = [n for c, n in A_PIECES.values() for _ in range(c)]

# tokenization-scorer 1.1.8's own test texts and the values its test.py asserts at power 2.5
# (zouharvi/tokenization-scorer, test.py; the README prints the values at power 3.0)
SCORER_TEXTS = (
    "pick @@ed pick @@l @@ed pick @@les",
    "pick @@e @@d pick @@l @@e @@d pick @@l @@e @@s",
)
SCORER_VALUES = (0.8265064834225245, 0.9204840242168808)

counts = st.lists(st.integers(0, 50), min_size=1, max_size=12).filter(lambda c: sum(c) > 0)
alphas = st.one_of(st.floats(0, 6), st.just(math.inf))


def _counts_of(text):
    words = text.split()
    return np.array([words.count(w) for w in dict.fromkeys(words)])


# ---------------------------------------------------------------- the lesson's numbers


def test_corpus_a_renyi_entropies():
    assert C_A.sum() == 37 and len(C_A) == 9
    got = [round(renyi_entropy(C_A, a, base=2), 4) for a in (0.5, 1, 2, 2.5, math.inf)]
    assert got == [3.0715, 2.9664, 2.7536, 2.6556, 1.8875]
    assert renyi_entropy(C_A, 0, base=2) == pytest.approx(math.log2(9), abs=1e-15)
    # nats: bits · ln 2 (fact-check F7: 2.056137859819341 nats at α = 1)
    assert abs(renyi_entropy(C_A, 1) - 2.056137859819341) < 1e-14
    assert abs(renyi_entropy(C_A, 1) - renyi_entropy(C_A, 1, base=2) * math.log(2)) < 1e-14
    # base e passed explicitly is nats
    assert abs(renyi_entropy(C_A, 2.5, base=math.e) - renyi_entropy(C_A, 2.5)) < 1e-14


def test_corpus_a_efficiencies():
    assert round(renyi_efficiency(C_A), 4) == 0.8377  # 9 observed types, α = 2.5
    assert round(renyi_efficiency(C_A, vocab_size=18), 4) == 0.6368
    assert round(renyi_efficiency(C_A, vocab_size=264), 4) == 0.3301
    assert round(renyi_efficiency(C_A, 1), 4) == 0.9358  # Shannon efficiency
    assert round(renyi_efficiency(C_A, 1, vocab_size=18), 4) == 0.7114
    assert round(renyi_efficiency(C_A, 1, vocab_size=264), 4) == 0.3688
    # before any merge: the 10 letters of corpus A
    letters = np.array(
        [sum(c * w.count(ch) for w, (c, _) in A_PIECES.items()) for ch in "lowerstnid"]
    )
    assert round(renyi_entropy(letters, 1, base=2), 4) == 2.9817
    assert round(renyi_efficiency(letters), 4) == 0.7971


def test_scorer_values_hard_coded():
    """The scorer's test texts give its asserted values (1 ulp apart at most: two log bases)."""
    for text, want in zip(SCORER_TEXTS, SCORER_VALUES):
        assert abs(renyi_efficiency(_counts_of(text), 2.5) - want) < 1e-15
    assert _counts_of(SCORER_TEXTS[0]).tolist() == [3, 2, 1, 1]


def test_fertility_corpus_a():
    assert len(PER_WORD) == 22 and sum(PER_WORD) == 37
    fert, cont = fertility(PER_WORD)
    assert (round(fert, 6), round(cont, 6)) == (1.681818, 0.409091)
    assert fert == 37 / 22 and cont == 9 / 22
    assert fertility(np.array([1, 1, 1], dtype=np.uint8)) == (1.0, 0.0)


def test_premium():
    assert premium(30, 20) == 1.5 and isinstance(premium(30, 20), float)
    np.testing.assert_array_equal(premium([3, 5], [2, 5]), [1.5, 1.0])
    np.testing.assert_array_equal(premium([[4], [6]], [2, 4]), [[2.0, 1.0], [3.0, 1.5]])
    # a corpus premium is the ratio of totals, not the mean of per-sentence ratios
    n, ref = np.array([3, 5]), np.array([2, 5])
    assert premium(n.sum(), ref.sum()) == 8 / 7 != float(premium(n, ref).mean())


# ---------------------------------------------------------------- properties


@PROPS
@given(c=counts, a=alphas)
def test_renyi_properties(c, a):
    c = np.array(c)
    h = renyi_entropy(c, a)
    k = np.count_nonzero(c)
    assert -1e-12 <= h <= math.log(k) + 1e-12  # 0 ≤ H_α ≤ log(#types)
    if np.isfinite(a):
        assert h <= renyi_entropy(c, a / 2) + 1e-12  # non-increasing in α
    assert h >= renyi_entropy(c, math.inf) - 1e-12
    assert abs(renyi_entropy(c, a, base=2) - h / math.log(2)) <= 1e-12 * max(1.0, h)
    assert abs(renyi_entropy(c * 7, a) - h) < 1e-12  # only proportions matter
    assert renyi_entropy(np.concatenate([c, [0, 0]]), a) == h  # zero counts are ignored
    if k >= 2:
        e = renyi_efficiency(c, a)
        assert abs(e - h / math.log(k)) < 1e-15 and renyi_efficiency(c, a, vocab_size=k) == e


@PROPS
@given(c=counts)
def test_renyi_limits_approach_shannon_and_min_entropy(c):
    c = np.array(c, dtype=float)
    h1 = renyi_entropy(c, 1)
    # |d H_α / dα| ≤ log(#types)²: a step of 1e-6 in α moves H by at most a few 1e-6
    assert (
        abs(renyi_entropy(c, 1 + 1e-6) - h1) < 1e-5 and abs(renyi_entropy(c, 1 - 1e-6) - h1) < 1e-5
    )
    assert abs(renyi_entropy(c, 400.0) - renyi_entropy(c, math.inf)) < math.log(12) / 399 + 1e-12


@PROPS
@given(c=counts)
def test_alpha_one_equals_measures_entropy(c):
    measures = pytest.importorskip("llmmath.measures")
    c = np.array(c, dtype=float)
    for b in (None, 2):
        assert (
            abs(renyi_entropy(c, 1, base=b) - float(measures.entropy(c / c.sum(), base=b))) < 1e-12
        )


@PROPS
@given(n=st.lists(st.integers(1, 9), min_size=1, max_size=30))
def test_fertility_properties(n):
    fert, cont = fertility(n)
    assert fert == pytest.approx(np.mean(n), rel=1e-15)
    assert cont == sum(x >= 2 for x in n) / len(n)
    assert fert >= 1 and 0 <= cont <= 1 and (cont == 0) == (fert == 1)


# ---------------------------------------------------------------- bad input

BAD = [
    ("counts-neg", lambda: renyi_entropy([1, -1, 2], 2), ValueError, "counts must be non-negative"),
    (
        "counts-zero",
        lambda: renyi_entropy([0, 0], 2),
        ValueError,
        "counts must have a positive sum",
    ),
    ("counts-2d", lambda: renyi_entropy([[1, 2], [3, 4]], 2), ValueError, "counts must be 1-D"),
    ("counts-0d", lambda: renyi_entropy(3, 2), ValueError, "counts must be 1-D"),
    ("counts-empty", lambda: renyi_entropy([], 2), ValueError, "counts is empty"),
    ("counts-nan", lambda: renyi_entropy([1.0, math.nan], 2), ValueError, "counts must be finite"),
    ("counts-str", lambda: renyi_entropy(["a"], 2), TypeError, "counts must be numeric"),
    ("alpha-neg", lambda: renyi_entropy([1, 2], -0.5), ValueError, "alpha must be >= 0"),
    ("alpha-nan", lambda: renyi_entropy([1, 2], math.nan), ValueError, "alpha must be >= 0"),
    ("alpha-neginf", lambda: renyi_entropy([1, 2], -math.inf), ValueError, "alpha"),
    ("alpha-none", lambda: renyi_entropy([1, 2], None), TypeError, "alpha must be a real"),
    ("base-one", lambda: renyi_entropy([1, 2], 2, base=1), ValueError, "base must be None or"),
    ("base-zero", lambda: renyi_entropy([1, 2], 2, base=0), ValueError, "base"),
    ("base-neg", lambda: renyi_entropy([1, 2], 2, base=-2), ValueError, "base"),
    (
        "eff-one-type",
        lambda: renyi_efficiency([5, 0]),
        ValueError,
        "counts has 1 observed type; efficiency needs n_V ≥ 2; pass vocab_size",
    ),
    (
        "eff-vocab-small",
        lambda: renyi_efficiency([1, 2, 3], vocab_size=2),
        ValueError,
        "vocab_size must be >= the 3 observed",
    ),
    (
        "eff-vocab-one",
        lambda: renyi_efficiency([5], vocab_size=1),
        ValueError,
        "vocab_size must be >= 2",
    ),
    (
        "eff-vocab-float",
        lambda: renyi_efficiency([1, 2], vocab_size=9.0),
        TypeError,
        "vocab_size must be an integer",
    ),
    ("eff-alpha", lambda: renyi_efficiency([1, 2], -1), ValueError, "alpha"),
    ("fert-zero", lambda: fertility([1, 0, 2]), ValueError, "pieces_per_word must be >= 1"),
    ("fert-float", lambda: fertility([1.0, 2.0]), TypeError, "pieces_per_word must be integers"),
    ("fert-bool", lambda: fertility([True]), TypeError, "pieces_per_word must be integers"),
    ("fert-2d", lambda: fertility([[1, 2]]), ValueError, "pieces_per_word must be 1-D"),
    (
        "fert-empty",
        lambda: fertility(np.array([], dtype=int)),
        ValueError,
        "pieces_per_word must be 1-D and non-empty",
    ),
    (
        "prem-zero",
        lambda: premium([1, 2], [0, 1]),
        ValueError,
        "n_tokens_reference must be positive",
    ),
    ("prem-neg", lambda: premium(-1, 2), ValueError, "n_tokens must be positive"),
    ("prem-shape", lambda: premium([1, 2, 3], [1, 2]), ValueError, "must broadcast"),
    ("prem-empty", lambda: premium([], [1]), ValueError, "n_tokens is empty"),
    ("prem-inf", lambda: premium(math.inf, 1), ValueError, "n_tokens must be finite"),
]


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---------------------------------------------------------------- cross-check


def test_matches_tokenization_scorer(capsys):
    ts = pytest.importorskip("tokenization_scorer")
    for text, want in zip(SCORER_TEXTS, SCORER_VALUES):
        assert float(ts.score(text, metric="renyi", power=2.5)) == want
    rng = np.random.default_rng(0)
    for _ in range(50):
        words = [
            f"w{k}"
            for k in rng.integers(0, int(rng.integers(2, 15)), size=int(rng.integers(2, 60)))
        ]
        if len(set(words)) < 2:
            continue
        text = " ".join(words)
        c = _counts_of(text)
        # α = 1 through metric="shannon_efficiency": the scorer's renyi metric at power=1.0
        # hands an exhausted generator to its Shannon branch and returns 0
        ref = float(ts.score(text, metric="shannon_efficiency"))
        assert abs(renyi_efficiency(c, 1) - ref) < 1e-14, text
        for alpha in (0.5, 2.0, 2.5, 3.0):
            ref = float(ts.score(text, metric="renyi", power=alpha))
            # log vs log2 and a different summation order: a few ulps of a value ≤ 1
            assert abs(renyi_efficiency(c, alpha) - ref) < 1e-14, (text, alpha)
        V = len(c) + int(rng.integers(0, 100))
        ref = float(ts.score(text, metric="renyi", power=2.5, vocab=V))
        assert abs(renyi_efficiency(c, 2.5, vocab_size=V) - ref) < 1e-14
    capsys.readouterr()  # the scorer prints progress bars and vocabulary sizes
