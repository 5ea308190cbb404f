"""Tests for llmmath.masks: causal (both alignments), padding, sliding window, prefix LM,
packed documents, and the additive form of a mask."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmmath.attention import packed_position_ids, scaled_dot_product_attention
from llmmath.masks import (
    causal_mask,
    document_mask,
    key_padding_mask,
    mask_to_bias,
    prefix_lm_mask,
    sliding_window_mask,
)

PROPS = settings(max_examples=50, deadline=None)
sizes = st.integers(1, 9)


def loop_mask(tq, tk, rule):
    """The mask written entry by entry (reference only)."""
    return np.array([[rule(i, j) for j in range(tk)] for i in range(tq)], dtype=bool)


# ---------------------------------------------------------------- unit tests


def test_causal_alignments_by_hand():
    np.testing.assert_array_equal(causal_mask(2, 3), [[1, 0, 0], [1, 1, 0]])
    np.testing.assert_array_equal(causal_mask(2, 3, align="bottom-right"), [[1, 1, 0], [1, 1, 1]])
    # more queries than keys, bottom-right: the first Tq - Tk rows see nothing
    np.testing.assert_array_equal(causal_mask(3, 2, align="bottom-right"), [[0, 0], [1, 0], [1, 1]])
    assert causal_mask(4, align="bottom-right").dtype == np.bool_


def test_key_padding_mask_blocks_padded_keys_in_every_head():
    m = key_padding_mask(np.array([[1, 1, 0], [0, 1, 1]]))
    assert m.shape == (2, 1, 1, 3) and m.dtype == np.bool_
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(2, 4, 3, 5)) for _ in range(3))  # (B, H, T, dh)
    _, w = scaled_dot_product_attention(q, k, v, mask=m)
    assert w.shape == (2, 4, 3, 3)
    np.testing.assert_array_equal(w[0, :, :, 2], 0.0)
    np.testing.assert_array_equal(w[1, :, :, 0], 0.0)
    # head-less scores (B, Tq, Tk): the [:, 0] form
    _, w2 = scaled_dot_product_attention(q[:, 0], k[:, 0], v[:, 0], mask=m[:, 0])
    np.testing.assert_allclose(w2, w[:, 0], rtol=0, atol=1e-15)
    # bool input and the all-real row
    np.testing.assert_array_equal(key_padding_mask([[True, True]])[0, 0, 0], [True, True])


def test_sliding_window_by_hand_and_limits():
    np.testing.assert_array_equal(
        sliding_window_mask(2, 5, window=2), [[0, 0, 1, 1, 0], [0, 0, 0, 1, 1]]
    )
    np.testing.assert_array_equal(sliding_window_mask(4, window=1), np.eye(4, dtype=bool))
    for w in (5, 6, 50):
        np.testing.assert_array_equal(
            sliding_window_mask(3, 5, window=w), causal_mask(3, 5, align="bottom-right")
        )


def test_prefix_lm_by_hand_and_limits():
    np.testing.assert_array_equal(
        prefix_lm_mask(3, 2), [[True, True, False], [True, True, False], [True, True, True]]
    )
    np.testing.assert_array_equal(prefix_lm_mask(4, 0), causal_mask(4))
    np.testing.assert_array_equal(prefix_lm_mask(4, 1), causal_mask(4))
    assert prefix_lm_mask(4, 4).all()


def test_document_mask_by_hand_and_with_packed_positions():
    np.testing.assert_array_equal(
        document_mask([1, 2], causal=False), [[1, 0, 0], [0, 1, 1], [0, 1, 1]]
    )
    np.testing.assert_array_equal(document_mask([3]), causal_mask(3))
    # packing two documents with this mask and restarting positions reproduces each one alone
    rng = np.random.default_rng(1)
    lengths = [3, 4]
    q, k, v = (rng.normal(size=(7, 4)) for _ in range(3))
    out, _ = scaled_dot_product_attention(q, k, v, mask=document_mask(lengths))
    np.testing.assert_array_equal(packed_position_ids(lengths), [0, 1, 2, 0, 1, 2, 3])
    # Packed, the scores are one 7 x 7 matmul and each softmax sums 7 terms (zeros included);
    # alone, 3 x 3 and 4 x 4. Both round: a few dozen u (u = 2^-53) of the scores reach the
    # weights and then the outputs, a first-order bound of 1.3e-14 for these inputs.
    for s, e in ((0, 3), (3, 7)):
        alone, _ = scaled_dot_product_attention(q[s:e], k[s:e], v[s:e], causal=True)
        np.testing.assert_allclose(out[s:e], alone, rtol=0, atol=1e-13)


def test_mask_to_bias_equals_mask_and_finite_fill_differs_only_on_empty_rows():
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    m = rng.random((4, 5)) < 0.5
    m[0] = True
    m[2] = False  # a query that sees nothing
    out_m, w_m = scaled_dot_product_attention(q, k, v, mask=m)
    out_b, w_b = scaled_dot_product_attention(q, k, v, bias=mask_to_bias(m))
    np.testing.assert_allclose(w_b, w_m, rtol=0, atol=1e-15)
    np.testing.assert_allclose(out_b, out_m, rtol=0, atol=1e-15)
    fill = float(np.finfo(np.float32).min)  # what an eager path fills
    out_f, w_f = scaled_dot_product_attention(q, k, v, bias=mask_to_bias(m, fill=fill))
    seen = m.any(axis=-1)
    np.testing.assert_allclose(w_f[seen], w_m[seen], rtol=0, atol=1e-15)
    np.testing.assert_allclose(w_f[2], np.full(5, 0.2), rtol=0, atol=1e-15)
    np.testing.assert_allclose(out_f[2], v.mean(axis=0), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(out_m[2], 0.0)
    b = mask_to_bias(m)
    assert b.dtype == np.float64 and b.shape == m.shape
    assert not np.signbit(b[m]).any()  # the zeros are +0.0


# ----------------------------------------------------------- property tests


@PROPS
@given(tq=sizes, tk=sizes)
def test_causal_masks_follow_their_definitions(tq, tk):
    np.testing.assert_array_equal(causal_mask(tq, tk), loop_mask(tq, tk, lambda i, j: j <= i))
    np.testing.assert_array_equal(
        causal_mask(tq, tk, align="bottom-right"),
        loop_mask(tq, tk, lambda i, j: j <= i + tk - tq),
    )
    # bottom-right = the last Tq rows of the square mask over Tk (when Tq <= Tk)
    if tq <= tk:
        np.testing.assert_array_equal(
            causal_mask(tq, tk, align="bottom-right"), causal_mask(tk)[tk - tq :]
        )
    if tq == tk:
        np.testing.assert_array_equal(causal_mask(tq, align="bottom-right"), causal_mask(tq))


@PROPS
@given(tq=sizes, extra=st.integers(0, 6), window=st.integers(1, 12))
def test_sliding_window_properties(tq, extra, window):
    tk = tq + extra
    m = sliding_window_mask(tq, tk, window=window)
    np.testing.assert_array_equal(
        m, loop_mask(tq, tk, lambda i, j: i + extra - window < j <= i + extra)
    )
    # inside the bottom-right causal mask, each row sees min(window, position + 1) keys
    assert not (m & ~causal_mask(tq, tk, align="bottom-right")).any()
    np.testing.assert_array_equal(m.sum(axis=-1), np.minimum(window, np.arange(tq) + extra + 1))
    # a chunk's mask is the tail of the full sequence's mask
    np.testing.assert_array_equal(m, sliding_window_mask(tk, window=window)[extra:])


@PROPS
@given(n=sizes, data=st.data())
def test_prefix_lm_is_causal_or_prefix(n, data):
    p = data.draw(st.integers(0, n))
    np.testing.assert_array_equal(
        prefix_lm_mask(n, p), loop_mask(n, n, lambda i, j: j <= i or j < p)
    )


@PROPS
@given(lengths=st.lists(st.integers(1, 5), min_size=1, max_size=4), causal=st.booleans())
def test_document_mask_is_block_diagonal(lengths, causal):
    doc = np.repeat(np.arange(len(lengths)), lengths)
    n = doc.size
    m = document_mask(lengths, causal=causal)
    rule = (lambda i, j: doc[i] == doc[j] and j <= i) if causal else (lambda i, j: doc[i] == doc[j])
    np.testing.assert_array_equal(m, loop_mask(n, n, rule))


# ------------------------------------------------------------ bad inputs

BAD = [
    ("causal-align", lambda: causal_mask(2, align="bottom"), ValueError, "causal_mask: align"),
    ("causal-float", lambda: causal_mask(3.0), TypeError, "n_queries"),
    ("causal-keys-zero", lambda: causal_mask(2, 0), ValueError, "n_keys"),
    ("kpm-3d", lambda: key_padding_mask(np.ones((2, 1, 3))), ValueError, "attention_mask"),
    ("kpm-values", lambda: key_padding_mask([[1, 2]]), ValueError, "only 0 and 1; got 2"),
    ("kpm-empty", lambda: key_padding_mask(np.ones((2, 0))), ValueError, "attention_mask"),
    ("kpm-str", lambda: key_padding_mask([["1", "0"]]), TypeError, "attention_mask"),
    ("sw-window-zero", lambda: sliding_window_mask(3, window=0), ValueError, "window"),
    ("sw-window-float", lambda: sliding_window_mask(3, window=2.0), TypeError, "window"),
    ("sw-queries", lambda: sliding_window_mask(0, window=2), ValueError, "n_queries"),
    ("prefix-too-long", lambda: prefix_lm_mask(3, 4), ValueError, r"prefix_length.*\[0, 3\]"),
    ("prefix-negative", lambda: prefix_lm_mask(3, -1), ValueError, "prefix_length"),
    ("prefix-float", lambda: prefix_lm_mask(3, 1.0), TypeError, "prefix_length"),
    ("prefix-n", lambda: prefix_lm_mask(0, 0), ValueError, "prefix_lm_mask: n "),
    ("doc-float", lambda: document_mask([2.0, 3.0]), TypeError, "lengths"),
    ("doc-zero", lambda: document_mask([2, 0]), ValueError, "lengths must be >= 1"),
    ("doc-empty", lambda: document_mask([]), ValueError, "lengths"),
    ("doc-2d", lambda: document_mask([[2]]), ValueError, "lengths"),
    ("doc-causal", lambda: document_mask([2], causal="yes"), TypeError, "causal"),
    ("bias-float-mask", lambda: mask_to_bias([0.0, 1.0]), TypeError, "mask must be boolean"),
    ("bias-empty", lambda: mask_to_bias(np.ones(0, bool)), ValueError, "mask is empty"),
    ("bias-nan", lambda: mask_to_bias([True], fill=np.nan), ValueError, "fill"),
    ("bias-posinf", lambda: mask_to_bias([True], fill=np.inf), ValueError, "fill"),
    ("bias-str", lambda: mask_to_bias([True], fill="low"), TypeError, "fill"),
]


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------ cross-checks with torch, transformers


def test_bottom_right_matches_torch_causal_lower_right():
    torch = pytest.importorskip("torch")
    from torch.nn.attention.bias import causal_lower_right

    F = torch.nn.functional
    rng = np.random.default_rng(3)
    for tq, tk in ((1, 1), (1, 6), (3, 5), (4, 4), (5, 2)):
        with warnings.catch_warnings():  # torch warns that Tq > Tk gives NaN rows
            warnings.simplefilter("ignore", UserWarning)
            bias = causal_lower_right(tq, tk)
        # _materialize is the dense mask torch itself builds for the math backend
        np.testing.assert_array_equal(
            bias._materialize().numpy(), causal_mask(tq, tk, align="bottom-right")
        )
        if tq > tk:
            continue  # torch's fused path gives NaN rows there; ours gives zeros
        q, k, v = (
            rng.normal(size=(2, tq, 4)),
            rng.normal(size=(2, tk, 4)),
            rng.normal(size=(2, tk, 3)),
        )
        ours, _ = scaled_dot_product_attention(
            q, k, v, mask=causal_mask(tq, tk, align="bottom-right")
        )
        theirs = F.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)), attn_mask=bias)
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=0, atol=1e-10)


def _mistral_sliding_mask(transformers, torch, window, n_cached, n_new):
    """transformers' sliding-window causal mask for a Mistral config (checked with 5.23).

    With ``n_cached`` tokens in a DynamicCache the cache layer keeps only the last
    ``window - 1`` of them, and the mask covers those plus the ``n_new`` queries.
    """
    from transformers.cache_utils import DynamicCache
    from transformers.masking_utils import create_sliding_window_causal_mask

    config = transformers.MistralConfig(
        hidden_size=8,
        num_attention_heads=2,
        num_key_value_heads=1,
        num_hidden_layers=1,
        sliding_window=window,
    )
    config._attn_implementation = "sdpa"  # a materialized boolean mask, True = attend
    cache = None
    if n_cached:
        cache = DynamicCache(config=config)
        kv = torch.zeros(1, 1, n_cached, 4, dtype=torch.float64)
        cache.update(kv, kv, 0)
    mask = create_sliding_window_causal_mask(
        config=config,
        inputs_embeds=torch.zeros(1, n_new, 8, dtype=torch.float64),
        attention_mask=None,
        cache=cache,  # transformers 5.24 (the reference lock); `past_key_values` before
        position_ids=torch.arange(n_cached, n_cached + n_new)[None],
        allow_is_causal_skip=False,
    )
    return mask[0, 0].numpy()


def test_sliding_window_matches_transformers_mistral():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    for window, n_cached, n_new in (
        (3, 0, 6),
        (1, 0, 4),
        (4, 0, 3),
        (3, 2, 2),
        (3, 5, 3),
        (4, 9, 1),
    ):
        theirs = _mistral_sliding_mask(transformers, torch, window, n_cached, n_new)
        ours = sliding_window_mask(n_new, n_cached + n_new, window=window)
        kept = theirs.shape[-1]  # the keys transformers' cache still holds: the last ones
        np.testing.assert_array_equal(ours[:, -kept:], theirs)
        assert not ours[:, :-kept].any()  # the keys it dropped were outside every window


# Behaviour of PyTorch that the Attention Mechanism Math pages state for the CPU build
# (masking.md §4.2, common-mistakes.md mistake 4, why-this-matters.md): pinned here so
# that an upgrade that changes it fails rather than leaving the pages wrong.


def _empty_row_problem(torch, dtype):
    """q, k, v (1, 2, 4, 8) and a (4, 4) mask whose query row 1 sees no key."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 4, 8, generator=g, dtype=torch.float64) for _ in range(3))
    allowed = torch.ones(4, 4, dtype=torch.bool)
    allowed[1] = False
    return q.to(dtype), k.to(dtype), v.to(dtype), allowed


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("backend", ["MATH", "FLASH_ATTENTION"])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_torch_sdpa_cpu_backends_zero_a_row_with_no_visible_key(dtype, backend, kind):
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend, sdpa_kernel

    dt = getattr(torch, dtype)  # the CPU flash kernel takes all four
    q, k, v, allowed = _empty_row_problem(torch, dt)
    mask = allowed
    if kind == "float":  # the additive form: 0 where visible, -inf where blocked
        mask = torch.zeros(4, 4, dtype=dt).masked_fill(~allowed, float("-inf"))
    with sdpa_kernel(getattr(SDPBackend, backend)):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert torch.equal(out[..., 1, :], torch.zeros_like(out[..., 1, :]))  # zeros, no NaN
    assert torch.isfinite(out).all()
    # the other rows are ordinary attention: the kernel's output, to the dtype's rounding
    ours, _ = scaled_dot_product_attention(
        *(x.double().numpy() for x in (q, k, v)), mask=allowed.numpy()
    )
    # u = 2^-53, 2^-24, 2^-11, 2^-8: inputs, 8-term scores, weights and the weighted
    # sum carry about 10 u between them, on values |v| < 4: atol ≈ 40 u
    tol = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-2, "bfloat16": 2e-1}[dtype]
    np.testing.assert_allclose(out.double().numpy(), ours, rtol=0, atol=tol)


