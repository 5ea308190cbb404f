"""Tests for llmmath.geometry."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from llmmath.geometry import (
    all_but_the_top,
    analogy,
    anisotropy,
    center,
    fit_probe,
    pca,
    probe_accuracy,
    project_out,
    whiten,
)

RNG = np.random.default_rng(0)
X_RAND = RNG.normal(size=(40, 5)) @ RNG.normal(size=(5, 5)) + 3.0


# ----------------------------------------------------------------- unit tests
def test_center_subtracts_column_mean():
    np.testing.assert_array_equal(center([[1, 10], [3, 20], [5, 0]]), [[-2, 0], [0, 10], [2, -10]])


def test_anisotropy_hand_values():
    # pairs: (0,1) cos 1, (0,2) cos 0, (1,2) cos 0 -> mean 1/3
    assert anisotropy([[1.0, 0.0], [2.0, 0.0], [0.0, 5.0]]) == pytest.approx(1 / 3, abs=1e-15)
    assert anisotropy([[1.0, 0.0], [-1.0, 0.0]]) == pytest.approx(-1.0, abs=1e-15)
    assert anisotropy([[1.0, 0.0], [0.0, 0.0]]) == 0.0  # zero row: cosine 0


def test_anisotropy_equals_mean_of_off_diagonal_cosines():
    U = X_RAND / np.linalg.norm(X_RAND, axis=1, keepdims=True)
    G = U @ U.T
    n = len(G)
    expected = (G.sum() - np.trace(G)) / (n * (n - 1))
    assert anisotropy(X_RAND) == pytest.approx(expected, abs=1e-12)
    assert isinstance(anisotropy(X_RAND), float)


def test_pca_against_covariance_eigendecomposition():
    coords, ratio = pca(X_RAND, 3)
    Xc = X_RAND - X_RAND.mean(0)
    evals, evecs = np.linalg.eigh(np.cov(Xc.T))
    evals, evecs = evals[::-1], evecs[:, ::-1]
    np.testing.assert_allclose(ratio, evals[:3] / evals.sum(), rtol=1e-10)
    # same coordinates up to each component's sign, which pca fixes by svd_flip
    ref = Xc @ evecs[:, :3]
    ref *= np.sign(evecs[np.argmax(np.abs(evecs[:, :3]), axis=0), np.arange(3)])
    np.testing.assert_allclose(coords, ref, atol=1e-10)


def test_pca_sign_convention_and_ratio_over_all_components():
    X = np.array([[0.0, 0.0], [2.0, 0.0], [4.0, 1.0], [6.0, 1.0]])
    coords, ratio = pca(X, 1)
    # the largest loading of the first component is on x and must be positive,
    # so the point with the largest x has the largest coordinate
    assert np.argmax(coords[:, 0]) == 3
    _, ratio2 = pca(X, 2)
    assert ratio[0] == ratio2[0] and ratio2.sum() == pytest.approx(1.0)
    coords_flipped, _ = pca(-X, 1)  # same cloud reflected: sign rule still holds
    assert np.argmax(coords_flipped[:, 0]) == 0


def test_whiten_su_et_al_reference_formula():
    Z, mu, W = whiten(X_RAND, k=3)
    # bojone/BERT-whitening compute_kernel_bias + transform_and_normalize (before normalize)
    ref_mu = X_RAND.mean(axis=0, keepdims=True)
    u, s, _ = np.linalg.svd(np.cov(X_RAND.T))
    ref_W = np.dot(u, np.diag(1 / np.sqrt(s)))[:, :3]
    np.testing.assert_allclose(mu, ref_mu[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(W, ref_W, rtol=1e-12)
    np.testing.assert_allclose(Z, (X_RAND - ref_mu) @ ref_W, rtol=0, atol=1e-10)
    assert Z.shape == (40, 3) and W.shape == (5, 3)
    np.testing.assert_allclose(np.cov(Z.T), np.eye(3), atol=1e-10)


def test_whiten_rank_deficient_suggests_smaller_k():
    X = np.c_[X_RAND[:, :2], X_RAND[:, 0] + X_RAND[:, 1]]  # rank 2
    with pytest.raises(ValueError, match=r"k <= 2"):
        whiten(X)
    Z, _, _ = whiten(X, k=2)
    np.testing.assert_allclose(np.cov(Z.T), np.eye(2), atol=1e-9)


def test_all_but_the_top_removes_principal_directions():
    out = all_but_the_top(X_RAND, 2)
    Xc = X_RAND - X_RAND.mean(0)
    evals, evecs = np.linalg.eigh(Xc.T @ Xc)
    top = evecs[:, ::-1][:, :2]
    np.testing.assert_allclose(out, Xc - Xc @ top @ top.T, atol=1e-10)
    np.testing.assert_allclose(all_but_the_top(X_RAND, 0), Xc, atol=1e-12)


def test_analogy_vector_offset():
    E = np.array([[1.0, 0.0], [1.0, 1.0], [3.0, 0.0], [3.0, 1.0], [0.0, 1.0]])
    np.testing.assert_array_equal(analogy(E, 0, 1, 2), [3])
    # query E[1]-E[0]+E[2] = [3, 1] is row 3 itself; then rows 0 and 2 tie at
    # 3/sqrt(10) (lower id first), row 1 gives 0.894 and row 4 0.316
    np.testing.assert_array_equal(analogy(E, 0, 1, 2, k=2), [3, 4])
    np.testing.assert_array_equal(analogy(E, 0, 1, 2, k=4, exclude=False), [3, 0, 2, 1])


def test_project_out_hand_values():
    out = project_out([[3.0, 4.0], [1.0, -2.0]], [0.0, 5.0])
    np.testing.assert_array_equal(out, [[3.0, 0.0], [1.0, 0.0]])
    out = project_out([[[2.0, 0.0]]], [1.0, 1.0])  # leading dims kept
    np.testing.assert_allclose(out, [[[1.0, -1.0]]], atol=1e-15)


def test_fit_probe_one_step_by_hand():
    X = np.array([[1.0, 2.0], [-1.0, 0.0], [0.0, 1.0]])
    y = np.array([1, 0, 0])
    w, b = fit_probe(X, y, steps=1, lr=0.5)
    # from w = 0, b = 0 every p = 1/2: grad_w = X.T (1/2 - y) / n, grad_b = mean(1/2 - y)
    np.testing.assert_allclose(w, -0.5 * X.T @ (0.5 - y) / 3, atol=1e-15)
    assert b == pytest.approx(-0.5 * np.mean(0.5 - y), abs=1e-15)


def test_fit_probe_l2_solution_is_stationary_and_separates():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    y = (X @ np.array([2.0, -1.0, 0.5]) + 0.3 * rng.normal(size=60) > 0).astype(int)
    w, b = fit_probe(X, y, steps=3000, lr=1.0, l2=0.1)
    p = 1 / (1 + np.exp(-(X @ w + b)))
    np.testing.assert_allclose(X.T @ (p - y) / 60 + 0.1 * w, 0, atol=1e-10)
    assert np.mean(p - y) == pytest.approx(0, abs=1e-10)
    assert probe_accuracy(X, y, w, b) >= 0.9


def test_probe_accuracy_threshold_at_zero_predicts_zero():
    assert probe_accuracy([[1.0], [-1.0], [0.0]], [1, 0, 0], [1.0], 0.0) == 1.0
    assert probe_accuracy([[1.0], [-1.0]], [True, True], [1.0], 0.0) == 0.5


# ------------------------------------------------------------- property tests
@settings(max_examples=50, deadline=None)
@given(data=st.data(), d=st.integers(1, 4), n_extra=st.integers(0, 8))
def test_whitened_covariance_is_identity(data, d, n_extra):
    M = data.draw(hnp.arrays(np.float64, (n_extra, d), elements=st.floats(-5, 5)))
    # rows +-2 e_i bound the covariance away from singular whatever M is
    X = np.vstack([M, 2 * np.eye(d), -2 * np.eye(d)]) + 1.5
    Z, mu, W = whiten(X)
    np.testing.assert_allclose(np.cov(Z.T).reshape(d, d), np.eye(d), atol=1e-9)
    np.testing.assert_allclose(Z.mean(0), 0, atol=1e-9)
    np.testing.assert_allclose(mu, X.mean(0), atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(data=st.data(), d=st.integers(1, 5))
def test_project_out_orthogonal_and_idempotent(data, d):
    X = data.draw(hnp.arrays(np.float64, (4, d), elements=st.floats(-100, 100)))
    u = data.draw(
        hnp.arrays(np.float64, d, elements=st.floats(-10, 10)).filter(
            lambda v: np.linalg.norm(v) > 1e-3
        )
    )
    P = project_out(X, u)
    scale = 1 + np.abs(X).max()
    np.testing.assert_allclose(P @ (u / np.linalg.norm(u)), 0, atol=1e-12 * scale)
    np.testing.assert_allclose(project_out(P, u), P, atol=1e-12 * scale)


# ------------------------------------------------------------ bad-input tests
E = np.eye(4)
BAD_CALLS = [
    pytest.param(lambda: center(np.zeros((0, 3))), ValueError, "X", id="center-empty-X"),
    pytest.param(lambda: anisotropy([[1.0, 2.0]]), ValueError, "X", id="anisotropy-one-row"),
    pytest.param(lambda: pca(X_RAND, 0), ValueError, "k", id="pca-k-zero"),
    pytest.param(lambda: pca(X_RAND, 6), ValueError, "k", id="pca-k-above-d"),
    pytest.param(lambda: pca(np.ones((3, 2)), 1), ValueError, "X", id="pca-zero-variance"),
    pytest.param(lambda: whiten(X_RAND, k=6), ValueError, "k", id="whiten-k-above-d"),
    pytest.param(lambda: whiten(np.ones((5, 2))), ValueError, "X", id="whiten-zero-variance"),
    pytest.param(
        lambda: whiten(np.c_[X_RAND[:, 0], 2 * X_RAND[:, 0]]), ValueError, "k", id="whiten-singular"
    ),
    pytest.param(lambda: whiten([[1.0, 2.0]]), ValueError, "X", id="whiten-one-row"),
    pytest.param(
        lambda: all_but_the_top(X_RAND, -1),
        ValueError,
        "n_components",
        id="abtt-negative-components",
    ),
    pytest.param(lambda: analogy(E, 0, 1, 4), IndexError, "a, b, c", id="analogy-id-equals-V"),
    pytest.param(lambda: analogy(E, 0, 1.0, 2), TypeError, "a, b, c", id="analogy-float-id"),
    pytest.param(
        lambda: analogy(E, 0, 1, 2, k=2), ValueError, "analogy: k", id="analogy-k-above-eligible"
    ),
    pytest.param(
        lambda: project_out(X_RAND, np.zeros(5)),
        ValueError,
        "direction",
        id="project_out-zero-direction",
    ),
    pytest.param(
        lambda: project_out(X_RAND, np.ones(4)),
        ValueError,
        "X and direction",
        id="project_out-mismatched-d",
    ),
    pytest.param(
        lambda: project_out(X_RAND, np.eye(5)),
        ValueError,
        "direction",
        id="project_out-2d-direction",
    ),
    pytest.param(
        lambda: fit_probe(X_RAND, np.full(40, 2)), ValueError, "y", id="probe-labels-not-0-1"
    ),
    pytest.param(lambda: fit_probe(X_RAND, np.zeros(39)), ValueError, "y", id="probe-wrong-length"),
    pytest.param(
        lambda: fit_probe(X_RAND, np.zeros(40), lr=0.0), ValueError, "lr", id="probe-zero-lr"
    ),
    pytest.param(
        lambda: fit_probe(X_RAND, np.zeros(40), l2=-1.0), ValueError, "l2", id="probe-negative-l2"
    ),
    pytest.param(
        lambda: probe_accuracy(X_RAND, np.zeros(40), np.ones(4), 0.0),
        ValueError,
        "w",
        id="accuracy-w-wrong-width",
    ),
]


@pytest.mark.parametrize(("call", "exc", "name"), BAD_CALLS)
def test_bad_input(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


# ---------------------------------------------------------- torch cross-check
def test_fit_probe_matches_torch_autograd_descent():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(30, 4)), rng.integers(0, 2, size=30)
    w, b = fit_probe(X, y, steps=50, lr=0.3, l2=0.05)
    tX, ty = torch.from_numpy(X), torch.from_numpy(y).to(torch.float64)
    tw = torch.zeros(4, dtype=torch.float64, requires_grad=True)
    tb = torch.zeros((), dtype=torch.float64, requires_grad=True)
    for _ in range(50):
        loss = torch.nn.functional.binary_cross_entropy_with_logits(tX @ tw + tb, ty)
        loss = loss + 0.05 / 2 * (tw @ tw)
        gw, gb = torch.autograd.grad(loss, (tw, tb))
        with torch.no_grad():
            tw -= 0.3 * gw
            tb -= 0.3 * gb
    np.testing.assert_allclose(w, tw.detach().numpy(), rtol=0, atol=1e-10)
    assert b == pytest.approx(tb.item(), abs=1e-10)
