"""Tests for llmmath.efficient: online softmax, blockwise attention, the SDPA backward
pass, linear attention, attention entropy and rollout.

Cross-checks against PyTorch (float64, math backend) skip without torch, with a
reason; under MFL_REQUIRE_REFERENCE=1 a skipped cross-check fails (tests/conftest.py).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import llmmath as lm
from llmmath.attention import causal_mask, scaled_dot_product_attention
from llmmath.efficient import (
    attention_entropy,
    attention_rollout,
    blockwise_attention,
    linear_attention,
    online_softmax_stats,
    sdpa_backward,
)

PROPS = settings(max_examples=50, deadline=None)
sdpa = scaled_dot_product_attention


def _problem(seed=0, lead=(2, 3), tq=7, tk=9, d=4, dv=5):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(*lead, tq, d))
    k = rng.normal(size=(*lead, tk, d))
    v = rng.normal(size=(*lead, tk, dv))
    mask = rng.random((tq, tk)) > 0.4
    mask[2] = False  # a query row with no visible key
    bias = rng.normal(size=(lead[-1], 1, tk))  # per head, per key (broadcast over queries)
    bias[0, 0, 1] = -np.inf  # -inf in a bias masks that key
    return q, k, v, mask, bias


CASES = [
    {},
    {"causal": True},
    {"mask": "mask"},
    {"bias": "bias"},
    {"mask": "mask", "bias": "bias", "causal": True, "scale": 0.3},
]


def _kw(case, mask, bias):
    return {n: (mask if x == "mask" else bias if x == "bias" else x) for n, x in case.items()}


# ------------------------------------------------------------ online softmax


@PROPS
@given(
    s=hnp.arrays(np.float64, (3, 7), elements=st.floats(-30, 30) | st.just(-np.inf)),
    b=st.integers(1, 9),
)
def test_online_stats_equal_max_and_normalizer(s, b):
    m, l = online_softmax_stats(s, block_size=b)  # noqa: E741
    assert np.array_equal(m, s.max(axis=-1))
    visible = np.isfinite(m)
    direct = np.exp(s[visible] - m[visible, None]).sum(axis=-1)
    np.testing.assert_allclose(l[visible], direct, rtol=1e-13)
    assert np.all(l[~visible] == 0.0) and np.all(l[visible] >= 1.0)


def test_online_stats_all_masked_row_and_block_sizes():
    s = np.array([[-np.inf, -np.inf, -np.inf], [0.0, np.log(3.0), -np.inf]])
    for b in (1, 2, 3, 10):
        m, l = online_softmax_stats(s, block_size=b)  # noqa: E741
        assert m[0] == -np.inf and l[0] == 0.0
        assert m[1] == np.log(3.0)
        np.testing.assert_allclose(l[1], 4.0 / 3.0, rtol=1e-15)


# ------------------------------------------------------- blockwise attention


@pytest.mark.parametrize("block", [1, 3, 9, 64])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(c) or "plain")
def test_blockwise_equals_sdpa_and_lse(block, case):
    q, k, v, mask, bias = _problem()
    kw = _kw(case, mask, bias)
    out, lse = blockwise_attention(q, k, v, block_size=block, **kw)
    ref, w = sdpa(q, k, v, **kw)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12 * np.abs(v).max())
    # lse: the log-sum-exp of the scores over visible keys, written out directly
    s = kw.get("scale", 0.5) * q @ np.swapaxes(k, -1, -2) + kw.get("bias", 0.0)
    allowed = np.ones(s.shape[-2:], bool)
    if "mask" in kw:
        allowed &= mask
    if kw.get("causal"):
        allowed &= causal_mask(*s.shape[-2:])
    # lse's error is absolute, not relative: the d-term scores (|s| < 5 here, scale applied
    # before or after the matmul), then exp, the sum over up to 9 keys and the log carry some
    # 150 u (u = 2^-53), ~2e-14. rtol alone would ask 4e-16 of the row where lse = 0.0045.
    np.testing.assert_allclose(
        lse, lm.logsumexp(np.where(allowed, s, -np.inf)), rtol=1e-13, atol=1e-13
    )
    # the weights come back from lse: A = exp(S - lse) on visible keys
    seen = np.isfinite(lse)
    rebuilt = np.where(allowed, np.exp(s - np.where(seen, lse, 0.0)[..., None]), 0.0)
    np.testing.assert_allclose(np.where(seen[..., None], rebuilt, 0.0), w, atol=1e-13)


# Leading (batch, head) axes as scaled_dot_product_attention broadcasts them: each
# of q, k, v, mask and bias may carry an axis (or a size-1 axis) the others lack.
# (q, k, v, mask, bias) leading shapes; None = no mask / no bias.
LEADS = [
    ((), (), (3,), None, None),  # v alone (an in-place update once refused this)
    ((), (3,), (), None, None),  # k alone
    ((3,), (), (), None, None),  # q alone
    ((), (2, 1), (1, 3), None, None),  # k and v, different axes
    ((1, 3), (), (2, 1, 1), None, None),  # v with more axes than q
    ((2, 1, 1), (1, 3, 1), (1, 1, 4), None, None),  # one axis each
    ((), (), (), (2,), None),  # the mask alone
    ((), (), (), None, (3,)),  # the bias alone (ALiBi on head-less q, k, v)
    ((), (), (2, 1), (3,), None),  # v and the mask
    ((2, 1), (), (), (1,), (2, 3)),  # q, mask and bias
]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("leads", LEADS, ids=lambda x: "/".join(map(str, x)))
def test_blockwise_and_backward_broadcast_every_leading_axis_sdpa_does(leads, causal):
    rng = np.random.default_rng(5)
    tq, tk, d, dv = 4, 7, 3, 2
    ql, kl, vl, ml, bl = leads
    q = rng.normal(size=(*ql, tq, d))
    k = rng.normal(size=(*kl, tk, d))
    v = rng.normal(size=(*vl, tk, dv))
    kw = {"causal": causal}
    if ml is not None:
        kw["mask"] = rng.random((*ml, tq, tk)) > 0.3
    if bl is not None:
        kw["bias"] = rng.normal(size=(*bl, tq, tk))
    ref, w = sdpa(q, k, v, **kw)
    out, lse = blockwise_attention(q, k, v, block_size=3, **kw)
    assert out.shape == ref.shape and lse.shape == ref.shape[:-1]
    # the tolerance of test_blockwise_equals_sdpa_and_lse (same sizes or smaller)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12 * np.abs(v).max())
    # lse, written out: scores of every visible key
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d) + kw.get("bias", 0.0)
    allowed = kw.get("mask", np.ones((tq, tk), bool))
    if causal:
        allowed = allowed & causal_mask(tq, tk)
    want = np.broadcast_to(lm.logsumexp(np.where(allowed, s, -np.inf)), lse.shape)
    # as in test_blockwise_equals_sdpa_and_lse: 3-term scores, a bias, at most 7 keys
    np.testing.assert_allclose(lse, want, rtol=1e-13, atol=1e-13)
    # the backward pass takes the same inputs and returns gradients shaped like them
    dq, dk, dvv = sdpa_backward(q, k, v, np.ones(ref.shape), **kw)
    assert (dq.shape, dk.shape, dvv.shape) == (q.shape, k.shape, v.shape)


def test_blockwise_fully_masked_rows_give_zero_and_minus_inf():
    q, k, v, mask, _ = _problem()
    out, lse = blockwise_attention(q, k, v, block_size=3, mask=mask)
    assert np.all(out[..., 2, :] == 0.0) and np.all(lse[..., 2] == -np.inf)
    assert np.isfinite(lse[..., [0, 1, 3]]).all()
    # a bias of -inf on every key is the same as masking them all
    bias = np.zeros((7, 9))
    bias[4] = -np.inf
    out, lse = blockwise_attention(q, k, v, block_size=4, bias=bias)
    assert np.all(out[..., 4, :] == 0.0) and np.all(lse[..., 4] == -np.inf)


@PROPS
@given(st.data())
def test_blockwise_matches_sdpa_on_random_problems(data):
    tq, tk, d, b = (data.draw(st.integers(1, n)) for n in (6, 11, 4, 12))

    def arr(shape):
        return data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-4, 4)))

    q, k, v = arr((2, tq, d)), arr((1, tk, d)), arr((2, tk, 3))
    mask = data.draw(hnp.arrays(np.bool_, (tq, tk)))
    causal = data.draw(st.booleans())
    out, lse = blockwise_attention(q, k, v, block_size=b, mask=mask, causal=causal)
    ref, _ = sdpa(q, k, v, mask=mask, causal=causal)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12 * max(np.abs(v).max(), 1e-300))
    visible = mask & causal_mask(tq, tk) if causal else mask
    assert np.array_equal(np.isfinite(lse), np.broadcast_to(visible.any(-1), lse.shape))


def test_blockwise_never_holds_the_full_score_matrix():
    rng = np.random.default_rng(0)
    tq, tk, d = 64, 4096, 8
    q, k, v = rng.normal(size=(tq, d)), rng.normal(size=(tk, d)), rng.normal(size=(tk, d))
    full = tq * tk * 8  # bytes of one float64 (Tq, Tk) score matrix: 2 MiB
    tracemalloc.start()
    try:
        blockwise_attention(q, k, v, block_size=64, causal=True)
        _, peak_block = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        sdpa(q, k, v, causal=True)
        _, peak_sdpa = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak_block < full / 4 < peak_sdpa


def test_blockwise_causal_builds_no_full_mask():
    # causal=True masks each block from its indices: not even the (T, T) boolean
    # mask (one byte per pair) is ever held
    rng = np.random.default_rng(7)
    t, d = 2048, 8
    q, k, v = rng.normal(size=(3, t, d))
    tracemalloc.start()
    try:
        out, _ = blockwise_attention(q, k, v, block_size=32, causal=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < t * t / 2  # the boolean (T, T) mask alone is t * t bytes
    assert np.allclose(out, sdpa(q, k, v, causal=True)[0], rtol=1e-12, atol=1e-12)


def test_blockwise_matches_torch_sdpa_and_logsumexp():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    q, k, v, mask, bias = _problem(seed=1)
    T = k.shape[-2]
    t = {n: torch.tensor(x) for n, x in {"q": q, "k": k, "v": v}.items()}
    cases = [
        ({}, {}),
        ({"causal": True}, {"is_causal": True}),
        ({"mask": mask}, {"attn_mask": torch.tensor(mask)}),
        ({"bias": bias}, {"attn_mask": torch.tensor(bias)}),
        ({"mask": mask, "scale": 0.3}, {"attn_mask": torch.tensor(mask), "scale": 0.3}),
    ]
    for block in (1, 3, T):
        for ours, theirs in cases:
            out, lse = blockwise_attention(q, k, v, block_size=block, **ours)
            with _math_backend(torch):
                ref = F.scaled_dot_product_attention(t["q"], t["k"], t["v"], **theirs).numpy()
            np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12 * np.abs(v).max())
            # lse against torch.logsumexp of the masked scores built in torch
            scale = ours.get("scale", 1 / np.sqrt(q.shape[-1]))
            s = scale * t["q"] @ t["k"].transpose(-1, -2)
            if "bias" in ours:
                s = s + torch.tensor(bias)
            allowed = torch.ones(s.shape[-2:], dtype=torch.bool)
            if "mask" in ours:
                allowed = allowed & torch.tensor(mask)
            if ours.get("causal"):
                allowed = torch.ones_like(allowed).tril()
            s = s.masked_fill(~allowed, -torch.inf)
            np.testing.assert_allclose(lse, torch.logsumexp(s, dim=-1).numpy(), rtol=1e-12)
    # a fully masked row: torch's SDPA gives 0 there, and logsumexp -inf
    _, lse = blockwise_attention(q, k, v, block_size=3, mask=mask)
    assert np.all(lse[..., 2] == -np.inf)
    with _math_backend(torch):
        ref = F.scaled_dot_product_attention(
            t["q"], t["k"], t["v"], attn_mask=torch.tensor(mask)
        ).numpy()
    assert np.all(ref[..., 2, :] == 0.0)


def _math_backend(torch):
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:  # older torch: only the default dispatch
        import contextlib

        return contextlib.nullcontext()
    return sdpa_kernel(SDPBackend.MATH)


# --------------------------------------------------------------- backward


def _loss(q, k, v, g, **kw):
    return float((sdpa(q, k, v, **kw)[0] * g).sum())


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(c) or "plain")
def test_sdpa_backward_matches_finite_differences(case):
    q, k, v, mask, bias = _problem(seed=2, lead=(3,), tq=4, tk=5, d=3, dv=2)
    kw = _kw(case, mask[:4, :5], bias)
    g = np.random.default_rng(3).normal(size=(3, 4, 2))
    grads = sdpa_backward(q, k, v, g, **kw)
    h = 1e-6
    for i, x in enumerate((q, k, v)):
        num = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            args = [q.copy(), k.copy(), v.copy()]
            args[i][idx] += h
            up = _loss(*args, g, **kw)
            args[i][idx] -= 2 * h
            num[idx] = (up - _loss(*args, g, **kw)) / (2 * h)
        np.testing.assert_allclose(grads[i], num, atol=1e-7)


def test_sdpa_backward_sums_over_broadcast_axes_and_zeroes_masked_rows():
    rng = np.random.default_rng(4)
    q = rng.normal(size=(2, 3, 4, 5))  # (B, H, Tq, d)
    k, v = rng.normal(size=(1, 3, 6, 5)), rng.normal(size=(6, 2))  # broadcast over B and H
    mask = np.ones((4, 6), bool)
    mask[1] = False
    g = rng.normal(size=(2, 3, 4, 2))
    dq, dk, dv = sdpa_backward(q, k, v, g, mask=mask)
    assert dq.shape == q.shape and dk.shape == k.shape and dv.shape == v.shape
    assert np.all(dq[..., 1, :] == 0.0)
    # summing over the broadcast axes: the same as summing per-batch gradients
    per_b = [sdpa_backward(q[b], k[0], v, g[b], mask=mask) for b in range(2)]
    np.testing.assert_allclose(dk[0], per_b[0][1] + per_b[1][1], rtol=1e-12)
    np.testing.assert_allclose(dv, per_b[0][2] + per_b[1][2], rtol=1e-12)
    # the row sum identity: rowsum(dA ⊙ A) = rowsum(grad_out ⊙ out)
    out, a = sdpa(q, k, v, mask=mask)
    da = g @ np.swapaxes(np.broadcast_to(v, (2, 3, 6, 2)), -1, -2)
    np.testing.assert_allclose((da * a).sum(-1), (g * out).sum(-1), rtol=1e-10, atol=1e-14)


def test_sdpa_backward_matches_torch_autograd():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    q, k, v, mask, bias = _problem(seed=5)
    k, v = k[:1], v[:1]  # shared over the batch axis: autograd sums over it
    g = np.random.default_rng(6).normal(size=(*q.shape[:-1], v.shape[-1]))
    cases = [
        ({}, {}),
        ({"causal": True}, {"is_causal": True}),
        ({"mask": mask}, {"attn_mask": torch.tensor(mask)}),
        ({"bias": bias}, {"attn_mask": torch.tensor(bias)}),
        ({"mask": mask, "scale": 0.3}, {"attn_mask": torch.tensor(mask), "scale": 0.3}),
    ]
    for ours, theirs in cases:
        t = [torch.tensor(x, requires_grad=True) for x in (q, k, v)]
        with _math_backend(torch):
            out = F.scaled_dot_product_attention(*t, **theirs)
        out.backward(torch.tensor(g))
        for mine, ref in zip(sdpa_backward(q, k, v, g, **ours), t, strict=True):
            np.testing.assert_allclose(mine, ref.grad.numpy(), rtol=0, atol=1e-10)
    dq = sdpa_backward(q, k, v, g, mask=mask)[0]
    assert np.all(dq[..., 2, :] == 0.0)  # the fully masked row


# -------------------------------------------------------- linear attention


def _phi(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def _quadratic_linear_attention(q, k, v, causal):
    """The kernelized attention written as a (T, T) matrix, the test's own form."""
    kern = _phi(q) @ np.swapaxes(_phi(k), -1, -2)
    if causal:
        kern = kern * np.tril(np.ones(kern.shape[-2:]))
    return kern @ v / kern.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("causal", [False, True])
