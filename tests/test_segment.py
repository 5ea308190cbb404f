"""Tests for llmmath.segment: the segmentation lattice and the unigram language model."""

from __future__ import annotations

import collections
import inspect
import json
import math
import random
import re
import textwrap
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmmath.segment import (
    count_bounded_segmentations,
    count_segmentations,
    em_step,
    forward_backward,
    removal_loss,
    sample_segmentation,
    segmentation_entropy,
    viterbi,
)

PROPS = settings(max_examples=40, deadline=None)

# The lesson's unigram toy (curriculum §4) and corpus C.
P = {"a": 0.3, "b": 0.2, "ab": 0.4, "ba": 0.1}
LP = {t: math.log(p) for t, p in P.items()}
C = {"abab": 2, "aba": 1, "bab": 1}
SEGS = [["a", "b", "a", "b"], ["ab", "a", "b"], ["a", "ba", "b"], ["a", "b", "ab"], ["ab", "ab"]]


def segs(s, vocab):
    """Every segmentation of ``s`` into pieces of ``vocab``, by enumeration (reference)."""
    if not s:
        yield []
        return
    for k in range(1, len(s) + 1):
        if s[:k] in vocab:
            for rest in segs(s[k:], vocab):
                yield [s[:k], *rest]


def path_score(seg, lp):
    """Left-to-right float64 sum of the scores, the order in which viterbi adds them."""
    total = 0.0
    for t in seg:
        total += lp[t]
    return total


def brute(s, lp, alpha=1.0):
    """log Z, expected counts and entropy of P_α(x | s) by enumeration."""
    S = list(segs(s, lp))
    w = np.array([alpha * sum(lp[t] for t in x) for x in S])
    q = np.exp(w - w.max())
    q /= q.sum()
    ex = Counter()
    for x, qx in zip(S, q):
        for t in x:
            ex[t] += qx
    log_z = float(w.max() + np.log(np.exp(w - w.max()).sum()))
    return log_z, ex, float(-(q * np.log(q)).sum()), S


# small vocabularies over "abc" (every single letter, so every string is covered)
vocabs = st.sets(st.text("abc", min_size=2, max_size=4), max_size=6).map(lambda v: v | set("abc"))
words = st.text("abc", min_size=1, max_size=9)


# ---------------------------------------------------------------- the lesson's numbers


def test_unigram_toy_numbers():
    assert count_segmentations("abab", P) == 5
    assert sorted(map(tuple, segs("abab", P))) == sorted(map(tuple, SEGS))
    probs = [math.prod(P[t] for t in x) for x in SEGS]
    np.testing.assert_allclose(probs, [0.0036, 0.024, 0.006, 0.024, 0.16], rtol=1e-14)
    pieces, score = viterbi("abab", LP)
    assert pieces == ["ab", "ab"]
    assert score == LP["ab"] + LP["ab"]  # the path's sum, exactly
    assert round(score, 6) == -1.832581
    log_z, ex = forward_backward("abab", LP)
    assert abs(log_z - math.log(0.2176)) < 1e-14
    assert round(log_z, 6) == -1.525097
    assert round(math.exp(score - log_z), 4) == 0.7353  # posterior of the Viterbi path
    assert {t: round(v, 6) for t, v in ex.items()} == {
        "a": 0.28125,
        "b": 0.28125,
        "ab": 1.691176,
        "ba": 0.027574,
    }
    assert abs(sum(ex.values()) - 2.28125) < 1e-14  # expected number of tokens
    assert round(segmentation_entropy("abab", LP), 6) == 0.879275


