"""Tests for llmmath.processors: repetition penalty, n-gram ban, classifier-free guidance, warp.

The numbers are those of Lesson E §6.4, §6.5, §7.5 and Exercise 4. Cross-checks against
transformers' processors and a LogitsProcessorList in generate's order skip without the
reference packages.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmmath.processors import cfg_logprobs, no_repeat_ngram_mask, repetition_penalty, warp
from llmmath.sampling import (
    apply_temperature,
    epsilon_filter,
    min_p_filter,
    top_k_filter,
    top_p_filter,
    typical_filter,
)
from llmmath.softmax import log_softmax, softmax


def wrong(value: Any) -> Any:
    """An argument of the wrong type, passed on as is (typed ``Any`` for mypy)."""
    return value


PROPS = settings(max_examples=60, deadline=None)
Z = np.array([2.0, 1.0, 0.5, 0.0, -1.0])
ZR = np.array([2.0, -1.0, 0.5])  # §6.4


def banned_set(ids, n):
    """The n-gram ban written out with Python sets (the reference for the vectorized mask)."""
    ids = list(ids)
    if len(ids) < n:
        return set()
    prefix = tuple(ids[len(ids) - n + 1 :]) if n > 1 else ()
    return {ids[i + n - 1] for i in range(len(ids) - n + 1) if tuple(ids[i : i + n - 1]) == prefix}


# ---------------------------------------------------------------- §6.4 repetition penalty


def test_repetition_penalty_values_of_the_lesson():
    out = repetition_penalty(ZR, [1], 1.5)
    assert out.tolist() == [2.0, -1.5, 0.5]
    assert round(softmax(ZR)[1], 4) == 0.0391 and round(softmax(out)[1], 4) == 0.0241
    ctrl = ZR.copy()
    ctrl[1] /= 1.5  # CTRL's sign-blind rule raises the repeated token's probability
    assert round(softmax(ctrl)[1], 4) == 0.0538
    # tokens 0 and 1 penalized: the penalized token 1 still gains probability
    assert round(softmax(repetition_penalty(ZR, [0, 1], 1.5))[1], 4) == 0.0394
    # not shift-invariant: z + 3 has the same softmax, the penalized logit takes the other branch
    shifted = repetition_penalty(ZR + 3, [1], 1.5)
    assert round(shifted[1], 4) == 1.3333 and round(softmax(shifted)[1], 4) == 0.0205
    # once however often the token occurred; -inf stays -inf; θ < 1 rewards
    np.testing.assert_array_equal(repetition_penalty(ZR, [0, 0, 0], 1.5), [2 / 1.5, -1.0, 0.5])
    assert repetition_penalty([-np.inf, 1.0], [0, 1], 2.0).tolist() == [-np.inf, 0.5]
    assert repetition_penalty(ZR, [0, 1], 0.5).tolist() == [4.0, -0.5, 0.5]


def test_repetition_penalty_contexts_per_row_or_shared():
    z = np.array([[1.0, -2.0, 3.0], [1.0, -2.0, 3.0]])
    per_row = repetition_penalty(z, [[0, 0], [1, 2]], 2.0)
    np.testing.assert_array_equal(per_row, [[0.5, -2.0, 3.0], [1.0, -4.0, 1.5]])
    shared = repetition_penalty(z, [2], 2.0)
    np.testing.assert_array_equal(shared, [[1.0, -2.0, 1.5], [1.0, -2.0, 1.5]])
    assert repetition_penalty(z, np.zeros((2, 0), int), 2.0).tolist() == z.tolist()  # L = 0


@PROPS
@given(seed=st.integers(0, 2**32 - 1), theta=st.floats(1.0, 5.0), L=st.integers(0, 8))
def test_repetition_penalty_lowers_exactly_the_seen_logits(seed, theta, L):
    rng = np.random.default_rng(seed)
    z, ids = rng.normal(size=(2, 6)) * 3, rng.integers(0, 6, size=(2, L))
    out = repetition_penalty(z, ids, theta)
    seen = np.zeros((2, 6), bool)
    np.put_along_axis(seen, ids, True, axis=-1)
    np.testing.assert_array_equal(out[~seen], z[~seen])
    assert np.all(out[seen] <= z[seen])


# ---------------------------------------------------------------- §5.5 / §6.5 n-gram ban


def test_no_repeat_ngram_mask_examples():
    assert no_repeat_ngram_mask([1, 2, 1], 2, 4).tolist() == [False, False, True, False]
    assert no_repeat_ngram_mask([1, 2, 1], 1, 4).tolist() == [False, True, True, False]
    assert not no_repeat_ngram_mask([1, 2], 3, 4).any()  # L < n: nothing yet
    assert not no_repeat_ngram_mask(np.array([], int), 1, 3).any()
    # the last n-1 ids (2, 3) occurred twice, followed by 0 and by 1
    assert no_repeat_ngram_mask([2, 3, 0, 2, 3, 1, 2, 3], 3, 4).tolist() == [
        True,
        True,
        False,
        False,
    ]
    rows = no_repeat_ngram_mask([[1, 2, 1], [0, 0, 0]], 2, 3)
    assert rows.shape == (2, 3) and rows.tolist() == [[False, False, True], [True, False, False]]


@PROPS
@given(ids=st.lists(st.integers(0, 3), max_size=14), n=st.integers(1, 5))
def test_no_repeat_ngram_mask_equals_the_set_definition(ids, n):
    mask = no_repeat_ngram_mask(np.array(ids, dtype=np.int64), n, 4)
    assert set(np.flatnonzero(mask).tolist()) == banned_set(ids, n)


# ---------------------------------------------------------------- §7.5 classifier-free guidance


def test_cfg_values_of_the_lesson():
    c, u = np.log([0.5, 0.3, 0.2]), np.log([0.6, 0.2, 0.2])
    np.testing.assert_allclose(softmax(cfg_logprobs(c, u, 1.0)), [0.5, 0.3, 0.2], rtol=1e-15)
    np.testing.assert_array_equal(
        softmax(cfg_logprobs(c, u, 1.5)).round(4), [0.4458, 0.3589, 0.1953]
    )
    np.testing.assert_array_equal(
        softmax(cfg_logprobs(c, u, 3.0)).round(4), [0.2841, 0.5523, 0.1636]
    )
    # -inf in either branch is -inf for γ != 1 (HF: NaN where u is -inf); γ = 1 ignores u
    u_inf, cond = [0.0, -np.inf, 1.0], [0.5, 0.2, -0.3]
    out = cfg_logprobs(cond, u_inf, 1.5)
    assert out[1] == -np.inf and np.round(out[[0, 2]], 3).tolist() == [-0.519, -2.219]
    np.testing.assert_array_equal(cfg_logprobs(cond, u_inf, 1.0), log_softmax(cond))
    assert cfg_logprobs([0.0, -np.inf], [0.0, 0.0], -0.5)[1] == -np.inf  # γ < 1 too
    assert cfg_logprobs([0.0, -np.inf], [0.0, 0.0], 0.0)[1] == -np.inf


@PROPS
@given(seed=st.integers(0, 2**32 - 1), gamma=st.floats(-3, 5))
def test_cfg_is_affine_in_gamma_and_broadcasts_uncond(seed, gamma):
    rng = np.random.default_rng(seed)
    c, u = rng.normal(size=(3, 5)) * 2, rng.normal(size=5) * 2
    lc, lu = log_softmax(c), log_softmax(u)
    # |values| <= ~20 and |γ| <= 5: a few ulps of 100
    np.testing.assert_allclose(
        cfg_logprobs(c, u, gamma), lu + gamma * (lc - lu), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        cfg_logprobs(c, u, 0.0), np.broadcast_to(lu, (3, 5)), rtol=0, atol=1e-14
    )


# ---------------------------------------------------------------- §6.5 warp


def test_warp_defaults_are_the_identity_and_order_is_hf():
    z = np.random.default_rng(0).normal(size=(4, 9))
    np.testing.assert_array_equal(warp(z), z)
    np.testing.assert_array_equal(warp(z, top_k=0, top_p=1.0, typical_p=1.0, epsilon_cutoff=0.0), z)
    assert warp(np.array([1, 2])).dtype == np.float64
    # the lesson's order examples: temperature first, top-k before top-p
    assert np.isfinite(warp(Z, temperature=2.0, top_p=0.85)).sum() == 4
    assert np.isfinite(warp(Z, temperature=0.5, top_p=0.85)).sum() == 2
    assert np.isfinite(warp(np.log([0.4, 0.3, 0.2, 0.1]), top_k=3, top_p=0.75)).sum() == 2
    ex4 = np.log([0.42, 0.25, 0.15, 0.10, 0.05, 0.03])  # Exercise 4
    np.testing.assert_array_equal(
        softmax(warp(ex4, top_k=3, top_p=0.8))[:2].round(4), [0.6269, 0.3731]
    )
    # the full chain equals the functions composed in HF's order
    rng = np.random.default_rng(1)
    z, ctx = rng.normal(size=(3, 12)) * 2, rng.integers(0, 12, size=(3, 9))
    kw = dict(temperature=0.8, top_k=8, top_p=0.9, min_p=0.05, typical_p=0.95, epsilon_cutoff=1e-3)
    x = repetition_penalty(z, ctx, 1.2)
    x = np.where(no_repeat_ngram_mask(ctx, 2, 12), -np.inf, x)
    x = apply_temperature(x, 0.8)
    x = epsilon_filter(
        typical_filter(min_p_filter(top_p_filter(top_k_filter(x, 8), 0.9), 0.05), 0.95), 1e-3
    )
    out = warp(z, context_ids=ctx, repetition_penalty=1.2, no_repeat_ngram_size=2, **kw)
    np.testing.assert_array_equal(out, x)
    # min_keep reaches every filter
    assert np.isfinite(warp(Z, top_k=1, min_keep=3)).sum() == 3
    assert np.isfinite(warp(Z, epsilon_cutoff=0.5, min_keep=2)).sum() == 2


# ---------------------------------------------------------------- bad input

C = [0, 1, 2]
BAD = [
    (
        "penalty-zero",
        lambda: repetition_penalty(ZR, C, 0.0),
        ValueError,
        "repetition_penalty: penalty",
    ),
    ("penalty-nan", lambda: repetition_penalty(ZR, C, np.nan), ValueError, "penalty"),
    ("penalty-inf", lambda: repetition_penalty(ZR, C, np.inf), ValueError, "penalty"),
    (
        "context-float",
        lambda: repetition_penalty(ZR, [0.0, 1.0], 1.2),
        TypeError,
        "context_ids must be integers",
    ),
    ("context-bool", lambda: repetition_penalty(ZR, [True], 1.2), TypeError, "context_ids"),
    (
        "context-range",
        lambda: repetition_penalty(ZR, [3], 1.2),
        IndexError,
        r"context_ids must lie in \[0, 3\); got 3",
    ),
    ("context-negative", lambda: repetition_penalty(ZR, [-1], 1.2), IndexError, "not wrapped"),
    (
        "context-rows",
        lambda: repetition_penalty(np.ones((2, 3)), np.zeros((3, 4), int), 1.2),
        ValueError,
        r"context_ids must be \(L,\) or \(2, 'L'\)",
    ),
    (
        "context-1d-logits",
        lambda: repetition_penalty(ZR, [[0, 1]], 1.2),
        ValueError,
        "context_ids must be",
    ),
    ("context-scalar", lambda: repetition_penalty(ZR, 1, 1.2), ValueError, "context_ids must be"),
    (
        "logits-all-inf",
        lambda: repetition_penalty([-np.inf, -np.inf], [0], 1.2),
        ValueError,
        "logits must keep at least one finite",
    ),
    (
        "logits-nan",
        lambda: repetition_penalty([np.nan, 0.0], [0], 1.2),
        ValueError,
        "logits must be finite",
    ),
    (
        "ngram-zero",
        lambda: no_repeat_ngram_mask(C, 0, 3),
        ValueError,
        "no_repeat_ngram_mask: n must be >= 1",
    ),
    (
        "ngram-float",
        lambda: no_repeat_ngram_mask(C, wrong(2.0), 3),
        TypeError,
        "n must be an integer",
    ),
    ("ngram-vocab", lambda: no_repeat_ngram_mask(C, 2, 0), ValueError, "vocab_size"),
    ("ngram-vocab-float", lambda: no_repeat_ngram_mask(C, 2, wrong(3.0)), TypeError, "vocab_size"),
    ("ngram-ids", lambda: no_repeat_ngram_mask([0, 5], 2, 3), IndexError, "context_ids"),
    ("ngram-ids-float", lambda: no_repeat_ngram_mask([0.0, 1.0], 2, 3), TypeError, "context_ids"),
    (
        "cfg-scale-nan",
        lambda: cfg_logprobs(ZR, ZR, np.nan),
        ValueError,
        "cfg_logprobs: guidance_scale",
    ),
    ("cfg-scale-inf", lambda: cfg_logprobs(ZR, ZR, np.inf), ValueError, "guidance_scale"),
    ("cfg-width", lambda: cfg_logprobs(ZR, Z, 1.5), ValueError, "share the last dimension"),
    (
        "cfg-shape",
        lambda: cfg_logprobs(ZR, np.ones((2, 3)), 1.5),
        ValueError,
        "uncond_logits must broadcast",
    ),
    (
        "cfg-cond-nan",
        lambda: cfg_logprobs([np.nan, 0.0], [0.0, 0.0], 1.5),
        ValueError,
        "cond_logits must be finite",
    ),
    (
        "cfg-uncond-inf",
        lambda: cfg_logprobs([0.0, 0.0], [np.inf, 0.0], 1.5),
        ValueError,
        "uncond_logits must be finite",
    ),
    (
        "cfg-cond-empty-row",
        lambda: cfg_logprobs([-np.inf, -np.inf], [0.0, 0.0], 1.5),
        ValueError,
        "cond_logits must keep",
    ),
    ("warp-temperature", lambda: warp(Z, temperature=0.0), ValueError, "warp: temperature"),
    ("warp-top-k-neg", lambda: warp(Z, top_k=-1), ValueError, "warp: top_k must be >= 0"),
    ("warp-top-k-float", lambda: warp(Z, top_k=wrong(5.0)), TypeError, "top_k must be an integer"),
    ("warp-top-p", lambda: warp(Z, top_p=1.5), ValueError, "warp: top_p"),
    ("warp-min-p", lambda: warp(Z, min_p=-0.1), ValueError, "warp: min_p"),
    (
        "warp-typical",
        lambda: warp(Z, typical_p=0.0),
        ValueError,
        r"warp: typical_p must lie in \(0, 1\]",
    ),
    (
        "warp-epsilon",
        lambda: warp(Z, epsilon_cutoff=1.0),
        ValueError,
        r"warp: epsilon_cutoff must lie in \[0, 1\)",
    ),
    ("warp-min-keep", lambda: warp(Z, min_keep=0), ValueError, "warp: min_keep"),
    (
        "warp-penalty",
        lambda: warp(Z, repetition_penalty=-1.0),
        ValueError,
        "warp: repetition_penalty",
    ),
    (
        "warp-ngram",
        lambda: warp(Z, no_repeat_ngram_size=-1),
        ValueError,
        "warp: no_repeat_ngram_size",
    ),
    (
        "warp-ngram-float",
        lambda: warp(Z, no_repeat_ngram_size=wrong(2.0)),
        TypeError,
        "no_repeat_ngram_size",
    ),
    (
        "warp-no-context",
        lambda: warp(Z, repetition_penalty=1.2),
        ValueError,
        "warp: context_ids is needed",
    ),
    (
        "warp-no-context-ngram",
        lambda: warp(Z, no_repeat_ngram_size=2),
        ValueError,
        "context_ids is needed",
    ),
    ("warp-context-range", lambda: warp(Z, context_ids=[7]), IndexError, "warp: context_ids"),
    (
        "warp-bans-all",
        lambda: warp([0.0, 1.0], context_ids=[0, 1], no_repeat_ngram_size=1),
        ValueError,
        "bans every token",
    ),
    ("warp-logits-all-inf", lambda: warp([-np.inf]), ValueError, "warp: logits must keep"),
]


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------ cross-checks with torch, transformers


def _hf(proc, z, ids):
    import torch

    return proc(torch.tensor(np.asarray(ids)), torch.tensor(z).clone()).numpy()


def test_repetition_penalty_equals_hf():
    pytest.importorskip("torch")
    lp = pytest.importorskip("transformers.generation.logits_process")
    rng = np.random.default_rng(0)
    for theta in (0.7, 1.3, 2.0):
        z, ids = rng.normal(size=(200, 50)) * 3, rng.integers(0, 50, size=(200, 12))
        z[rng.random(z.shape) < 0.1] = -np.inf
        proc = lp.RepetitionPenaltyLogitsProcessor(theta)
        np.testing.assert_array_equal(repetition_penalty(z, ids, theta), _hf(proc, z, ids))
        shared = np.broadcast_to(ids[0], ids.shape)  # one 1-D context for every row
        np.testing.assert_array_equal(repetition_penalty(z, ids[0], theta), _hf(proc, z, shared))


def test_no_repeat_ngram_mask_equals_hf():
    pytest.importorskip("torch")
    lp = pytest.importorskip("transformers.generation.logits_process")
    rng = np.random.default_rng(1)
    for n in range(1, 5):
        for L in range(1, 15):
            ids = rng.integers(0, 4, size=(5, L))  # a vocabulary of 4: many repeats
            hf = _hf(lp.NoRepeatNGramLogitsProcessor(n), np.zeros((5, 4)), ids)
            np.testing.assert_array_equal(no_repeat_ngram_mask(ids, n, 4), np.isneginf(hf))


class _Uncond:
    """A stand-in for the model of HF's unbatched CFG processor: fixed last-position logits."""

    def __init__(self, logits):
        self.logits = logits

    def __call__(self, input_ids, **kwargs):
        import torch

        out = _Output()
        out.logits = torch.tensor(self.logits)[:, None]  # (B, T = 1, V)
        return out