def test_torch_cpu_has_only_the_math_and_flash_sdpa_backends():
    # why-this-matters.md: on a CPU, SDPA chooses between a flash-style kernel and math
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v, _ = _empty_row_problem(torch, torch.float32)
    for name, runs in (
        ("MATH", True),
        ("FLASH_ATTENTION", True),
        ("EFFICIENT_ATTENTION", False),
        ("CUDNN_ATTENTION", False),
    ):
        with sdpa_kernel(getattr(SDPBackend, name)):
            try:
                torch.nn.functional.scaled_dot_product_attention(q, k, v)
            except RuntimeError:
                ran = False
            else:
                ran = True
        assert ran == runs, name


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
def test_torch_multihead_attention_row_with_no_visible_key(
    batch_first, training, grad, need_weights
):
    # masking.md §4.2: NaN whenever the weights are asked for, and in the inference
    # fast path (batch_first self-attention, eval mode, no grad); otherwise the row is
    # zeroed before the output projection, so the output is out_proj's bias
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    m = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
    m.train(training)
    x = torch.randn(1, 4, 8) if batch_first else torch.randn(4, 1, 8)
    blocked = torch.zeros(4, 4, dtype=torch.bool)  # torch: True = may not attend
    blocked[1] = True
    with torch.enable_grad() if grad else torch.no_grad():
        out, _ = m(x, x, x, need_weights=need_weights, attn_mask=blocked)
    row = (out[0, 1] if batch_first else out[1, 0]).detach()
    fast_path = batch_first and not training and not grad
    if need_weights or fast_path:
        assert torch.isnan(row).all()
    else:
        assert torch.allclose(row, m.out_proj.bias.detach(), rtol=0, atol=1e-6)