def test_linear_attention_modes_agree_with_the_quadratic_form(causal):
    rng = np.random.default_rng(7)
    q, k = rng.normal(size=(2, 3, 8, 4)), rng.normal(size=(2, 3, 8, 4))
    v = rng.normal(size=(2, 3, 8, 5))
    par = linear_attention(q, k, v, causal=causal)
    rec = linear_attention(q, k, v, causal=causal, mode="recurrent")
    np.testing.assert_allclose(par, rec, rtol=0, atol=1e-12)
    np.testing.assert_allclose(par, _quadratic_linear_attention(q, k, v, causal), atol=1e-12)
    if causal:  # query 0 sees only key 0: its output is v_0
        np.testing.assert_allclose(par[..., 0, :], v[..., 0, :], rtol=1e-14)


def test_linear_attention_cross_lengths_and_recurrent_one_token_at_a_time():
    rng = np.random.default_rng(8)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(6, 4)), rng.normal(size=(6, 2))
    a = linear_attention(q, k, v)
    np.testing.assert_allclose(a, linear_attention(q, k, v, mode="recurrent"), atol=1e-12)
    np.testing.assert_allclose(a, _quadratic_linear_attention(q, k, v, False), atol=1e-12)
    # the causal output at t uses only tokens up to t: appending tokens changes nothing
    q, k, v = rng.normal(size=(3, 7, 4))
    full = linear_attention(q, k, v, causal=True, mode="recurrent")
    head = linear_attention(q[:4], k[:4], v[:4], causal=True, mode="recurrent")
    np.testing.assert_allclose(full[:4], head, rtol=1e-13)


