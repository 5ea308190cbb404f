"""Tests for llmmath.relative's score terms: T5's bias table, Shaw et al.'s relative
attention and Transformer-XL's four terms (hand values, brute-force loops, identities,
bad input, and cross-checks against Hugging Face's T5Attention)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import llmmath as lm
from llmmath.relative import shaw_attention, t5_bias, t5_bucket, transformer_xl_terms

# ---------------------------------------------------------------- T5 bias


def test_t5_bias_hand_values_and_layout():
    table = np.arange(16.0).reshape(8, 2)  # (num_buckets, H)
    out = t5_bias(table, 2, 3, num_buckets=8)
    # offsets j - i: [[0, 1, 2], [-1, 0, 1]] -> buckets [[0, 5, 6], [1, 0, 5]]
    np.testing.assert_array_equal(out[0], [[0, 10, 12], [2, 0, 10]])
    np.testing.assert_array_equal(out[1], out[0] + 1)
    assert out.shape == (2, 2, 3) and out.dtype == np.float64


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_bias_equals_brute_force_loop(bidirectional):
    rng = np.random.default_rng(0)
    table = rng.normal(size=(32, 3))
    tq, tk = 7, 150
    out = t5_bias(table, tq, tk, bidirectional=bidirectional)
    for h in range(3):
        for i in range(tq):
            for j in range(0, tk, 7):
                b = int(t5_bucket(np.array(j - i), bidirectional=bidirectional))
                assert out[h, i, j] == table[b, h]


def test_t5_bias_is_toeplitz_and_defaults_to_square():
    table = np.random.default_rng(1).normal(size=(32, 4))
    out = t5_bias(table, 9)
    assert out.shape == (4, 9, 9)
    np.testing.assert_array_equal(out[:, 1:, 1:], out[:, :-1, :-1])  # depends on j - i only


@pytest.mark.parametrize(
    "bidirectional,num_buckets,max_distance", [(True, 32, 128), (False, 32, 128), (True, 16, 40)]
)
def test_t5_bias_matches_hf_compute_bias(bidirectional, num_buckets, max_distance):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    config = transformers.T5Config(
        d_model=16,
        d_kv=4,
        num_heads=4,
        relative_attention_num_buckets=num_buckets,
        relative_attention_max_distance=max_distance,
        is_decoder=not bidirectional,
    )
    attn = t5.T5Attention(config, has_relative_attention_bias=True)
    table = np.random.default_rng(2).normal(size=(num_buckets, 4))
    with torch.no_grad():
        attn.relative_attention_bias.weight.copy_(torch.tensor(table))
        ref = attn.compute_bias(40, 300)[0].numpy()  # (H, Tq, Tk) in float32
    ours = t5_bias(
        table,
        40,
        300,
        bidirectional=bidirectional,
        num_buckets=num_buckets,
        max_distance=max_distance,
    )
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_bias_query_offset_is_the_last_rows_of_the_full_bias(bidirectional):
    table = np.random.default_rng(7).normal(size=(32, 3))
    full = t5_bias(table, 200, bidirectional=bidirectional)
    step = t5_bias(table, 1, 200, bidirectional=bidirectional, query_offset=199)
    np.testing.assert_array_equal(step, full[:, -1:])
    chunk = t5_bias(table, 50, 200, bidirectional=bidirectional, query_offset=150)
    np.testing.assert_array_equal(chunk, full[:, 150:])
    with pytest.raises(ValueError, match="query_offset"):
        t5_bias(table, 1, 5, query_offset=-1)


def test_t5_bias_query_offset_matches_hf_past_seen_tokens():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    config = transformers.T5Config(d_model=16, d_kv=4, num_heads=4, is_decoder=True)
    attn = t5.T5Attention(config, has_relative_attention_bias=True)
    table = np.random.default_rng(8).normal(size=(32, 4))
    with torch.no_grad():
        attn.relative_attention_bias.weight.copy_(torch.tensor(table))
        ref = attn.compute_bias(3, 120, past_seen_tokens=117)[0].numpy()
    ours = t5_bias(table, 3, 120, bidirectional=False, query_offset=117)
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- Shaw et al.


def shaw_loop(q, k, v, rel_k, rel_v, K, allowed=None):
    """Shaw et al. eqs. 3-4 written as loops over (i, j), one sequence and head."""
    tq, tk, d = q.shape[0], k.shape[0], q.shape[1]
    e = np.full((tq, tk), -np.inf)
    for i in range(tq):
        for j in range(tk):
            if allowed is None or allowed[i, j]:
                r = min(max(j - i, -K), K) + K
                e[i, j] = q[i] @ (k[j] + rel_k[r]) / math.sqrt(d)
    w = np.exp(e - e.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    out = np.zeros((tq, v.shape[1]))
    for i in range(tq):
        for j in range(tk):
            r = min(max(j - i, -K), K) + K
            out[i] += w[i, j] * (v[j] + (rel_v[r] if rel_v is not None else 0))
    return out, w


@pytest.mark.parametrize(
    "tq,tk,K,causal",
    [(6, 6, 2, False), (6, 6, 1, True), (4, 9, 3, False), (9, 4, 5, False), (5, 5, 10, True)],
)
def test_shaw_attention_equals_loops(tq, tk, K, causal):
    rng = np.random.default_rng(tq * 100 + tk * 10 + K)
    d, dv = 4, 3
    q, k, v = rng.normal(size=(tq, d)), rng.normal(size=(tk, d)), rng.normal(size=(tk, dv))
    rel_k, rel_v = rng.normal(size=(2 * K + 1, d)), rng.normal(size=(2 * K + 1, dv))
    allowed = lm.causal_mask(tq, tk) if causal else None
    out, w = shaw_attention(q, k, v, rel_k, rel_v, max_distance=K, causal=causal)
    ref_out, ref_w = shaw_loop(q, k, v, rel_k, rel_v, K, allowed)
    np.testing.assert_allclose(w, ref_w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=1e-12)
    out_k, _ = shaw_attention(q, k, v, rel_k, max_distance=K, causal=causal)
    np.testing.assert_allclose(out_k, shaw_loop(q, k, v, rel_k, None, K, allowed)[0], atol=1e-12)


def test_shaw_attention_broadcasts_over_batch_and_heads():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(3, 2, 2, 5, 4))
    rel_k, rel_v = rng.normal(size=(2, 5, 4))
    out, w = shaw_attention(q, k, v, rel_k, rel_v, max_distance=2)
    assert out.shape == (2, 2, 5, 4) and w.shape == (2, 2, 5, 5)
    one, _ = shaw_attention(q[1, 0], k[1, 0], v[1, 0], rel_k, rel_v, max_distance=2)
    np.testing.assert_allclose(out[1, 0], one, atol=1e-14)


@settings(max_examples=40, deadline=None)
@given(
    tq=st.integers(1, 8),
    tk=st.integers(1, 8),
    K=st.integers(1, 6),
    causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_shaw_with_zero_tables_is_plain_attention(tq, tk, K, causal, seed):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(tq, 4)), rng.normal(size=(tk, 4)), rng.normal(size=(tk, 3))
    out, w = shaw_attention(
        q, k, v, np.zeros((2 * K + 1, 4)), np.zeros((2 * K + 1, 3)), max_distance=K, causal=causal
    )
    ref_out, ref_w = lm.scaled_dot_product_attention(q, k, v, causal=causal)
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=1e-13)
    np.testing.assert_allclose(w, ref_w, rtol=0, atol=1e-13)


@settings(max_examples=30, deadline=None)
@given(T=st.integers(2, 12), K=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_shaw_value_term_per_offset_weights_sum_to_one(T, K, seed):
    # rel_v = e_r (one-hot rows): the value term of query i is its weight per clipped offset.
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, T, 3))
    v = np.zeros((T, 2 * K + 1))
    out, w = shaw_attention(q, k, v, np.zeros((2 * K + 1, 3)), np.eye(2 * K + 1), max_distance=K)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-12)
    rows = np.clip(lm.relative_positions(T), -K, K) + K
    for r in range(2 * K + 1):
        np.testing.assert_allclose(out[:, r], (w * (rows == r)).sum(axis=1), atol=1e-12)


# ---------------------------------------------------------------- Transformer-XL


def test_transformer_xl_terms_equal_loops():
    rng = np.random.default_rng(4)
    T, d = 5, 3
    q, k = rng.normal(size=(2, T, d))
    r = rng.normal(size=(2 * T - 1, d))
    u, v = rng.normal(size=(2, d))
    a, b, c, e = transformer_xl_terms(q, k, r, u, v)
    for i in range(T):
        for j in range(T):
            rm = r[(i - j) + T - 1]
            assert a[i, j] == pytest.approx(q[i] @ k[j], abs=1e-13)
            assert b[i, j] == pytest.approx(q[i] @ rm, abs=1e-13)
            assert c[i, j] == pytest.approx(u @ k[j], abs=1e-13)
            assert e[i, j] == pytest.approx(v @ rm, abs=1e-13)


@settings(max_examples=40, deadline=None)
@given(T=st.integers(1, 10), d=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_transformer_xl_terms_sum_to_full_score(T, d, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, T, d))
    r = rng.normal(size=(2 * T - 1, d))
    u, v = rng.normal(size=(2, d))
    total = sum(transformer_xl_terms(q, k, r, u, v))
    rows = T - 1 - lm.relative_positions(T)  # offset i - j
    full = (q + u) @ k.T + np.einsum("id,ijd->ij", q + v, r[rows])
    np.testing.assert_allclose(total, full, rtol=0, atol=1e-12)
    # the position terms depend on i - j only through r: with r constant they are rank one
    c = transformer_xl_terms(q, k, np.ones_like(r), u, v)[3]
    np.testing.assert_allclose(c, np.full((T, T), v.sum()), atol=1e-12)


# ---------------------------------------------------------------- bad input


BAD = [
    (lambda: t5_bias(np.zeros((16, 2)), 3), ValueError, "table"),
    (lambda: t5_bias(np.zeros(32), 3), ValueError, "table"),
    (lambda: t5_bias(np.zeros((32, 2)), 0), ValueError, "n_queries"),
    (lambda: t5_bias(np.zeros((32, 2)), 3, 2.5), TypeError, "n_keys"),
    (
        lambda: shaw_attention(
            np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 4)), np.ones((4, 4)), max_distance=2
        ),
        ValueError,
        "rel_k",
    ),
    (
        lambda: shaw_attention(
            np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 4)), np.ones((5, 3)), max_distance=2
        ),
        ValueError,
        "rel_k",
    ),
    (
        lambda: shaw_attention(
            np.ones((3, 4)),
            np.ones((3, 4)),
            np.ones((3, 2)),
            np.ones((5, 4)),
            np.ones((5, 4)),
            max_distance=2,
        ),
        ValueError,
        "rel_v",
    ),
    (
        lambda: shaw_attention(
            np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 4)), np.ones((1, 4)), max_distance=0
        ),
        ValueError,
        "max_distance",
    ),
    (
        lambda: shaw_attention(
            np.ones((3, 4)), np.ones((3, 4)), np.ones((3, 4)), np.ones((5, 4)), max_distance=2.0
        ),
        TypeError,
        "max_distance",
    ),
    (
        lambda: transformer_xl_terms(
            np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 2)), np.ones(2), np.ones(2)
        ),
        ValueError,
        "r",
    ),
    (
        lambda: transformer_xl_terms(
            np.ones((3, 2)), np.ones((4, 2)), np.ones((5, 2)), np.ones(2), np.ones(2)
        ),
        ValueError,
        "q and k",
    ),
    (
        lambda: transformer_xl_terms(
            np.ones((3, 2)), np.ones((3, 2)), np.ones((5, 2)), np.ones(3), np.ones(2)
        ),
        ValueError,
        "u",
    ),
]


@pytest.mark.parametrize("call,error,name", BAD, ids=[f"{i}-{b[2]}" for i, b in enumerate(BAD)])
def test_bad_input_names_the_argument(call, error, name):
    with pytest.raises(error, match=name):
        call()