def test_em_on_corpus_c():
    new, ll = em_step(C, LP)
    assert round(ll, 6) == -7.023241
    assert list(new) == ["a", "b", "ab", "ba"]
    assert [round(math.exp(v), 4) for v in new.values()] == [0.2024, 0.2024, 0.5481, 0.0470]
    # the expected counts behind p' (exercise 6): p' times their sum 8.776786
    counts = {t: 8.776786 * math.exp(v) for t, v in new.items()}
    np.testing.assert_allclose(
        list(counts.values()), [1.776786, 1.776786, 4.810924, 0.41229], atol=2e-6
    )
    lls, cur = [ll], new
    for _ in range(5):
        cur, ll = em_step(C, cur)
        lls.append(ll)
    assert [round(x, 6) for x in lls[:4]] == [-7.023241, -6.204817, -5.88366, -5.783902]
    assert all(b >= a for a, b in zip(lls, lls[1:]))
    assert round(math.exp(cur["ba"]), 4) == 0.0003  # EM sparsifies


def test_removal_loss_on_corpus_c():
    assert round(removal_loss(C, LP, "ba"), 6) == -0.479874
    assert round(removal_loss(C, LP, "ab"), 6) == 2.746486
    # by hand: renormalize without the piece, compare corpus log-likelihoods
    rest = {t: v - math.log(1 - P["ab"]) for t, v in LP.items() if t != "ab"}
    by_hand = sum(
        c * (forward_backward(w, LP)[0] - forward_backward(w, rest)[0]) for w, c in C.items()
    )
    assert abs(removal_loss(C, LP, "ab") - by_hand) < 1e-13


def test_counting_numbers():
    assert [count_bounded_segmentations(10, L) for L in (2, 3, 4, 10, 1000)] == [
        89,
        274,
        401,
        512,
        512,
    ]
    assert [count_bounded_segmentations(20, L) for L in (2, 3, 4, 20)] == [
        10946,
        121415,
        283953,
        524288,
    ]
    assert count_bounded_segmentations(5, 4) == 15
    assert count_bounded_segmentations(50, 4) == 100808458960497  # 1.0081e14, exact
    assert count_bounded_segmentations(20, 16) == 524268
    assert count_bounded_segmentations(0, 3) == 1 and count_bounded_segmentations(7, 1) == 1
    assert count_bounded_segmentations(100, 100) == 2**99  # beyond int64: exact Python ints
    # the same count from the lattice of "x" * n
    assert count_segmentations("x" * 50, {"x" * k for k in range(1, 5)}) == 100808458960497


def test_coverage_character_vocabulary():
    """Corpus A's 10 letters + 8 merged tokens cannot segment "née" (curriculum §2.1)."""
    vocab = set("lowerstnid") | {"er", "lo", "low", "ew", "new", "newer", "der", "ider"}
    assert len(vocab) == 18
    assert count_segmentations("née", vocab) == 0
    assert count_segmentations("nee", vocab) == 1
    lp = dict.fromkeys(vocab, -1.0)
    for fn in (viterbi, forward_backward, segmentation_entropy):
        with pytest.raises(ValueError, match=r"position 1 \('é'\)"):
            fn("née", lp)
    with pytest.raises(ValueError, match=r"position 1 \('é'\)"):
        sample_segmentation("née", lp, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"position 1 \('é'\) of text \(word 'née'\)"):
        em_step({"nee": 1, "née": 2}, lp)


def test_log_space_does_not_underflow():
    """400 pieces of probability 0.001: the product is 0.0, the log sum −2763.1021 (mistake 8)."""
    lp = {"x": math.log(0.001)}
    assert math.prod([0.001] * 400) == 0.0
    pieces, score = viterbi("x" * 400, lp)
    assert len(pieces) == 400 and round(score, 4) == -2763.1021
    # one path: log Z is the same sum (400 roundings of size ~1e-13 apart)
    assert abs(forward_backward("x" * 400, lp)[0] - score) < 1e-9
    assert segmentation_entropy("x" * 400, lp) == 0.0


def test_ties_go_to_the_longest_last_piece():
    lp = {"a": -1.0, "b": -1.0, "c": -1.0, "ab": -2.0, "bc": -2.0}
    assert viterbi("ab", lp)[0] == ["ab"]
    assert viterbi("abab", lp)[0] == ["ab", "ab"]
    assert viterbi("abc", lp)[0] == ["a", "bc"]
    assert viterbi("abc", {**lp, "ab": -1.5, "bc": -1.5})[0] == ["a", "bc"]


