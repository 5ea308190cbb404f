"""Tests for llmmath.positions: hand-checked values, identities, bad input, and
cross-checks against Press et al.'s get_slopes, PyTorch and Hugging Face transformers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from llmmath.positions import (
    alibi_bias,
    alibi_slopes,
    apply_rope,
    half_to_interleaved,
    interleaved_to_half,
    interpolate_table,
    linear_scaled_frequencies,
    ntk_scaled_base,
    relative_positions,
    rope_frequencies,
    rope_matrix,
    sinusoidal,
    t5_bucket,
    yarn_attention_factor,
    yarn_frequencies,
)

LAYOUTS = ["interleaved", "half"]
F32_TOL = dict(rtol=2e-6, atol=2e-6)  # for references that compute in float32


def press_get_slopes(n):
    """Press et al.'s published get_slopes (github.com/ofirpress/attention_with_linear_biases)."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + press_get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


# ---------------------------------------------------------------- sinusoidal


def test_sinusoidal_hand_values():
    pe = sinusoidal(3, 4)
    # pair 0 has frequency 1, pair 1 has frequency 10000^(-2/4) = 0.01
    expected = np.array(
        [
            [0.0, 1.0, 0.0, 1.0],
            [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)],
            [math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)],
        ]
    )
    np.testing.assert_allclose(pe, expected, rtol=0, atol=1e-15)
    assert pe.dtype == np.float64


def test_sinusoidal_matches_vaswani_formula_and_base():
    n, d, base = 50, 16, 100.0
    ref = np.array([[p / base ** (2 * (j // 2) / d) for j in range(d)] for p in range(n)])
    ref[:, 0::2], ref[:, 1::2] = np.sin(ref[:, 0::2]), np.cos(ref[:, 1::2])
    np.testing.assert_allclose(sinusoidal(n, d, base=base), ref, rtol=0, atol=1e-12)


def test_sinusoidal_matches_distilbert_table():
    torch = pytest.importorskip("torch")
    mod = pytest.importorskip("transformers.models.distilbert.modeling_distilbert")
    out = torch.empty(64, 32)
    mod._create_sinusoidal_embeddings(n_pos=64, dim=32, out=out)
    # DistilBERT builds the table in float64 but stores it in a float32 tensor.
    np.testing.assert_allclose(sinusoidal(64, 32), out.numpy(), **F32_TOL)


# ---------------------------------------------------------------- RoPE


def test_rope_frequencies_hand_and_reference_formula():
    # 1 / base^(2k/d): numpy's power is within a few ulp (budget 4: up to 8 u relative,
    # u = 2^-53), then a division and the decimal literal round: 10 u, over 1e-15 = 9 u.
    np.testing.assert_allclose(rope_frequencies(8), [1.0, 0.1, 0.01, 0.001], rtol=1e-14)
    theta = rope_frequencies(128, base=500000.0)
    np.testing.assert_array_equal(theta, 1.0 / 500000.0 ** (np.arange(0, 128, 2) / 128))


def test_rope_frequencies_match_hf_default_inv_freq(llama_config):
    torch = pytest.importorskip("torch")
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    cfg = llama_config(64, {"rope_type": "default", "rope_theta": 10000.0})
    inv_freq, scaling = llama.LlamaRotaryEmbedding.compute_default_rope_parameters(cfg)
    assert inv_freq.dtype == torch.float32 and scaling == 1.0
    np.testing.assert_allclose(rope_frequencies(64), inv_freq.numpy(), **F32_TOL)


def test_apply_rope_hand_values_interleaved():
    x = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 2.0, 3.0, 4.0]])
    out = apply_rope(x, inv_freq=[1.0, 0.5])  # positions 0, 1
    c1, s1, c5, s5 = math.cos(1), math.sin(1), math.cos(0.5), math.sin(0.5)
    expected = [[1.0, 0.0, 1.0, 0.0], [c1 - 2 * s1, s1 + 2 * c1, 3 * c5 - 4 * s5, 3 * s5 + 4 * c5]]
    # x cos + y sin with |x| + |y| <= 7: numpy's cos and sin (a few ulp, budget 4) against
    # math's (1 ulp), 5 u each (u = 2^-53), plus the products' and sums' rounding: ~5e-15.
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-14)


def test_apply_rope_hand_values_half():
    x = np.array([[1.0, 2.0, 3.0, 4.0]])  # pairs (x0, x2) and (x1, x3)
    out = apply_rope(x, positions=[1.0], inv_freq=[1.0, 0.5], layout="half")
    c1, s1, c5, s5 = math.cos(1), math.sin(1), math.cos(0.5), math.sin(0.5)
    expected = [[c1 - 3 * s1, 2 * c5 - 4 * s5, 3 * c1 + s1, 4 * c5 + 2 * s5]]
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-14)  # as above: |x| + |y| <= 6


