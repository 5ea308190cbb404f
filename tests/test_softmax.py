"""Tests for llmmath.softmax: logsumexp and softmax_jacobian (softmax, log_softmax and
sigmoid, which moved here from llmmath.training, keep their tests in test_training.py).

Cross-checks against torch.logsumexp and torch.func.jacrev skip without torch."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import llmmath as lm

family = importlib.import_module("llmmath.softmax")  # lm.softmax is the function
logsumexp, softmax_jacobian = family.logsumexp, family.softmax_jacobian
PROPS = settings(max_examples=50, deadline=None)


def test_logsumexp_values_extremes_and_masked_rows():
    # exp and log on each side, numpy's SIMD loops each within a few ulp (budget 4 ulp, up
    # to 8 u relative, u = 2^-53), and the input np.log(3.0) carries its own: ~20 u in all,
    # 2e-15 relative, over 1e-15. At ±1e4 the logs' ulps (~1e-16) vanish in the rounding
    # of 1e4 + log 2 (ulp 1.8e-12): the two sides differ by at most that one ulp.
    np.testing.assert_allclose(logsumexp([0.0, np.log(3.0)]), np.log(4.0), rtol=1e-14)
    np.testing.assert_allclose(logsumexp([1e4, 1e4]), 1e4 + np.log(2.0), rtol=1e-15)
    np.testing.assert_allclose(logsumexp([-1e4, -1e4]), -1e4 + np.log(2.0), rtol=1e-15)
    out = logsumexp([[0.0, -np.inf], [-np.inf, -np.inf]])
    assert out[0] == 0.0 and out[1] == -np.inf
    z = np.array([[0.0, 1.0], [2.0, 3.0]])
    np.testing.assert_allclose(logsumexp(z, axis=0), np.log(np.exp(z).sum(0)), rtol=1e-14)
    assert logsumexp(np.zeros((2, 3, 4))).shape == (2, 3)


@PROPS
@given(z=hnp.arrays(np.float64, (3, 5), elements=st.floats(-50, 50)), c=st.floats(-100, 100))
def test_logsumexp_is_shift_equivariant_and_gives_log_softmax(z, c):
    np.testing.assert_allclose(logsumexp(z + c), logsumexp(z) + c, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lm.log_softmax(z), z - logsumexp(z)[:, None], atol=1e-12)
    assert np.all(logsumexp(z) >= z.max(axis=-1))
    assert np.all(logsumexp(z) <= z.max(axis=-1) + np.log(5) + 1e-12)


def test_softmax_jacobian_by_hand_and_finite_differences():
    np.testing.assert_allclose(
        softmax_jacobian([0.25, 0.75]), [[0.1875, -0.1875], [-0.1875, 0.1875]], rtol=1e-15
    )
    rng = np.random.default_rng(0)
    z = rng.normal(size=(2, 5))
    J = softmax_jacobian(lm.softmax(z))
    assert J.shape == (2, 5, 5)
    h = 1e-6
    for j in range(5):
        e = np.zeros(5)
        e[j] = h
        num = (lm.softmax(z + e) - lm.softmax(z - e)) / (2 * h)
        np.testing.assert_allclose(J[..., :, j], num, atol=1e-9)
    # symmetric exactly: J[i, j] = 0 - a_i a_j off the diagonal, and products commute
    np.testing.assert_allclose(J, np.swapaxes(J, -1, -2), rtol=0, atol=0)
    # Not 0 exactly: in exact arithmetic a row sums to a_i (1 - sum(a)), and softmax leaves
    # sum(a) within n units u = 2^-53 of 1. Rounding the products a_i a_j (which total
    # a_i <= 1) and the entries (which total <= 1/2) adds 1.5 u, and summing the n entries
    # (n - 1) u / 2: at most (1.5 n + 1) u, under n * eps = 2 n u.
    n = z.shape[-1]
    np.testing.assert_allclose(J.sum(axis=-1), 0.0, atol=n * np.finfo(float).eps)


def test_logsumexp_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4, 6)) * 30
    x[0, 1] = -np.inf  # a fully masked row
    x[1, 2, :3] = -np.inf
    for axis in (-1, 0, 1):
        ref = torch.logsumexp(torch.tensor(x), dim=axis).numpy()
        ours = logsumexp(x, axis=axis)
        assert np.array_equal(np.isneginf(ours), np.isneginf(ref))
        finite = np.isfinite(ref)
        np.testing.assert_allclose(ours[finite], ref[finite], rtol=1e-13)


def test_softmax_jacobian_matches_torch_jacrev():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    z = rng.normal(size=(4, 7)) * 3
    z[1, 2] = -np.inf  # a masked logit: its row and column are zero
    jac = torch.func.jacrev(lambda t: torch.softmax(t, dim=-1))
    # Two softmaxes, torch's and numpy's (other exp loops and sums): each a_i carries up to
    # ~(8 + n + |z_i - max z|) u relative error, u = 2^-53, with |z_i - max z| up to ~13
    # here; J_ii = a_i (1 - a_i) moves by (1 - 2 a_i) da_i: entries differ by up to ~6e-15.
    for row in z:
        ref = jac(torch.tensor(row)).numpy()
        np.testing.assert_allclose(softmax_jacobian(lm.softmax(row)), ref, rtol=0, atol=1e-14)
    # batched: vmap over the rows
    ref = torch.func.vmap(jac)(torch.tensor(z)).numpy()
    np.testing.assert_allclose(softmax_jacobian(lm.softmax(z)), ref, rtol=0, atol=1e-14)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: logsumexp([]), ValueError, "x is empty"),
        (lambda: logsumexp(3.0), ValueError, "x must have at least 1"),
        (lambda: logsumexp([np.inf, 0.0]), ValueError, "x must be finite"),
        (lambda: logsumexp([np.nan]), ValueError, "x must be finite"),
        (lambda: logsumexp(["a"]), TypeError, "x must be numeric"),
        (lambda: softmax_jacobian([np.nan, 1.0]), ValueError, "a must be finite"),
        (lambda: softmax_jacobian(0.5), ValueError, "a must have at least 1"),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
