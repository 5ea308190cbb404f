"""Tests for llmmath.measures: entropy, KL, perplexity, bits per byte, strided evaluation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmmath.measures import (
    bits_per_byte,
    cross_entropy_dist,
    entropy,
    kl_divergence,
    perplexity,
    strided_nll,
    strided_windows,
)
from llmmath.softmax import softmax

PROPS = settings(max_examples=40, deadline=None)
P, Q = [0.5, 0.25, 0.25], [0.7, 0.2, 0.1]  # §4.1
Z = np.array([2.0, 1.0, 0.5, 0.0, -1.0])  # the lesson's shared logits


def copy_toy(V, period, n, copy_p):
    """§4.4 / Exercise 6: a block of `period` distinct ids repeated to n tokens; the model
    puts copy_p on the id `period` positions back when it is inside the window, else uniform."""
    ids = np.tile(np.arange(10, 10 + period), n // period)

    def window_logprobs(w):
        out = np.full((len(w), V), -math.log(V))
        for t in range(len(w)):  # row t predicts w[t + 1]
            if t + 1 - period >= 0:
                out[t] = math.log((1 - copy_p) / (V - 1))
                out[t, w[t + 1 - period]] = math.log(copy_p)
        return out

    return ids, window_logprobs


# ---------------------------------------------------------------- unit tests


def test_entropy_cross_entropy_and_kl_of_section_4_1():
    assert entropy(P, base=2) == pytest.approx(1.5, rel=1e-14)
    assert entropy(P) == pytest.approx(1.5 * math.log(2), rel=1e-14)
    assert cross_entropy_dist(P, Q, base=2) == pytest.approx(1.668251, abs=5e-7)
    assert kl_divergence(P, Q, base=2) == pytest.approx(0.168251, abs=5e-7)
    assert kl_divergence(P, Q) == pytest.approx(0.116622, abs=5e-7)
    assert kl_divergence(Q, P, base=2) == pytest.approx(0.143220, abs=5e-7)
    exact = 0.5 * math.log(0.5 / 0.7) + 0.25 * math.log(0.25 / 0.2) + 0.25 * math.log(2.5)
    assert kl_divergence(P, Q) == pytest.approx(exact, rel=1e-14)


def test_zero_probabilities_follow_0_log_0_and_infinite_kl():
    assert entropy([1.0, 0.0, 0.0]) == 0.0 and not np.signbit(entropy([1.0, 0.0]))
    assert kl_divergence([0.5, 0.5, 0.0], [1.0, 0.0, 0.0]) == np.inf  # q misses p's support
    assert kl_divergence([1.0, 0.0, 0.0], [0.5, 0.5, 0.0], base=2) == pytest.approx(1.0, rel=1e-15)
    assert cross_entropy_dist([0.5, 0.5, 0.0], [1.0, 0.0, 0.0]) == np.inf
    assert cross_entropy_dist([1.0, 0.0], [0.5, 0.5]) == pytest.approx(math.log(2), rel=1e-15)
    assert kl_divergence(P, P) == 0.0


def test_entropy_of_tempered_logits():
    # preamble: H rises from 1.2065 (T = 1) to 1.4915 (T = 2); Exercise 3's entropies
    np.testing.assert_allclose(
        entropy(softmax(Z / np.array([[1.0], [2.0]]))), [1.2065, 1.4915], atol=5e-5
    )
    z = np.array([1.5, 0.5, 0.0, -2.0])
    H = entropy(softmax(z / np.array([[0.5], [1.0], [2.0]])))
    np.testing.assert_allclose(H, [0.5301, 0.9817, 1.2390], atol=5e-5)


def test_forward_and_reverse_kl_fits_of_section_4_5():
    x = np.linspace(-8, 8, 3201)  # step 0.005

    def gauss(m, sd):
        g = np.exp(-0.5 * ((x - m) / sd) ** 2)
        return g / g.sum()

    target = 0.5 * gauss(-2, 0.5) + 0.5 * gauss(2, 0.5)
    assert math.sqrt(np.sum(target * x**2) - np.sum(target * x) ** 2) == pytest.approx(
        2.0616, abs=5e-5
    )
    forward, reverse = gauss(0.0, 2.06), gauss(-2.0, 0.5)
    assert kl_divergence(target, forward) == pytest.approx(0.7235, abs=5e-5)
    assert kl_divergence(reverse, target) == pytest.approx(0.6931, abs=5e-5)  # ln 2, to 4 places
    assert kl_divergence(forward, target) == pytest.approx(2.0881, abs=5e-5)
    assert kl_divergence(target, reverse) == pytest.approx(15.3069, abs=5e-4)
    # each fit is a local minimum of its own objective on the grid of the lesson (0.05 in μ, 0.01 in σ)
    near = [(dm, ds) for dm in (-0.05, 0, 0.05) for ds in (-0.01, 0, 0.01) if (dm, ds) != (0, 0)]
    qs = np.stack([gauss(dm, 2.06 + ds) for dm, ds in near])
    assert (kl_divergence(target, qs) > kl_divergence(target, forward)).all()
    qs = np.stack([gauss(-2.0 + dm, 0.5 + ds) for dm, ds in near])
    assert (kl_divergence(qs, target) > kl_divergence(reverse, target)).all()


def test_batched_rows_and_broadcasting():
    p = np.array([P, [0.2, 0.3, 0.5]])
    np.testing.assert_allclose(kl_divergence(p, Q), [kl_divergence(P, Q), kl_divergence(p[1], Q)])
    assert entropy(np.ones((2, 3, 4)) / 4).shape == (2, 3)


def test_perplexity_of_section_4_2():
    nll = -np.log([0.5, 0.25, 0.125, 0.5])
    assert perplexity(nll) == pytest.approx(2**1.75, rel=1e-14)
    assert perplexity(nll.sum(), 4) == pytest.approx(2**1.75, rel=1e-14)
    a, b = -np.log([0.5, 0.5]), -np.log([0.1] * 4)
    assert (perplexity(a), perplexity(b)) == pytest.approx((2.0, 10.0), rel=1e-14)
    corpus = perplexity(a.sum() + b.sum(), 6)  # not the mean of the two, 6
    assert corpus == pytest.approx(5.8480, abs=5e-5)
    assert perplexity(6 * math.log(50257), 6) == pytest.approx(50257, rel=1e-12)  # uniform: V
    # the bigram string of §1.2: 4 targets, log P = log 0.126
    assert perplexity(-math.log(0.126), 4) == pytest.approx(1.6784, abs=5e-5)
    assert isinstance(perplexity(1.0, 2), float) and isinstance(perplexity([1.0]), float)


def test_bits_per_byte_of_section_4_3_and_exercise_2():
    text = "héllo wörld"
    n = len(text.encode("utf-8"))
    assert (len(text), n) == (11, 13)
    assert bits_per_byte(9.0, n) == pytest.approx(0.998789, abs=5e-7)
    assert (perplexity(9.0, 4), perplexity(9.0, 13)) == pytest.approx((9.4877, 1.9983), abs=5e-5)
    n2 = len("naïve café".encode())
    assert n2 == 12
    assert bits_per_byte(7.0, n2) == pytest.approx(0.8416, abs=5e-5)
    assert bits_per_byte(8.4, n2) == pytest.approx(1.0099, abs=5e-5)
    assert (perplexity(7.0, 3), perplexity(8.4, 12)) == pytest.approx((10.3123, 2.0138), abs=5e-5)
    assert bits_per_byte(np.float64(math.log(2)), 1) == pytest.approx(1.0, rel=1e-15)


def test_strided_windows_follow_the_guide_loop():
    np.testing.assert_array_equal(
        strided_windows(50, 16, 8),
        [[0, 16, 1], [8, 24, 16], [16, 32, 24], [24, 40, 32], [32, 48, 40], [40, 50, 48]],
    )
    np.testing.assert_array_equal(
        strided_windows(36, 10, 4)[:, 2], [1, 10, 14, 18, 22, 26, 30, 34]
    )  # Exercise 6
    np.testing.assert_array_equal(
        strided_windows(36, 10, 10), [[0, 10, 1], [10, 20, 11], [20, 30, 21], [30, 36, 31]]
    )
    np.testing.assert_array_equal(strided_windows(5, 2, 2), [[0, 2, 1], [2, 4, 3], [4, 5, 5]])
    np.testing.assert_array_equal(strided_windows(3, 8, 8), [[0, 3, 1]])
    assert strided_windows(50, 16, 8).dtype == np.int64
    assert [len(strided_windows(64, L, s)) for L, s in [(64, 64), (16, 16), (16, 8), (16, 4)]] == [
        1,
        4,
        7,
        13,
    ]
    assert len(strided_windows(50, 16, 1)) == 35


@pytest.mark.parametrize(
    "L, s, n_scored, mean_nll",
    [
        (64, 64, 63, 0.605339),
        (16, 16, 60, 2.205272),
        (16, 8, 63, 0.605339),
        (16, 4, 63, 0.605339),
        (12, 12, 58, 3.053512),
        (12, 4, 63, 0.605339),
    ],
)
def test_strided_nll_on_the_copy_toy_of_section_4_4(L, s, n_scored, mean_nll):
    ids, wlp = copy_toy(100, 8, 64, 0.9)
    total, n = strided_nll(wlp, ids, L, s)
    assert n == n_scored and isinstance(n, int) and isinstance(total, float)
    assert total / n == pytest.approx(mean_nll, abs=5e-7)
    full = (7 * math.log(100) + 56 * -math.log(0.9)) / 63  # closed forms
    disjoint = (28 * math.log(100) + 32 * -math.log(0.9)) / 60
    if (L, s) in [(64, 64), (16, 8)]:
        assert total / n == pytest.approx(full, rel=1e-13)
        assert perplexity(total, n) == pytest.approx(1.8319, abs=5e-5)
    if (L, s) == (16, 16):
        assert total / n == pytest.approx(disjoint, rel=1e-13)
        assert perplexity(total, n) == pytest.approx(9.0727, abs=5e-5)


@pytest.mark.parametrize(
    "L, s, n_weight, ppl",
    [
        (64, 64, 63, 1.8319),
        (16, 16, 60, 9.0727),
        (16, 8, 57, 1.9309),
        (16, 4, 51, 2.0606),
        (16, 1, 15, 9.0727),
    ],
)
def test_hf_guide_accounting_on_the_copy_toy(L, s, n_weight, ppl):
    ids, wlp = copy_toy(100, 8, 64, 0.9)
    total, n = strided_nll(wlp, ids, L, s, accounting="hf_guide")
    assert n == n_weight
    assert perplexity(total, n) == pytest.approx(ppl, abs=5e-5)


def test_exercise_6():
    ids, wlp = copy_toy(50, 6, 36, 0.8)
    for L, s, n_scored, mean_nll, ppl in [
        (36, 36, 35, 0.750126, 2.1173),
        (10, 10, 32, 2.528693, 12.5371),
        (10, 4, 35, 0.750126, 2.1173),
        (10, 5, 35, 1.382506, 3.9849),
    ]:
        total, n = strided_nll(wlp, ids, L, s)
        assert n == n_scored
        assert total / n == pytest.approx(mean_nll, abs=5e-7)
        assert perplexity(total, n) == pytest.approx(ppl, abs=5e-5)
    assert perplexity(*strided_nll(wlp, ids, 10, 4, accounting="hf_guide")) == pytest.approx(
        2.4154, abs=5e-5
    )
    assert strided_nll(wlp, ids, 10, 4, accounting="hf_guide")[1] == 28
    assert perplexity(*strided_nll(wlp, ids, 10, 10, accounting="hf_guide")) == pytest.approx(
        12.5371, abs=5e-5
    )


def test_strided_nll_passes_each_window_once():
    seen = []

    def wlp(w):
        seen.append(w.tolist())
        return np.full((len(w), 3), -math.log(3))

    strided_nll(wlp, [0, 1, 2, 0, 1], 4, 2)
    assert seen == [[0, 1, 2, 0], [2, 0, 1]]


# ---------------------------------------------------------- property tests


@PROPS
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(1, 8))
def test_cross_entropy_is_entropy_plus_kl(seed, V):
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(V), size=3), rng.dirichlet(np.ones(V), size=3)
    p[0, 0] = 0.0  # a zero of p: 0 log 0 = 0
    p[0] /= p[0].sum() if p[0].sum() > 0 else 1.0
    if not p[0].any():
        p[0] = np.eye(V)[-1]
    for base in (None, 2):
        h, k, ce = (
            entropy(p, base=base),
            kl_divergence(p, q, base=base),
            cross_entropy_dist(p, q, base=base),
        )
        # each is a sum of V terms of size <= ~ log of the smallest probability: a few ulps each
        np.testing.assert_allclose(ce, h + k, rtol=1e-13, atol=1e-13)
        assert (k >= -1e-15).all() and (h >= 0).all()
        assert (h <= np.log(V) / (np.log(2) if base else 1) + 1e-12).all()


@PROPS
@given(
    n=st.integers(2, 80), L=st.integers(2, 20), s_frac=st.floats(0.0, 1.0), disjoint=st.booleans()
)
def test_windows_score_every_position_once(n, L, s_frac, disjoint):
    s = L if disjoint else 1 + int(s_frac * (L - 2))  # s < L unless disjoint
    w = strided_windows(n, L, s)
    scored = np.concatenate([np.arange(first, end) for _, end, first in w])
    assert w[-1, 1] == n and (w[:, 1] < n).sum() == len(w) - 1  # stops after reaching the end
    if s < L:
        np.testing.assert_array_equal(scored, np.arange(1, n))
    else:
        assert len(scored) == n - len(w) and len(set(scored)) == len(scored)
    assert (w[:, 1] - w[:, 0] <= L).all() and (w[:, 2] >= w[:, 0] + 1).all()


@PROPS
@given(seed=st.integers(0, 2**32 - 1))
def test_hf_guide_shift_is_bounded_by_the_first_window(seed):
    # full later windows: |guide mean − exact mean| <= |m_1 − exact mean| / s (evidence #28)
    rng = np.random.default_rng(seed)
    s = int(rng.integers(2, 20))
    L = s + int(rng.integers(0, 20))
    n = L + s * int(rng.integers(1, 10))
    nll = rng.gamma(2.0, 1.5, size=n)  # a fixed NLL per position, whatever the window

    def wlp(w):  # ids are positions; row t scores position w[t + 1]
        out = np.full((len(w), n), -1.0)
        out[np.arange(len(w) - 1), w[1:]] = -nll[w[1:]]
        return out

    exact = strided_nll(wlp, np.arange(n), L, s)
    guide = strided_nll(wlp, np.arange(n), L, s, accounting="hf_guide")
    m = exact[0] / exact[1]
    m1 = nll[1:L].mean()
    assert abs(guide[0] / guide[1] - m) <= abs(m1 - m) / s + 1e-12
    if L == s:
        assert guide == pytest.approx(exact, rel=1e-13)


# ------------------------------------------------------------ bad inputs

UNIFORM = lambda w: np.full((len(w), 3), -math.log(3))  # noqa: E731

BAD = [
    ("negative-p", lambda: entropy([1.5, -0.5]), ValueError, "p must be non-negative"),
    ("p-not-normalized", lambda: entropy([0.5, 0.4]), ValueError, "p rows must sum to 1"),
    ("p-renormalization-1e-8", lambda: entropy([0.5, 0.5 + 1e-8]), ValueError, "within 1e-9"),
    ("q-not-normalized", lambda: kl_divergence(P, [0.5, 0.2, 0.2]), ValueError, "q rows"),
    ("p-nan", lambda: entropy([np.nan, 1.0]), ValueError, "p must be finite"),
    ("p-0d", lambda: entropy(1.0), ValueError, "p must have at least 1"),
    ("p-q-width", lambda: kl_divergence(P, [0.5, 0.5]), ValueError, "p and q must share"),
    (
        "p-q-broadcast",
        lambda: cross_entropy_dist(np.ones((2, 2)) / 2, np.ones((3, 2)) / 2),
        ValueError,
        "broadcast",
    ),
    ("base-one", lambda: entropy(P, base=1), ValueError, "base"),
    ("base-negative", lambda: kl_divergence(P, Q, base=-2), ValueError, "base"),
    (
        "ppl-array-with-count",
        lambda: perplexity([1.0, 2.0], 2),
        ValueError,
        "nll must be one summed",
    ),
    ("ppl-zero-count", lambda: perplexity(1.0, 0), ValueError, "n_tokens"),
    ("ppl-float-count", lambda: perplexity(1.0, 3.0), TypeError, "n_tokens"),
    ("ppl-inf", lambda: perplexity([np.inf]), ValueError, "nll"),
    ("bpb-array", lambda: bits_per_byte([1.0, 2.0], 3), ValueError, "nll must be one summed"),
    ("bpb-zero-bytes", lambda: bits_per_byte(1.0, 0), ValueError, "n_bytes"),
    ("bpb-float-bytes", lambda: bits_per_byte(1.0, 13.0), TypeError, "n_bytes"),
    (
        "stride-above-L",
        lambda: strided_windows(10, 4, 5),
        ValueError,
        "stride must be <= max_length",
    ),
    ("stride-zero", lambda: strided_windows(10, 4, 0), ValueError, "stride must be >= 1"),
    ("L-one", lambda: strided_windows(10, 1, 1), ValueError, "max_length must be >= 2"),
    ("n-one", lambda: strided_windows(1, 4, 2), ValueError, "n_tokens must be >= 2"),
    ("n-float", lambda: strided_windows(10.0, 4, 2), TypeError, "n_tokens"),
    ("stride-float", lambda: strided_windows(10, 4, 2.0), TypeError, "stride"),
    (
        "accounting",
        lambda: strided_nll(UNIFORM, [0, 1, 2], 2, 1, accounting="hf"),
        ValueError,
        "accounting",
    ),
    ("not-callable", lambda: strided_nll(None, [0, 1, 2], 2, 1), TypeError, "window_logprobs"),
    ("float-ids", lambda: strided_nll(UNIFORM, [0.0, 1.0], 2, 1), TypeError, "ids"),
    ("2d-ids", lambda: strided_nll(UNIFORM, [[0, 1], [1, 0]], 2, 1), ValueError, "ids must be 1-D"),
    ("one-id", lambda: strided_nll(UNIFORM, [0], 2, 1), ValueError, "n_tokens >= 2"),
    ("negative-id", lambda: strided_nll(UNIFORM, [0, -1, 2], 2, 1), IndexError, "ids"),
    (
        "id-beyond-V",
        lambda: strided_nll(UNIFORM, [0, 1, 3], 2, 1),
        IndexError,
        r"ids must lie in \[0, 3\)",
    ),
    (
        "window-shape",
        lambda: strided_nll(lambda w: np.zeros((len(w) - 1, 3)), [0, 1, 2], 2, 1),
        ValueError,
        r"window_logprobs\(ids\[0:2\]\) must have shape \(2, V\)",
    ),
    (
        "window-V-changes",
        lambda: strided_nll(lambda w: np.zeros((len(w), 3 + int(w[0]))), [0, 1, 2], 2, 1),
        ValueError,
        r"window_logprobs\(ids\[1:3\]\) must have shape \(2, 3\)",
    ),
    (
        "window-nan",
        lambda: strided_nll(lambda w: np.full((len(w), 3), np.nan), [0, 1, 2], 2, 1),
        ValueError,
        r"window_logprobs\(ids\[0:2\]\) must be finite",
    ),
]


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_neg_inf_log_probability_gives_infinite_nll():
    def wlp(w):
        out = np.full((len(w), 2), -np.inf)
        out[:, 0] = 0.0
        return out

    assert strided_nll(wlp, [0, 0, 1], 3, 3) == (np.inf, 2)


# -------------------------------------------------- cross-checks with references


def test_entropy_and_kl_match_torch_distributions():
    torch = pytest.importorskip("torch")
    Cat = torch.distributions.Categorical
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(9), size=50), rng.dirichlet(np.ones(9), size=50)
    p[:5, 0] = 0.0  # zeros of p count 0
    p[:5] /= p[:5].sum(-1, keepdims=True)
    tp, tq = Cat(probs=torch.tensor(p)), Cat(probs=torch.tensor(q))
    # sums of 9 terms below 1 in magnitude; torch renormalizes p first: 1e-14 is ~50 ulps
    np.testing.assert_allclose(entropy(p), tp.entropy().numpy(), rtol=0, atol=1e-14)
    np.testing.assert_allclose(
        kl_divergence(p, q), torch.distributions.kl_divergence(tp, tq).numpy(), rtol=0, atol=1e-14
    )
    p1, q1 = torch.tensor([P], dtype=torch.float64), torch.tensor([Q], dtype=torch.float64)
    assert kl_divergence(P, Q) == pytest.approx(
        torch.distributions.kl_divergence(Cat(probs=p1), Cat(probs=q1)).item(), abs=1e-15
    )
    t_inf = torch.distributions.kl_divergence(
        Cat(probs=torch.tensor([0.5, 0.5, 0.0])), Cat(probs=torch.tensor([1.0, 0.0, 0.0]))
    )
    assert kl_divergence([0.5, 0.5, 0.0], [1.0, 0.0, 0.0]) == t_inf.item() == np.inf


@pytest.fixture(scope="module")
def tiny_gpt2():
    """The lesson's §2.5 construction as evidence f13 uses it (1 layer, float64)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=50,
        n_positions=64,
        n_embd=16,
        n_layer=1,
        n_head=2,
        bos_token_id=0,
        eos_token_id=0,
    )
    return torch, transformers.GPT2LMHeadModel(config).double().eval()