@pytest.mark.parametrize("layout", LAYOUTS)
def test_apply_rope_defaults_positions_base_and_broadcast(layout):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 5, 8))
    out = apply_rope(x, layout=layout)
    np.testing.assert_array_equal(out[..., 0, :], x[..., 0, :])  # position 0 is the identity
    np.testing.assert_array_equal(out, apply_rope(x, np.arange(5), layout=layout))
    np.testing.assert_array_equal(out[1, 2], apply_rope(x[1, 2], layout=layout))
    np.testing.assert_allclose(
        apply_rope(x, base=500.0, layout=layout),
        apply_rope(x, layout=layout, inv_freq=rope_frequencies(8, 500.0)),
        rtol=0,
        atol=0,
    )
    # float positions: rotating by p = 2.5 twice equals rotating by 5
    half_way = apply_rope(x[..., :1, :], [2.5], layout=layout)
    np.testing.assert_allclose(
        apply_rope(half_way, [2.5], layout=layout),
        apply_rope(x[..., :1, :], [5.0], layout=layout),
        atol=1e-12,
    )
    assert apply_rope(np.ones((2, 4), dtype=np.int32)).dtype == np.float64


def test_rope_matrix_block_form_and_relative_property():
    d, rng = 8, np.random.default_rng(1)
    q, k = rng.normal(size=d), rng.normal(size=d)
    R3, R7 = rope_matrix(3, d), rope_matrix(7, d)
    np.testing.assert_allclose(R3 @ q, apply_rope(q[None], [3])[0], atol=1e-14)
    np.testing.assert_allclose(R3.T @ R3, np.eye(d), atol=1e-14)
    np.testing.assert_allclose(R3.T @ R7, rope_matrix(4, d), atol=1e-14)
    np.testing.assert_allclose((R3 @ q) @ (R7 @ k), q @ rope_matrix(4, d) @ k, atol=1e-12)
    c, s = math.cos(3 * 10000.0 ** (-2 / 8)), math.sin(3 * 10000.0 ** (-2 / 8))
    expected_block = [[c, -s], [s, c]]
    np.testing.assert_allclose(R3[2:4, 2:4], expected_block, atol=1e-15)
    assert not R3[0:2, 2:].any() and not R3[2:, 0:2].any()


def test_layout_permutation_hand_values_and_roundtrip():
    x = np.arange(8.0)
    np.testing.assert_array_equal(interleaved_to_half(x), [0, 2, 4, 6, 1, 3, 5, 7])
    np.testing.assert_array_equal(half_to_interleaved(x), [0, 4, 1, 5, 2, 6, 3, 7])
    y = np.random.default_rng(2).normal(size=(3, 4, 10))
    np.testing.assert_array_equal(half_to_interleaved(interleaved_to_half(y)), y)
    np.testing.assert_array_equal(interleaved_to_half(half_to_interleaved(y)), y)


