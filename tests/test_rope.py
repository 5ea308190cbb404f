"""Tests for Lesson B's additions to llmmath.rope and llmmath.positions, and the position ids
of llmmath.attention: hand values, identities (hypothesis), bad input, and cross-checks
against Hugging Face transformers (rope initialization functions, LlamaRotaryEmbedding,
DataCollatorWithFlattening)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import llmmath as lm
from llmmath.attention import packed_position_ids, position_ids
from llmmath.positions import sinusoidal, sinusoidal_shift, wavelengths
from llmmath.rope import (
    apply_rope,
    dynamic_ntk_base,
    llama3_frequencies,
    longrope_attention_factor,
    longrope_frequencies,
    rope_cos_sin,
    rope_frequencies,
    rope_weights_to_half,
    rotate_pairs,
)

LAYOUTS = ["interleaved", "half"]
F32_TOL = dict(rtol=2e-6, atol=2e-6)  # references that compute in float32


# ---------------------------------------------------------------- sinusoidal offset map


def test_sinusoidal_shift_hand_values():
    M = sinusoidal_shift(2.0, 4)
    w = 10000.0 ** (-2 / 4)
    c0, s0, c1, s1 = math.cos(2), math.sin(2), math.cos(2 * w), math.sin(2 * w)
    expected = [[c0, s0, 0, 0], [-s0, c0, 0, 0], [0, 0, c1, s1], [0, 0, -s1, c1]]
    np.testing.assert_allclose(M, expected, rtol=0, atol=1e-15)


@settings(max_examples=50, deadline=None)
@given(
    a=st.floats(-500, 500),
    b=st.floats(-500, 500),
    half_d=st.integers(1, 32),
    base=st.floats(2.0, 1e6),
)
def test_sinusoidal_shift_group_law_and_orthogonal(a, b, half_d, base):
    d = 2 * half_d
    Ma, Mb = sinusoidal_shift(a, d, base), sinusoidal_shift(b, d, base)
    np.testing.assert_allclose(Ma @ Mb, sinusoidal_shift(a + b, d, base), atol=1e-9)
    np.testing.assert_allclose(Ma.T @ Ma, np.eye(d), atol=1e-12)
    np.testing.assert_allclose(sinusoidal_shift(0, d, base), np.eye(d), atol=0)


@settings(max_examples=40, deadline=None)
@given(delta=st.integers(0, 60), p=st.integers(0, 60), half_d=st.integers(1, 16))
def test_sinusoidal_shift_moves_every_row_by_delta(delta, p, half_d):
    d = 2 * half_d
    PE = sinusoidal(130, d)
    M = sinusoidal_shift(delta, d)
    np.testing.assert_allclose(PE[p + delta], M @ PE[p], atol=1e-10)


def test_wavelengths_hand_values():
    np.testing.assert_allclose(wavelengths([1.0, 0.5]), [2 * math.pi, 4 * math.pi], rtol=1e-15)
    lam = wavelengths(rope_frequencies(512))
    assert lam[0] == pytest.approx(2 * math.pi)
    assert lam[-1] == pytest.approx(2 * math.pi * 10000.0 ** (510 / 512), rel=1e-12)


# ---------------------------------------------------------------- cos/sin caches


@pytest.mark.parametrize("layout", LAYOUTS)
def test_rope_cos_sin_hand_values(layout):
    cos, sin = rope_cos_sin([2.0], [1.0, 0.25], layout=layout)
    a, b = 2.0, 0.5
    order = [a, b, a, b] if layout == "half" else [a, a, b, b]
    np.testing.assert_allclose(cos[0], np.cos(order), rtol=0, atol=1e-15)
    np.testing.assert_allclose(sin[0], np.sin(order), rtol=0, atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(
    layout=st.sampled_from(LAYOUTS),
    T=st.integers(1, 12),
    half_d=st.integers(1, 8),
    base=st.floats(2.0, 1e6),
    scale=st.floats(0.1, 100.0),
    seed=st.integers(0, 2**16),
)
def test_elementwise_form_equals_apply_rope(layout, T, half_d, base, scale, seed):
    rng = np.random.default_rng(seed)
    d = 2 * half_d
    x = rng.normal(size=(2, T, d))
    positions = rng.uniform(0, 5000, size=T) * scale / 10  # float positions
    theta = rope_frequencies(d, base)
    cos, sin = rope_cos_sin(positions, theta, layout=layout)
    ours = x * cos + rotate_pairs(x, layout=layout) * sin
    ref = apply_rope(x, positions, layout=layout, inv_freq=theta)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)


def test_rope_cos_sin_attention_factor_scales_both_and_the_logits_by_its_square():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(2, 6, 8))
    theta, pos = rope_frequencies(8), np.arange(6.0)
    f = lm.yarn_attention_factor(8.0)
    cos1, sin1 = rope_cos_sin(pos, theta, layout="half")
    cosf, sinf = rope_cos_sin(pos, theta, layout="half", attention_factor=f)
    np.testing.assert_allclose(cosf, f * cos1, rtol=1e-15)
    np.testing.assert_allclose(sinf, f * sin1, rtol=1e-15)

    def rotate(x, c, s):
        return x * c + rotate_pairs(x, layout="half") * s

    plain = rotate(q, cos1, sin1) @ rotate(k, cos1, sin1).T
    scaled = rotate(q, cosf, sinf) @ rotate(k, cosf, sinf).T
    np.testing.assert_allclose(scaled, f**2 * plain, rtol=1e-12)


def test_mixed_layouts_differ():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 8))
    cos, sin = rope_cos_sin(np.arange(5.0), rope_frequencies(8), layout="interleaved")
    wrong = x * cos + rotate_pairs(x, layout="half") * sin
    assert np.abs(wrong - apply_rope(x, layout="half")).max() > 0.1
    assert np.abs(wrong - apply_rope(x)).max() > 0.1


@pytest.mark.parametrize("rope_type", ["default", "linear", "dynamic", "yarn", "llama3"])
def test_rope_cos_sin_matches_llama_rotary_embedding(rope_type, llama_config):
    torch = pytest.importorskip("torch")
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    params = {"rope_type": rope_type, "rope_theta": 10000.0}
    if rope_type != "default":
        params["factor"] = 4.0
    if rope_type in ("yarn", "llama3"):
        params["original_max_position_embeddings"] = 256
    if rope_type == "llama3":
        params.update(low_freq_factor=1.0, high_freq_factor=4.0)
    cfg = llama_config(32, params, max_position_embeddings=1024)
    rotary = llama.LlamaRotaryEmbedding(cfg)
    pos = np.array([0, 1, 2, 50, 255, 600, 1023])
    x = torch.zeros(1, len(pos), 32)
    cos_ref, sin_ref = rotary(x, torch.tensor(pos)[None])
    inv_freq = rotary.inv_freq.double().numpy()
    cos, sin = rope_cos_sin(pos, inv_freq, layout="half", attention_factor=rotary.attention_scaling)
    # LlamaRotaryEmbedding computes angle, cos and sin in float32; angles reach ~1e3 here.
    np.testing.assert_allclose(cos, cos_ref[0].numpy(), rtol=0, atol=1e-4)
    np.testing.assert_allclose(sin, sin_ref[0].numpy(), rtol=0, atol=1e-4)
    # and exactly against a float64 transcription of its formula
    freqs = pos[:, None].astype(np.float64) * inv_freq
    emb = np.concatenate([freqs, freqs], -1)
    np.testing.assert_array_equal(cos, np.cos(emb) * rotary.attention_scaling)


# ---------------------------------------------------------------- dynamic NTK


@settings(max_examples=60, deadline=None)
@given(
    factor=st.floats(1.0, 16.0),
    half_d=st.integers(2, 64),
    L0=st.integers(16, 8192),
    ratio=st.floats(0.01, 8.0),
)
def test_dynamic_ntk_base_is_base_up_to_L0_and_grows_after(factor, half_d, L0, ratio):
    d = 2 * half_d
    seq_len = max(1, int(L0 * ratio))
    b = dynamic_ntk_base(10000.0, factor, d, seq_len, L0)
    if seq_len <= L0:
        assert b == 10000.0
    else:
        assert b >= 10000.0
        assert dynamic_ntk_base(10000.0, factor, d, seq_len + 1, L0) >= b
        if factor > 1:
            assert b > 10000.0


def test_dynamic_ntk_base_at_fixed_lengths():
    # at L = 2 L0 the effective factor is 2 f - (f - 1) = f + 1
    assert dynamic_ntk_base(10000.0, 4.0, 4, 200, 100) == pytest.approx(10000.0 * 5.0**2)
    assert dynamic_ntk_base(10000.0, 4.0, 64, 400, 100) == pytest.approx(
        lm.ntk_scaled_base(10000.0, 13.0, 64)
    )


@pytest.mark.parametrize("seq_len", [10, 512, 513, 1000, 2048, 4096])
def test_dynamic_ntk_matches_hf(seq_len, llama_config, hf_rope_init):
    init = hf_rope_init("dynamic")
    cfg = llama_config(64, {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}, 512)
    inv_freq, _ = init(cfg, "cpu", seq_len=seq_len)
    base = dynamic_ntk_base(10000.0, 2.0, 64, seq_len, 512)
    np.testing.assert_allclose(rope_frequencies(64, base), inv_freq.numpy(), **F32_TOL)


# ---------------------------------------------------------------- Llama 3.1


@settings(max_examples=50, deadline=None)
@given(
    factor=st.floats(1.5, 32.0),
    half_d=st.integers(8, 64),
    L0=st.sampled_from([2048, 4096, 8192]),
    low=st.floats(0.5, 2.0),
    gap=st.floats(0.5, 8.0),
    base=st.sampled_from([10000.0, 500000.0]),
)
def test_llama3_bands(factor, half_d, L0, low, gap, base):
    d, high = 2 * half_d, low + gap
    theta = rope_frequencies(d, base)
    lam = 2 * np.pi / theta
    out = llama3_frequencies(d, factor, L0, low_freq_factor=low, high_freq_factor=high, base=base)
    fast, slow = lam < L0 / high, lam > L0 / low
    np.testing.assert_array_equal(out[fast], theta[fast])
    np.testing.assert_allclose(out[slow], theta[slow] / factor, rtol=1e-14)
    mid = ~fast & ~slow
    assert np.all(out[mid] <= theta[mid] * (1 + 1e-12))
    assert np.all(out[mid] >= theta[mid] / factor * (1 - 1e-12))


def test_llama31_config_values():
    # Llama-3.1-8B: d_head 128, base 500000, factor 8, L0 8192, low 1, high 4
    out = llama3_frequencies(128, 8.0)
    theta = rope_frequencies(128, 500000.0)
    lam = 2 * np.pi / theta
    assert np.sum(lam < 2048) == 29 and np.sum(lam > 8192) == 29  # 6 pairs blended
    k = 32
    s = (8192 / lam[k] - 1) / 3
    assert out[k] == pytest.approx((1 - s) * theta[k] / 8 + s * theta[k], rel=1e-14)


@pytest.mark.parametrize(
    "factor,L0,low,high,base",
    [
        (8.0, 8192, 1.0, 4.0, 500000.0),
        (32.0, 8192, 1.0, 4.0, 500000.0),
        (4.0, 1024, 2.0, 8.0, 10000.0),
    ],
)
def test_llama3_matches_hf(factor, L0, low, high, base, llama_config, hf_rope_init):
    init = hf_rope_init("llama3")
    params = {
        "rope_type": "llama3",
        "factor": factor,
        "low_freq_factor": low,
        "high_freq_factor": high,
        "original_max_position_embeddings": L0,
        "rope_theta": base,
    }
    inv_freq, scaling = init(llama_config(128, params, int(L0 * factor)), "cpu")
    assert scaling == 1.0
    ours = llama3_frequencies(
        128, factor, L0, low_freq_factor=low, high_freq_factor=high, base=base
    )
    np.testing.assert_allclose(ours, inv_freq.numpy(), **F32_TOL)


# ---------------------------------------------------------------- LongRoPE


def test_longrope_hand_values_and_attention_factor():
    # 0.01 = 1 / 10000^(1/2): numpy's power (a few ulp, budget 4: up to 8 u, u = 2^-53),
    # a division and the literal's rounding, 10 u, over 1e-15 = 9 u (0.5 is exact)
    np.testing.assert_allclose(longrope_frequencies(4, [2.0, 1.0]), [0.5, 0.01], rtol=1e-14)
    np.testing.assert_array_equal(longrope_frequencies(8, np.ones(4)), rope_frequencies(8))
    assert longrope_attention_factor(1.0, 4096) == 1.0
    assert longrope_attention_factor(0.5, 4096) == 1.0
    assert longrope_attention_factor(4096.0, 4096) == pytest.approx(math.sqrt(2.0))


@pytest.mark.parametrize("seq_len", [100, 5000])
def test_longrope_matches_hf(seq_len, llama_config, hf_rope_init):
    init = hf_rope_init("longrope")
    rng = np.random.default_rng(5)
    short = (1.0 + rng.uniform(0, 0.2, 32)).tolist()
    long = (1.0 + np.linspace(0, 30, 32)).tolist()
    params = {
        "rope_type": "longrope",
        "short_factor": short,
        "long_factor": long,
        "original_max_position_embeddings": 4096,
        "rope_theta": 10000.0,
    }
    cfg = llama_config(64, params, max_position_embeddings=131072)
    inv_freq, attention = init(cfg, "cpu", seq_len=seq_len)
    ext = long if seq_len > 4096 else short
    np.testing.assert_allclose(longrope_frequencies(64, ext), inv_freq.numpy(), **F32_TOL)
    assert longrope_attention_factor(131072 / 4096, 4096) == pytest.approx(attention, rel=1e-12)


# ---------------------------------------------------------------- checkpoint layout


def hf_permute(w, n_heads):
    """The permute of HF's convert_llama_weights_to_hf.py, transcribed to numpy."""
    dim1, dim2 = w.shape
    return w.reshape(n_heads, dim1 // n_heads // 2, 2, dim2).swapaxes(1, 2).reshape(dim1, dim2)


@settings(max_examples=40, deadline=None)
@given(
    H=st.integers(1, 4),
    half_dh=st.integers(1, 6),
    d_in=st.integers(1, 12),
    T=st.integers(1, 7),
    seed=st.integers(0, 2**16),
)
def test_rope_weights_to_half_preserves_scores(H, half_dh, d_in, T, seed):
    rng = np.random.default_rng(seed)
    dh = 2 * half_dh
    Wq, Wk = rng.normal(size=(2, H * dh, d_in))
    X = rng.normal(size=(T, d_in))

    def scores(Wq, Wk, layout):
        q = lm.split_heads(X @ Wq.T, H)
        k = lm.split_heads(X @ Wk.T, H)
        q, k = apply_rope(q, layout=layout), apply_rope(k, layout=layout)
        return q @ np.swapaxes(k, -1, -2)

    Wq_h, Wk_h = rope_weights_to_half(Wq, H), rope_weights_to_half(Wk, H)
    np.testing.assert_array_equal(Wq_h, hf_permute(Wq, H))
    np.testing.assert_allclose(
        scores(Wq_h, Wk_h, "half"), scores(Wq, Wk, "interleaved"), rtol=1e-10, atol=1e-10
    )
    # per head, the permuted rows are interleaved_to_half of the original rows
    heads = Wq.reshape(H, dh, d_in)
    np.testing.assert_array_equal(
        Wq_h.reshape(H, dh, d_in),
        np.swapaxes(lm.interleaved_to_half(np.swapaxes(heads, 1, 2)), 1, 2),
    )


def test_rope_weights_mixed_layout_changes_scores():
    rng = np.random.default_rng(6)
    Wq, Wk = rng.normal(size=(2, 8, 8))
    X = rng.normal(size=(5, 8))
    q, k = X @ Wq.T, X @ Wk.T
    right = apply_rope(q) @ apply_rope(k).T
    wrong = apply_rope(q, layout="half") @ apply_rope(k, layout="half").T
    assert np.abs(right - wrong).max() > 0.1


# ---------------------------------------------------------------- position ids


def test_position_ids_hand_values():
    mask = np.array([[0, 0, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    np.testing.assert_array_equal(
        position_ids(mask), [[0, 0, 0, 1, 2], [0, 1, 2, 0, 0], [0, 1, 2, 3, 4]]
    )
    assert position_ids(mask.astype(bool)).dtype == np.int64
    assert position_ids([1.0, 1.0, 0.0]).tolist() == [0, 1, 0]


@settings(max_examples=60, deadline=None)
@given(pad=st.integers(0, 10), n=st.integers(1, 20), right=st.integers(0, 5))
def test_position_ids_of_padded_row_equal_arange_of_real_tokens(pad, n, right):
    mask = np.r_[np.zeros(pad, int), np.ones(n, int), np.zeros(right, int)]
    ids = position_ids(mask)
    np.testing.assert_array_equal(ids[pad : pad + n], np.arange(n))
    assert not ids[:pad].any() and not ids[pad + n :].any()


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(1, 30), min_size=1, max_size=8))
def test_packed_position_ids_restart_at_every_document(lengths):
    ids = packed_position_ids(lengths)
    assert ids.shape == (sum(lengths),) and ids.dtype == np.int64
    starts = np.cumsum([0, *lengths[:-1]])
    for start, n in zip(starts, lengths):
        np.testing.assert_array_equal(ids[start : start + n], np.arange(n))
    assert np.sum(ids == 0) == len(lengths)


def test_packed_position_ids_match_hf_data_collator():
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    lengths = [3, 1, 7, 4]
    features = [{"input_ids": list(range(100, 100 + n))} for n in lengths]
    collator = transformers.DataCollatorWithFlattening(return_position_ids=True)
    batch = collator(features, return_tensors="np")
    np.testing.assert_array_equal(packed_position_ids(lengths), batch["position_ids"][0])


# ---------------------------------------------------------------- bad input


BAD = [
    (lambda: rope_cos_sin([0.0], [1.0], layout="rows"), ValueError, "layout"),
    (lambda: rope_cos_sin([[0.0]], [1.0], layout="half"), ValueError, "positions"),
    (lambda: rope_cos_sin([0.0], [[1.0]], layout="half"), ValueError, "inv_freq"),
    (lambda: rope_cos_sin([0.0], [1.0]), TypeError, "layout"),
    (lambda: rotate_pairs(np.ones(3), layout="half"), ValueError, "x"),
    (lambda: dynamic_ntk_base(10000.0, 2.0, 6, 0, 100), ValueError, "seq_len"),
    (lambda: dynamic_ntk_base(10000.0, 0.0, 6, 10, 100), ValueError, "factor"),
    (lambda: dynamic_ntk_base(10000.0, 2.0, 7, 10, 100), ValueError, "d_head"),
    (lambda: dynamic_ntk_base(10000.0, 2.0, 2, 10, 100), ValueError, "d_head"),
    (
        lambda: llama3_frequencies(128, 8.0, low_freq_factor=4.0, high_freq_factor=4.0),
        ValueError,
        "low_freq_factor",
    ),
    (lambda: llama3_frequencies(128, -1.0), ValueError, "factor"),
    (lambda: llama3_frequencies(127, 8.0), ValueError, "d_head"),
    (lambda: longrope_frequencies(8, [1.0, 1.0]), ValueError, "ext_factors"),
    (lambda: longrope_frequencies(8, [1.0, 1.0, 0.0, 1.0]), ValueError, "ext_factors"),
    (lambda: longrope_attention_factor(2.0, 1), ValueError, "original_max_positions"),
    (lambda: longrope_attention_factor(0.0, 4096), ValueError, "factor"),
    (lambda: rope_weights_to_half(np.ones((6, 4)), 2), ValueError, "W"),
    (lambda: rope_weights_to_half(np.ones((8, 4)), 3), ValueError, "W"),
    (lambda: rope_weights_to_half(np.ones(8), 1), ValueError, "W"),
    (lambda: sinusoidal_shift(1.0, 5), ValueError, "d_model"),
    (lambda: sinusoidal_shift(np.nan, 4), ValueError, "delta"),
    (lambda: wavelengths([1.0, 0.0]), ValueError, "inv_freq"),
    (lambda: position_ids([[0, 2, 1]]), ValueError, "attention_mask"),
    (lambda: position_ids(np.array(["a"])), TypeError, "attention_mask"),
    (lambda: packed_position_ids([3, 0]), ValueError, "lengths"),
    (lambda: packed_position_ids([3.0, 2.0]), TypeError, "lengths"),
    (lambda: packed_position_ids([[3, 2]]), ValueError, "lengths"),
]


@pytest.mark.parametrize("call,error,name", BAD, ids=[f"{i}-{b[2]}" for i, b in enumerate(BAD)])
def test_bad_input_names_the_argument(call, error, name):
    with pytest.raises(error, match=name):
        call()


def test_position_ids_match_hf_generate():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.generation.utils import GenerationMixin

    mask = np.array([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 1]])
    ids = torch.ones(mask.shape, dtype=torch.long)
    ref = GenerationMixin._prepare_position_ids_for_generation(
        None, ids, {"attention_mask": torch.tensor(mask)}
    )
    np.testing.assert_array_equal(position_ids(mask), ref.numpy())