def test_strided_nll_matches_the_hf_perplexity_guide(tiny_gpt2):
    torch, model = tiny_gpt2
    ids = torch.randint(0, 50, (1, 50), generator=torch.Generator().manual_seed(1))
    cache = {}  # one forward pass per window, shared by the guide and the kernel

    def logits_of(x):
        key = tuple(x.reshape(-1).tolist())
        if key not in cache:
            with torch.no_grad():
                cache[key] = model(x.reshape(1, -1)).logits
        return cache[key]

    def guide(L, s):  # docs/source/en/perplexity.md, transcribed
        seq_len, nll_sum, n_tokens, prev_end = ids.size(1), 0.0, 0, 0
        for begin in range(0, seq_len, s):
            end = min(begin + L, seq_len)
            trg_len = end - prev_end
            input_ids = ids[:, begin:end]
            target_ids = input_ids.clone()
            target_ids[:, :-trg_len] = -100
            # what model(input_ids, labels=target_ids).loss computes from its logits
            nll = model.loss_function(logits_of(input_ids), target_ids, vocab_size=50)
            k = (target_ids != -100).sum().item() - target_ids.size(0)
            nll_sum, n_tokens, prev_end = nll_sum + nll * k, n_tokens + k, end
            if end == seq_len:
                break
        return (nll_sum / n_tokens).item(), n_tokens

    def wlp(w):
        return torch.log_softmax(logits_of(torch.tensor(w))[0], -1).numpy()

    x = ids[0].numpy()
    with torch.no_grad():  # the literal call agrees with the cached one
        window = ids[:, :16]
        direct = model(window, labels=window).loss.item()
    assert model.loss_function(logits_of(window), window, vocab_size=50).item() == direct
    for L, s, n_guide in [(16, 16, 46), (16, 8, 44), (16, 1, 15)]:
        mean, n = guide(L, s)
        total, count = strided_nll(wlp, x, L, s, accounting="hf_guide")
        assert count == n == n_guide
        # the guide's loss is float32 (ForCausalLMLoss calls logits.float()): ~1e-7 relative
        assert total / count == pytest.approx(mean, rel=1e-6)
        if s == L:
            assert strided_nll(wlp, x, L, s) == pytest.approx((total, count), rel=1e-13)
    total, count = strided_nll(wlp, x, 16, 8)
    assert count == 49 and total / count == pytest.approx(3.927698, abs=5e-7)
    total, count = strided_nll(wlp, x, 16, 8, accounting="hf_guide")
    assert total / count == pytest.approx(3.925638, abs=5e-7)