def test_text_forms_and_orders():
    assert viterbi(b"abab", LP) == viterbi("abab", LP)
    lp_e = {"a": -1.0, "é": -1.0, "aé": -1.5}  # bytes are decoded: positions are code points
    assert forward_backward("aé".encode(), lp_e) == forward_backward("aé", lp_e)
    assert viterbi("aé".encode(), lp_e) == (["aé"], -1.5)
    assert count_segmentations("abab", list(P)) == count_segmentations("abab", frozenset(P)) == 5
    # integer scores are accepted as floats; pieces with zero expectation are absent
    log_z, ex = forward_backward("aa", {"a": -1, "b": -1, "aa": -2})
    assert log_z == pytest.approx(math.log(2) - 2, abs=1e-15) and set(ex) == {"a", "aa"}
    new, _ = em_step({"aa": 1}, {"a": -1.0, "b": -1.0, "aa": -2.0})
    assert set(new) == {"a", "aa"}  # "b" dropped: a later call may find a text unsegmentable
    with pytest.raises(ValueError, match="position 0"):
        viterbi("b", new)
    assert em_step({b"ab": 1}, LP) == em_step({"ab": 1}, LP)


def test_no_path_names_the_position():
    with pytest.raises(ValueError, match=r"no segmentation: no path covers position 2 \('c'\)"):
        viterbi("abc", {"ab": -1.0, "bc": -1.0})
    assert count_segmentations("abc", {"ab", "bc"}) == 0
    with pytest.raises(ValueError, match="word 'bab' once 'b' is removed"):
        removal_loss(C, LP, "b")


# ---------------------------------------------------------------- sampling


@pytest.mark.parametrize("alpha", [1.0, 0.5, 0.1])
def test_sampling_distribution(alpha):
    """Draws follow P(x)^α / Σ P(x')^α within 4 standard errors (curriculum §7.5)."""
    w = np.array([alpha * sum(LP[t] for t in x) for x in SEGS])
    exact = np.exp(w - w.max())
    exact /= exact.sum()
    if alpha == 1.0:
        np.testing.assert_allclose(exact, [0.0165, 0.1103, 0.0276, 0.1103, 0.7353], atol=5e-5)
    N = 4000
    rng = np.random.default_rng(0)
    one_at_a_time = (sample_segmentation("abab", LP, rng=rng, alpha=alpha) for _ in range(N))
    together = sample_segmentation("abab", LP, rng=np.random.default_rng(0), alpha=alpha, size=N)
    assert len(together) == N
    se = np.sqrt(exact * (1 - exact) / N)
    for drawn in (one_at_a_time, together):
        draws = Counter(map(tuple, drawn))
        assert set(draws) <= {tuple(x) for x in SEGS}
        emp = np.array([draws[tuple(x)] / N for x in SEGS])
        assert np.all(np.abs(emp - exact) <= 4 * se), (emp, exact)


def test_sampling_size():
    """``size=m``: m segmentations of the text, every position's pieces drawn, seeded."""
    lp = {c: -1.0 for c in "abcde"} | {"ab": -0.5, "bcd": -0.7, "cde": -0.2, "abcde": -3.0}
    xs = sample_segmentation("abcde", lp, rng=np.random.default_rng(5), size=500)
    assert len(xs) == 500 and all("".join(x) == "abcde" for x in xs)
    assert all(all(t in lp for t in x) for x in xs)
    assert len({tuple(x) for x in xs}) == count_segmentations("abcde", lp)  # 6, all seen
    again = sample_segmentation("abcde", lp, rng=np.random.default_rng(5), size=500)
    assert again == xs
    assert sample_segmentation("a", {"a": 0.0}, rng=np.random.default_rng(0), size=2) == [
        ["a"],
        ["a"],
    ]