def test_apply_rope_half_matches_hf_llama_float64():
    torch = pytest.importorskip("torch")
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(2, 4, 9, 16)), rng.normal(size=(2, 4, 9, 16))
    pos = np.array([0, 1, 2, 3, 10, 100, 1000, 4095, 7.5])
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, 16, 2, dtype=torch.float64) / 16))
    freqs = torch.tensor(pos)[:, None] * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)[None]  # (1, T, d)
    q_ref, k_ref = llama.apply_rotary_pos_emb(
        torch.tensor(q), torch.tensor(k), emb.cos(), emb.sin()
    )
    np.testing.assert_allclose(apply_rope(q, pos, layout="half"), q_ref.numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(apply_rope(k, pos, layout="half"), k_ref.numpy(), rtol=0, atol=1e-10)


def test_apply_rope_half_matches_hf_llama_rotary_module_float32(llama_config):
    torch = pytest.importorskip("torch")
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    cfg = llama_config(32, {"rope_type": "default", "rope_theta": 10000.0})
    rotary = llama.LlamaRotaryEmbedding(cfg)
    x = np.random.default_rng(4).normal(size=(1, 2, 64, 32)).astype(np.float32)
    cos, sin = rotary(torch.tensor(x), torch.arange(64)[None])
    ref, _ = llama.apply_rotary_pos_emb(torch.tensor(x), torch.tensor(x), cos, sin)
    # LlamaRotaryEmbedding computes angles, cos and sin in float32.
    np.testing.assert_allclose(apply_rope(x, layout="half"), ref.numpy(), rtol=1e-4, atol=5e-5)


def test_apply_rope_interleaved_matches_gptj_float64():
    torch = pytest.importorskip("torch")
    gptj = pytest.importorskip("transformers.models.gptj.modeling_gptj")
    x = np.random.default_rng(5).normal(size=(2, 12, 3, 16))  # GPT-J layout (B, T, H, d)
    pos = np.arange(12) * 37.0
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, 16, 2, dtype=torch.float64) / 16))
    angles = torch.tensor(pos)[None, :, None] * inv_freq  # (1, T, d/2)
    ref = gptj.apply_rotary_pos_emb(torch.tensor(x), angles.sin(), angles.cos())
    ours = apply_rope(np.swapaxes(x, 1, 2), pos).swapaxes(1, 2)
    np.testing.assert_allclose(ours, ref.numpy(), rtol=0, atol=1e-10)


# ---------------------------------------------------------------- ALiBi


def test_alibi_slopes_hand_values():
    np.testing.assert_array_equal(alibi_slopes(8), 0.5 ** np.arange(1, 9))
    np.testing.assert_array_equal(alibi_slopes(1), [1 / 256])
    # 6 heads: the 4-head schedule, then slopes 1 and 3 of the 8-head schedule
    expected = [2**-2, 2**-4, 2**-6, 2**-8, 2**-1, 2**-3]
    np.testing.assert_allclose(alibi_slopes(6), expected, rtol=1e-15)


@pytest.mark.parametrize("n", range(1, 65))
def test_alibi_slopes_match_press_get_slopes(n):
    np.testing.assert_allclose(alibi_slopes(n), press_get_slopes(n), rtol=1e-13, atol=0)


def test_alibi_bias_hand_values():
    b = alibi_bias(2, 3)
    m1, m2 = 2.0**-4, 2.0**-8
    expected = [
        [[0, 0, 0], [-m1, 0, 0], [-2 * m1, -m1, 0]],
        [[0, 0, 0], [-m2, 0, 0], [-2 * m2, -m2, 0]],
    ]
    np.testing.assert_array_equal(b, expected)
    assert b.shape == (2, 3, 3) and b.dtype == np.float64


def test_alibi_bias_matches_direct_formula():
    H, T = 12, 7
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    ref = -np.asarray(press_get_slopes(H))[:, None, None] * np.where(j <= i, i - j, 0)
    np.testing.assert_allclose(alibi_bias(H, T), ref, rtol=1e-13, atol=0)


# ---------------------------------------------------------------- T5


def test_relative_positions_hand_values():
    np.testing.assert_array_equal(relative_positions(3), [[0, 1, 2], [-1, 0, 1], [-2, -1, 0]])
    R = relative_positions(2, 4)
    np.testing.assert_array_equal(R, [[0, 1, 2, 3], [-1, 0, 1, 2]])
    assert R.dtype == np.int64


def test_t5_bucket_hand_values():
    r = np.array([-1000, -128, -127, -9, -8, -7, -1, 0, 1, 7, 8, 12, 16, 127, 128, 1000])
    # max_exact = 8; offsets >= 8 get 8 + floor(2 log2(n/8)), capped at 15; positives add 16
    np.testing.assert_array_equal(
        t5_bucket(r), [15, 15, 15, 8, 8, 7, 1, 0, 17, 23, 24, 25, 26, 31, 31, 31]
    )


