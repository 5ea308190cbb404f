"""Tests for llmmath.diagnostics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from llmmath.diagnostics import (
    dequantize,
    memory_bytes,
    norm_report,
    outlier_rows,
    quantize_int8,
    remap_rows,
    row_drift,
)


# ----------------------------------------------------------------- unit tests
def test_quantize_int8_hand_values():
    q, scale = quantize_int8([[0.5, -1.27, 0.01], [0.0, 0.0, 0.0], [2.54, 1.0, -0.015]])
    np.testing.assert_allclose(scale, [[0.01], [1.0], [0.02]], rtol=1e-15)
    # 1.0 / 0.02 = 50 and -0.015 / 0.02 = -0.75 -> -1
    np.testing.assert_array_equal(q, [[50, -127, 1], [0, 0, 0], [127, 50, -1]])
    assert q.dtype == np.int8 and scale.shape == (3, 1)


def test_quantize_rounds_half_to_even():
    # row absmax 127 gives scale 1, so entries are rounded directly
    q, _ = quantize_int8([[127.0, 2.5, -0.5, 3.5]])
    np.testing.assert_array_equal(q, [[127, 2, 0, 4]])


def test_dequantize_round_trip_values():
    E = np.array([[0.5, -1.27, 0.013]])
    q, scale = quantize_int8(E)
    np.testing.assert_allclose(dequantize(q, scale), [[0.5, -1.27, 0.01]], rtol=1e-14)
    q = np.array([[2, -3]], dtype=np.int8)
    np.testing.assert_array_equal(dequantize(q, 0.5), [[1.0, -1.5]])


def test_memory_bytes_table():
    n = 1001
    assert memory_bytes(n, "float64") == 8008
    assert memory_bytes(n, "float32") == 4004
    assert memory_bytes(n, "float16") == memory_bytes(n, "bfloat16") == 2002
    assert memory_bytes(n, "int8") == 1001
    assert memory_bytes(n, "int4") == 501  # ceil(1001 / 2)
    assert memory_bytes(0, "int4") == 0
    assert type(memory_bytes(np.int64(7), "float32")) is int


def test_norm_report_hand_values():
    rep = norm_report([[3.0, 4.0], [0.0, 1.0]])
    assert rep == pytest.approx(
        {
            "norm_mean": 3.0,
            "norm_std": 2.0,
            "norm_min": 1.0,
            "norm_max": 5.0,
            "mean_row_norm": np.sqrt(1.5**2 + 2.5**2),
            "anisotropy": 0.8,
        },
        abs=1e-14,
    )
    assert all(type(v) is float for v in rep.values())


def test_outlier_rows():
    E = np.ones((20, 2))
    E[7] = 10.0
    E[12] = 0.0
    out = outlier_rows(E)
    np.testing.assert_array_equal(out, [7])
    assert out.dtype == np.int64
    norms = np.linalg.norm(E, axis=1)
    zs = np.abs(norms - norms.mean()) / norms.std()
    np.testing.assert_array_equal(outlier_rows(E, z=0.5), np.flatnonzero(zs > 0.5))
    assert outlier_rows(np.ones((5, 3))).size == 0  # all norms equal: std 0


def test_remap_rows_copies_shared_tokens():
    E_old = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [4.0, 4.0]])
    old = ["the", "cat", "sat", "<unk>"]
    new = ["sat", "dog", "the", "mat", "cat"]
    out = remap_rows(E_old, old, new, init="zeros")
    np.testing.assert_array_equal(out, [[1, 1], [0, 0], [1, 0], [0, 0], [0, 1]])
    mean = E_old.mean(0)
    np.testing.assert_array_equal(remap_rows(E_old, old, new)[[1, 3]], [mean, mean])


def test_remap_rows_no_overlap_and_normal_init():
    E_old = np.array([[1.0, 0.0], [3.0, 2.0]])
    out = remap_rows(E_old, ["a", "b"], ["x", "b"], init="normal", rng=np.random.default_rng(0))
    np.testing.assert_array_equal(out[1], [3.0, 2.0])
    # population covariance of two rows is rank one along (1, 1): the draw lies on that line
    assert out[0, 0] - 2.0 == pytest.approx(out[0, 1] - 1.0, abs=1e-12)
    np.testing.assert_array_equal(remap_rows(E_old, ["a", "b"], ["c"]), [[2.0, 1.0]])


def test_row_drift_values():
    before = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    after = np.array([[5.0, 0.0], [0.0, 2.0], [-1.0, -1.0], [1.0, 0.0]])
    np.testing.assert_allclose(row_drift(before, after), [0.0, 1.0, 2.0, 1.0], atol=1e-15)


# ------------------------------------------------------------- property tests
@settings(max_examples=50, deadline=None)
@given(
    E=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, max_side=8),
        elements=st.floats(-1e6, 1e6, allow_subnormal=False),
    )
)
def test_int8_round_trip_error_at_most_half_scale(E):
    q, scale = quantize_int8(E)
    assert np.abs(q.astype(int)).max() <= 127
    err = np.abs(dequantize(q, scale) - E)
    # scale/2 exactly, plus a few ulps for computing E/scale and q*scale in floats
    assert np.all(err <= scale / 2 + 4 * np.finfo(float).eps * np.abs(E))


# ------------------------------------------------------------ bad-input tests
E3 = np.eye(3)
BAD_CALLS = [
    pytest.param(lambda: quantize_int8(np.ones(3)), ValueError, "E", id="quantize-1d-E"),
    pytest.param(lambda: quantize_int8(np.zeros((0, 3))), ValueError, "E", id="quantize-empty-E"),
    pytest.param(
        lambda: dequantize(np.ones((2, 3)), np.ones((2, 1))),
        TypeError,
        "q",
        id="dequantize-float-q",
    ),
    pytest.param(
        lambda: dequantize(np.ones((2, 3), dtype=np.int8), np.ones((3, 1))),
        ValueError,
        "scale",
        id="dequantize-scale-wrong-rows",
    ),
    pytest.param(lambda: memory_bytes(10, "fp8"), ValueError, "dtype", id="memory-unknown-dtype"),
    pytest.param(lambda: memory_bytes(-1, "int8"), ValueError, "n_params", id="memory-negative-n"),
    pytest.param(lambda: memory_bytes(2.5, "int8"), TypeError, "n_params", id="memory-float-n"),
    pytest.param(lambda: norm_report([[1.0, 2.0]]), ValueError, "E", id="norm_report-one-row"),
    pytest.param(lambda: outlier_rows(E3, z=0.0), ValueError, "z", id="outlier-zero-z"),
    pytest.param(
        lambda: remap_rows(E3, ["a", "b", "a"], ["a"]),
        ValueError,
        "old_vocab",
        id="remap-duplicate-old-token",
    ),
    pytest.param(
        lambda: remap_rows(E3, ["a", "b", "c"], ["x", "x"]),
        ValueError,
        "new_vocab",
        id="remap-duplicate-new-token",
    ),
    pytest.param(
        lambda: remap_rows(E3, ["a", "b"], ["a"]),
        ValueError,
        "old_vocab",
        id="remap-vocab-length-mismatch",
    ),
    pytest.param(
        lambda: remap_rows(E3, [1, 2, 3], ["a"]),
        ValueError,
        "old_vocab",
        id="remap-non-string-tokens",
    ),
    pytest.param(
        lambda: remap_rows(E3, ["a", "b", "c"], []),
        ValueError,
        "new_vocab",
        id="remap-empty-new-vocab",
    ),
    pytest.param(
        lambda: remap_rows(E3, ["a", "b", "c"], ["x"], init="normal"),
        ValueError,
        "rng",
        id="remap-normal-no-rng",
    ),
    pytest.param(
        lambda: remap_rows(E3, ["a", "b", "c"], ["x"], init="random"),
        ValueError,
        "init",
        id="remap-unknown-init",
    ),
    pytest.param(
        lambda: row_drift(E3, np.eye(4)),
        ValueError,
        "E_before and E_after",
        id="drift-shape-mismatch",
    ),
]


@pytest.mark.parametrize(("call", "exc", "name"), BAD_CALLS)
def test_bad_input(call, exc, name):
    with pytest.raises(exc, match=name):
        call()