def test_sampling_limits_and_determinism():
    one = sample_segmentation("abab", LP, rng=np.random.default_rng(3))
    assert one == sample_segmentation("abab", LP, rng=np.random.default_rng(3))
    rng = np.random.default_rng(1)
    assert all(
        sample_segmentation("abab", LP, rng=rng, alpha=200.0) == ["ab", "ab"] for _ in range(50)
    )
    # α → 0: uniform over the 5 segmentations
    rng = np.random.default_rng(2)
    N = 2000
    draws = Counter(tuple(sample_segmentation("abab", LP, rng=rng, alpha=1e-9)) for _ in range(N))
    se = math.sqrt(0.2 * 0.8 / N)
    assert len(draws) == 5 and all(abs(c / N - 0.2) <= 4 * se for c in draws.values())


# ---------------------------------------------------------------- properties


@PROPS
@given(vocab=vocabs, s=words, seed=st.integers(0, 2**32 - 1))
def test_lattice_matches_enumeration(vocab, s, seed):
    rng = np.random.default_rng(seed)
    lp = {t: float(np.log(rng.uniform(0.01, 1.0))) for t in sorted(vocab)}
    log_z_ref, ex_ref, H_ref, S = brute(s, lp)
    assert count_segmentations(s, vocab) == len(S)
    log_z, ex = forward_backward(s, lp)
    assert abs(log_z - log_z_ref) < 1e-12
    assert set(ex) <= set(ex_ref)
    for t in ex_ref:
        assert abs(ex.get(t, 0.0) - ex_ref[t]) < 1e-12
    assert abs(segmentation_entropy(s, lp) - H_ref) < 1e-12
    alpha = float(rng.uniform(0.1, 3.0))
    assert abs(segmentation_entropy(s, lp, alpha=alpha) - brute(s, lp, alpha)[2]) < 1e-12
    pieces, score = viterbi(s, lp)
    assert "".join(pieces) == s and score == path_score(pieces, lp)
    assert score >= max(path_score(x, lp) for x in S) - 1e-12


@PROPS
@given(vocab=vocabs, s=words, seed=st.integers(0, 2**32 - 1))
def test_viterbi_tie_rule_on_integer_scores(vocab, s, seed):
    """Integer scores tie often; the winner has the longest last piece, then recursively."""
    rng = np.random.default_rng(seed)
    lp = {t: -float(rng.integers(1, 3)) for t in sorted(vocab)}
    S = list(segs(s, lp))
    best = max(path_score(x, lp) for x in S)
    want = max((x for x in S if path_score(x, lp) == best), key=lambda x: [len(t) for t in x[::-1]])
    assert viterbi(s, lp) == (want, best)


@PROPS
@given(n=st.integers(0, 30), L=st.integers(1, 12))
def test_bounded_count_recurrence(n, L):
    N = count_bounded_segmentations(n, L)
    if n:
        assert N == count_segmentations("x" * n, {"x" * k for k in range(1, L + 1)})
    if L >= n >= 1:
        assert N == 2 ** (n - 1)
    if L == 2:
        fib = [0, 1]
        while len(fib) < n + 2:
            fib.append(fib[-1] + fib[-2])
        assert N == fib[n + 1]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_em_never_decreases_the_likelihood(seed):
    rnd = random.Random(seed)
    vocab = set("abc") | {
        "".join(rnd.choice("abc") for _ in range(rnd.randint(2, 4))) for _ in range(6)
    }
    w = {t: rnd.random() + 0.01 for t in sorted(vocab)}
    lp = {t: math.log(v / sum(w.values())) for t, v in w.items()}
    corpus = {
        "".join(rnd.choice("abc") for _ in range(rnd.randint(1, 8))): rnd.randint(1, 3)
        for _ in range(4)
    }
    prev = -math.inf
    for _ in range(5):
        new, ll = em_step(corpus, lp)
        assert ll >= prev - 1e-12  # summed log Z of ≤ 4 words: rounding ~1e-15
        assert abs(sum(math.exp(v) for v in new.values()) - 1) < 1e-12
        prev, lp = ll, new


