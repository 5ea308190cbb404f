"""Tests for llmmath.heads: multi-head and grouped-query attention, KV heads, counts, caches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmmath.attention import merge_heads, scaled_dot_product_attention, split_heads
from llmmath.diagnostics import memory_bytes
from llmmath.heads import (
    append_kv,
    attention_flops,
    kv_cache_bytes,
    mean_pool_kv_heads,
    mha_param_count,
    multi_head_attention,
    repeat_kv,
)
from llmmath.masks import causal_mask, key_padding_mask, sliding_window_mask

PROPS = settings(max_examples=40, deadline=None)
mha = multi_head_attention


def weights(rng, d, H, Hkv, dh):
    """Random projections in the row convention: w_q (d, H·dh), w_k, w_v (d, Hkv·dh), w_o."""
    return (
        rng.normal(size=(d, H * dh)) / np.sqrt(d),
        rng.normal(size=(d, Hkv * dh)) / np.sqrt(d),
        rng.normal(size=(d, Hkv * dh)) / np.sqrt(d),
        rng.normal(size=(H * dh, d)) / np.sqrt(H * dh),
    )


def loop_mha(x, ctx, w_q, w_k, w_v, w_o, H, Hkv, allowed):
    """Head by head and row by row, the textbook formula (reference only; x: (T, d))."""
    dh = w_q.shape[1] // H
    heads = []
    for h in range(H):
        g = h // (H // Hkv)
        q = x @ w_q[:, h * dh : (h + 1) * dh]
        k = ctx @ w_k[:, g * dh : (g + 1) * dh]
        v = ctx @ w_v[:, g * dh : (g + 1) * dh]
        out = np.zeros((len(x), dh))
        for i in range(len(x)):
            js = np.flatnonzero(allowed[i])
            if js.size:
                s = k[js] @ q[i] / np.sqrt(dh)
                a = np.exp(s - s.max())
                out[i] = (a / a.sum()) @ v[js]
        heads.append(out)
    return np.concatenate(heads, axis=-1) @ w_o


# ---------------------------------------------------------------- unit tests


def test_shapes_and_defaults():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 8))
    ws = weights(rng, 8, 4, 4, 2)
    out, w = mha(x, *ws, 4)
    assert out.shape == (2, 5, 8) and w.shape == (2, 4, 5, 5)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    # context defaults to x; a different context gives cross-attention weights (.., H, T, Tk)
    np.testing.assert_array_equal(mha(x, *ws, 4, context=x)[0], out)
    out_c, w_c = mha(x, *ws, 4, context=rng.normal(size=(2, 7, 8)))
    assert out_c.shape == (2, 5, 8) and w_c.shape == (2, 4, 5, 7)
    # dh need not be d / H: 4 heads of 3 on a width of 8
    out3, w3 = mha(x, *weights(rng, 8, 4, 2, 3), 4, n_kv_heads=2)
    assert out3.shape == (2, 5, 8) and w3.shape == (2, 4, 5, 5)


def test_equals_per_head_loop_with_masks_and_groups():
    rng = np.random.default_rng(1)
    T, Tk, d = 4, 6, 6
    x, ctx = rng.normal(size=(T, d)), rng.normal(size=(Tk, d))
    allowed = rng.random((T, Tk)) < 0.6
    allowed[2] = False  # a query that sees nothing: zero output
    for H, Hkv in ((3, 3), (3, 1), (6, 2)):
        ws = weights(rng, d, H, Hkv, 2)
        out, _ = mha(x, *ws, H, n_kv_heads=Hkv, context=ctx, mask=allowed)
        ref = loop_mha(x, ctx, *ws, H, Hkv, allowed)
        np.testing.assert_allclose(out, ref, rtol=0, atol=1e-12)
        out_c, _ = mha(x, *ws, H, n_kv_heads=Hkv, causal=True)
        ref_c = loop_mha(x, x, *ws, H, Hkv, causal_mask(T))
        np.testing.assert_allclose(out_c, ref_c, rtol=0, atol=1e-12)


def test_mask_and_bias_forms_broadcast_per_head():
    rng = np.random.default_rng(2)
    B, T, d, H = 2, 4, 8, 2
    x = rng.normal(size=(B, T, d))
    ws = weights(rng, d, H, H, d // H)
    pad = np.array([[1, 1, 1, 0], [1, 1, 1, 1]])
    out_k, w_k = mha(x, *ws, H, mask=key_padding_mask(pad))
    np.testing.assert_array_equal(w_k[0, :, :, 3], 0.0)
    # the same key mask written as a full (B, 1, Tq, Tk) mask
    full = np.broadcast_to(pad[:, None, None, :] == 1, (B, 1, T, T))
    np.testing.assert_allclose(mha(x, *ws, H, mask=full)[0], out_k, rtol=0, atol=1e-15)
    # a per-head bias (H, Tq, Tk) on unbatched x; -inf bias = False mask
    bias = rng.normal(size=(H, T, T))
    out_b, w_b = mha(x[0], *ws, H, bias=bias)
    q = split_heads(x[0] @ ws[0], H)
    k, v = split_heads(x[0] @ ws[1], H), split_heads(x[0] @ ws[2], H)
    ref_out, ref_w = scaled_dot_product_attention(q, k, v, bias=bias)
    np.testing.assert_allclose(w_b, ref_w, rtol=0, atol=1e-15)
    np.testing.assert_allclose(out_b, merge_heads(ref_out) @ ws[3], rtol=0, atol=1e-14)
    neg = np.where(causal_mask(T), 0.0, -np.inf)
    np.testing.assert_allclose(
        mha(x, *ws, H, bias=neg)[0], mha(x, *ws, H, causal=True)[0], rtol=0, atol=1e-15
    )


def test_repeat_kv_is_interleaved_not_tiled():
    x = np.arange(3.0).reshape(3, 1, 1)  # Hkv = 3
    np.testing.assert_array_equal(repeat_kv(x, 2)[:, 0, 0], [0, 0, 1, 1, 2, 2])
    assert repeat_kv(np.ones((2, 3, 4, 5)), 4).shape == (2, 12, 4, 5)
    np.testing.assert_array_equal(repeat_kv(x, 1), x)


def test_mean_pool_makes_gqa_exact_when_group_heads_agree():
    rng = np.random.default_rng(3)
    d, H, G, dh = 6, 4, 2, 3
    x = rng.normal(size=(5, d))
    w_q, _, _, w_o = weights(rng, d, H, H, dh)
    group_k, group_v = rng.normal(size=(d, G * dh)), rng.normal(size=(d, G * dh))
    # an MHA checkpoint whose heads within each group are equal: expand the group columns
    full_k = merge_heads(repeat_kv(split_heads(group_k, G), H // G))
    full_v = merge_heads(repeat_kv(split_heads(group_v, G), H // G))
    np.testing.assert_array_equal(mean_pool_kv_heads(full_k, H, G), group_k)
    out_mha, _ = mha(x, w_q, full_k, full_v, w_o, H, causal=True)
    out_gqa, _ = mha(x, w_q, group_k, group_v, w_o, H, n_kv_heads=G, causal=True)
    # Equal in exact arithmetic, but K and V come from different matmuls (d x G·dh against
    # d x H·dh), which BLAS may round differently: d u |x| |w| per entry (u = 2^-53, w not
    # scaled by 1/sqrt(d) here), through the scores, the softmax and w_o up to ~6e-13.
    np.testing.assert_allclose(out_gqa, out_mha, rtol=0, atol=1e-12)
    # G = 1 (multi-query) averages every head; G = H changes nothing
    w = rng.normal(size=(d, H * dh))
    np.testing.assert_allclose(
        mean_pool_kv_heads(w, H, 1), w.reshape(d, H, dh).mean(axis=1), rtol=0, atol=1e-15
    )
    np.testing.assert_array_equal(mean_pool_kv_heads(w, H, H), w)


def test_param_count_matches_the_arrays_and_torch_layout():
    rng = np.random.default_rng(4)
    for d, H, Hkv, dh in ((8, 4, 4, 2), (8, 4, 2, 3), (12, 6, 1, 2)):
        ws = weights(rng, d, H, Hkv, dh)
        n = sum(w.size for w in ws)
        assert mha_param_count(d, H, n_kv_heads=Hkv, d_head=dh) == n
        assert mha_param_count(d, H, n_kv_heads=Hkv, d_head=dh, bias=True) == n + (
            H * dh + 2 * Hkv * dh + d
        )
    assert mha_param_count(768, 12) == 4 * 768**2
    assert mha_param_count(768, 12, bias=True) == 4 * 768**2 + 4 * 768


def test_attention_flops_counts_each_matmul():
    def matmul(m, k, n):  # (m, k) @ (k, n): m·n·k multiply-adds, 2 FLOPs each
        return 2 * m * k * n

    for tq, tk, d in ((5, 5, 8), (1, 9, 8), (3, 7, 12)):
        projections = 4 * matmul(tq, d, d)  # Q, K, V of the new tokens, and the output
        scores_and_sum = 2 * matmul(tq, d, tk)  # summed over heads: H·dh = d
        assert attention_flops(tq, d, n_keys=tk) == projections + scores_and_sum
    # decoding T tokens one by one vs one non-causal pass over T: 8Td² + 2dT(T+1) vs 8Td² + 4dT²
    T, d = 10, 16
    decode = sum(attention_flops(1, d, n_keys=t) for t in range(1, T + 1))
    assert decode == 8 * T * d * d + 2 * d * T * (T + 1)
    assert attention_flops(T, d) == 8 * T * d * d + 4 * d * T * T


def test_kv_cache_bytes_equals_the_arrays_nbytes():
    L, Hkv, dh, T, B = 3, 2, 4, 5, 2
    for dtype in ("float64", "float32", "float16"):
        cache = np.zeros((L, 2, B, Hkv, T, dh), dtype=dtype)  # (layer, k/v, B, Hkv, T, dh)
        assert kv_cache_bytes(L, Hkv, dh, T, batch=B, dtype=dtype) == cache.nbytes
    assert kv_cache_bytes(L, Hkv, dh, T, batch=B, dtype="int4") == cache.size // 2
    assert kv_cache_bytes(1, 1, 1, 1, dtype="int4") == memory_bytes(2, "int4") == 1
    assert kv_cache_bytes(1, 1, 1, 3, dtype="int4") == 3  # 6 values, 4 bits each
    assert kv_cache_bytes(L, Hkv, dh, T) == 2 * L * Hkv * dh * T * 2  # default float16, B = 1


def test_append_kv_without_window_and_inputs_untouched():
    rng = np.random.default_rng(5)
    ck, cv = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 5))
    kn, vn = rng.normal(size=(2, 1, 4)), rng.normal(size=(2, 1, 5))
    before = [a.copy() for a in (ck, cv, kn, vn)]
    k, v = append_kv(ck, cv, kn, vn)
    np.testing.assert_array_equal(k, np.concatenate([ck, kn], axis=1))
    np.testing.assert_array_equal(v, np.concatenate([cv, vn], axis=1))
    k[...] = 0.0
    v[...] = 0.0  # the result shares no memory with the inputs
    for a, b in zip((ck, cv, kn, vn), before):
        np.testing.assert_array_equal(a, b)
    # an empty cache (..., 0, d) starts a decode; a short one under the window is kept whole
    k0, v0 = append_kv(np.zeros((2, 0, 4)), np.zeros((2, 0, 5)), kn, vn, window=3)
    np.testing.assert_array_equal(k0, kn)
    np.testing.assert_array_equal(v0, vn)


def test_append_kv_sinks_keep_the_first_and_the_last():
    T = np.arange(7.0)[:, None]
    k, _ = append_kv(T[:5], T[:5], T[5:], T[5:], window=4, n_sink=2)
    np.testing.assert_array_equal(k[:, 0], [0, 1, 5, 6])
    k, _ = append_kv(T[:5], T[:5], T[5:], T[5:], window=4)
    np.testing.assert_array_equal(k[:, 0], [3, 4, 5, 6])


# ----------------------------------------------------------- property tests


@PROPS
@given(
    H=st.sampled_from([1, 2, 4]),
    rep=st.sampled_from([1, 2]),
    dh=st.integers(1, 3),
    T=st.integers(1, 5),
    Tk=st.integers(1, 6),
    seed=st.integers(0, 2**16),
)
def test_mha_matches_loop_reference(H, rep, dh, T, Tk, seed):
    rng = np.random.default_rng(seed)
    Hkv, d = H, 4
    H = H * rep
    ws = weights(rng, d, H, Hkv, dh)
    x, ctx = rng.normal(size=(T, d)), rng.normal(size=(Tk, d))
    allowed = rng.random((T, Tk)) < 0.7
    out, w = mha(x, *ws, H, n_kv_heads=Hkv, context=ctx, mask=allowed)
    np.testing.assert_allclose(out, loop_mha(x, ctx, *ws, H, Hkv, allowed), rtol=0, atol=1e-12)
    assert not (w[:, ~allowed]).any()


@PROPS
@given(
    window=st.integers(1, 5),
    n_sink=st.integers(0, 4),
    steps=st.integers(1, 9),
    seed=st.integers(0, 2**16),
)
def test_streaming_decode_matches_full_attention_with_window(window, n_sink, steps, seed):
    """One token at a time through append_kv = full attention under the matching mask."""
    n_sink = min(n_sink, window - 1)
    rng = np.random.default_rng(seed)
    q, k, v = (rng.normal(size=(2, steps, 3)) for _ in range(3))  # (H, T, d)
    ck = cv = np.zeros((2, 0, 3))
    outs = []
    for t in range(steps):
        ck, cv = append_kv(ck, cv, k[:, t : t + 1], v[:, t : t + 1], window=window, n_sink=n_sink)
        assert ck.shape[-2] == min(t + 1, window)
        outs.append(scaled_dot_product_attention(q[:, t : t + 1], ck, cv)[0])
    pos = np.arange(steps)
    # the sinks count against the window: each token sees them and its last window - n_sink
    allowed = sliding_window_mask(steps, window=window - n_sink) | (
        (pos[None, :] < n_sink) & causal_mask(steps)
    )
    if n_sink == 0:
        np.testing.assert_array_equal(allowed, sliding_window_mask(steps, window=window))
    full, _ = scaled_dot_product_attention(q, k, v, mask=allowed)
    np.testing.assert_allclose(np.concatenate(outs, axis=1), full, rtol=0, atol=1e-13)


@PROPS
@given(cached=st.integers(0, 6), chunk=st.integers(1, 4), window=st.integers(1, 5))
def test_chunked_prefill_attends_before_truncating(cached, chunk, window):
    rng = np.random.default_rng(cached * 100 + chunk * 10 + window)
    T = cached + chunk
    q, k, v = rng.normal(size=(T, 2)), rng.normal(size=(T, 2)), rng.normal(size=(T, 2))
    full, _ = scaled_dot_product_attention(q, k, v, mask=sliding_window_mask(T, window=window))
    # the cache a previous step left (at most `window` entries), then the chunk
    start = max(0, cached - window)
    ck, cv = k[start:cached], v[start:cached]
    kk = np.concatenate([ck, k[cached:]])
    vv = np.concatenate([cv, v[cached:]])
    m = sliding_window_mask(chunk, len(kk), window=window)
    out, _ = scaled_dot_product_attention(q[cached:], kk, vv, mask=m)
    np.testing.assert_allclose(out, full[cached:], rtol=0, atol=1e-13)
    k2, _ = append_kv(ck, cv, k[cached:], v[cached:], window=window)
    np.testing.assert_array_equal(k2, k[max(0, T - window) :])


# ------------------------------------------------------------ bad inputs

X = np.ones((2, 3, 4))
W4, W2 = np.ones((4, 4)), np.ones((4, 2))

BAD = [
    ("heads-not-dividing", lambda: mha(X, W4, W4, W4, W4, 3), ValueError, "n_heads = 3"),
    (
        "kv-not-dividing",
        lambda: mha(X, W4, W2, W2, W4, 4, n_kv_heads=3),
        ValueError,
        "n_kv_heads = 3 must divide n_heads = 4",
    ),
    (
        "w_k-shape",
        lambda: mha(X, W4, W4, W4, W4, 2, n_kv_heads=1),
        ValueError,
        r"w_k must.*\(4, 2\)",
    ),
    ("w_v-shape", lambda: mha(X, W4, W4, W2, W4, 2), ValueError, r"w_v must.*\(4, 4\)"),
    ("w_o-shape", lambda: mha(X, W4, W4, W4, W2, 2), ValueError, "w_o must"),
    ("w_q-rows", lambda: mha(X, np.ones((3, 4)), W4, W4, W4, 2), ValueError, "w_q must"),
    ("w_q-1d", lambda: mha(X, np.ones(4), W4, W4, W4, 2), ValueError, "w_q must be 2-D"),
    (
        "mask-no-head-axis",
        lambda: mha(X, W4, W4, W4, W4, 2, mask=np.ones((2, 3, 3), bool)),
        ValueError,
        "mask.*head axis",
    ),
    (
        "bias-no-head-axis",
        lambda: mha(X, W4, W4, W4, W4, 2, bias=np.zeros((2, 3, 3))),
        ValueError,
        "bias.*head axis",
    ),
    (
        "mask-too-many-dims",
        lambda: mha(X, W4, W4, W4, W4, 2, mask=np.ones((1, 2, 1, 3, 3), bool)),
        ValueError,
        "mask must",
    ),
    (
        "context-width",
        lambda: mha(X, W4, W4, W4, W4, 2, context=np.ones((3, 5))),
        ValueError,
        "context",
    ),
    (
        "context-batch",
        lambda: mha(X, W4, W4, W4, W4, 2, context=np.ones((3, 3, 4))),
        ValueError,
        "leading",
    ),
    (
        "mask-float",
        lambda: mha(X, W4, W4, W4, W4, 2, mask=np.ones((3, 3))),
        TypeError,
        "multi_head_attention: mask must be boolean",
    ),
    (
        "mask-wrong-keys",
        lambda: mha(X, W4, W4, W4, W4, 2, mask=np.ones((3, 4), bool)),
        ValueError,
        r"multi_head_attention: mask of shape \(3, 4\) does not broadcast",
    ),
    (
        "bias-wrong-heads",
        lambda: mha(X, W4, W4, W4, W4, 2, bias=np.zeros((2, 3, 3, 3))),
        ValueError,
        r"multi_head_attention: bias .*\(2, 2, 3, 3\)",
    ),
    (
        "bias-nan",
        lambda: mha(X, W4, W4, W4, W4, 2, bias=np.full((3, 3), np.nan)),
        ValueError,
        "multi_head_attention: bias must be finite",
    ),
    ("heads-float", lambda: mha(X, W4, W4, W4, W4, 2.0), TypeError, "n_heads"),
    ("kv-heads-float", lambda: mha(X, W4, W4, W4, W4, 2, n_kv_heads=2.0), TypeError, "n_kv_heads"),
    ("x-empty", lambda: mha(np.ones((0, 4)), W4, W4, W4, W4, 2), ValueError, "x is empty"),
    ("repeat-float", lambda: repeat_kv(X, 2.0), TypeError, "n_rep"),
    ("repeat-zero", lambda: repeat_kv(X, 0), ValueError, "n_rep"),
    ("repeat-2d", lambda: repeat_kv(W4, 2), ValueError, "repeat_kv: x"),
    ("pool-groups", lambda: mean_pool_kv_heads(W4, 4, 3), ValueError, "n_groups = 3"),
    ("pool-heads", lambda: mean_pool_kv_heads(W4, 3, 1), ValueError, "n_heads = 3"),
    ("pool-float", lambda: mean_pool_kv_heads(W4, 4, 2.0), TypeError, "n_groups"),
    ("count-dhead", lambda: mha_param_count(10, 3), ValueError, "d_head.*10 / 3"),
    ("count-kv", lambda: mha_param_count(12, 4, n_kv_heads=3), ValueError, "n_kv_heads"),
    ("count-float", lambda: mha_param_count(12.0, 4), TypeError, "d_model"),
    ("count-bias", lambda: mha_param_count(12, 4, bias=1), TypeError, "bias"),
    (
        "flops-keys",
        lambda: attention_flops(4, 8, n_keys=3),
        ValueError,
        "n_keys must be >= n_queries",
    ),
    ("flops-float", lambda: attention_flops(3.0, 8), TypeError, "n_queries"),
    ("cache-dtype", lambda: kv_cache_bytes(1, 1, 1, 1, dtype="fp8"), ValueError, "dtype"),
    ("cache-float", lambda: kv_cache_bytes(1, 1, 1, 1.0), TypeError, "seq_len"),
    ("cache-batch", lambda: kv_cache_bytes(1, 1, 1, 1, batch=0), ValueError, "batch"),
    (
        "sink-no-window",
        lambda: append_kv(W4, W4, W4, W4, n_sink=1),
        ValueError,
        "n_sink needs a window",
    ),
    ("window-zero", lambda: append_kv(W4, W4, W4, W4, window=0), ValueError, "window"),
    ("window-float", lambda: append_kv(W4, W4, W4, W4, window=2.0), TypeError, "window"),
    (
        "sink-too-big",
        lambda: append_kv(W4, W4, W4, W4, window=2, n_sink=2),
        ValueError,
        r"\[0, 2\)",
    ),
    ("sink-negative", lambda: append_kv(W4, W4, W4, W4, window=2, n_sink=-1), ValueError, "n_sink"),
    ("sink-float", lambda: append_kv(W4, W4, W4, W4, window=3, n_sink=1.0), TypeError, "n_sink"),
    ("new-empty", lambda: append_kv(W4, W4, np.ones((0, 4)), W4), ValueError, "k_new is empty"),
    ("cache-width", lambda: append_kv(W4, W4, W2, W4), ValueError, "k_new must match"),
    ("cache-lead", lambda: append_kv(X, X, W4, W4), ValueError, "k_new must match"),
    ("kv-length", lambda: append_kv(W4, W4[:2], W4, W4), ValueError, "same length"),
    ("cache-empty-d", lambda: append_kv(np.ones((0, 0)), W4, W4, W4), ValueError, "cache_k"),
    ("cache-empty-head", lambda: append_kv(np.ones((0, 2, 4)), W4, W4, W4), ValueError, "cache_k"),
    ("cache-str", lambda: append_kv(np.zeros((0, 4), str), W4, W4, W4), TypeError, "cache_k"),
]


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------ cross-checks with torch, transformers


def _torch_mha(torch, d, H, w_q, w_k, w_v, w_o):
    m = torch.nn.MultiheadAttention(d, H, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        m.in_proj_weight.copy_(torch.tensor(np.concatenate([w_q.T, w_k.T, w_v.T])))
        m.out_proj.weight.copy_(torch.tensor(w_o.T))
    return m


def test_matches_torch_multihead_attention():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    B, T, Tk, d, H = 2, 4, 5, 12, 3
    ws = weights(rng, d, H, H, d // H)
    module = _torch_mha(torch, d, H, *ws)
    x, ctx = rng.normal(size=(B, T, d)), rng.normal(size=(B, Tk, d))
    allowed = rng.random((T, Tk)) < 0.6
    allowed[:, 0] = True  # every row keeps a visible key (torch gives NaN otherwise)
    pad = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    bias = rng.normal(size=(B, H, T, Tk))
    t = torch.tensor
    cases = [  # (our keywords, torch keywords); torch masks are True = blocked
        ({}, {}),
        ({"causal": True, "context": x}, {"attn_mask": t(~causal_mask(T))}),
        ({"mask": allowed}, {"attn_mask": t(~allowed)}),
        ({"mask": key_padding_mask(pad)}, {"key_padding_mask": t(pad == 0)}),
        ({"bias": bias}, {"attn_mask": t(bias.reshape(B * H, T, Tk))}),
        (
            {"bias": bias, "mask": allowed & key_padding_mask(pad)},
            {  # torch wants both masks of one type: additive here
                "attn_mask": t(np.where(allowed, bias, -np.inf).reshape(B * H, T, Tk)),
                "key_padding_mask": t(np.where(pad == 0, -np.inf, 0.0)),
            },
        ),
    ]
    for ours_kw, torch_kw in cases:
        kv = ours_kw.pop("context", ctx)
        out, w = mha(x, *ws, H, context=kv, **ours_kw)
        with torch.no_grad():
            ref_out, ref_w = module(
                t(x), t(kv), t(kv), need_weights=True, average_attn_weights=False, **torch_kw
            )
        np.testing.assert_allclose(out, ref_out.numpy(), rtol=0, atol=1e-10)
        np.testing.assert_allclose(w, ref_w.numpy(), rtol=0, atol=1e-10)


def test_grouped_heads_match_torch_sdpa_enable_gqa():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(7)
    B, T, Tk, d, dh = 2, 5, 6, 8, 3
    x, ctx = rng.normal(size=(B, T, d)), rng.normal(size=(B, Tk, d))
    allowed = rng.random((T, Tk)) < 0.6
    allowed[1] = False  # SDPA's math backend also gives zeros for an empty row
    bias = rng.normal(size=(B, 1, T, Tk))
    t = torch.tensor
    for H, Hkv in ((4, 2), (4, 1), (6, 3)):
        ws = weights(rng, d, H, Hkv, dh)
        cases = [
            ({"context": ctx}, {}),
            ({"context": ctx, "mask": allowed}, {"attn_mask": t(allowed)}),
            ({"context": ctx, "bias": bias}, {"attn_mask": t(bias)}),
            ({"causal": True}, {"is_causal": True}),
        ]
        for ours_kw, torch_kw in cases:
            kv = ours_kw.get("context", x)
            out, w = mha(x, *ws, H, n_kv_heads=Hkv, **ours_kw)
            q = split_heads(x @ ws[0], H)
            k, v = split_heads(kv @ ws[1], Hkv), split_heads(kv @ ws[2], Hkv)
            eye = np.broadcast_to(
                np.eye(Tk if "context" in ours_kw else T), (*k.shape[:-1], k.shape[-2])
            )
            with _math_backend(torch):
                ref = F.scaled_dot_product_attention(t(q), t(k), t(v), enable_gqa=True, **torch_kw)
                ref_w = F.scaled_dot_product_attention(
                    t(q), t(k), t(eye), enable_gqa=True, **torch_kw
                )
            np.testing.assert_allclose(out, merge_heads(ref.numpy()) @ ws[3], rtol=0, atol=1e-10)
            np.testing.assert_allclose(w, ref_w.numpy(), rtol=0, atol=1e-10)


def test_repeat_kv_matches_transformers():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.models.llama.modeling_llama import repeat_kv as hf_repeat_kv

    x = np.random.default_rng(8).normal(size=(2, 3, 4, 5))  # (B, Hkv, T, dh)
    for n_rep in (1, 2, 4):
        theirs = hf_repeat_kv(torch.tensor(x), n_rep).numpy()
        np.testing.assert_array_equal(repeat_kv(x, n_rep), theirs)


def _math_backend(torch):
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:  # older torch: only the default dispatch
        import contextlib

        return contextlib.nullcontext()
    return sdpa_kernel(SDPBackend.MATH)
