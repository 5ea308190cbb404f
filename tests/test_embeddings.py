"""Tests for llmmath.embeddings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from llmmath.embeddings import lookup, one_hot, param_count, resize, tied_logits

E3 = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])


# ----------------------------------------------------------------- unit tests
def test_lookup_picks_rows_and_keeps_id_shape():
    out = lookup(E3, np.array([[2, 0], [1, 1]]))
    np.testing.assert_array_equal(out, [[[4, 5], [0, 1]], [[2, 3], [2, 3]]])
    assert out.dtype == np.float64


def test_lookup_scalar_id_and_int_table_promoted():
    out = lookup([[1, 2], [3, 4]], 1)
    np.testing.assert_array_equal(out, [3.0, 4.0])
    assert out.dtype == np.float64 and out.shape == (2,)


def test_one_hot_values():
    np.testing.assert_array_equal(one_hot([2, 0], 3), [[0, 0, 1], [1, 0, 0]])
    assert one_hot(np.array([[1]]), 2).dtype == np.float64
    np.testing.assert_array_equal(one_hot(np.array([[1]]), 2), [[[0.0, 1.0]]])


def test_tied_logits_is_h_times_E_transpose():
    h = np.array([[1.0, 2.0], [-1.0, 0.5]])
    np.testing.assert_array_equal(tied_logits(h, E3), [[2, 8, 14], [0.5, -0.5, -1.5]])


def test_param_count_formula():
    assert param_count(50257, 768) == 38597376
    assert param_count(50257, 768, n_positions=1024) == 38597376 + 786432
    assert param_count(10, 4, tied=False, n_positions=3) == 10 * 4 * 2 + 12
    assert param_count(0, 4) == 0
    assert type(param_count(np.int64(3), 2)) is int


def test_resize_grow_mean_and_zeros():
    E = np.array([[1.0, 2.0], [3.0, 6.0]])
    np.testing.assert_array_equal(resize(E, 4), [[1, 2], [3, 6], [2, 4], [2, 4]])
    np.testing.assert_array_equal(resize(E, 3, init="zeros"), [[1, 2], [3, 6], [0, 0]])


def test_resize_shrink_and_same_size_copy():
    E = np.array([[1.0, 2.0], [3.0, 6.0], [5.0, 1.0]])
    np.testing.assert_array_equal(resize(E, 2), E[:2])
    same = resize(E, 3)
    np.testing.assert_array_equal(same, E)
    same[0, 0] = 99.0
    assert E[0, 0] == 1.0  # a copy, never a view


def test_resize_normal_matches_population_covariance():
    rng = np.random.default_rng(0)
    E = rng.normal(size=(50, 3)) @ np.array([[2.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.5]])
    out = resize(E, 50 + 20000, init="normal", rng=np.random.default_rng(1))
    np.testing.assert_array_equal(out[:50], E)
    new = out[50:]
    np.testing.assert_allclose(new.mean(0), E.mean(0), atol=0.05)
    np.testing.assert_allclose(np.cov(new.T), np.cov(E.T, ddof=0), atol=0.08)
    # the same rng seed gives the same rows: randomness only through rng
    again = resize(E, 50 + 20000, init="normal", rng=np.random.default_rng(1))
    np.testing.assert_array_equal(again, out)


def test_resize_normal_single_row_does_not_crash():
    out = resize([[1.0, -2.0]], 3, init="normal", rng=np.random.default_rng(0))
    np.testing.assert_allclose(out, [[1, -2], [1, -2], [1, -2]])


# ------------------------------------------------------------- property tests
@settings(max_examples=50, deadline=None)
@given(
    E=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=6),
        elements=st.floats(-100, 100),
    ),
    data=st.data(),
)
def test_one_hot_times_E_equals_lookup(E, data):
    V = E.shape[0]
    ids = data.draw(
        hnp.arrays(
            np.int64, hnp.array_shapes(max_dims=2, max_side=4), elements=st.integers(0, V - 1)
        )
    )
    # each output entry is one exact product 1*E[i, j] plus exact zeros
    np.testing.assert_array_equal(one_hot(ids, V) @ E, lookup(E, ids))


# ------------------------------------------------------------ bad-input tests
BAD_CALLS = [
    pytest.param(lambda: lookup(E3, [0, -1]), IndexError, "ids", id="lookup-negative-id"),
    pytest.param(lambda: lookup(E3, [3]), IndexError, "ids", id="lookup-id-equals-V"),
    pytest.param(lambda: lookup(E3, [1.0]), TypeError, "ids", id="lookup-float-ids"),
    pytest.param(lambda: lookup(E3, [True]), TypeError, "ids", id="lookup-bool-ids"),
    pytest.param(lambda: lookup([1.0, 2.0], [0]), ValueError, "E", id="lookup-1d-E"),
    pytest.param(lambda: lookup(np.zeros((0, 2)), [0]), ValueError, "E", id="lookup-empty-E"),
    pytest.param(lambda: one_hot([3], 3), IndexError, "ids", id="one_hot-id-out-of-range"),
    pytest.param(lambda: one_hot([0], 0), ValueError, "vocab_size", id="one_hot-zero-vocab"),
    pytest.param(
        lambda: tied_logits(np.ones(3), E3), ValueError, "h and E", id="tied-mismatched-d"
    ),
    pytest.param(lambda: param_count(-1, 4), ValueError, "vocab_size", id="param-negative-vocab"),
    pytest.param(lambda: param_count(10, 4.0), TypeError, "d_model", id="param-float-d"),
    pytest.param(
        lambda: param_count(10, 4, n_positions=-2),
        ValueError,
        "n_positions",
        id="param-negative-positions",
    ),
    pytest.param(
        lambda: resize(E3, 5, init="normal"), ValueError, "rng", id="resize-normal-no-rng"
    ),
    pytest.param(
        lambda: resize(E3, 2, init="normal"),
        ValueError,
        "rng",
        id="resize-normal-no-rng-even-when-shrinking",
    ),
    pytest.param(
        lambda: resize(E3, 5, init="normal", rng=0), TypeError, "rng", id="resize-rng-not-generator"
    ),
    pytest.param(
        lambda: resize(E3, 5, init="uniform"), ValueError, "init", id="resize-unknown-init"
    ),
    pytest.param(lambda: resize(E3, 0), ValueError, "new_vocab_size", id="resize-zero-size"),
]


@pytest.mark.parametrize(("call", "exc", "name"), BAD_CALLS)
def test_bad_input(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


# ---------------------------------------------------------- torch cross-check
def test_against_torch_embedding_and_one_hot():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    E = rng.normal(size=(7, 5))
    ids = rng.integers(0, 7, size=(3, 4))
    ref = torch.nn.functional.embedding(torch.from_numpy(ids), torch.from_numpy(E)).numpy()
    np.testing.assert_array_equal(lookup(E, ids), ref)
    ref_oh = torch.nn.functional.one_hot(torch.from_numpy(ids), 7).numpy()
    np.testing.assert_array_equal(one_hot(ids, 7), ref_oh)


def test_ragged_ids_name_the_argument():
    with pytest.raises(ValueError, match="lookup: ids must be a rectangular array"):
        lookup(np.zeros((5, 3)), [[1, 2], [3]])


def test_pad_ids_pads_right_and_masks_real_tokens():
    from llmmath.embeddings import pad_ids

    ids, mask = pad_ids([[5, 2, 7], [4], []], pad_id=9, length=4)
    np.testing.assert_array_equal(ids, [[5, 2, 7, 9], [4, 9, 9, 9], [9, 9, 9, 9]])
    np.testing.assert_array_equal(mask.sum(axis=1), [3, 1, 0])
    assert ids.dtype == np.int64 and mask.dtype == np.bool_


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        ([[]], {}, ValueError, "sequences is empty"),
        ([[[1.5]]], {}, TypeError, "sequences must hold integer ids"),
        ([[[1, 2, 3]]], {"length": 2}, ValueError, "length must be at least"),
        ([[[1]]], {"pad_id": 0.5}, TypeError, "pad_id must be an integer"),
    ],
    ids=["empty", "float-ids", "too-short-length", "float-pad"],
)
def test_pad_ids_bad_input(args, kwargs, error, match):
    from llmmath.embeddings import pad_ids

    with pytest.raises(error, match=match):
        pad_ids(*args, **kwargs)