# ---------------------------------------------------------------- bad input

BAD = [
    ("text-int", lambda: viterbi(3, LP), TypeError, "viterbi: text must be str or bytes"),
    ("text-empty", lambda: forward_backward("", LP), ValueError, "text is empty"),
    ("text-utf8", lambda: viterbi(b"\xff", LP), ValueError, "text must be valid UTF-8"),
    ("count-empty", lambda: count_segmentations("", P), ValueError, "text is empty"),
    ("vocab-empty", lambda: count_segmentations("ab", set()), ValueError, "vocab is empty"),
    (
        "vocab-emptystr",
        lambda: count_segmentations("ab", {"a", ""}),
        ValueError,
        "vocab has an empty",
    ),
    ("vocab-str", lambda: count_segmentations("ab", "ab"), TypeError, "vocab must be a set"),
    ("vocab-bytes-piece", lambda: count_segmentations("ab", {b"a"}), TypeError, "vocab pieces"),
    ("lp-set", lambda: viterbi("ab", {"a", "b"}), TypeError, "log_probs must be a mapping"),
    ("lp-empty", lambda: viterbi("ab", {}), ValueError, "log_probs is empty"),
    (
        "lp-emptystr",
        lambda: viterbi("ab", {"a": -1.0, "": -1.0}),
        ValueError,
        "log_probs has an empty",
    ),
    (
        "lp-nan",
        lambda: forward_backward("ab", {"a": math.nan}),
        ValueError,
        r"log_probs\['a'\] must be finite",
    ),
    (
        "lp-inf",
        lambda: viterbi("ab", {"a": -math.inf}),
        ValueError,
        r"log_probs\['a'\] must be finite",
    ),
    ("lp-str", lambda: viterbi("ab", {"a": "x"}), TypeError, r"log_probs\['a'\] must be a real"),
    ("uncovered", lambda: viterbi("abc", {"a": 0.0, "b": 0.0}), ValueError, r"position 2 \('c'\)"),
    ("alpha-zero", lambda: segmentation_entropy("ab", LP, alpha=0), ValueError, "alpha"),
    ("alpha-nan", lambda: segmentation_entropy("ab", LP, alpha=math.nan), ValueError, "alpha"),
    (
        "alpha-inf",
        lambda: sample_segmentation("ab", LP, rng=np.random.default_rng(0), alpha=math.inf),
        ValueError,
        "alpha",
    ),
    (
        "alpha-neg",
        lambda: sample_segmentation("ab", LP, rng=np.random.default_rng(0), alpha=-1),
        ValueError,
        "alpha",
    ),
    ("rng-missing", lambda: sample_segmentation("ab", LP), TypeError, "rng"),
    (
        "size-zero",
        lambda: sample_segmentation("ab", LP, rng=np.random.default_rng(0), size=0),
        ValueError,
        "size must be >= 1; got 0",
    ),
    (
        "size-float",
        lambda: sample_segmentation("ab", LP, rng=np.random.default_rng(0), size=2.0),
        TypeError,
        "size must be an integer; got 2.0",
    ),
    (
        "rng-int",
        lambda: sample_segmentation("ab", LP, rng=0),
        TypeError,
        "rng must be a numpy.random.Generator",
    ),
    (
        "rng-legacy",
        lambda: sample_segmentation("ab", LP, rng=np.random.RandomState(0)),
        TypeError,
        "rng must be",
    ),
    ("wc-list", lambda: em_step([("ab", 1)], LP), TypeError, "word_counts must be a mapping"),
    ("wc-empty", lambda: em_step({}, LP), ValueError, "word_counts is empty"),
    ("wc-word-int", lambda: em_step({3: 1}, LP), TypeError, "word 3 must be str or bytes"),
    ("wc-word-empty", lambda: em_step({"": 1}, LP), ValueError, "word '' is empty"),
    (
        "wc-float",
        lambda: em_step({"ab": 3.0}, LP),
        TypeError,
        r"word_counts\['ab'\] must be an int",
    ),
    (
        "wc-bool",
        lambda: em_step({"ab": True}, LP),
        TypeError,
        r"word_counts\['ab'\] must be an int",
    ),
    ("wc-zero", lambda: em_step({"ab": 0}, LP), ValueError, r"word_counts\['ab'\] must be >= 1"),
    ("rl-wc", lambda: removal_loss({"ab": -1}, LP, "ab"), ValueError, r"word_counts\['ab'\]"),
    ("rl-piece-type", lambda: removal_loss(C, LP, 1), TypeError, "piece must be a str"),
    ("rl-piece-missing", lambda: removal_loss(C, LP, "c"), ValueError, "piece 'c' is not"),
    (
        "rl-not-normalized",
        lambda: removal_loss(C, {**LP, "a": 0.0}, "ab"),
        ValueError,
        "log-probabilities",
    ),
    ("rl-only-piece", lambda: removal_loss({"a": 1}, {"a": 0.0}, "a"), ValueError, "no piece"),
    ("bounded-neg", lambda: count_bounded_segmentations(-1, 2), ValueError, "n must be >= 0"),
    (
        "bounded-float",
        lambda: count_bounded_segmentations(3.0, 2),
        TypeError,
        "n must be an integer",
    ),
    ("bounded-L0", lambda: count_bounded_segmentations(3, 0), ValueError, "max_len must be >= 1"),
    ("bounded-Lbool", lambda: count_bounded_segmentations(3, True), TypeError, "max_len"),
]


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------- cross-checks with tokenizers and sentencepiece


