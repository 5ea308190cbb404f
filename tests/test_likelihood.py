"""Tests for llmmath.likelihood: cross-entropy with its options, causal-LM loss, log-probs, z-loss."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmmath.likelihood import (
    causal_lm_loss,
    cross_entropy,
    cross_entropy_grad,
    sequence_logprob,
    shift_labels,
    token_logprobs,
    z_loss,
    z_loss_grad,
)
from llmmath.softmax import logsumexp, softmax
from llmmath.training import directional_derivative

PROPS = settings(max_examples=40, deadline=None)
Z = np.array([2.0, 1.0, 0.5, 0.0, -1.0])  # the lesson's shared logits, V = 5
LSE = math.log(np.exp(Z).sum())
BIGRAM = np.array(  # rows: next-token table from BOS/EOS (0), the (1), cat (2), sat (3)
    [[0.1, 0.6, 0.2, 0.1], [0.1, 0.1, 0.7, 0.1], [0.2, 0.1, 0.1, 0.6], [0.5, 0.3, 0.1, 0.1]]
)


def section_8_1():
    """§8.1: prompt [1, 1], answer A = [0] padded with two 1s, answer B = [0, 0, 0]; V = 2."""

    def row(lp):
        return [lp, math.log1p(-math.exp(lp))]  # logits = log-probabilities, target id 0

    ids = np.array([[1, 1, 0, 1, 1], [1, 1, 0, 0, 0]])
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    logits = np.zeros((2, 5, 2))
    logits[0, 1] = row(-0.7)
    logits[1, 1], logits[1, 2], logits[1, 3] = row(-0.3), row(-0.2), row(-0.4)
    return logits, ids, mask


def exercise_5():
    return (np.arange(24).reshape(2, 3, 4) % 5) - 2.0, np.array([[1, 3, -100], [0, -100, -100]])


# ---------------------------------------------------------------- unit tests


def test_cross_entropy_and_label_smoothing_of_sections_3_1_and_3_3():
    assert cross_entropy([Z], [0]) == pytest.approx(0.574438, abs=5e-7)
    assert cross_entropy(Z, 0) == pytest.approx(LSE - 2.0, rel=1e-14)
    smoothed = cross_entropy([Z], [0], label_smoothing=0.1)
    assert smoothed == pytest.approx(0.724438, abs=5e-7)
    assert smoothed == pytest.approx(0.9 * (LSE - 2.0) + 0.1 * (LSE - Z.mean()), rel=1e-14)
    # ε = 1: the target does not matter, only the mean of −log p
    assert cross_entropy([Z], [3], label_smoothing=1.0) == pytest.approx(LSE - Z.mean(), rel=1e-14)


def test_label_smoothing_optimum_is_q_not_one_hot():
    for V, eps in [(5, 0.1), (4, 0.2)]:
        q_t, q_o = 1 - eps + eps / V, eps / V
        z = np.zeros(V)
        z[0] = math.log(q_t / q_o)  # softmax(z) = q
        g = cross_entropy_grad(z, 0, label_smoothing=eps)
        np.testing.assert_allclose(g, 0.0, atol=1e-15)
        h_q = -(q_t * math.log(q_t) + (V - 1) * q_o * math.log(q_o))
        assert cross_entropy(z, 0, label_smoothing=eps) == pytest.approx(h_q, rel=1e-13)
    assert math.log((0.9 + 0.02) / 0.02) == pytest.approx(3.8286, abs=5e-5)  # §3.3 gap
    assert math.log(0.85 / 0.05) == pytest.approx(2.8332, abs=5e-5)  # Exercise 5: ln 17


def test_gradient_of_section_3_2():
    g = cross_entropy_grad(Z, 0)
    np.testing.assert_allclose(g, [-0.4370, 0.2071, 0.1256, 0.0762, 0.0280], atol=5e-5)
    np.testing.assert_allclose(g, softmax(Z) - np.eye(5)[0], rtol=0, atol=1e-16)
    assert abs(g.sum()) < 1e-15


def test_exercise_5_ignore_index_and_smoothing():
    logits, y = exercise_5()
    assert cross_entropy(logits, y, ignore_index=-100) == pytest.approx(2.348363, abs=5e-7)
    assert cross_entropy(logits, y, ignore_index=-100, label_smoothing=0.2) == pytest.approx(
        2.315030, abs=5e-7
    )
    g = cross_entropy_grad(logits, y, ignore_index=-100, label_smoothing=0.2)
    np.testing.assert_allclose(g.sum(-1), 0.0, atol=1e-16)
    assert (g[y == -100] == 0).all()
    per = cross_entropy(logits, y, ignore_index=-100, reduction="none")
    assert per.shape == (2, 3) and (per[y == -100] == 0).all()
    assert cross_entropy(logits, y, ignore_index=-100, reduction="sum") == pytest.approx(
        per.sum(), rel=1e-15
    )
    assert cross_entropy(logits, y, ignore_index=-100) == pytest.approx(per.sum() / 3, rel=1e-15)


def test_four_ways_to_average_of_section_3_4():
    # logits whose target has probability e^{-loss}: per-token losses [[1, 2, .5, .5], [3, 1, .1, .1]]
    losses = np.array([[1.0, 2.0, 0.5, 0.5], [3.0, 1.0, 0.1, 0.1]])
    logits = np.stack([-losses, np.log(-np.expm1(-losses))], axis=-1)  # target id 0
    y = np.where([[1, 1, 1, 1], [1, 1, 0, 0]], 0, -100)  # the last two of row 1 are padding
    assert cross_entropy(logits, y, ignore_index=-100) == pytest.approx(8 / 6, rel=1e-14)
    assert cross_entropy(logits, np.zeros((2, 4), int)) == pytest.approx(1.0250, rel=1e-14)
    assert cross_entropy(logits, y, ignore_index=-100, reduction="sum") / 8 == pytest.approx(1.0)
    per_seq = [cross_entropy(logits[b], y[b], ignore_index=-100) for b in range(2)]
    assert np.mean(per_seq) == pytest.approx(1.5, rel=1e-14)  # also two micro-batch means
    # num_items: with the global count, two micro-batches add up to the token mean
    full = np.concatenate([logits, np.zeros((2, 1, 2))], axis=1)  # (2, 5, 2): t predicts t + 1
    labels = np.where([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], 0, -100)
    parts = [causal_lm_loss(full[b : b + 1], labels[b : b + 1], num_items=6) for b in range(2)]
    assert sum(parts) == pytest.approx(causal_lm_loss(full, labels), rel=1e-14)
    assert causal_lm_loss(full, labels) == pytest.approx(8 / 6, rel=1e-14)


def test_equal_logits_give_ln_V():
    assert cross_entropy(np.zeros(50257), 7) == pytest.approx(10.8249, abs=5e-5)
    assert cross_entropy(np.zeros(50257), 7) / math.log(2) == pytest.approx(15.617, abs=5e-4)


def test_ignore_index_may_be_a_real_id():
    logits, y = np.random.default_rng(0).normal(size=(6, 4)), np.array([0, 3, 3, 1, 3, 2])
    keep = y != 3  # ignoring the pad id 3
    assert cross_entropy(logits, y, ignore_index=3) == pytest.approx(
        cross_entropy(logits[keep], y[keep]), rel=1e-15
    )


def test_neg_inf_logits_without_and_with_smoothing():
    z = [[2.0, 1.0, -np.inf]]
    assert cross_entropy(z, [0]) == pytest.approx(0.3133, abs=5e-5)
    assert cross_entropy(z, [0], label_smoothing=0.1) == np.inf
    np.testing.assert_allclose(
        cross_entropy_grad(z, [0], label_smoothing=0.1), [[-0.2023, 0.2356, -0.0333]], atol=5e-5
    )
    assert cross_entropy_grad(z, [0], label_smoothing=0.1)[0, 2] == pytest.approx(-0.1 / 3)
    assert cross_entropy(z, [2]) == np.inf  # the target itself was removed
    assert cross_entropy(z, [2], label_smoothing=1.0) == np.inf  # no 0 · inf = NaN


def test_all_ignored():
    with pytest.raises(ValueError, match="mean is over zero targets"):
        cross_entropy(np.zeros((2, 3)), [-100, -100], ignore_index=-100)
    assert cross_entropy(np.zeros((2, 3)), [-100, -100], ignore_index=-100, reduction="sum") == 0.0
    with pytest.raises(ValueError, match="cross_entropy_grad: every target"):
        cross_entropy_grad(np.zeros((2, 3)), [-100, -100], ignore_index=-100)


def test_shift_labels_and_the_collator_example():
    np.testing.assert_array_equal(shift_labels([0, 1, 2, 3, 0]), [1, 2, 3, 0, -100])
    out = shift_labels([[1, 2, 3, 0], [1, 2, -100, -100]])
    np.testing.assert_array_equal(out, [[2, 3, 0, -100], [2, -100, -100, -100]])
    assert out.dtype == np.int64
    np.testing.assert_array_equal(shift_labels([5, 7, 0], ignore_index=0), [7, 0, 0])
    np.testing.assert_array_equal(shift_labels([4]), [-100])


def test_causal_lm_loss_copy_toy_of_mistake_1():
    ids = np.array([3, 1, 4, 1, 5])
    logits = np.where(np.arange(6) == ids[:, None], 20.0, 0.0)  # copies its input
    assert cross_entropy(logits, ids) == pytest.approx(0.0, abs=5e-5)  # unshifted: looks perfect
    assert causal_lm_loss(logits, ids) == pytest.approx(20.0, abs=5e-5)
    assert causal_lm_loss(logits, ids) == pytest.approx(
        cross_entropy(logits[:-1], ids[1:]), rel=1e-15
    )


def test_causal_lm_loss_masks_and_num_items():
    rng = np.random.default_rng(1)
    logits, ids = rng.normal(size=(2, 7, 11)) * 2, rng.integers(0, 11, size=(2, 7))
    labels = ids.copy()
    labels[0, :3] = -100  # a masked prompt: targets 1, 2 of row 0 are not scored
    per = cross_entropy(logits[:, :-1], labels[:, 1:], ignore_index=-100, reduction="none")
    assert causal_lm_loss(logits, labels) == pytest.approx(per.sum() / 10, rel=1e-14)
    assert causal_lm_loss(logits, labels, num_items=17) == pytest.approx(per.sum() / 17, rel=1e-14)
    smooth = cross_entropy(logits[:, :-1], labels[:, 1:], ignore_index=-100, label_smoothing=0.1)
    assert causal_lm_loss(logits, labels, label_smoothing=0.1) == pytest.approx(smooth, rel=1e-14)
    assert causal_lm_loss(logits[:, :1], labels[:, :1] * 0 - 100, num_items=4) == 0.0


def test_bigram_string_log_probability_of_section_1_2():
    ids = np.array([0, 1, 2, 3, 0])  # BOS the cat sat EOS
    logits = np.log(BIGRAM)[ids]  # row t: the distribution after ids[t]
    lp = token_logprobs(logits, ids)
    np.testing.assert_allclose(np.exp(lp), [0.6, 0.7, 0.6, 0.5], rtol=1e-14)
    assert sequence_logprob(logits, ids) == pytest.approx(math.log(0.126), rel=1e-14)
    assert sequence_logprob(logits, ids) == pytest.approx(-2.0715, abs=5e-5)
    assert -sequence_logprob(logits, ids) / 4 == pytest.approx(0.5179, abs=5e-5)
    # without the EOS factor: the prefix probability 0.252
    assert sequence_logprob(logits[:4], ids[:4]) == pytest.approx(math.log(0.252), rel=1e-14)
    ex1 = np.array([0, 3, 1, 2, 0])  # Exercise 1: sat the cat EOS
    assert sequence_logprob(np.log(BIGRAM)[ex1], ex1) == pytest.approx(math.log(0.0042), rel=1e-13)


def test_sequence_logprob_of_section_8_1():
    logits, ids, mask = section_8_1()
    np.testing.assert_allclose(
        sequence_logprob(logits, ids, start=2, mask=mask), [-0.7, -0.9], rtol=1e-14
    )
    no_mask = sequence_logprob(logits, ids, start=2)
    assert no_mask[0] == pytest.approx(-2.0863, abs=5e-5) and no_mask[1] == pytest.approx(-0.9)
    np.testing.assert_allclose(
        sequence_logprob(logits, ids, start=1, mask=mask), [-1.3931, -1.5931], atol=5e-5
    )
    np.testing.assert_array_equal(sequence_logprob(logits, ids, start=5), [0.0, 0.0])
    assert sequence_logprob(logits, ids, mask=mask.astype(bool)).shape == (2,)


def test_z_loss_of_section_3_5():
    assert z_loss(Z) == pytest.approx(1e-4 * LSE**2, rel=1e-14)
    assert z_loss(Z) == pytest.approx(6.6277e-4, abs=5e-9)
    assert z_loss(Z + 10) == pytest.approx(0.015812, abs=5e-7)
    g = z_loss_grad(Z)
    np.testing.assert_allclose(g, 2e-4 * LSE * softmax(Z), rtol=1e-14)
    assert g.sum() == pytest.approx(0.00051489, abs=5e-9)  # rows do not sum to 0
    rows = np.stack([Z, Z + 10, Z - 3])
    mask = np.array([1, 0, 1])
    assert z_loss(rows, mask=mask) == pytest.approx(z_loss(rows[[0, 2]]), rel=1e-15)
    gm = z_loss_grad(rows, mask=mask)
    assert (gm[1] == 0).all()
    np.testing.assert_allclose(gm[[0, 2]], z_loss_grad(rows[[0, 2]]), rtol=1e-15)
    assert z_loss(Z, coef=0.0) == 0.0


def test_results_and_types():
    assert isinstance(cross_entropy([Z], [0]), float)
    assert isinstance(causal_lm_loss(np.zeros((3, 2)), [0, 1, 1]), float)
    assert isinstance(z_loss(Z), float)
    assert cross_entropy(Z, 0, reduction="none").shape == ()
    assert token_logprobs(np.zeros((2, 3, 4)), np.zeros((2, 3), int)).shape == (2, 2)


# ---------------------------------------------------------- property tests


@st.composite
def lm_batch(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    B, T, V = draw(st.integers(1, 3)), draw(st.integers(2, 6)), draw(st.integers(2, 6))
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(B, T, V)) * 3
    y = rng.integers(0, V, size=(B, T))
    y[rng.random((B, T)) < 0.3] = -100
    y[0, 0] = 0  # at least one counted target
    eps = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
    return rng, z, y, eps


@PROPS
@given(batch=lm_batch())
def test_mean_is_sum_over_counted_and_gradient_matches_finite_differences(batch):
    rng, z, y, eps = batch
    kw = dict(ignore_index=-100, label_smoothing=eps)
    per = cross_entropy(z, y, reduction="none", **kw)
    n = (y != -100).sum()
    assert cross_entropy(z, y, **kw) == pytest.approx(per.sum() / n, rel=1e-14)
    g = cross_entropy_grad(z, y, **kw)
    np.testing.assert_allclose(g.sum(-1), 0.0, atol=1e-15)
    v = rng.normal(size=z.shape)
    fd = directional_derivative(lambda x: cross_entropy(x, y, **kw), z, v)
    assert np.sum(g * v) == pytest.approx(fd, rel=1e-6, abs=1e-7)
    # shift invariance per position
    shift = rng.normal(size=z.shape[:-1] + (1,)) * 10
    assert cross_entropy(z + shift, y, **kw) == pytest.approx(cross_entropy(z, y, **kw), rel=1e-12)


@PROPS
@given(batch=lm_batch())
def test_sequence_logprob_and_causal_lm_loss_agree(batch):
    _, z, y, _ = batch
    ids = np.where(y == -100, 0, y)
    T = ids.shape[-1]
    mean = np.mean(-sequence_logprob(z, ids) / (T - 1))
    assert causal_lm_loss(z, ids) == pytest.approx(mean, rel=1e-12)
    assert causal_lm_loss(z, ids) == pytest.approx(-token_logprobs(z, ids).mean(), rel=1e-12)
    # appending tokens leaves earlier log-probabilities unchanged (the logits are causal here)
    np.testing.assert_array_equal(
        token_logprobs(z[:, :-1], ids[:, :-1]), token_logprobs(z, ids)[:, :-1]
    )


@PROPS
@given(batch=lm_batch(), coef=st.sampled_from([1e-4, 0.3]))
def test_z_loss_gradient_matches_finite_differences(batch, coef):
    rng, z, y, _ = batch
    mask = (y != -100).astype(int)
    g = z_loss_grad(z, coef=coef, mask=mask)
    v = rng.normal(size=z.shape)
    fd = directional_derivative(lambda x: z_loss(x, coef=coef, mask=mask), z, v)
    assert np.sum(g * v) == pytest.approx(fd, rel=1e-6, abs=1e-9)
    lse = logsumexp(z)
    np.testing.assert_allclose(
        g.sum(-1), np.where(mask, 2 * coef * lse / mask.sum(), 0), rtol=1e-12, atol=1e-18
    )


# ------------------------------------------------------------ bad inputs

L3 = np.zeros((2, 3))
BAD = [
    ("ce-target-range", lambda: cross_entropy(L3, [0, 3]), IndexError, "targets must lie in"),
    ("ce-negative-target", lambda: cross_entropy(L3, [0, -1]), IndexError, "not wrapped"),
    (
        "ce-target-not-ignored",
        lambda: cross_entropy(L3, [0, -1], ignore_index=-100),
        IndexError,
        r"targets must lie in \[0, 3\) or equal ignore_index=-100; got -1",
    ),
    (
        "ce-float-targets",
        lambda: cross_entropy(L3, [0.0, 1.0], ignore_index=-100),
        TypeError,
        "targets",
    ),
    (
        "ce-ignore-float",
        lambda: cross_entropy(L3, [0, 1], ignore_index=-100.0),
        TypeError,
        "ignore_index",
    ),
    (
        "ce-ignore-bool",
        lambda: cross_entropy_grad(L3, [0, 1], ignore_index=True),
        TypeError,
        "ignore_index",
    ),
    ("ce-shape", lambda: cross_entropy(L3, [0, 1, 2]), ValueError, "leading shape"),
    (
        "ce-smoothing-high",
        lambda: cross_entropy(L3, [0, 1], label_smoothing=1.5),
        ValueError,
        "label_smoothing",
    ),
    (
        "ce-smoothing-negative",
        lambda: cross_entropy_grad(L3, [0, 1], label_smoothing=-0.1),
        ValueError,
        "label_smoothing",
    ),
    (
        "ce-smoothing-nan",
        lambda: cross_entropy(L3, [0, 1], label_smoothing=np.nan),
        ValueError,
        "label_smoothing",
    ),
    ("ce-reduction", lambda: cross_entropy(L3, [0, 1], reduction="avg"), ValueError, "reduction"),
    (
        "ce-dead-row",
        lambda: cross_entropy([[0.0, 1.0], [-np.inf, -np.inf]], [0, 1]),
        ValueError,
        "every logit -inf",
    ),
    ("ce-nan", lambda: cross_entropy([[np.nan, 1.0]], [0]), ValueError, "logits must be finite"),
    ("ce-plus-inf", lambda: cross_entropy_grad([[np.inf, 1.0]], [0]), ValueError, "logits"),
    ("shift-negative", lambda: shift_labels([1, -5, 2]), IndexError, ">= 0 or equal ignore_index"),
    ("shift-float", lambda: shift_labels([1.0, 2.0]), TypeError, "labels must be integers"),
    (
        "shift-ignore-float",
        lambda: shift_labels([1, 2], ignore_index=-100.0),
        TypeError,
        "ignore_index",
    ),
    ("shift-empty", lambda: shift_labels(np.zeros((2, 0), int)), ValueError, "T >= 1"),
    ("clm-label-range", lambda: causal_lm_loss(L3, [0, 3]), IndexError, "labels must lie in"),
    (
        "clm-shape",
        lambda: causal_lm_loss(np.zeros((2, 4, 3)), [0, 1, 2, 0]),
        ValueError,
        "labels must have the leading shape",
    ),
    ("clm-1d-logits", lambda: causal_lm_loss([0.0, 1.0], 0), ValueError, "at least 2"),
    ("clm-all-ignored", lambda: causal_lm_loss(L3, [1, -100]), ValueError, "zero targets"),
    (
        "clm-num-items-zero",
        lambda: causal_lm_loss(L3, [1, 2], num_items=0),
        ValueError,
        "num_items",
    ),
    (
        "clm-num-items-float",
        lambda: causal_lm_loss(L3, [1, 2], num_items=2.0),
        TypeError,
        "num_items",
    ),
    ("tl-ids-range", lambda: token_logprobs(L3, [0, 3]), IndexError, "ids must lie in"),
    ("tl-ignore-not-allowed", lambda: token_logprobs(L3, [0, -100]), IndexError, "ids"),
    (
        "tl-shape",
        lambda: token_logprobs(L3, [0, 1, 2]),
        ValueError,
        "ids must have the leading shape",
    ),
    ("sl-start-zero", lambda: sequence_logprob(L3, [0, 1], start=0), ValueError, "start"),
    (
        "sl-start-beyond",
        lambda: sequence_logprob(L3, [0, 1], start=3),
        ValueError,
        r"start must lie in \[1, T\]",
    ),
    ("sl-start-float", lambda: sequence_logprob(L3, [0, 1], start=1.0), TypeError, "start"),
    (
        "sl-mask-values",
        lambda: sequence_logprob(L3, [0, 1], mask=[1, 2]),
        ValueError,
        "mask must hold only 0 and 1",
    ),
    (
        "sl-mask-shape",
        lambda: sequence_logprob(L3, [0, 1], mask=[1, 1, 1]),
        ValueError,
        "mask must have shape",
    ),
    ("sl-mask-nan", lambda: sequence_logprob(L3, [0, 1], mask=[1.0, np.nan]), ValueError, "mask"),
    ("z-mask-zeros", lambda: z_loss(L3, mask=[0, 0]), ValueError, "mask selects no position"),
    ("z-mask-values", lambda: z_loss_grad(L3, mask=[0, 3]), ValueError, "mask"),
    ("z-coef-negative", lambda: z_loss(L3, coef=-1e-4), ValueError, "coef"),
    ("z-coef-inf", lambda: z_loss_grad(L3, coef=np.inf), ValueError, "coef"),
    ("z-dead-row", lambda: z_loss([[-np.inf, -np.inf]]), ValueError, "every logit -inf"),
]


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_moved_functions_are_the_same_objects_in_training():
    import llmmath.training as training

    assert training.cross_entropy is cross_entropy
    assert training.cross_entropy_grad is cross_entropy_grad


# -------------------------------------------------- cross-checks with references


def test_cross_entropy_matches_torch_with_every_option():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(0)
    for trial in range(20):
        B, T, V = 3, 7, int(rng.integers(2, 30))
        z = rng.normal(size=(B, T, V)) * 3
        y = rng.integers(0, V, size=(B, T))
        y[rng.random((B, T)) < 0.25] = -100
        y[0, 0] = 1
        if trial % 4 == 0:
            z[rng.random(z.shape) < 0.1] = -np.inf  # removed tokens (never the whole row)
            z[..., 1] = rng.normal(size=(B, T))
        zt, yt = torch.tensor(z.reshape(-1, V)), torch.tensor(y.reshape(-1))
        for eps in (0.0, 0.1, 0.3):
            for red in ("mean", "sum", "none"):
                ref = F.cross_entropy(
                    zt, yt, ignore_index=-100, label_smoothing=eps, reduction=red
                ).numpy()
                ours = cross_entropy(z, y, ignore_index=-100, label_smoothing=eps, reduction=red)
                # sums of up to 21 losses of size ~10: 1e-12 relative is far above the rounding
                np.testing.assert_allclose(np.reshape(ours, ref.shape), ref, rtol=1e-12, atol=0)
            t = zt.clone().requires_grad_(True)
            F.cross_entropy(t, yt, ignore_index=-100, label_smoothing=eps).backward()
            ours_g = cross_entropy_grad(z, y, ignore_index=-100, label_smoothing=eps).reshape(-1, V)
            # entries (p − q)/N with |p − q| <= 1: a few ulps of 1
            np.testing.assert_allclose(ours_g, t.grad.numpy(), rtol=0, atol=1e-15)
    # the default (no option) is today's contract: every target counted
    z, y = rng.normal(size=(4, 6)), rng.integers(0, 6, size=4)
    assert cross_entropy(z, y) == pytest.approx(
        F.cross_entropy(torch.tensor(z), torch.tensor(y)).item(), rel=1e-14
    )
    # a real id as ignore_index, and the -inf cases of the contract
    assert cross_entropy(z, y, ignore_index=int(y[0])) == pytest.approx(
        F.cross_entropy(torch.tensor(z), torch.tensor(y), ignore_index=int(y[0])).item(), rel=1e-14
    )
    for eps in (0.0, 0.1):
        t = torch.tensor([[2.0, 1.0, -np.inf]], dtype=torch.float64, requires_grad=True)
        loss = F.cross_entropy(t, torch.tensor([0]), label_smoothing=eps)
        loss.backward()
        assert cross_entropy([[2.0, 1.0, -np.inf]], [0], label_smoothing=eps) == pytest.approx(
            loss.item(), rel=1e-14
        )
        np.testing.assert_allclose(
            cross_entropy_grad([[2.0, 1.0, -np.inf]], [0], label_smoothing=eps),
            t.grad.numpy(),
            rtol=0,
            atol=1e-16,
        )
    assert math.isnan(
        F.cross_entropy(torch.zeros(2, 3), torch.tensor([-100, -100])).item()
    )  # we raise instead


def test_token_logprobs_and_z_loss_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    z, ids = rng.normal(size=(2, 7, 11)) * 2, rng.integers(0, 11, size=(2, 7))
    ref = torch.log_softmax(torch.tensor(z), -1)[..., :-1, :].gather(
        -1, torch.tensor(ids)[..., 1:, None]
    )[..., 0]
    np.testing.assert_allclose(token_logprobs(z, ids), ref.numpy(), rtol=0, atol=1e-13)
    Zs = rng.normal(size=(21, 11)) * 3
    Zs[0, 3] = -np.inf
    t = torch.tensor(Zs, requires_grad=True)
    zl = 1e-4 * (torch.logsumexp(t, -1) ** 2).mean()
    zl.backward()
    assert z_loss(Zs) == pytest.approx(zl.item(), rel=0, abs=1e-15)
    np.testing.assert_allclose(z_loss_grad(Zs), t.grad.numpy(), rtol=0, atol=1e-18)


def test_causal_lm_loss_matches_hf_for_causal_lm_loss():
    torch = pytest.importorskip("torch")
    loss_utils = pytest.importorskip("transformers.loss.loss_utils")
    rng = np.random.default_rng(0)
    z, ids = rng.normal(size=(2, 7, 11)) * 2, rng.integers(0, 11, size=(2, 7))
    labels = ids.copy()
    labels[0, :3] = -100
    for num_items in (None, 17):
        ref = loss_utils.ForCausalLMLoss(
            torch.tensor(z),
            torch.tensor(labels),
            vocab_size=11,
            num_items_in_batch=None if num_items is None else torch.tensor(num_items),
        ).item()
        # HF computes in float32 (logits.float()): relative error ~1e-7
        assert causal_lm_loss(z, labels, num_items=num_items) == pytest.approx(ref, rel=1e-6)


@pytest.fixture(scope="module")
def gpt2():
    """The lesson's tiny GPT-2s: §1.5 (2 layers) and §2.5 (1 layer), float64, seed 0."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")

    def build(n_layer):
        torch.manual_seed(0)
        config = transformers.GPT2Config(
            vocab_size=50,
            n_positions=64,
            n_embd=16,
            n_layer=n_layer,
            n_head=2,
            bos_token_id=0,
            eos_token_id=0,
        )
        return transformers.GPT2LMHeadModel(config).double().eval()

    return torch, transformers, build