class _Output(dict):  # HF reads out.logits and out.get("past_key_values")
    logits = None


def test_cfg_equals_hf_unbatched_processor():
    pytest.importorskip("torch")
    lp = pytest.importorskip("transformers.generation.logits_process")
    rng = np.random.default_rng(2)
    for gamma in (0.5, 1.0, 1.5, 3.0, 3.7):
        cond, unc = rng.normal(size=(40, 7)) * 2, rng.normal(size=(40, 7)) * 2
        cond[0, 3] = -np.inf  # -inf in the conditional branch: -inf in both
        proc = lp.UnbatchedClassifierFreeGuidanceLogitsProcessor(gamma, _Uncond(unc))
        hf = _hf(proc, cond, np.ones((40, 2), int))
        ours = cfg_logprobs(cond, unc, gamma)
        np.testing.assert_array_equal(np.isneginf(ours), np.isneginf(hf))
        fin = np.isfinite(hf)
        # log-softmax of |z| <= ~10, times |γ| <= 4: 1e-12 is far above the rounding
        np.testing.assert_allclose(ours[fin], hf[fin], rtol=0, atol=1e-12)


def test_warp_equals_hf_processor_list_in_generate_order():
    torch = pytest.importorskip("torch")
    lp = pytest.importorskip("transformers.generation.logits_process")
    rng = np.random.default_rng(5)
    for _ in range(25):
        z = rng.normal(size=(8, 40)) * rng.uniform(0.5, 4)
        ids = rng.integers(0, 40, size=(8, int(rng.integers(2, 12))))
        kw = dict(
            repetition_penalty=float(rng.uniform(0.8, 1.6)),
            no_repeat_ngram_size=int(rng.integers(0, 4)),
            temperature=float(rng.uniform(0.3, 2)),
            top_k=int(rng.integers(0, 40)),
            top_p=float(rng.uniform(0.05, 1.0)),
            min_p=float(rng.uniform(0, 0.3)) if rng.random() < 0.7 else None,
            typical_p=float(rng.uniform(0.05, 1.0)),
            epsilon_cutoff=float(rng.uniform(0, 0.05)),
            min_keep=int(rng.integers(1, 3)),
        )
        keep = kw["min_keep"]
        procs = [
            lp.RepetitionPenaltyLogitsProcessor(kw["repetition_penalty"]),
            lp.NoRepeatNGramLogitsProcessor(max(kw["no_repeat_ngram_size"], 1)),
            lp.TemperatureLogitsWarper(kw["temperature"]),
            lp.TopKLogitsWarper(max(kw["top_k"], 1), min_tokens_to_keep=keep),
            lp.TopPLogitsWarper(kw["top_p"], min_tokens_to_keep=keep),
            lp.MinPLogitsWarper(kw["min_p"] or 0.0, min_tokens_to_keep=keep),
            lp.TypicalLogitsWarper(min(kw["typical_p"], 0.999), min_tokens_to_keep=keep),
            lp.EpsilonLogitsWarper(max(kw["epsilon_cutoff"], 1e-9), min_tokens_to_keep=keep),
        ]
        active = [  # generate's conditions (_get_logits_processor)
            kw["repetition_penalty"] != 1.0,
            kw["no_repeat_ngram_size"] > 0,
            kw["temperature"] != 1.0,
            kw["top_k"] != 0,
            kw["top_p"] < 1.0,
            kw["min_p"] is not None,
            kw["typical_p"] < 1.0,
            0.0 < kw["epsilon_cutoff"] < 1.0,
        ]
        hf_list = lp.LogitsProcessorList([p for p, on in zip(procs, active, strict=True) if on])
        theirs = hf_list(torch.tensor(ids), torch.tensor(z)).numpy()
        np.testing.assert_array_equal(warp(z, context_ids=ids, **kw), theirs, err_msg=repr(kw))