def _hf_unigram(pieces_scores):
    models = pytest.importorskip("tokenizers").models
    return models.Unigram([("<unk>", 0.0), *pieces_scores], unk_id=0, byte_fallback=False)


def _spm_model(pieces_scores):
    """An spm unigram model with exactly these pieces and (float32) scores: identity
    normalization, no dummy prefix, ``<unk>`` at id 0 (the evidence's hand-built model)."""
    spm = pytest.importorskip("sentencepiece")
    pytest.importorskip("google.protobuf")
    pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
    m = pb.ModelProto()
    m.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
    m.trainer_spec.unk_id, m.trainer_spec.bos_id, m.trainer_spec.eos_id = 0, -1, -1
    m.trainer_spec.pad_id = -1
    m.normalizer_spec.name = "identity"
    m.normalizer_spec.add_dummy_prefix = False
    m.normalizer_spec.remove_extra_whitespaces = False
    m.normalizer_spec.escape_whitespaces = False
    unk = m.pieces.add()
    unk.piece, unk.score, unk.type = "<unk>", 0.0, pb.ModelProto.SentencePiece.UNKNOWN
    for piece, score in pieces_scores:
        x = m.pieces.add()
        x.piece, x.score, x.type = piece, score, pb.ModelProto.SentencePiece.NORMAL
    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(m.SerializeToString())
    return sp


def _random_model(rnd, size=10, integer=False):
    pieces = set("abc")
    while len(pieces) < size:
        pieces.add("".join(rnd.choice("abc") for _ in range(rnd.randint(2, 4))))
    if integer:
        return [(p, float(-rnd.choice([1, 2]))) for p in sorted(pieces)]
    return [
        (p, float(np.float32(-rnd.uniform(0.5, 6.0)))) for p in sorted(pieces)
    ]  # float32 scores


def test_viterbi_matches_hf_unigram():
    rnd = random.Random(0)
    for integer in (False, True):  # integer scores: exact ties everywhere
        for _ in range(40):
            ps = _random_model(rnd, integer=integer)
            hf, lp = _hf_unigram(ps), dict(ps)
            for _ in range(5):
                s = "".join(rnd.choice("abc") for _ in range(rnd.randint(1, 12)))
                assert viterbi(s, lp)[0] == [t.value for t in hf.tokenize(s)], (ps, s)


