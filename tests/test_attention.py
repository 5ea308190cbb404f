"""Tests for llmmath.attention: causal masks, scaled dot-product attention, heads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from llmmath.attention import causal_mask, merge_heads, scaled_dot_product_attention, split_heads

PROPS = settings(max_examples=50, deadline=None)
sdpa = scaled_dot_product_attention


def naive_attention(q, k, v, allowed, scale):
    """Per-row loops, the textbook formula (reference only)."""
    Tq, Tk = q.shape[0], k.shape[0]
    W = np.zeros((Tq, Tk))
    for i in range(Tq):
        js = [j for j in range(Tk) if allowed[i, j]]
        s = np.array([scale * q[i] @ k[j] for j in js])
        W[i, js] = np.exp(s) / np.exp(s).sum()
    return W @ v, W


# ---------------------------------------------------------------- unit tests


def test_causal_mask_square_and_rectangular():
    np.testing.assert_array_equal(causal_mask(2), [[True, False], [True, True]])
    np.testing.assert_array_equal(causal_mask(2, 3), [[1, 0, 0], [1, 1, 0]])
    np.testing.assert_array_equal(causal_mask(3, 2), [[1, 0], [1, 1], [1, 1]])
    assert causal_mask(4).dtype == np.bool_


def test_attention_by_hand():
    # one query, keys give scores (ln 3, 0) under scale 1 -> weights (3/4, 1/4)
    out, w = sdpa(
        [[np.log(3.0), 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[4.0, 0.0], [0.0, 8.0]], scale=1.0
    )
    np.testing.assert_allclose(w, [[0.75, 0.25]], rtol=1e-14)
    np.testing.assert_allclose(out, [[3.0, 2.0]], rtol=1e-14)


def test_default_scale_is_inverse_sqrt_d():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    np.testing.assert_allclose(sdpa(q, k, v)[0], sdpa(q, k, v, scale=0.5)[0], rtol=1e-14)
    ref_out, ref_w = naive_attention(q, k, v, np.ones((3, 5), bool), 0.5)
    out, w = sdpa(q, k, v)
    np.testing.assert_allclose(w, ref_w, rtol=1e-13)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-14)


def test_mask_and_causal_match_naive_reference():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    mask = rng.random((4, 6)) < 0.7
    mask[:, 0] = True
    out, w = sdpa(q, k, v, mask=mask, causal=True, scale=0.8)
    ref_out, ref_w = naive_attention(q, k, v, mask & causal_mask(4, 6), 0.8)
    np.testing.assert_allclose(w, ref_w, rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12, atol=1e-14)


def test_bias_is_added_and_neg_inf_bias_equals_false_mask():
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    bias = np.array([[0.0, np.log(2.0), 0.0, 0.0, 0.0]])  # doubles key 1's unnormalized weight
    w0, w1 = sdpa(q, k, v)[1], sdpa(q, k, v, bias=bias)[1]
    expected = w0 * np.array([1, 2, 1, 1, 1]) / (1.0 + w0[..., 1:2])
    np.testing.assert_allclose(w1, expected, rtol=1e-13)
    mask = rng.random((3, 5)) < 0.5
    mask[:, 2] = True
    additive = np.where(mask, 0.0, -np.inf)
    np.testing.assert_allclose(
        sdpa(q, k, v, bias=additive)[0], sdpa(q, k, v, mask=mask)[0], rtol=1e-14
    )


def test_fully_masked_row_gives_zeros_not_nan():
    q = k = v = np.eye(3)
    mask = np.array([[True, True, False], [False, False, False], [True, False, False]])
    with np.errstate(all="raise"):
        out, w = sdpa(q, k, v, mask=mask)
    np.testing.assert_array_equal(w[1], 0.0)
    np.testing.assert_array_equal(out[1], 0.0)
    assert w[0].sum() == pytest.approx(1.0) and w[2, 0] == 1.0


def test_broadcasting_heads_and_bias_with_extra_leading_dims():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    bias = rng.normal(size=(3, 4, 4))  # e.g. one ALiBi bias per head, shared q, k, v
    out, w = sdpa(q, k, v, bias=bias)
    assert out.shape == (3, 4, 2) and w.shape == (3, 4, 4)
    np.testing.assert_allclose(out[2], sdpa(q, k, v, bias=bias[2])[0], rtol=1e-14)


def test_split_and_merge_heads_by_hand():
    X = np.arange(12.0).reshape(1, 2, 6)  # (B, T, H*dh) with H = 3, dh = 2
    S = split_heads(X, 3)
    assert S.shape == (1, 3, 2, 2)
    np.testing.assert_array_equal(S[0, 1], [[2.0, 3.0], [8.0, 9.0]])
    np.testing.assert_array_equal(merge_heads(S), X)
    np.testing.assert_array_equal(split_heads(X, 1)[:, 0], X)


# ---------------------------------------------------------- property tests


@PROPS
@given(st.data())
def test_weights_are_distributions_with_zeros_where_masked(data):
    tq, tk, d = (data.draw(st.integers(1, n)) for n in (5, 5, 4))

    def arr(shape):
        return data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-5, 5)))

    mask = data.draw(hnp.arrays(np.bool_, (tq, tk)))
    causal = data.draw(st.booleans())
    out, w = sdpa(arr((2, tq, d)), arr((2, tk, d)), arr((2, tk, 3)), mask=mask, causal=causal)
    allowed = mask & causal_mask(tq, tk) if causal else mask
    assert np.all(w[:, ~allowed] == 0.0) and np.all(w >= 0)
    np.testing.assert_allclose(
        w.sum(-1), np.broadcast_to(allowed.any(-1), (2, tq)) * 1.0, rtol=1e-12
    )
    assert np.all(out[:, ~allowed.any(-1)] == 0.0)


@PROPS
@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
    T=st.integers(1, 4),
    H=st.integers(1, 4),
    dh=st.integers(1, 4),
    seed=st.integers(0, 99),
)
def test_split_merge_round_trip(shape, T, H, dh, seed):
    X = np.random.default_rng(seed).normal(size=(*shape, T, H * dh))
    S = split_heads(X, H)
    assert S.shape == (*shape, H, T, dh)
    np.testing.assert_array_equal(S[..., -1, :, :], X[..., (H - 1) * dh :])
    np.testing.assert_array_equal(merge_heads(S), X)
    np.testing.assert_array_equal(split_heads(merge_heads(S), H), S)


# ------------------------------------------------------------ bad inputs

Q = np.zeros((3, 4))

BAD = [
    ("q-k-width-mismatch", lambda: sdpa(Q, np.zeros((3, 5)), Q), ValueError, "q and k"),
    ("k-v-length-mismatch", lambda: sdpa(Q, Q, np.zeros((2, 4))), ValueError, "k and v"),
    ("float-mask", lambda: sdpa(Q, Q, Q, mask=np.zeros((3, 3))), TypeError, "mask.*bias="),
    ("mask-shape", lambda: sdpa(Q, Q, Q, mask=np.ones((2, 3), bool)), ValueError, "mask"),
    ("bias-shape", lambda: sdpa(Q, Q, Q, bias=np.zeros((3, 4))), ValueError, "bias"),
    ("bias-grows-queries", lambda: sdpa(Q[:1], Q, Q, bias=np.zeros((3, 3))), ValueError, "bias"),
    ("q-1d", lambda: sdpa(np.zeros(4), Q, Q), ValueError, "q must"),
    (
        "leading-dims",
        lambda: sdpa(np.zeros((2, 3, 4)), np.zeros((3, 3, 4)), Q),
        ValueError,
        "leading",
    ),
    ("n-heads-zero", lambda: split_heads(Q, 0), ValueError, "n_heads"),
    ("width-not-divisible", lambda: split_heads(Q, 3), ValueError, "n_heads"),
    ("n-heads-float", lambda: split_heads(Q, 2.0), TypeError, "n_heads"),
    ("merge-2d", lambda: merge_heads(Q), ValueError, "X must"),
    ("causal-mask-zero", lambda: causal_mask(0), ValueError, "n_queries"),
    ("causal-mask-bad-keys", lambda: causal_mask(2, -1), ValueError, "n_keys"),
]


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# -------------------------------------------------- cross-check with torch


def test_matches_torch_sdpa_float64():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(4)
    B, H, Tq, Tk, d, dv = 2, 3, 4, 6, 8, 5
    q, k, v = (rng.normal(size=s) for s in ((B, H, Tq, d), (B, H, Tk, d), (B, H, Tk, dv)))
    mask = rng.random((Tq, Tk)) < 0.6
    mask[1] = False  # a fully masked query row
    bias = rng.normal(size=(H, Tq, Tk))
    cases = [
        ({}, {}),
        ({"mask": mask}, {"attn_mask": torch.tensor(mask)}),
        ({"causal": True}, {"is_causal": True}),
        ({"bias": bias}, {"attn_mask": torch.tensor(bias)}),
        ({"scale": 0.3, "mask": mask}, {"scale": 0.3, "attn_mask": torch.tensor(mask)}),
    ]

    def run(qq, kk, vv, kw):
        with _math_backend(torch):
            return F.scaled_dot_product_attention(*map(torch.tensor, (qq, kk, vv)), **kw).numpy()

    eye = np.broadcast_to(np.eye(Tk), (B, H, Tk, Tk))  # v = I makes torch return the weights
    for ours_kw, torch_kw in cases:
        out, w = sdpa(q, k, v, **ours_kw)
        np.testing.assert_allclose(out, run(q, k, v, torch_kw), rtol=0, atol=1e-10)
        np.testing.assert_allclose(w, run(q, k, eye, torch_kw), rtol=0, atol=1e-10)
    # causal with fewer keys than queries (top-left alignment)
    out, _ = sdpa(k, q, q[..., :dv], causal=True)
    np.testing.assert_allclose(out, run(k, q, q[..., :dv], {"is_causal": True}), atol=1e-10)


def _math_backend(torch):
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:  # older torch: only the default dispatch
        import contextlib

        return contextlib.nullcontext()
    return sdpa_kernel(SDPBackend.MATH)


def test_mask_or_bias_with_more_dimensions_than_the_scores_is_refused():
    # A (B, 1, 1, Tk) padding mask meant for head-split scores, given head-less
    # (B, Tq, Tk) scores, used to broadcast into a cross-batch (B, B, Tq, Tk) result.
    rng = np.random.default_rng(5)
    B, T, d = 2, 3, 4
    q, k, v = rng.normal(size=(3, B, T, d))
    keep = np.array([[True, True, False], [True, True, True]])
    for name, extra in (("mask", keep[:, None, None, :]), ("bias", np.zeros((B, 1, 1, T)))):
        with pytest.raises(ValueError, match=rf"{name} of shape \(2, 1, 1, 3\) has more dim"):
            sdpa(q, k, v, **{name: extra})
        with pytest.raises(ValueError, match=r"scores of shape \(2, 3, 3\)"):
            sdpa(q, k, v, **{name: extra})
    # the head-less form of the same mask, (B, 1, Tk), is the right one
    out, w = sdpa(q, k, v, mask=keep[:, None, :])
    assert out.shape == (B, T, d)
    np.testing.assert_array_equal(w[0, :, 2], 0.0)
    # equal rank still broadcasts as before: a (1, Tq, Tk) bias against (B, Tq, Tk) scores
    assert sdpa(q, k, v, bias=np.zeros((1, T, T)))[0].shape == (B, T, d)