# --------------------------------------------------------- entropy, rollout


def test_attention_entropy_against_direct_sum_and_bounds():
    q, k, v, mask, _ = _problem(seed=9)
    _, w = sdpa(q, k, v, mask=mask)
    h = attention_entropy(w)
    direct = np.zeros(w.shape[:-1])
    for idx in np.ndindex(w.shape[:-1]):
        direct[idx] = -sum(a * np.log(a) for a in w[idx] if a > 0)
    np.testing.assert_allclose(h, direct, rtol=1e-12, atol=1e-15)
    visible = mask.sum(-1)
    assert np.all(h >= 0) and np.all(h <= np.log(np.maximum(visible, 1)) + 1e-12)
    assert np.all(h[..., 2] == 0.0)  # no visible key
    np.testing.assert_allclose(attention_entropy(np.full((2, 4), 0.25)), np.log(4.0))
    assert not np.signbit(attention_entropy([[0.0, 1.0, 0.0]])).any()


def _direct_rollout(w, residual):
    if w.ndim == 4:
        w = w.mean(axis=1)
    out = np.eye(w.shape[-1])
    for layer in w:
        a = residual * np.eye(len(layer)) + (1 - residual) * layer
        a = a / a.sum(axis=-1, keepdims=True)
        out = a @ out
    return out