def test_causal_lm_loss_matches_the_hf_model_loss_and_label_smoother(gpt2):
    torch, transformers, build = gpt2
    model = build(1)
    ids = torch.randint(0, 50, (2, 12))  # from the global generator, right after construction
    assert ids[0, :4].tolist() == [42, 2, 43, 32]
    labels = ids.clone()
    labels[1, :4] = -100
    with torch.no_grad():
        logits = model(ids).logits
        for lab, value in [(ids, 3.9342949), (labels, 3.9370875)]:
            out = model(input_ids=ids, labels=lab)
            assert out.loss.dtype == torch.float32
            ours = causal_lm_loss(logits.numpy(), lab.numpy())
            assert ours == pytest.approx(out.loss.item(), rel=1e-6)  # float32 in HF
            assert ours == pytest.approx(value, abs=5e-7)
        pre_shifted = torch.cat([ids[:, 1:], torch.full((2, 1), -100)], 1)
        assert model(ids, labels=pre_shifted).loss.item() == pytest.approx(
            3.9027, abs=5e-5
        )  # shifted twice
    smoother = pytest.importorskip("transformers.trainer_pt_utils").LabelSmoother(epsilon=0.1)
    ref = smoother({"logits": logits}, labels, shift_labels=True).item()
    # LabelSmoother sums its smoothing term in float32
    assert causal_lm_loss(logits.numpy(), labels.numpy(), label_smoothing=0.1) == pytest.approx(
        ref, abs=1e-7
    )


def test_teacher_forcing_equals_kv_cached_decoding(gpt2):
    torch, _, build = gpt2
    model = build(2)
    ids = torch.randint(0, 50, (1, 10), generator=torch.Generator().manual_seed(1))
    # transformers 5.24 renamed past_key_values to cache; 5.23 ignores an unknown cache= silently
    kwarg = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    with torch.no_grad():
        logits = model(ids).logits.numpy()
        cache, steps = None, []
        for t in range(9):
            out = model(ids[:, t : t + 1], **{kwarg: cache}, use_cache=True)
            cache = out.cache if getattr(out, "cache", None) is not None else out.past_key_values
            steps.append(torch.log_softmax(out.logits[0, -1], -1)[ids[0, t + 1]].item())
    ours = token_logprobs(logits, ids.numpy())
    # one pass vs nine cached steps: the same float64 sums in another order
    np.testing.assert_allclose(ours[0], steps, rtol=0, atol=1e-13)
    assert ours.sum() == pytest.approx(-34.943346, abs=5e-6)