def test_t5_bucket_unidirectional_hand_values():
    r = np.array([-1000, -128, -127, -40, -16, -15, -1, 0, 5, 100])
    # max_exact = 16; log bucket = 16 + floor(ln(n/16)/ln(8) * 16), capped at 31
    np.testing.assert_array_equal(
        t5_bucket(r, bidirectional=False), [31, 31, 31, 23, 16, 15, 1, 0, 0, 0]
    )


def test_t5_bucket_float32_edge_cases_without_torch():
    # With num_buckets=18 (max_exact 4) offset 8 lies exactly on a bucket edge. Float64
    # arithmetic gives ln(2)/ln(32)*5 = 0.99999... -> bucket 4; T5's float32 steps give 1.0 -> 5.
    r = np.array([-64, -16, -8, 8])
    np.testing.assert_array_equal(t5_bucket(r, num_buckets=18, max_distance=128), [8, 6, 5, 14])
    r = np.array([-18, 18])
    np.testing.assert_array_equal(t5_bucket(r, num_buckets=34, max_distance=27), [13, 30])


T5_CONFIGS = [
    (True, 32, 128),
    (False, 32, 128),
    (True, 18, 128),
    (True, 34, 27),
    (True, 38, 25),
    (True, 72, 50),
    (False, 16, 40),
    (True, 64, 1000),
    (False, 7, 9),
]