@pytest.mark.parametrize("residual", [0.0, 0.3, 0.5, 1.0])
def test_attention_rollout_against_direct_product(residual):
    rng = np.random.default_rng(10)
    w = lm.softmax(rng.normal(size=(4, 3, 6, 6)) + np.where(causal_mask(6), 0.0, -np.inf))
    r = attention_rollout(w, residual=residual)
    np.testing.assert_allclose(r, _direct_rollout(w, residual), rtol=1e-12)
    np.testing.assert_allclose(r.sum(axis=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(
        attention_rollout(w[:, 0], residual=residual),
        _direct_rollout(w[:, 0], residual),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        attention_rollout(w[:1], residual=residual), _direct_rollout(w[:1], residual), rtol=1e-12
    )
    assert np.all(np.triu(r, 1) == 0.0)  # causal layers roll out to a causal map
    if residual == 1.0:
        np.testing.assert_array_equal(r, np.eye(6))


# --------------------------------------------------------------- bad input

Q = np.zeros((3, 4))
Q3 = np.zeros((2, 3, 4))
W = np.full((2, 3, 3), 1 / 3)

BAD = [
    ("block-zero", lambda: blockwise_attention(Q, Q, Q, block_size=0), ValueError, "block_size"),
    ("block-float", lambda: blockwise_attention(Q, Q, Q, block_size=2.0), TypeError, "block_size"),
    ("stats-block", lambda: online_softmax_stats(Q, block_size=0), ValueError, "block_size"),
    ("stats-block-float", lambda: online_softmax_stats(Q, block_size=1.0), TypeError, "block_s"),
    (
        "mask-rank",
        lambda: blockwise_attention(
            np.zeros((2, 3, 4)), Q, Q, block_size=2, mask=np.ones((2, 1, 1, 3), bool)
        ),
        ValueError,
        r"mask of shape \(2, 1, 1, 3\) has more dimensions.*\(2, 3, 3\)",
    ),
    (
        "bias-rank",
        lambda: sdpa_backward(Q3, Q, Q, Q3, bias=np.zeros((2, 1, 3, 3))),
        ValueError,
        r"sdpa_backward: bias of shape \(2, 1, 3, 3\) has more dimensions",
    ),
    (
        "float-mask",
        lambda: blockwise_attention(Q, Q, Q, block_size=1, mask=Q[:, :3]),
        TypeError,
        "mask",
    ),
    ("qk-width", lambda: blockwise_attention(Q, Q[:, :2], Q, block_size=1), ValueError, "q and k"),
    ("kv-length", lambda: sdpa_backward(Q, Q, Q[:2], Q), ValueError, "k and v"),
    ("grad-shape", lambda: sdpa_backward(Q, Q, Q, Q[:2]), ValueError, r"grad_out.*\(3, 4\)"),
    ("mode", lambda: linear_attention(Q, Q, Q, mode="rnn"), ValueError, "mode"),
    (
        "causal-lengths",
        lambda: linear_attention(Q, Q[:2], Q[:2], causal=True),
        ValueError,
        "causal",
    ),
    ("entropy-negative", lambda: attention_entropy([[-0.5, 1.5]]), ValueError, "weights"),
    ("residual-high", lambda: attention_rollout(W, residual=1.5), ValueError, "residual"),
    ("residual-low", lambda: attention_rollout(W, residual=-0.1), ValueError, "residual"),
    ("rollout-rows", lambda: attention_rollout(W * 0.9), ValueError, "sum to 1"),
    (
        "rollout-masked-row",
        lambda: attention_rollout(np.where(np.eye(3) > 0, 0.0, W)),
        ValueError,
        "sum to 1",
    ),
    ("rollout-shape", lambda: attention_rollout(W[0]), ValueError, r"\(L, T, T\)"),
    ("rollout-square", lambda: attention_rollout(W[..., :2]), ValueError, r"\(L, T, T\)"),
    (
        "empty",
        lambda: blockwise_attention(np.zeros((0, 4)), Q, Q, block_size=1),
        ValueError,
        "q is empty",
    ),
]


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_minus_inf_only_where_it_means_masked():
    with pytest.raises(ValueError, match="q must be finite"):
        blockwise_attention([[-np.inf, 0.0]], Q[:, :2], Q, block_size=1)
    with pytest.raises(ValueError, match="bias must be finite"):
        blockwise_attention(Q, Q, Q, block_size=1, bias=np.full((3, 3), np.inf))
    with pytest.raises(ValueError, match="scores must be finite"):
        online_softmax_stats([np.nan, 0.0])
    with pytest.raises(ValueError, match="grad_out must be finite"):
        sdpa_backward(Q, Q, Q, np.full((3, 4), -np.inf))


def test_extra_leading_axes_broadcast_onto_head_less_scores():
    # (Tq, Tk) scores have no batch or head axis to confuse: an (H, Tq, Tk) bias
    # (ALiBi) adds the head axis, as in scaled_dot_product_attention.
    q, k, v = np.random.default_rng(11).normal(size=(3, 5, 4))
    bias = lm.alibi_bias(4, 5)
    out, lse = blockwise_attention(q, k, v, block_size=2, bias=bias, causal=True)
    assert out.shape == (4, 5, 4) and lse.shape == (4, 5)
    np.testing.assert_allclose(
        out, sdpa(q, k, v, bias=bias, causal=True)[0], rtol=1e-12, atol=1e-12 * np.abs(v).max()
    )
