"""Tests for llmmath.speculative: acceptance, residual, one step, expected tokens and speedup.

The numbers are those of Lesson E §7.1–§7.3 and Exercise 8. The cross-check against
transformers' ``_speculative_sampling`` feeds it the kernel's uniforms (``torch.rand_like``
and ``torch.multinomial`` replaced) and skips without the reference packages.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmmath.sampling import sample
from llmmath.speculative import (
    acceptance_rate,
    expected_tokens_per_step,
    residual_distribution,
    speculative_output_distribution,
    speculative_speedup,
    speculative_step,
)

PROPS = settings(max_examples=60, deadline=None)


def wrong(value: Any) -> Any:
    """An argument of the wrong type, passed on as is (typed ``Any`` for mypy)."""
    return value


P71, Q71 = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.5, 0.3])  # §7.1
P8, Q8 = np.array([0.4, 0.35, 0.25]), np.array([0.6, 0.2, 0.2])  # Exercise 8


def dirichlet(seed, V, size=()):
    return np.random.default_rng(seed).dirichlet(np.ones(V), size=size)


# ---------------------------------------------------------------- unit tests: the lesson


def test_one_step_of_the_lesson():
    a = acceptance_rate(P71, Q71)
    assert abs(a - 0.7) < 1e-15 and abs(a - (1 - 0.5 * np.abs(P71 - Q71).sum())) < 1e-15
    np.testing.assert_array_equal(residual_distribution(P71, Q71), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(speculative_output_distribution(P71, Q71), P71, rtol=0, atol=1e-15)
    # the wrong variant, resampling from p after a rejection, is not p
    wrong = np.minimum(P71, Q71) + (1 - a) * P71
    np.testing.assert_array_equal(wrong.round(4), [0.35, 0.39, 0.26])
    # Exercise 8
    assert abs(acceptance_rate(P8, Q8) - 0.8) < 1e-15
    np.testing.assert_allclose(residual_distribution(P8, Q8), [0, 0.75, 0.25], rtol=0, atol=1e-15)
    np.testing.assert_allclose(speculative_output_distribution(P8, Q8), P8, rtol=0, atol=1e-15)
    # p = q: nothing can be rejected, the output is p itself
    np.testing.assert_array_equal(speculative_output_distribution(P71, P71), P71)


def test_expected_tokens_and_speedup_of_the_lesson():
    assert round(expected_tokens_per_step(0.8, 4), 4) == 3.3616
    assert round(speculative_speedup(0.8, 4, 0.05), 4) == 2.8013
    best = max(range(1, 31), key=lambda g: speculative_speedup(0.8, g, 0.05))
    assert best == 8 and round(speculative_speedup(0.8, 8, 0.05), 4) == 3.0921
    best = max(range(1, 31), key=lambda g: speculative_speedup(0.8, g, 0.2))
    assert best == 4 and round(speculative_speedup(0.8, 4, 0.2), 4) == 1.8676
    for a, g, e, s in ((0.6, 3, 2.176, 1.8922), (0.9, 7, 5.6953, 4.2188)):
        assert round(expected_tokens_per_step(a, g), 4) == e
        assert round(speculative_speedup(a, g, 0.05), 4) == s
    # Exercise 8: gamma = 3 and the factor at c = 0.1 for gamma = 1..8, best gamma = 6
    assert round(expected_tokens_per_step(0.8, 3), 4) == 2.952
    factors = [round(speculative_speedup(0.8, g, 0.1), 4) for g in range(1, 9)]
    assert factors == [1.6364, 2.0333, 2.2708, 2.4011, 2.4595, 2.4696, 2.4477, 2.405]
    assert max(range(1, 40), key=lambda g: speculative_speedup(0.8, g, 0.1)) == 6
    # edges: a = 1 gives gamma + 1, a = 0 one token; no draft cost: the token count itself
    assert expected_tokens_per_step(1.0, 4) == 5.0 and expected_tokens_per_step(0.0, 4) == 1.0
    assert speculative_speedup(0.8, 4, 0.0) == expected_tokens_per_step(0.8, 4)
    assert isinstance(expected_tokens_per_step(0.5, 2), float)


def test_monte_carlo_of_the_lesson_follows_p():
    """§7.2's protocol: per step a draft ``sample(log q, rng)``, then ``speculative_step``.

    The lesson runs 200,000 steps ([0.4990, 0.3000, 0.2010]); 4,000 keep the test short and
    are held to 4 standard errors.
    """
    rng = np.random.default_rng(0)
    N, counts = 4000, np.zeros(3)
    P, Q, lq = np.stack([P71, P71]), Q71[None], np.log(Q71)
    for _ in range(N):
        tokens, _ = speculative_step(P, Q, [int(sample(lq, rng))], rng)
        counts[tokens[0]] += 1
    se = np.sqrt(P71 * (1 - P71) / N)
    assert (np.abs(counts / N - P71) <= 4 * se).all()


def test_draw_order_is_the_contracts():
    """``u = rng.random(γ)``, then the token by inverse CDF on one more ``rng.random()``."""
    for seed in range(200):
        rng = np.random.default_rng(seed)
        g, V = 1 + seed % 4, 3 + seed % 5
        p, q = dirichlet(seed, V, g + 1), dirichlet(seed + 10**6, V, g)
        draft = np.array([rng.choice(V, p=q[i]) for i in range(g)])
        tokens, n = speculative_step(p, q, draft, np.random.default_rng(seed))
        ref = np.random.default_rng(seed)
        u = ref.random(g)
        accepted = u <= p[np.arange(g), draft] / q[np.arange(g), draft]
        m = g if accepted.all() else int(np.argmin(accepted))
        r = np.maximum(p[m] - q[m], 0) if m < g else p[g]
        c = np.cumsum(r / r.sum())
        t = int((c <= ref.random() * c[-1]).sum())
        assert n == m and tokens.tolist() == [*draft[:m].tolist(), t] and tokens.dtype == np.int64


# ---------------------------------------------------------------- properties


@PROPS
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(2, 12), lead=st.sampled_from([(), (3,)]))
def test_speculative_sampling_is_exact(seed, V, lead):
    p, q = dirichlet(seed, V, lead), dirichlet(seed ^ 0xABCDEF, V, lead)
    a = acceptance_rate(p, q)
    assert a.shape == lead
    np.testing.assert_allclose(a, 1 - 0.5 * np.abs(p - q).sum(-1), rtol=0, atol=1e-15)
    r = residual_distribution(p, q)
    assert (r >= 0).all() and (r[p <= q] == 0).all()
    np.testing.assert_allclose(r.sum(-1), 1.0, rtol=0, atol=1e-15)
    # min(p, q) + (1 − α)·r = p, to a few roundings of terms of size <= 1
    np.testing.assert_allclose(speculative_output_distribution(p, q), p, rtol=0, atol=1e-15)
    # the law of one step with gamma = 1, by the acceptance rule, summed over draft tokens
    law = q * np.minimum(1.0, p / q) + (1 - a)[..., None] * r
    np.testing.assert_allclose(law, p, rtol=0, atol=1e-15)


@PROPS
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(2, 8), g=st.integers(1, 5))
def test_step_returns_the_accepted_prefix_and_one_token(seed, V, g):
    p, q = dirichlet(seed, V, g + 1), dirichlet(seed ^ 0x5EED, V, g)
    draft = np.array([int(sample(np.log(q[i]), np.random.default_rng(seed + i))) for i in range(g)])
    tokens, n = speculative_step(p, q, draft, np.random.default_rng(seed))
    assert 0 <= n <= g and len(tokens) == n + 1 and tokens[:n].tolist() == draft[:n].tolist()
    assert 0 <= tokens[-1] < V
    again, n2 = speculative_step(p, q, draft, np.random.default_rng(seed))
    assert n2 == n and again.tolist() == tokens.tolist()
    # the draft itself as the target: every draft is accepted, the bonus comes from p[g]
    same, m = speculative_step(np.vstack([q, p[-1]]), q, draft, np.random.default_rng(seed))
    assert m == g and same[:g].tolist() == draft.tolist()


@PROPS
@given(a=st.floats(0, 1), g=st.integers(1, 30))
def test_expected_tokens_equals_enumeration(a, g):
    P = [a**n * (1 - a) for n in range(g)] + [a**g]  # n accepted drafts, then one token
    exact = sum((n + 1) * P[n] for n in range(g + 1))
    assert abs(expected_tokens_per_step(a, g) - exact) <= 1e-13 * exact
    assert 1.0 <= expected_tokens_per_step(a, g) <= g + 1


def test_expected_tokens_is_accurate_near_one():
    a = 1 - 1e-12
    assert abs(expected_tokens_per_step(a, 4) - (5 - 10e-12)) < 1e-14  # 5 − a·(1+2+3+4)·1e-12


# ---------------------------------------------------------------- bad inputs

PS, QS = np.stack([P71, P71]), Q71[None]
RNG = np.random.default_rng(0)

BAD = [
    ("p-sum", lambda: acceptance_rate([0.5, 0.4], [0.5, 0.5]), ValueError, r"acceptance_rate: p rows must sum to 1 within 1e-9 \(no silent renormalization\); got a row summing to 0.9"),
    ("q-negative", lambda: acceptance_rate([0.5, 0.5], [1.5, -0.5]), ValueError, "q must be non-negative"),
    ("q-nan", lambda: residual_distribution(P71, [np.nan, 0.5, 0.5]), ValueError, "q must be finite"),
    ("vocab", lambda: acceptance_rate(P71, [0.5, 0.5]), ValueError, "share the last dimension"),
    ("lead", lambda: acceptance_rate(np.stack([P71] * 2), np.stack([Q71] * 3)), ValueError, "must broadcast"),
    ("p-equals-q", lambda: residual_distribution(P71, P71), ValueError, "residual_distribution: the residual max"),
    ("batch-row-equal", lambda: residual_distribution(np.stack([P71, P71]), np.stack([Q71, P71])), ValueError, r"row \(1,\)"),
    ("p-str", lambda: speculative_output_distribution(["a"], ["b"]), TypeError, "p must be numeric"),
    ("step-p-1d", lambda: speculative_step(P71, QS, [0], RNG), ValueError, "speculative_step: p must be 2-D"),
    ("step-gamma-0", lambda: speculative_step(P71[None], QS, [0], RNG), ValueError, r"p must be \(gamma \+ 1, V\) with gamma >= 1"),
    ("step-q-shape", lambda: speculative_step(PS, np.stack([Q71] * 2), [0], RNG), ValueError, r"q must be \(gamma, V\) = \(1, 3\)"),
    ("step-draft-shape", lambda: speculative_step(PS, QS, [0, 1], RNG), ValueError, r"draft must be \(gamma,\) = \(1,\)"),
    ("step-draft-float", lambda: speculative_step(PS, QS, [0.0], RNG), TypeError, "draft must be integers"),
    ("step-draft-big", lambda: speculative_step(PS, QS, [3], RNG), IndexError, r"draft must lie in \[0, 3\)"),
    ("step-draft-negative", lambda: speculative_step(PS, QS, [-1], RNG), IndexError, "negative ids are not wrapped"),
    ("step-draft-q-zero", lambda: speculative_step(PS, [[1.0, 0.0, 0.0]], [1], RNG), ValueError, r"draft\[0\] = 1 has draft probability q\[0, 1\] = 0"),
    ("step-rng-seed", lambda: speculative_step(PS, QS, [0], wrong(0)), TypeError, "rng must be a numpy.random.Generator"),
    ("step-rng-legacy", lambda: speculative_step(PS, QS, [0], wrong(np.random.RandomState(0))), TypeError, "got RandomState"),
    ("step-p-rows", lambda: speculative_step([[0.5, 0.5, 0.1], P71], QS, [0], RNG), ValueError, r"p rows must sum to 1 within 1e-9 .*at index \(0,\)"),
    ("rate-above", lambda: expected_tokens_per_step(1.2, 3), ValueError, r"expected_tokens_per_step: accept_rate must lie in \[0, 1\]"),
    ("rate-nan", lambda: expected_tokens_per_step(np.nan, 3), ValueError, "accept_rate must be finite"),
    ("gamma-zero", lambda: expected_tokens_per_step(0.5, 0), ValueError, "gamma must be >= 1"),
    ("gamma-float", lambda: expected_tokens_per_step(0.5, wrong(3.0)), TypeError, "gamma must be an integer"),
    ("speedup-rate", lambda: speculative_speedup(-0.1, 3, 0.1), ValueError, "speculative_speedup: accept_rate"),
    ("speedup-gamma", lambda: speculative_speedup(0.5, 0, 0.1), ValueError, "speculative_speedup: gamma"),
    ("speedup-cost", lambda: speculative_speedup(0.5, 3, -0.1), ValueError, "cost_ratio must be >= 0"),
    ("speedup-cost-inf", lambda: speculative_speedup(0.5, 3, np.inf), ValueError, "cost_ratio must be finite"),
]  # fmt: skip


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------------ cross-check with transformers


def _one_hf_case(torch, gen, monkeypatch, captured, seed):
    """Run one random case through both; return the max |HF p_prime − kernel's distribution|."""
    rng = np.random.default_rng(seed)
    g, V = 1 + seed % 4, 6
    p = np.exp(rng.normal(size=(g + 1, V)))
    q = np.exp(rng.normal(size=(g, V)) * (0.2 if seed % 3 == 0 else 1.0))  # some close drafts
    p, q = p / p.sum(-1, keepdims=True), q / q.sum(-1, keepdims=True)
    draft = np.array([rng.choice(V, p=q[i]) for i in range(g)])
    tokens, n = speculative_step(p, q, draft, np.random.default_rng(seed + 1))
    ref = np.random.default_rng(seed + 1)  # the same stream: γ uniforms, then one more
    u = ref.random(g)
    captured["u"] = ref.random()
    monkeypatch.setattr(torch, "rand_like", lambda x: torch.tensor(u, dtype=x.dtype))
    cand = torch.tensor(np.concatenate([[0], draft]))[None]
    valid, n_hf = gen._speculative_sampling(
        cand, torch.tensor(np.log(q))[None], g, torch.tensor(np.log(p))[None]
    )
    want = residual_distribution(p[n], q[n]) if n < g else p[g]
    assert int(n_hf) == n and valid[0].tolist() == tokens.tolist(), seed
    return np.abs(captured["p"] - want).max()


def test_step_equals_hf_speculative_sampling_given_the_same_uniforms(monkeypatch):
    """Same ``n_matches``, same next-token distribution (to a few ulps: HF recomputes the
    probabilities as ``softmax(log p)``) and, with the kernel's next uniform fed to an
    inverse CDF in place of ``torch.multinomial``, the same token."""
    torch = pytest.importorskip("torch")
    gen = pytest.importorskip("transformers.generation.utils")
    captured = {}

    def multinomial(probs, num_samples=1):
        captured["p"] = probs.numpy()[0].copy()
        c = np.cumsum(probs.numpy()[0])
        return torch.tensor([[int((c <= captured["u"] * c[-1]).sum())]])

    monkeypatch.setattr(torch, "multinomial", multinomial)
    threads = torch.get_num_threads()  # one thread: tiny ops are slow on a busy machine
    torch.set_num_threads(1)
    try:
        worst = max(_one_hf_case(torch, gen, monkeypatch, captured, s) for s in range(150))
    finally:
        torch.set_num_threads(threads)
    assert worst <= 2e-15  # measured 3.3e-16 in the evidence; entries are <= 1