@pytest.mark.parametrize("bidirectional,num_buckets,max_distance", T5_CONFIGS)
def test_t5_bucket_identical_to_hf(bidirectional, num_buckets, max_distance):
    torch = pytest.importorskip("torch")
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    r = np.arange(-5000, 5001)
    kw = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    ref = t5.T5Attention._relative_position_bucket(torch.tensor(r), **kw).numpy()
    ours = t5_bucket(r, **kw)
    # Where the exact log-bucket value is a whole number, float32 rounding decides the
    # bucket, and torch's float32 log is not correctly rounded on every CPU (ln 1.5 comes
    # out one ulp high on some): there T5 itself differs between machines, by one bucket.
    half = num_buckets // 2 if bidirectional else num_buckets
    max_exact = half // 2
    n = np.abs(r) if bidirectional else -np.minimum(r, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = np.log(n / max_exact) / math.log(max_distance / max_exact) * (half - max_exact)
        edge = (n >= max_exact) & (np.abs(exact - np.round(exact)) < 1e-5)
    np.testing.assert_array_equal(ours[~edge], ref[~edge])
    assert np.abs(ours - ref).max() <= 1 and (ours != ref).sum() <= 4
    assert ours.dtype == np.int64


def test_t5_bucket_of_relative_positions_matches_hf_compute_bias_convention():
    torch = pytest.importorskip("torch")
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    q, k = torch.arange(40)[:, None], torch.arange(300)[None, :]
    ref = t5.T5Attention._relative_position_bucket(k - q).numpy()  # memory minus query
    np.testing.assert_array_equal(t5_bucket(relative_positions(40, 300)), ref)


# ---------------------------------------------------------------- context extension


def test_interpolate_table_hand_values():
    P = np.array([[0.0, 1.0], [10.0, 2.0], [20.0, 4.0]])
    out = interpolate_table(P, 5)  # sample points 0, 0.5, 1, 1.5, 2
    expected = [[0, 1], [5, 1.5], [10, 2], [15, 3], [20, 4]]
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(interpolate_table(P, 2), P[[0, 2]], rtol=0, atol=0)
    np.testing.assert_array_equal(interpolate_table(P, 3), P)


def test_interpolate_table_matches_np_interp_and_keeps_ends():
    P = np.random.default_rng(6).normal(size=(17, 5))
    out = interpolate_table(P, 50)
    s = np.linspace(0, 16, 50)
    ref = np.stack([np.interp(s, np.arange(17), P[:, c]) for c in range(5)], axis=1)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(out[[0, -1]], P[[0, -1]])


def test_interpolate_table_matches_torch_align_corners():
    torch = pytest.importorskip("torch")
    P = np.random.default_rng(7).normal(size=(10, 4))
    ref = torch.nn.functional.interpolate(
        torch.tensor(P.T[None]), size=23, mode="linear", align_corners=True
    )[0].T.numpy()
    np.testing.assert_allclose(interpolate_table(P, 23), ref, rtol=0, atol=1e-10)


def test_linear_scaled_frequencies_hand_and_hf(llama_config, hf_rope_init):
    expected = [0.25, 0.025, 0.0025, 0.00025]
    # rope_frequencies' power and division (see above), an exact / 4, the literals' rounding
    np.testing.assert_allclose(linear_scaled_frequencies(8, 4.0), expected, rtol=1e-14)
    init = hf_rope_init("linear")
    for d, factor, base in [(64, 2.0, 10000.0), (128, 8.0, 500000.0)]:
        cfg = llama_config(d, {"rope_type": "linear", "factor": factor, "rope_theta": base})
        inv_freq, _ = init(cfg, "cpu")
        ours = linear_scaled_frequencies(d, factor, base)
        np.testing.assert_allclose(ours, inv_freq.numpy(), **F32_TOL)


def test_ntk_scaled_base_hand_and_slowest_frequency():
    assert ntk_scaled_base(10000.0, 4.0, 4) == pytest.approx(160000.0, rel=1e-15)
    d, factor = 64, 8.0
    new = rope_frequencies(d, ntk_scaled_base(10000.0, factor, d))
    old = rope_frequencies(d)
    assert new[0] == 1.0
    assert new[-1] == pytest.approx(old[-1] / factor, rel=1e-12)


def test_ntk_scaled_base_matches_hf_dynamic_ntk(llama_config, hf_rope_init):
    init = hf_rope_init("dynamic")
    # HF's dynamic NTK uses the effective factor factor*seq_len/max_pos - (factor - 1);
    # with factor 4 and seq_len = 112 = 64 * 7/4 that effective factor is exactly 4.
    cfg = llama_config(64, {"rope_type": "dynamic", "factor": 4.0, "rope_theta": 10000.0}, 64)
    inv_freq, _ = init(cfg, "cpu", seq_len=112)
    ours = rope_frequencies(64, ntk_scaled_base(10000.0, 4.0, 64))
    np.testing.assert_allclose(ours, inv_freq.numpy(), **F32_TOL)


def test_yarn_frequencies_hand_values_and_limits():
    # d=8, L=64: ramp ends floor(-0.497) -> 0 and ceil(1.008) -> 2, ramp = [0, 0.5, 1, 1]
    expected = [1.0, 0.5 * 0.1 / 4 + 0.5 * 0.1, 0.01 / 4, 0.001 / 4]
    np.testing.assert_allclose(yarn_frequencies(8, 4.0, 64), expected, rtol=1e-14)
    d, factor = 128, 16.0
    y, theta = yarn_frequencies(d, factor, 4096), rope_frequencies(d)
    turns = 4096 * theta / (2 * np.pi)
    np.testing.assert_array_equal(y[turns > 32 * 1.5], theta[turns > 32 * 1.5])
    np.testing.assert_allclose(y[turns < 0.5], theta[turns < 0.5] / factor, rtol=1e-14)
    assert np.all(np.diff(y) < 0)


@pytest.mark.parametrize(
    "d,factor,L,base,beta_fast,beta_slow",
    [
        (64, 8.0, 2048, 10000.0, 32, 1),
        (128, 4.0, 4096, 10000.0, 32, 1),
        (128, 32.0, 4096, 500000.0, 32, 1),
        (96, 2.0, 512, 10000.0, 16, 2),
        (8, 4.0, 64, 10000.0, 32, 1),
        (64, 16.0, 8, 10000.0, 32, 1),  # tiny context: correction range clamped at 0
    ],
)
def test_yarn_frequencies_match_hf(
    d, factor, L, base, beta_fast, beta_slow, llama_config, hf_rope_init
):
    init = hf_rope_init("yarn")
    params = {
        "rope_type": "yarn",
        "factor": factor,
        "rope_theta": base,
        "original_max_position_embeddings": L,
        "beta_fast": beta_fast,
        "beta_slow": beta_slow,
    }
    inv_freq, attention_factor = init(llama_config(d, params, int(L * factor)), "cpu")
    # transformers computes the YaRN frequencies in float32; ours are float64.
    ours = yarn_frequencies(d, factor, L, base, beta_fast, beta_slow)
    np.testing.assert_allclose(ours, inv_freq.numpy(), **F32_TOL)
    assert yarn_attention_factor(factor) == pytest.approx(attention_factor, rel=1e-15)


def test_yarn_attention_factor_hand_values():
    assert yarn_attention_factor(1.0) == 1.0
    assert yarn_attention_factor(0.5) == 1.0
    assert yarn_attention_factor(math.e) == pytest.approx(1.1, rel=1e-15)
    assert yarn_attention_factor(16.0) == pytest.approx(1 + 0.4 * math.log(2), rel=1e-15)


# ---------------------------------------------------------------- properties

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
pos_floats = st.floats(0, 2000, allow_nan=False, allow_infinity=False)


@st.composite
def rope_inputs(draw):
    d = 2 * draw(st.integers(1, 16))
    T = draw(st.integers(1, 6))
    x = draw(hnp.arrays(np.float64, (T, d), elements=finite))
    pos = draw(hnp.arrays(np.float64, (T,), elements=pos_floats))
    return x, pos


@settings(max_examples=50, deadline=None)
@given(rope_inputs(), st.sampled_from(LAYOUTS))
def test_prop_rope_preserves_norms(xp, layout):
    x, pos = xp
    out = apply_rope(x, pos, layout=layout)
    norms_in, norms_out = np.linalg.norm(x, axis=-1), np.linalg.norm(out, axis=-1)
    np.testing.assert_allclose(norms_out, norms_in, rtol=1e-12, atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(
    st.integers(1, 16).flatmap(lambda h: hnp.arrays(np.float64, (2, 2 * h), elements=finite)),
    pos_floats,
    pos_floats,
    st.floats(-1000, 1000, allow_nan=False),
    st.sampled_from(LAYOUTS),
)
def test_prop_rope_scores_depend_only_on_offset(qk, p, s, t, layout):
    q, k = qk[:1], qk[1:]

    def score(a, b):
        return float(apply_rope(q, [a], layout=layout)[0] @ apply_rope(k, [b], layout=layout)[0])

    assert score(p, s) == pytest.approx(score(p + t, s + t), abs=1e-9 * (1 + np.abs(qk).sum() ** 2))


@settings(max_examples=50, deadline=None)
@given(rope_inputs(), st.floats(2.0, 1e6))
def test_prop_layouts_agree_under_permutation(xp, base):
    x, pos = xp
    rotated_half = apply_rope(interleaved_to_half(x), pos, base=base, layout="half")
    via_half = half_to_interleaved(rotated_half)
    np.testing.assert_allclose(apply_rope(x, pos, base=base), via_half, rtol=0, atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.booleans(), st.integers(4, 160), st.integers(1, 400))
def test_prop_t5_buckets_monotone_in_distance(bidirectional, num_buckets, extra):
    max_exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
    max_distance = max_exact + extra
    kw = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    dist = np.arange(0, 3 * max_distance)
    below, above = t5_bucket(-dist, **kw), t5_bucket(dist, **kw)
    assert np.all(np.diff(below) >= 0) and np.all(np.diff(above) >= 0)
    assert below.min() >= 0 and max(below.max(), above.max()) < num_buckets
    if bidirectional:
        assert np.all(above[1:] >= num_buckets // 2) and np.all(below < num_buckets // 2)
    else:
        assert np.all(above == 0)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 40), st.integers(2, 30))
def test_prop_alibi_bias_is_toeplitz(n_heads, seq_len):
    b = alibi_bias(n_heads, seq_len)
    np.testing.assert_array_equal(b[:, 1:, 1:], b[:, :-1, :-1])
    first_column = -np.arange(1, seq_len) * alibi_slopes(n_heads)[:, None]
    np.testing.assert_array_equal(b[:, 1:, 0], first_column)


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 60), st.integers(1, 12), st.integers(-20, 20))
def test_prop_sinusoidal_offset_is_a_rotation(n, half_d, delta):
    d = 2 * half_d
    pe = sinusoidal(n + abs(delta), d)
    omega = rope_frequencies(d)
    c, s = np.cos(omega * delta), np.sin(omega * delta)
    M = np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], -2)  # (d/2, 2, 2), no p in it
    eye = np.broadcast_to(np.eye(2), M.shape)
    np.testing.assert_allclose(M @ np.swapaxes(M, -1, -2), eye, atol=1e-14)
    p = np.arange(n) + max(0, -delta)
    pairs = pe[p].reshape(n, half_d, 2)  # (sin, cos) per pair
    moved = np.einsum("kij,pkj->pki", M, pairs)
    np.testing.assert_allclose(moved, pe[p + delta].reshape(n, half_d, 2), atol=1e-12)


