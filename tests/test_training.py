"""Tests for llmmath.training: losses, their gradients, SGNS and GloVe."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from llmmath.training import (
    cross_entropy,
    cross_entropy_grad,
    directional_derivative,
    glove_grads,
    glove_loss,
    glove_weight,
    hidden_grad,
    log_softmax,
    noise_distribution,
    output_row_grad,
    sgns_loss,
    sigmoid,
    softmax,
)

LN2, LN3 = np.log(2.0), np.log(3.0)
PROPS = settings(max_examples=50, deadline=None)


def floats(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def check_grad(f, x, g, v, *, tol=1e-6):
    """Analytic directional derivative g·v against the central difference."""
    fd = directional_derivative(f, x, v)
    assert np.sum(g * v) == pytest.approx(fd, rel=tol, abs=tol)


# ---------------------------------------------------------------- unit tests


def test_softmax_values_and_axis():
    np.testing.assert_allclose(softmax([0.0, LN2, LN3]), [1 / 6, 2 / 6, 3 / 6], rtol=1e-14)
    z = np.array([[0.0, 0.0], [LN3, 0.0]])
    np.testing.assert_allclose(softmax(z, axis=0), [[0.25, 0.5], [0.75, 0.5]], rtol=1e-14)
    assert softmax([1, 1]).dtype == np.float64


def test_log_softmax_values_and_extremes():
    np.testing.assert_allclose(log_softmax([0.0, 0.0]), [-LN2, -LN2], rtol=1e-14)
    out = log_softmax([[1e4, -1e4, 1e4]])
    np.testing.assert_allclose(out, [[-LN2, -2e4 - LN2, -LN2]], rtol=1e-14)


def test_sigmoid_values_without_overflow():
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        out = sigmoid([-LN3, 0.0, LN3, -800.0, 800.0])
    np.testing.assert_allclose(out, [0.25, 0.5, 0.75, 0.0, 1.0], rtol=1e-14, atol=1e-300)


def test_cross_entropy_by_hand():
    # p(target) = 3/4 and 1/2 -> mean NLL = (log(4/3) + log 2) / 2
    logits = [[0.0, LN3], [5.0, 5.0]]
    assert cross_entropy(logits, [1, 0]) == pytest.approx((np.log(4 / 3) + LN2) / 2, rel=1e-14)
    assert isinstance(cross_entropy(logits, [1, 0]), float)
    assert cross_entropy([0.0, LN3], 0) == pytest.approx(np.log(4.0), rel=1e-14)


def test_cross_entropy_matches_naive_formula_with_leading_dims():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(2, 3, 5))
    y = rng.integers(0, 5, size=(2, 3))
    p = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    naive = -np.mean(np.log(p[np.arange(2)[:, None], np.arange(3), y]))
    assert cross_entropy(z, y) == pytest.approx(naive, rel=1e-13)


def test_cross_entropy_grad_by_hand():
    np.testing.assert_allclose(cross_entropy_grad([0.0, LN3], 0), [-0.75, 0.75], rtol=1e-14)
    g = cross_entropy_grad([[0.0, LN3], [0.0, 0.0]], [0, 1])  # divided by N = 2
    np.testing.assert_allclose(g, [[-0.375, 0.375], [0.25, -0.25]], rtol=1e-14)


def test_output_row_grad_by_hand_and_batch_mean():
    h = np.array([1.0, 2.0])
    g = output_row_grad(h, np.zeros((3, 2)), 2)  # p uniform = 1/3
    np.testing.assert_allclose(g, [h / 3, h / 3, -2 * h / 3], rtol=1e-14)
    rng = np.random.default_rng(1)
    H, W, y = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), np.array([0, 4, 4, 2])
    singles = np.mean([output_row_grad(H[n], W, y[n]) for n in range(4)], axis=0)
    np.testing.assert_allclose(output_row_grad(H, W, y), singles, rtol=1e-12)


def test_hidden_grad_by_hand_and_batch_mean():
    # W = I: logits = h = (0, ln 3), p = (1/4, 3/4); target 1: p - e_y = (1/4, -1/4)
    np.testing.assert_allclose(hidden_grad([0.0, LN3], np.eye(2), 1), [0.25, -0.25], rtol=1e-14)
    rng = np.random.default_rng(2)
    H, W, y = rng.normal(size=(3, 4)), rng.normal(size=(6, 4)), np.array([5, 0, 3])
    singles = np.stack([hidden_grad(H[n], W, y[n]) for n in range(3)]) / 3
    np.testing.assert_allclose(hidden_grad(H, W, y), singles, rtol=1e-12)


def test_sgns_loss_by_hand():
    v_c, u_o, U = np.array([1.0, 2.0]), np.array([0.5, -1.0]), np.array([[1.0, 0.0], [0.0, -1.0]])
    s_o, s_k = -1.5, np.array([1.0, -2.0])
    sig = lambda x: 1.0 / (1.0 + np.exp(-x))  # noqa: E731 (moderate x: naive form is fine)
    loss, g_c, g_o, g_n = sgns_loss(v_c, u_o, U)
    assert loss == pytest.approx(-np.log(sig(s_o)) - np.log(sig(-s_k)).sum(), rel=1e-14)
    np.testing.assert_allclose(g_c, (sig(s_o) - 1) * u_o + sig(s_k) @ U, rtol=1e-14)
    np.testing.assert_allclose(g_o, (sig(s_o) - 1) * v_c, rtol=1e-14)
    np.testing.assert_allclose(g_n, np.outer(sig(s_k), v_c), rtol=1e-14)


def test_sgns_loss_is_finite_for_huge_scores():
    loss, g_c, _, _ = sgns_loss([100.0], [-100.0], [[100.0]])  # s_o = s_k = ±1e4
    assert loss == pytest.approx(2e4, rel=1e-14)
    np.testing.assert_allclose(g_c, [200.0], rtol=1e-14)  # (σ(-1e4) - 1)(-100) + σ(1e4)·100


def test_noise_distribution():
    np.testing.assert_allclose(noise_distribution([1, 8, 27], power=1 / 3), [1 / 6, 2 / 6, 3 / 6])
    c = np.array([16.0, 1.0, 0.0])
    np.testing.assert_allclose(noise_distribution(c), [8 / 9, 1 / 9, 0.0], rtol=1e-14)
    np.testing.assert_allclose(noise_distribution(c, power=0), [0.5, 0.5, 0.0])
    np.testing.assert_allclose(noise_distribution(c, power=1), c / 17)


def test_glove_weight():
    np.testing.assert_allclose(
        glove_weight([0.0, 50.0, 100.0, 1e6]), [0.0, 0.5**0.75, 1.0, 1.0], rtol=1e-14
    )
    assert glove_weight(5.0, x_max=10.0, alpha=1.0) == pytest.approx(0.5)


def _glove_reference(W, W_ctx, b, b_ctx, X):
    total = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if X[i, j] > 0:
                f = min(1.0, (X[i, j] / 100.0) ** 0.75)
                total += f * (W[i] @ W_ctx[j] + b[i] + b_ctx[j] - np.log(X[i, j])) ** 2
    return total


def _glove_problem(rng, V=4, d=3):
    X = rng.integers(0, 150, size=(V, V)).astype(float) * (rng.random((V, V)) < 0.6)
    return (
        rng.normal(size=(V, d)),
        rng.normal(size=(V, d)),
        rng.normal(size=V),
        rng.normal(size=V),
        X,
    )


def test_glove_loss_matches_double_loop_and_skips_zero_counts():
    rng = np.random.default_rng(3)
    args = _glove_problem(rng)
    assert (args[4] == 0).any()
    assert glove_loss(*args) == pytest.approx(_glove_reference(*args), rel=1e-13)


def test_glove_grads_descend():
    rng = np.random.default_rng(4)
    params, X = list(_glove_problem(rng)[:4]), _glove_problem(rng)[4]
    before = glove_loss(*params, X)
    for _ in range(5):
        params = [p - 1e-3 * g for p, g in zip(params, glove_grads(*params, X), strict=True)]
    assert glove_loss(*params, X) < before


def test_directional_derivative_exact_for_quadratic():
    A = np.array([[2.0, 1.0], [1.0, 3.0]])
    x, v = np.array([1.0, -1.0]), np.array([0.5, 2.0])
    got = directional_derivative(lambda z: float(z @ A @ z), x, v)
    assert got == pytest.approx(2 * (A @ x) @ v, rel=1e-8)


# ---------------------------------------------------------- property tests


@PROPS
@given(
    z=hnp.arrays(
        np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6), elements=floats(-50, 50)
    ),
    c=floats(-100, 100),
)
def test_softmax_sums_to_one_and_is_shift_invariant(z, c):
    p = softmax(z)
    np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(softmax(z + c), p, rtol=1e-9, atol=1e-15)


@PROPS
@given(
    z=hnp.arrays(
        np.float64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=6), elements=floats(-30, 30)
    ),
    big=hnp.arrays(np.float64, (2, 5), elements=st.sampled_from([-1e4, 0.0, 1e4])),
)
def test_log_softmax_is_log_of_softmax_and_finite_at_1e4(z, big):
    np.testing.assert_allclose(log_softmax(z), np.log(softmax(z)), rtol=1e-12, atol=1e-12)
    out = log_softmax(big)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(np.exp(out).sum(-1), 1.0, rtol=1e-12)


@st.composite
def classification(draw, max_n=4, max_v=6, max_d=4):
    n, V, d = draw(st.integers(1, max_n)), draw(st.integers(2, max_v)), draw(st.integers(1, max_d))
    arr = lambda shape: draw(hnp.arrays(np.float64, shape, elements=floats(-3, 3)))  # noqa: E731
    y = draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, V - 1)))
    return arr((n, d)), arr((V, d)), y, arr((n, d)), arr((V, d)), arr((n, V))


@PROPS
@given(data=classification())
def test_cross_entropy_grad_matches_finite_differences(data):
    H, W, y, _, _, dZ = data
    logits = H @ W.T
    check_grad(lambda z: cross_entropy(z, y), logits, cross_entropy_grad(logits, y), dZ)


@PROPS
@given(data=classification())
def test_output_row_and_hidden_grads_match_finite_differences(data):
    H, W, y, dH, dW, _ = data
    check_grad(lambda M: cross_entropy(H @ M.T, y), W, output_row_grad(H, W, y), dW)
    check_grad(lambda M: cross_entropy(M @ W.T, y), H, hidden_grad(H, W, y), dH)
    # single example: h (d,), y int
    check_grad(lambda M: cross_entropy(M @ H[0], y[0]), W, output_row_grad(H[0], W, y[0]), dW)
    check_grad(lambda h: cross_entropy(W @ h, y[0]), H[0], hidden_grad(H[0], W, y[0]), dH[0])


@PROPS
@given(st.data())
def test_sgns_gradients_match_finite_differences(data):
    d, K = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 4))

    def arr(shape):
        return data.draw(hnp.arrays(np.float64, shape, elements=floats(-2, 2)))

    v_c, u_o, U = arr((d,)), arr((d,)), arr((K, d))
    _, g_c, g_o, g_n = sgns_loss(v_c, u_o, U)
    check_grad(lambda x: sgns_loss(x, u_o, U)[0], v_c, g_c, arr((d,)))
    check_grad(lambda x: sgns_loss(v_c, x, U)[0], u_o, g_o, arr((d,)))
    check_grad(lambda x: sgns_loss(v_c, u_o, x)[0], U, g_n, arr((K, d)))


@PROPS
@given(seed=st.integers(0, 2**32 - 1), V=st.integers(1, 5), d=st.integers(1, 4))
def test_glove_grads_match_finite_differences(seed, V, d):
    rng = np.random.default_rng(seed)
    W, W_ctx, b, b_ctx, X = _glove_problem(rng, V, d)
    grads = glove_grads(W, W_ctx, b, b_ctx, X)
    params = [W, W_ctx, b, b_ctx]
    for i, (p, g) in enumerate(zip(params, grads, strict=True)):

        def f(x, i=i):
            return glove_loss(*params[:i], x, *params[i + 1 :], X)

        check_grad(f, p, g, rng.normal(size=p.shape), tol=1e-5)


# ------------------------------------------------------------ bad inputs

Z, Y = np.zeros((2, 3)), np.array([0, 1])
G = (np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(2), np.zeros(2), np.ones((2, 2)))

BAD = [
    ("target-out-of-range", lambda: cross_entropy(Z, [0, 3]), IndexError, "targets"),
    ("negative-target", lambda: cross_entropy(Z, [0, -1]), IndexError, "targets"),
    ("float-targets", lambda: cross_entropy_grad(Z, [0.0, 1.0]), TypeError, "targets"),
    ("leading-shape-mismatch", lambda: cross_entropy(Z, [0, 1, 2]), ValueError, "targets"),
    ("h-W-width-mismatch", lambda: output_row_grad(np.zeros(2), Z, 0), ValueError, "h and W"),
    ("batch-y-wrong-length", lambda: output_row_grad(np.zeros((3, 3)), Z, Y), ValueError, "y"),
    ("hidden-y-out-of-range", lambda: hidden_grad(np.zeros(3), Z, 2), IndexError, "y"),
    ("sgns-negatives-1d", lambda: sgns_loss([1.0], [1.0], [1.0]), ValueError, "negatives"),
    (
        "sgns-width-mismatch",
        lambda: sgns_loss([1.0], [1.0, 2.0], [[1.0]]),
        ValueError,
        "center and context",
    ),
    ("negative-counts", lambda: noise_distribution([3, -1]), ValueError, "counts"),
    ("all-zero-counts", lambda: noise_distribution([0, 0]), ValueError, "counts"),
    ("negative-power", lambda: noise_distribution([1, 2], power=-1), ValueError, "power"),
    ("negative-glove-x", lambda: glove_weight([1.0, -2.0]), ValueError, "x"),
    ("glove-x-max-zero", lambda: glove_weight(1.0, x_max=0), ValueError, "x_max"),
    ("glove-W-ctx-shape", lambda: glove_loss(G[0], np.zeros((3, 2)), *G[2:]), ValueError, "W_ctx"),
    ("glove-b-length", lambda: glove_loss(*G[:2], np.zeros(3), *G[3:]), ValueError, "b must"),
    ("glove-X-shape", lambda: glove_loss(*G[:4], np.ones((2, 3))), ValueError, "X must"),
    ("glove-X-negative", lambda: glove_grads(*G[:4], -np.ones((2, 2))), ValueError, "X must"),
    ("glove-b-ctx-length", lambda: glove_grads(*G[:3], np.zeros(1), G[4]), ValueError, "b_ctx"),
    (
        "dd-direction-shape",
        lambda: directional_derivative(np.sum, [1.0, 2.0], [1.0]),
        ValueError,
        "v must",
    ),
]


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# -------------------------------------------------- cross-check with torch


def test_matches_torch_float64():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(5)
    z, y = rng.normal(size=(3, 4, 7)) * 5, rng.integers(0, 7, size=(3, 4))
    zt = torch.tensor(z, requires_grad=True)
    loss = F.cross_entropy(zt.reshape(-1, 7), torch.tensor(y).reshape(-1))
    loss.backward()
    assert abs(cross_entropy(z, y) - loss.item()) < 1e-10
    np.testing.assert_allclose(cross_entropy_grad(z, y), zt.grad.numpy(), rtol=0, atol=1e-10)
    zt = torch.tensor(z)
    np.testing.assert_allclose(softmax(z, axis=1), F.softmax(zt, 1).numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(log_softmax(z), F.log_softmax(zt, -1).numpy(), rtol=0, atol=1e-10)

    # SGNS through autograd, with torch's own logsigmoid.
    v_c, u_o, U = (torch.tensor(rng.normal(size=s), requires_grad=True) for s in (4, 4, (3, 4)))
    ell = -F.logsigmoid(u_o @ v_c) - F.logsigmoid(-(U @ v_c)).sum()
    ell.backward()
    ours = sgns_loss(v_c.detach().numpy(), u_o.detach().numpy(), U.detach().numpy())
    assert abs(ours[0] - ell.item()) < 1e-10
    for got, t in zip(ours[1:], (v_c, u_o, U), strict=True):
        np.testing.assert_allclose(got, t.grad.numpy(), rtol=0, atol=1e-10)