def test_viterbi_matches_sentencepiece_up_to_float32_ties():
    """spm sums float32 scores, so it may split a real-valued tie the other way: any
    disagreement must be between two paths of equal float64 score (evidence: 7 of 3,000)."""
    rnd = random.Random(1)
    differ = 0
    for integer in (False, True):
        for _ in range(40):
            ps = _random_model(rnd, integer=integer)
            sp, lp = _spm_model(ps), dict(ps)
            for _ in range(5):
                s = "".join(rnd.choice("abc") for _ in range(rnd.randint(1, 12)))
                mine, score = viterbi(s, lp)
                theirs = sp.encode(s, out_type=str)
                if mine != theirs:
                    differ += 1
                    assert not integer and "".join(theirs) == s
                    # both sums of the same ≤ 12 float32 values: equal up to rounding
                    assert abs(score - sum(lp[t] for t in theirs)) < 1e-12, (s, mine, theirs)
    assert differ <= 5


def test_count_matches_sentencepiece_nbest():
    rnd = random.Random(2)
    for _ in range(30):
        pieces = {"a", "b"} | {
            "".join(rnd.choice("ab") for _ in range(rnd.randint(2, 3))) for _ in range(4)
        }
        sp = _spm_model([(p, -1.0 - rnd.random()) for p in sorted(pieces)])
        for _ in range(5):
            s = "".join(rnd.choice("ab") for _ in range(rnd.randint(1, 9)))
            nbest = sp.nbest_encode(s, nbest_size=512, out_type=str)
            n = count_segmentations(s, pieces)
            assert n <= 512 and len({tuple(x) for x in nbest}) == len(nbest) == n


def test_sampling_matches_sentencepiece_in_distribution():
    """Both samplers within 4 standard errors of the exact P_α (spm seeded for a fixed test)."""
    spm = pytest.importorskip("sentencepiece")
    sp = _spm_model(list(LP.items()))
    spm.set_random_generator_seed(0)
    N = 4000
    for alpha in (1.0, 0.1):
        w = np.array([alpha * sum(LP[t] for t in x) for x in SEGS])
        exact = np.exp(w - w.max())
        exact /= exact.sum()
        se = np.sqrt(exact * (1 - exact) / N)
        draws = Counter(
            tuple(sp.encode("abab", out_type=str, enable_sampling=True, alpha=alpha, nbest_size=-1))
            for _ in range(N)
        )
        emp = np.array([draws[tuple(x)] / N for x in SEGS])
        assert np.all(np.abs(emp - exact) <= 4 * se), (alpha, emp, exact)


def test_viterbi_matches_a_trained_sentencepiece_model(tmp_path):
    """A real spm unigram model (default dummy prefix): viterbi("▁" + w) == sp.encode(w)."""
    spm = pytest.importorskip("sentencepiece")
    text = " ".join(inspect.getdoc(m) or "" for m in (collections, json, textwrap, re, random))
    words = re.findall(r"[a-z]+", text.lower())
    corpus = tmp_path / "doc.txt"
    corpus.write_text("\n".join(" ".join(words[i : i + 12]) for i in range(0, len(words), 12)))
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(tmp_path / "doc"),
        model_type="unigram",
        vocab_size=200,
        normalization_rule_name="identity",
        character_coverage=1.0,
        minloglevel=2,
        bos_id=-1,
        eos_id=-1,
        num_threads=1,
    )
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "doc.model"))
    lp = {
        sp.id_to_piece(i): sp.get_score(i)
        for i in range(sp.get_piece_size())
        if not (sp.is_unknown(i) or sp.is_control(i))
    }
    for w in sorted(set(words)):
        assert viterbi("\u2581" + w, lp)[0] == sp.encode(w, out_type=str), w
