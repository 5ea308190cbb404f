"""Tests for llmmath.similarity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from llmmath.similarity import (
    cosine,
    dot,
    euclidean,
    mean_pool,
    normalize,
    recall_at_k,
    similarity_matrix,
    top_k,
)

SQ2 = np.sqrt(0.5)


# ----------------------------------------------------------------- unit tests
def test_dot_broadcasts_over_leading_dims():
    u = np.array([1.0, 2.0, 3.0])
    V = np.array([[[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]]])
    np.testing.assert_array_equal(dot(u, V), [[1.0, 6.0]])


def test_cosine_values_and_zero_vector():
    out = cosine([1.0, 0.0], [[2.0, 0.0], [1.0, 1.0], [-3.0, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(out, [1.0, SQ2, -1.0, 0.0], rtol=0, atol=1e-15)
    assert cosine([0.0, 0.0], [0.0, 0.0]) == 0.0


def test_cosine_eps_floor():
    # |u||v| = 1e-8 < eps = 1e-6: divide by eps instead
    assert cosine([1e-4, 0.0], [1e-4, 0.0], eps=1e-6) == pytest.approx(1e-2, rel=1e-12)


def test_euclidean_values():
    np.testing.assert_array_equal(euclidean([0.0, 0.0], [[3.0, 4.0], [-1.0, 0.0]]), [5.0, 1.0])


def test_normalize_unit_rows_and_zero_rows():
    out = normalize([[3.0, 4.0], [0.0, 0.0], [0.0, -2.0]])
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0], [0.0, -1.0]], atol=1e-15)


def test_similarity_matrix_three_metrics():
    A = np.array([[1.0, 0.0], [1.0, 1.0]])
    B = np.array([[2.0, 0.0], [0.0, 3.0], [0.0, 0.0]])
    np.testing.assert_array_equal(similarity_matrix(A, B, "dot"), [[2, 0, 0], [2, 3, 0]])
    np.testing.assert_allclose(similarity_matrix(A, B), [[1, 0, 0], [SQ2, SQ2, 0]], atol=1e-15)
    np.testing.assert_allclose(
        similarity_matrix(A, B, "euclidean"),
        [[1, np.sqrt(10), 1], [np.sqrt(2), np.sqrt(5), np.sqrt(2)]],
        atol=1e-15,
    )


def test_top_k_orders_and_breaks_ties_by_lower_index():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [1.0, 1.0], [3.0, 0.0]])
    idx, scores = top_k([1.0, 0.0], X, 4)
    np.testing.assert_array_equal(idx, [0, 2, 4, 3])  # three exact ties at cosine 1
    np.testing.assert_allclose(scores, [1, 1, 1, SQ2])
    assert idx.dtype == np.int64 and scores.dtype == np.float64


def test_top_k_tie_straddling_partition_boundary():
    # k = 3 cuts through a block of seven equal scores: the lowest ids must win,
    # although np.argpartition alone returns ids 0 and 2 here
    X = np.array([[1.0], [1.0], [1.0], [1.0], [5.0], [1.0], [1.0], [1.0]])
    idx, scores = top_k([1.0], X, 3, metric="dot")
    np.testing.assert_array_equal(idx, [4, 0, 1])
    np.testing.assert_array_equal(scores, [5, 1, 1])


def test_top_k_euclidean_is_smallest_first_and_exclude():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.5], [5.0, 5.0]])
    idx, scores = top_k([0.0, 0.0], X, 2, metric="euclidean", exclude=[0])
    np.testing.assert_array_equal(idx, [2, 1])
    np.testing.assert_array_equal(scores, [0.5, 1.0])
    idx, _ = top_k([0.0, 0.0], X, 1, metric="euclidean", exclude=np.array([0, 2, 2]))
    np.testing.assert_array_equal(idx, [1])
    idx, _ = top_k([0.0, 0.0], X, 2, metric="euclidean", exclude={0, 2})
    np.testing.assert_array_equal(idx, [1, 3])


def test_top_k_uses_all_eligible_rows():
    X = np.array([[1.0], [3.0], [2.0]])
    idx, _ = top_k([1.0], X, 2, metric="dot", exclude=[1])
    np.testing.assert_array_equal(idx, [2, 0])


def test_mean_pool_with_and_without_mask():
    H = np.array([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]], [[0.0, 0.0], [6.0, 6.0], [9.0, 3.0]]])
    mask = np.array([[True, True, False], [True, True, True]])
    np.testing.assert_array_equal(mean_pool(H, mask), [[2.0, 3.0], [5.0, 3.0]])
    np.testing.assert_array_equal(mean_pool(H, mask.astype(int)), [[2.0, 3.0], [5.0, 3.0]])
    np.testing.assert_allclose(mean_pool(H[0]), [104 / 3, 106 / 3])


def test_recall_at_k_sets_and_single_ids():
    ranked = np.array([[3, 1, 2], [0, 2, 1]])
    assert recall_at_k(ranked, np.array([1, 1]), k=2) == 0.5
    assert recall_at_k(ranked, [1, 1], k=3) == 1.0
    # query 0: {1, 7} -> 1 of 2 in top 2; query 1: {0, 1, 2} -> 2 of 3 in top 2
    assert recall_at_k(ranked, [{1, 7}, {0, 1, 2}], k=2) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert recall_at_k(ranked, [[9], [8]], k=3) == 0.0


def test_recall_at_k_counts_a_repeated_retrieved_id_once():
    assert recall_at_k([[4, 4, 5]], [{4, 5}], k=2) == 0.5


# ------------------------------------------------------------- property tests
def _vec(d):
    return hnp.arrays(np.float64, d, elements=st.floats(-10, 10))


@settings(max_examples=50, deadline=None)
@given(
    d=st.integers(1, 6).flatmap(lambda d: st.tuples(_vec(d), _vec(d))),
    a=st.floats(1e-3, 1e3),
    b=st.floats(1e-3, 1e3),
)
def test_cosine_bounded_and_scale_invariant(d, a, b):
    u, v = d
    c = cosine(u, v)
    assert -1.0 <= c <= 1.0
    assume(np.linalg.norm(u) > 1e-3 and np.linalg.norm(v) > 1e-3)
    assert cosine(a * u, v) == pytest.approx(c, abs=1e-12)
    assert cosine(u, b * v) == pytest.approx(c, abs=1e-12)


@settings(max_examples=50, deadline=None)
@given(d=st.integers(1, 6).flatmap(lambda d: st.tuples(_vec(d), _vec(d))))
def test_unit_vectors_distance_squared_is_two_minus_two_cos(d):
    u, v = d
    assume(np.linalg.norm(u) > 1e-3 and np.linalg.norm(v) > 1e-3)
    u, v = normalize(u), normalize(v)
    assert euclidean(u, v) ** 2 == pytest.approx(2 - 2 * cosine(u, v), abs=1e-12)


@settings(max_examples=50, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 12),
    d=st.integers(1, 3),
    metric=st.sampled_from(["cosine", "dot", "euclidean"]),
)
def test_top_k_matches_full_stable_argsort(data, n, d, metric):
    # small integer entries make exact ties (and ties across the partition) common
    X = data.draw(hnp.arrays(np.float64, (n, d), elements=st.integers(-2, 2).map(float)))
    q = data.draw(hnp.arrays(np.float64, d, elements=st.integers(-2, 2).map(float)))
    exclude = data.draw(st.lists(st.integers(0, n - 1), max_size=n - 1))
    eligible = np.setdiff1d(np.arange(n), exclude)
    k = data.draw(st.integers(1, eligible.size))
    scores = {"cosine": cosine, "dot": dot, "euclidean": euclidean}[metric](X, q)
    key = scores if metric == "euclidean" else -scores
    order = eligible[np.argsort(key[eligible], kind="stable")][:k]
    idx, got = top_k(q, X, k, metric=metric, exclude=exclude)
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(got, scores[order])
    assert not np.isin(idx, exclude).any()


# ------------------------------------------------------------ bad-input tests
X3 = np.eye(3)
BAD_CALLS = [
    pytest.param(lambda: dot(np.ones(2), np.ones(3)), ValueError, "u and v", id="dot-mismatched-d"),
    pytest.param(lambda: cosine([], []), ValueError, "u", id="cosine-empty"),
    pytest.param(lambda: cosine([1.0], [1.0], eps=0.0), ValueError, "eps", id="cosine-zero-eps"),
    pytest.param(lambda: euclidean(["a"], ["b"]), TypeError, "u", id="euclidean-strings"),
    pytest.param(
        lambda: similarity_matrix(X3, X3, "manhattan"),
        ValueError,
        "metric",
        id="matrix-unknown-metric",
    ),
    pytest.param(lambda: similarity_matrix(np.ones(3), X3), ValueError, "A", id="matrix-1d-A"),
    pytest.param(lambda: top_k(np.ones(3), X3, 4), ValueError, "k", id="top_k-k-larger-than-table"),
    pytest.param(
        lambda: top_k(np.ones(3), X3, 3, exclude=[1]),
        ValueError,
        "k",
        id="top_k-k-larger-than-eligible",
    ),
    pytest.param(lambda: top_k(np.ones(3), X3, 0), ValueError, "k", id="top_k-k-zero"),
    pytest.param(lambda: top_k(np.ones(3), X3, 1.5), TypeError, "k", id="top_k-float-k"),
    pytest.param(
        lambda: top_k(np.ones(3), X3, 1, metric="l2"),
        ValueError,
        "metric",
        id="top_k-unknown-metric",
    ),
    pytest.param(
        lambda: top_k(np.ones(3), X3, 1, exclude=[3]),
        IndexError,
        "exclude",
        id="top_k-exclude-id-equals-n",
    ),
    pytest.param(
        lambda: top_k(np.ones(3), X3, 1, exclude=[-1]),
        IndexError,
        "exclude",
        id="top_k-exclude-negative",
    ),
    pytest.param(
        lambda: top_k(np.ones(3), X3, 1, exclude=[0.0]),
        TypeError,
        "exclude",
        id="top_k-exclude-float",
    ),
    pytest.param(lambda: top_k(np.ones((1, 3)), X3, 1), ValueError, "query", id="top_k-2d-query"),
    pytest.param(
        lambda: top_k(np.ones(2), X3, 1), ValueError, "query and X", id="top_k-mismatched-d"
    ),
    pytest.param(
        lambda: top_k(np.ones(3), np.zeros((0, 3)), 1), ValueError, "X", id="top_k-empty-X"
    ),
    pytest.param(
        lambda: mean_pool(np.ones((2, 3)), [1, 0, 1]),
        ValueError,
        "mask",
        id="mean_pool-mask-wrong-shape",
    ),
    pytest.param(
        lambda: mean_pool(np.ones((2, 3)), [0, 0]), ValueError, "mask", id="mean_pool-all-masked"
    ),
    pytest.param(
        lambda: mean_pool(np.ones((2, 3)), [2, 1]), ValueError, "mask", id="mean_pool-mask-not-0-1"
    ),
    pytest.param(lambda: mean_pool(np.ones(3)), ValueError, "H", id="mean_pool-1d-H"),
    pytest.param(
        lambda: recall_at_k([[1.0, 2.0]], [1], 1), TypeError, "ranked", id="recall-float-ranked"
    ),
    pytest.param(lambda: recall_at_k([[1, 2]], [1], 3), ValueError, "k", id="recall-k-too-large"),
    pytest.param(
        lambda: recall_at_k([[1, 2]], [1, 2], 1), ValueError, "relevant", id="recall-wrong-count"
    ),
    pytest.param(
        lambda: recall_at_k([[1, 2]], [set()], 1), ValueError, "relevant", id="recall-empty-set"
    ),
    pytest.param(
        lambda: recall_at_k([[1, 2]], [{"a"}], 1), TypeError, "relevant", id="recall-string-ids"
    ),
]


@pytest.mark.parametrize(("call", "exc", "name"), BAD_CALLS)
def test_bad_input(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


# ---------------------------------------------------------- torch cross-check
def test_against_torch_cosine_normalize_cdist_topk():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(6, 5)), rng.normal(size=(4, 5))
    A[2] = 0.0  # torch also gives 0 for a zero vector
    tA, tB = torch.from_numpy(A), torch.from_numpy(B)
    ref = F.cosine_similarity(tA[:, None, :], tB[None, :, :], dim=-1).numpy()
    np.testing.assert_allclose(similarity_matrix(A, B), ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(cosine(A[:, None, :], B[None]), ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(normalize(A), F.normalize(tA, dim=-1).numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(
        similarity_matrix(A, B, "euclidean"), torch.cdist(tA, tB).numpy(), rtol=0, atol=1e-10
    )
    # continuous random scores have no ties, so torch.topk's order is unambiguous
    q = rng.normal(size=5)
    idx, scores = top_k(q, A, 3, metric="dot")
    ref_scores, ref_idx = torch.topk(tA @ torch.from_numpy(q), 3)
    np.testing.assert_array_equal(idx, ref_idx.numpy())
    np.testing.assert_allclose(scores, ref_scores.numpy(), rtol=0, atol=1e-10)


def test_mean_pool_matches_sentence_transformers_formula():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    H, mask = rng.normal(size=(3, 5, 4)), rng.integers(0, 2, size=(3, 5))
    mask[:, 0] = 1
    tH, tm = torch.from_numpy(H), torch.from_numpy(mask)[..., None].to(torch.float64)
    # sentence_transformers.models.Pooling, pooling_mode_mean_tokens
    ref = (tH * tm).sum(1) / torch.clamp(tm.sum(1), min=1e-9)
    np.testing.assert_allclose(mean_pool(H, mask), ref.numpy(), rtol=0, atol=1e-10)