# ---------------------------------------------------------------- bad input

X34 = np.ones((3, 4))
ODD_MSG = "x has odd last dimension 7; RoPE rotates coordinate pairs, so d must be even"
VE, TE = ValueError, TypeError
BAD_CALLS = [
    ("rope_odd_width", lambda: apply_rope(np.ones((3, 7))), VE, ODD_MSG),
    ("rope_1d_x", lambda: apply_rope(np.ones(4)), VE, "x"),
    ("rope_unknown_layout", lambda: apply_rope(X34, layout="neox"), VE, "layout"),
    ("rope_positions_length", lambda: apply_rope(X34, positions=[0, 1]), VE, "positions"),
    ("rope_positions_2d", lambda: apply_rope(X34, positions=np.zeros((1, 3))), VE, "positions"),
    ("rope_inv_freq_shape", lambda: apply_rope(X34, inv_freq=[1.0, 0.1, 0.01]), VE, "inv_freq"),
    ("rope_frequencies_odd", lambda: rope_frequencies(7), VE, "d_head"),
    ("rope_base_zero", lambda: rope_frequencies(8, base=0.0), VE, "base"),
    ("rope_matrix_odd", lambda: rope_matrix(1.0, 5), VE, "d_head"),
    ("perm_odd", lambda: interleaved_to_half(np.ones(5)), VE, "x"),
    ("sinusoidal_odd", lambda: sinusoidal(4, 7), VE, "d_model"),
    ("sinusoidal_zero_positions", lambda: sinusoidal(0, 8), VE, "n_positions"),
    ("alibi_zero_heads", lambda: alibi_slopes(0), VE, "n_heads"),
    ("alibi_float_heads", lambda: alibi_slopes(4.0), TE, "n_heads"),
    ("alibi_zero_seq", lambda: alibi_bias(4, 0), VE, "seq_len"),
    ("relpos_zero", lambda: relative_positions(0), VE, "n_queries"),
    ("t5_float_offsets", lambda: t5_bucket(np.array([1.0, 2.0])), TE, "relative_position"),
    ("t5_bool_offsets", lambda: t5_bucket(np.array([True])), TE, "relative_position"),
    ("t5_too_few_buckets", lambda: t5_bucket(np.arange(3), num_buckets=2), VE, "num_buckets"),
    ("t5_max_distance_small", lambda: t5_bucket(np.arange(3), max_distance=8), VE, "max_distance"),
    ("interp_new_length_1", lambda: interpolate_table(np.ones((4, 2)), 1), VE, "new_length"),
    ("interp_one_row", lambda: interpolate_table(np.ones((1, 2)), 4), VE, "P"),
    ("linear_factor_zero", lambda: linear_scaled_frequencies(8, 0.0), VE, "factor"),
    ("linear_factor_negative", lambda: linear_scaled_frequencies(8, -2.0), VE, "factor"),
    ("ntk_d_head_2", lambda: ntk_scaled_base(10000.0, 2.0, 2), VE, "d_head"),
    ("ntk_factor_zero", lambda: ntk_scaled_base(10000.0, 0.0, 64), VE, "factor"),
    ("yarn_factor_negative", lambda: yarn_frequencies(64, -4.0, 2048), VE, "factor"),
    ("yarn_zero_context", lambda: yarn_frequencies(64, 4.0, 0), VE, "original_max_positions"),
    ("yarn_betas_swapped", lambda: yarn_frequencies(64, 4.0, 2048, 1e4, 1, 32), VE, "beta_fast"),
    ("yarn_attention_zero", lambda: yarn_attention_factor(0.0), VE, "factor"),
]


@pytest.mark.parametrize(
    "call,exc,match", [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS]
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
