"""One rule for non-finite input across the whole kernel.

A NaN or an infinity in any float argument of any public function raises ``ValueError``
naming that argument (a NaN position, table entry or logit otherwise comes back as a
plausible-looking result). The one exception is ``-inf`` meaning "masked": logits given to
``softmax``, ``log_softmax``, ``cross_entropy`` and ``cross_entropy_grad``, the ``x`` of
``logsumexp`` and the ``scores`` of ``online_softmax_stats``, the ``bias`` of
``scaled_dot_product_attention``, ``multi_head_attention``, ``blockwise_attention`` and
``sdpa_backward``, the ``fill`` of ``mask_to_bias``, and the logits of Language Model
Probability's losses, filters and processors (``MASKED``); NaN and ``+inf`` are rejected there
too. Tokenization Math's lattice functions take their scores as a mapping, checked per piece.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import llmmath as lm

R = np.random.default_rng(0)


def arr(*shape):
    return R.normal(size=shape) + 0.5


# name -> (valid keyword arguments, the float arguments that must be finite)
CASES = {
    "all_but_the_top": (dict(X=arr(6, 4), n_components=1), ["X"]),
    "analogy": (dict(E=arr(6, 4), a=0, b=1, c=2), ["E"]),
    "anisotropy": (dict(X=arr(5, 3)), ["X"]),
    "append_kv": (
        dict(cache_k=arr(2, 3), cache_v=arr(2, 2), k_new=arr(1, 3), v_new=arr(1, 2), window=2),
        ["cache_k", "cache_v", "k_new", "v_new"],
    ),
    "apply_rope": (
        dict(x=arr(3, 4), positions=np.arange(3.0), base=10000.0, inv_freq=np.array([1.0, 0.1])),
        ["x", "positions", "inv_freq"],
    ),
    "attention_entropy": (dict(weights=np.full((2, 3), 1 / 3)), ["weights"]),
    "attention_rollout": (
        dict(weights=np.full((2, 3, 3), 1 / 3), residual=0.5),
        ["weights", "residual"],
    ),
    "blockwise_attention": (
        dict(q=arr(3, 2), k=arr(4, 2), v=arr(4, 2), block_size=2, bias=arr(3, 4), scale=0.5),
        ["q", "k", "v", "bias", "scale"],
    ),
    "center": (dict(X=arr(4, 3)), ["X"]),
    "cosine": (dict(u=arr(3), v=arr(3), eps=1e-12), ["u", "v", "eps"]),
    "cross_entropy": (dict(logits=arr(2, 4), targets=np.array([0, 1])), ["logits"]),
    "cross_entropy_grad": (dict(logits=arr(2, 4), targets=np.array([0, 1])), ["logits"]),
    "dequantize": (dict(q=np.ones((2, 3), np.int8), scale=np.ones((2, 1))), ["scale"]),
    "directional_derivative": (
        dict(f=lambda x: float(x @ x), x=arr(3), v=arr(3), eps=1e-6),
        ["x", "v", "eps"],
    ),
    "dot": (dict(u=arr(3), v=arr(3)), ["u", "v"]),
    "dynamic_ntk_base": (
        dict(base=10000.0, factor=2.0, d_head=8, seq_len=20, original_max_positions=10),
        ["base", "factor"],
    ),
    "euclidean": (dict(u=arr(3), v=arr(3)), ["u", "v"]),
    "fit_probe": (
        dict(X=arr(6, 3), y=np.array([0, 1, 0, 1, 0, 1]), steps=5, lr=0.5, l2=0.1),
        ["X", "lr", "l2"],
    ),
    "glove_grads": (
        dict(W=arr(3, 2), W_ctx=arr(3, 2), b=arr(3), b_ctx=arr(3), X=np.ones((3, 3))),
        ["W", "W_ctx", "b", "b_ctx", "X"],
    ),
    "glove_loss": (
        dict(W=arr(3, 2), W_ctx=arr(3, 2), b=arr(3), b_ctx=arr(3), X=np.ones((3, 3))),
        ["W", "W_ctx", "b", "b_ctx", "X"],
    ),
    "glove_weight": (dict(x=np.ones(3), x_max=100.0, alpha=0.75), ["x", "x_max", "alpha"]),
    "half_to_interleaved": (dict(x=arr(4)), ["x"]),
    "hidden_grad": (dict(h=arr(3), W=arr(5, 3), y=1), ["h", "W"]),
    "interleaved_to_half": (dict(x=arr(4)), ["x"]),
    "interpolate_table": (dict(P=arr(4, 2), new_length=6), ["P"]),
    "linear_attention": (dict(q=arr(3, 2), k=arr(3, 2), v=arr(3, 2)), ["q", "k", "v"]),
    "linear_scaled_frequencies": (dict(d_head=8, factor=2.0, base=10000.0), ["factor", "base"]),
    "llama3_frequencies": (
        dict(d_head=8, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, base=500000.0),
        ["factor", "low_freq_factor", "high_freq_factor", "base"],
    ),
    "log_softmax": (dict(z=arr(2, 4)), ["z"]),
    "logsumexp": (dict(x=arr(2, 4)), ["x"]),
    "longrope_attention_factor": (dict(factor=4.0, original_max_positions=4096), ["factor"]),
    "longrope_frequencies": (
        dict(d_head=4, ext_factors=np.array([1.0, 2.0]), base=10000.0),
        ["ext_factors", "base"],
    ),
    "lookup": (dict(E=arr(5, 3), ids=np.array([0, 4])), ["E"]),
    "mask_to_bias": (dict(mask=np.array([True, False]), fill=-1e9), ["fill"]),
    "mean_pool": (dict(H=arr(2, 3, 4), mask=np.ones((2, 3))), ["H"]),
    "mean_pool_kv_heads": (dict(w=arr(3, 4), n_heads=2, n_groups=1), ["w"]),
    "merge_heads": (dict(X=arr(2, 3, 4)), ["X"]),
    "multi_head_attention": (
        dict(
            x=arr(3, 4),
            w_q=arr(4, 4),
            w_k=arr(4, 2),
            w_v=arr(4, 2),
            w_o=arr(4, 4),
            n_heads=2,
            n_kv_heads=1,
            context=arr(5, 4),
            bias=np.zeros((2, 3, 5)),
        ),
        ["x", "w_q", "w_k", "w_v", "w_o", "context", "bias"],
    ),
    "noise_distribution": (dict(counts=np.array([3.0, 1.0]), power=0.75), ["counts", "power"]),
    "norm_report": (dict(E=arr(5, 3)), ["E"]),
    "normalize": (dict(X=arr(3, 2), eps=1e-12), ["X", "eps"]),
    "ntk_scaled_base": (dict(base=10000.0, factor=2.0, d_head=8), ["base", "factor"]),
    "online_softmax_stats": (dict(scores=arr(2, 5), block_size=2), ["scores"]),
    "outlier_rows": (dict(E=arr(6, 3), z=3.0), ["E", "z"]),
    "output_row_grad": (dict(h=arr(3), W=arr(5, 3), y=1), ["h", "W"]),
    "pca": (dict(X=arr(6, 3), k=2), ["X"]),
    "probe_accuracy": (
        dict(X=arr(4, 3), y=np.array([0, 1, 0, 1]), w=arr(3), b=0.1),
        ["X", "w", "b"],
    ),
    "project_out": (dict(X=arr(3, 4), direction=arr(4)), ["X", "direction"]),
    "quantize_int8": (dict(E=arr(3, 4)), ["E"]),
    "remap_rows": (
        dict(E_old=arr(3, 2), old_vocab=["a", "b", "c"], new_vocab=["b", "z"]),
        ["E_old"],
    ),
    "repeat_kv": (dict(x=arr(2, 3, 4), n_rep=2), ["x"]),
    "resize": (dict(E=arr(3, 2), new_vocab_size=5), ["E"]),
    "rope_cos_sin": (
        dict(
            positions=np.arange(3.0),
            inv_freq=np.array([1.0, 0.1]),
            layout="half",
            attention_factor=1.2,
        ),
        ["positions", "inv_freq", "attention_factor"],
    ),
    "rope_frequencies": (dict(d_head=8, base=10000.0), ["base"]),
    "rope_matrix": (dict(p=3.0, d_head=4, base=10000.0), ["p", "base"]),
    "rope_weights_to_half": (dict(W=arr(8, 3), n_heads=2), ["W"]),
    "rotate_pairs": (dict(x=arr(4), layout="half"), ["x"]),
    "row_drift": (dict(E_before=arr(3, 2), E_after=arr(3, 2)), ["E_before", "E_after"]),
    "scaled_dot_product_attention": (
        dict(q=arr(2, 4), k=arr(3, 4), v=arr(3, 2), bias=np.zeros((2, 3)), scale=0.5),
        ["q", "k", "v", "bias", "scale"],
    ),
    "sdpa_backward": (
        dict(q=arr(3, 2), k=arr(4, 2), v=arr(4, 2), grad_out=arr(3, 2), bias=arr(3, 4), scale=0.5),
        ["q", "k", "v", "grad_out", "bias", "scale"],
    ),
    "sgns_loss": (
        dict(center=arr(3), context=arr(3), negatives=arr(2, 3)),
        ["center", "context", "negatives"],
    ),
    "shaw_attention": (
        dict(
            q=arr(3, 2), k=arr(3, 2), v=arr(3, 2), rel_k=arr(3, 2), rel_v=arr(3, 2), max_distance=1
        ),
        ["q", "k", "v", "rel_k", "rel_v"],
    ),
    "sigmoid": (dict(x=arr(3)), ["x"]),
    "similarity_matrix": (dict(A=arr(2, 3), B=arr(4, 3)), ["A", "B"]),
    "sinusoidal": (dict(n_positions=4, d_model=4, base=10000.0), ["base"]),
    "sinusoidal_shift": (dict(delta=2.0, d_model=4, base=10000.0), ["delta", "base"]),
    "softmax": (dict(z=arr(2, 4)), ["z"]),
    "softmax_jacobian": (dict(a=np.array([0.25, 0.75])), ["a"]),
    "split_heads": (dict(X=arr(3, 4), n_heads=2), ["X"]),
    "t5_bias": (dict(table=arr(32, 2), n_queries=3), ["table"]),
    "tied_logits": (dict(h=arr(3), E=arr(5, 3)), ["h", "E"]),
    "top_k": (dict(query=arr(3), X=arr(5, 3), k=2), ["query", "X"]),
    "transformer_xl_terms": (
        dict(q=arr(3, 2), k=arr(3, 2), r=arr(5, 2), u=arr(2), v=arr(2)),
        ["q", "k", "r", "u", "v"],
    ),
    "wavelengths": (dict(inv_freq=np.array([1.0, 0.1])), ["inv_freq"]),
    "whiten": (dict(X=arr(8, 3)), ["X"]),
    "yarn_attention_factor": (dict(factor=4.0), ["factor"]),
    "yarn_frequencies": (
        dict(
            d_head=8,
            factor=4.0,
            original_max_positions=64,
            base=10000.0,
            beta_fast=32.0,
            beta_slow=1.0,
        ),
        ["factor", "base", "beta_fast", "beta_slow"],
    ),
    # Tokenization Math (tokstats); segment's scores come in a mapping (SCORE_MAPS below)
    "renyi_entropy": (dict(counts=np.array([3.0, 2.0, 1.0]), alpha=2.0), ["counts"]),
    "renyi_efficiency": (dict(counts=np.array([3.0, 2.0, 1.0]), alpha=2.5), ["counts"]),
    "premium": (
        dict(n_tokens=np.array([3.0, 4.0]), n_tokens_reference=2.0),
        ["n_tokens", "n_tokens_reference"],
    ),
    # Language Model Probability
    "causal_lm_loss": (
        dict(logits=arr(2, 3, 4), labels=np.array([[0, 1, 2], [3, 0, 1]]), label_smoothing=0.1),
        ["logits", "label_smoothing"],
    ),
    "token_logprobs": (dict(logits=arr(3, 4), ids=np.array([0, 1, 2])), ["logits"]),
    "sequence_logprob": (
        dict(logits=arr(3, 4), ids=np.array([0, 1, 2]), mask=np.ones(3)),
        ["logits", "mask"],
    ),
    "z_loss": (dict(logits=arr(2, 4), coef=1e-4, mask=np.ones(2)), ["logits", "coef", "mask"]),
    "z_loss_grad": (dict(logits=arr(2, 4), coef=1e-4, mask=np.ones(2)), ["logits", "coef", "mask"]),
    "entropy": (dict(p=np.array([0.5, 0.25, 0.25]), base=2.0), ["p", "base"]),
    "cross_entropy_dist": (
        dict(p=np.array([0.5, 0.5]), q=np.array([0.25, 0.75]), base=2.0),
        ["p", "q", "base"],
    ),
    "kl_divergence": (
        dict(p=np.array([0.5, 0.5]), q=np.array([0.25, 0.75]), base=2.0),
        ["p", "q", "base"],
    ),
    "perplexity": (dict(nll=np.array([1.0, 2.0])), ["nll"]),
    "bits_per_byte": (dict(nll=9.0, n_bytes=13), ["nll"]),
    "apply_temperature": (dict(logits=arr(2, 4), temperature=0.7), ["logits", "temperature"]),
    "top_k_filter": (dict(logits=arr(2, 4), k=2), ["logits"]),
    "top_p_filter": (dict(logits=arr(2, 4), top_p=0.8), ["logits", "top_p"]),
    "min_p_filter": (dict(logits=arr(2, 4), min_p=0.1), ["logits", "min_p"]),
    "typical_filter": (dict(logits=arr(2, 4), mass=0.9), ["logits", "mass"]),
    "epsilon_filter": (dict(logits=arr(2, 4), epsilon=0.01), ["logits", "epsilon"]),
    "sample": (dict(logits=arr(2, 4), rng=np.random.default_rng(0)), ["logits"]),
    "repetition_penalty": (
        dict(logits=arr(2, 4), context_ids=np.array([0, 1]), penalty=1.3),
        ["logits", "penalty"],
    ),
    "cfg_logprobs": (
        dict(cond_logits=arr(4), uncond_logits=arr(4), guidance_scale=1.5),
        ["cond_logits", "uncond_logits", "guidance_scale"],
    ),
    "warp": (
        dict(logits=arr(2, 4), temperature=0.7, top_p=0.9),
        ["logits", "temperature", "top_p"],
    ),
    "length_penalized_score": (
        dict(sum_logprob=-2.5, length=5, length_penalty=1.0),
        ["sum_logprob", "length_penalty"],
    ),
    "gnmt_length_penalty": (dict(length=5, length_penalty=0.6), ["length_penalty"]),
    # -inf log-probabilities are allowed only outside V_head (amateur) and are tested
    # in tests/test_search.py; here the threshold
    "contrastive_scores": (
        dict(
            expert_logprobs=np.log([0.5, 0.3, 0.2]),
            amateur_logprobs=np.log([0.6, 0.2, 0.2]),
            alpha=0.1,
        ),
        ["alpha"],
    ),
    "acceptance_rate": (dict(p=np.array([0.5, 0.3, 0.2]), q=np.array([0.2, 0.5, 0.3])), ["p", "q"]),
    "residual_distribution": (
        dict(p=np.array([0.5, 0.3, 0.2]), q=np.array([0.2, 0.5, 0.3])),
        ["p", "q"],
    ),
    "speculative_output_distribution": (
        dict(p=np.array([0.5, 0.3, 0.2]), q=np.array([0.2, 0.5, 0.3])),
        ["p", "q"],
    ),
    "speculative_step": (
        dict(
            p=np.full((2, 3), 1 / 3),
            q=np.full((1, 3), 1 / 3),
            draft=np.array([1]),
            rng=np.random.default_rng(0),
        ),
        ["p", "q"],
    ),
    "expected_tokens_per_step": (dict(accept_rate=0.8, gamma=4), ["accept_rate"]),
    "speculative_speedup": (
        dict(accept_rate=0.8, gamma=4, cost_ratio=0.05),
        ["accept_rate", "cost_ratio"],
    ),
    "reliability_bins": (
        dict(confidences=np.array([0.9, 0.6, 0.7]), correct=np.array([1, 0, 1]), n_bins=5),
        ["confidences"],
    ),
    "expected_calibration_error": (
        dict(confidences=np.array([0.9, 0.6, 0.7]), correct=np.array([1, 0, 1]), n_bins=5),
        ["confidences"],
    ),
    # a -inf logit masks a class unless it sits on a label (tests/test_calibration.py)
    "temperature_nll": (
        dict(logits=arr(3, 4), labels=np.array([0, 1, 2]), temperature=1.5),
        ["temperature"],
    ),
    "fit_temperature": (
        dict(
            logits=np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [1.0, 0.0, 2.0], [2.0, 0.0, 1.0]]),
            labels=np.array([0, 1, 1, 2]),
        ),
        [],
    ),
}
# -inf means "masked" here; NaN and +inf are still rejected.
MASKED = {
    ("blockwise_attention", "bias"),
    ("logsumexp", "x"),
    ("online_softmax_stats", "scores"),
    ("sdpa_backward", "bias"),
    ("softmax", "z"),
    ("log_softmax", "z"),
    ("cross_entropy", "logits"),
    ("cross_entropy_grad", "logits"),
    ("mask_to_bias", "fill"),
    ("multi_head_attention", "bias"),
    ("scaled_dot_product_attention", "bias"),
    ("causal_lm_loss", "logits"),
    ("token_logprobs", "logits"),
    ("sequence_logprob", "logits"),
    ("z_loss", "logits"),
    ("z_loss_grad", "logits"),
    ("apply_temperature", "logits"),
    ("top_k_filter", "logits"),
    ("top_p_filter", "logits"),
    ("min_p_filter", "logits"),
    ("typical_filter", "logits"),
    ("epsilon_filter", "logits"),
    ("sample", "logits"),
    ("repetition_penalty", "logits"),
    ("cfg_logprobs", "cond_logits"),
    ("cfg_logprobs", "uncond_logits"),
    ("warp", "logits"),
    ("length_penalized_score", "sum_logprob"),
}
# Functions whose every argument is an integer, a string or a label: nothing to poison.
NO_FLOAT_INPUT = {
    "alibi_bias",
    "alibi_slopes",
    "attention_flops",
    "causal_mask",
    "document_mask",
    "key_padding_mask",
    "kv_cache_bytes",
    "memory_bytes",
    "mha_param_count",
    "one_hot",
    "packed_position_ids",
    "pad_ids",
    "param_count",
    "position_ids",
    "prefix_lm_mask",
    "recall_at_k",
    "relative_positions",
    "sliding_window_mask",
    "t5_bucket",
    # Tokenization Math: text, bytes, ids and counts
    "Merge",
    "bytes_to_unicode",
    "pretokenize",
    "bpe_train",
    "bpe_encode_word",
    "bpe_vocab",
    "bpe_encode_text",
    "bpe_decode_ids",
    "wordpiece_encode",
    "count_segmentations",
    "count_bounded_segmentations",
    "fertility",
    # Language Model Probability: ids and sizes
    "no_repeat_ngram_mask",
    "shift_labels",
    "strided_windows",
    "strided_nll",  # its window_logprobs come from a callable: checked in tests/test_measures.py
    # the model is a callable; its log-probabilities are checked in tests/test_search.py
    "greedy_decode",
    "beam_search",
    "pass_at_k",
}
# Tokenization Math's lattice functions take their scores as a mapping piece -> float:
# one poisoned score must raise naming that piece.
TOY = {"a": np.log(0.3), "b": np.log(0.2), "ab": np.log(0.4), "ba": np.log(0.1)}
SCORE_MAPS = {
    "viterbi": dict(text="abab"),
    "forward_backward": dict(text="abab"),
    "segmentation_entropy": dict(text="abab", alpha=1.0),
    "sample_segmentation": dict(text="abab", rng=np.random.default_rng(0)),
    "em_step": dict(word_counts={"abab": 2, "aba": 1}),
    "removal_loss": dict(word_counts={"abab": 2, "aba": 1}, piece="ba"),
}
PAIRS = [(name, arg) for name, (_, floats) in CASES.items() for arg in floats]


def test_every_public_function_is_covered():
    assert set(CASES) | NO_FLOAT_INPUT | set(SCORE_MAPS) == set(lm.__all__)


@pytest.mark.parametrize("name", sorted(SCORE_MAPS))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_piece_score_raises_naming_the_piece(name, bad):
    func = getattr(lm, name)
    func(log_probs=TOY, **SCORE_MAPS[name])  # the valid call runs
    with pytest.raises(ValueError, match=r"log_probs\['ab'\] must be finite"):
        func(log_probs=dict(TOY, ab=bad), **SCORE_MAPS[name])


@pytest.mark.parametrize("name", sorted(CASES))
def test_valid_arguments_run(name):
    kwargs, _ = CASES[name]
    getattr(lm, name)(**kwargs)


def poison(value, bad, where):
    if np.ndim(value) == 0:
        return bad
    out = np.array(value, dtype=np.float64)
    out.flat[where % out.size] = bad
    return out


@pytest.mark.parametrize("name,arg", PAIRS, ids=[f"{n}-{a}" for n, a in PAIRS])
@settings(max_examples=12, deadline=None)
@given(bad=st.sampled_from([np.nan, np.inf, -np.inf]), where=st.integers(0, 1000))
def test_non_finite_input_raises_naming_the_argument(name, arg, bad, where):
    kwargs, _ = CASES[name]
    kwargs = dict(kwargs, **{arg: poison(kwargs[arg], bad, where)})
    func = getattr(lm, name)
    if bad == -np.inf and (name, arg) in MASKED:
        result = func(**kwargs)  # a masked entry: allowed, and gives no NaN
        flat = np.concatenate(
            [np.ravel(r) for r in (result if isinstance(result, tuple) else (result,))]
        )
        assert not np.isnan(flat).any()
        return
    with pytest.raises(ValueError, match=rf"\b{arg}\b"):
        func(**kwargs)


def test_softmax_row_with_no_finite_logit_raises():
    with pytest.raises(ValueError, match="z"):
        lm.softmax([[0.0, 1.0], [-np.inf, -np.inf]])
    np.testing.assert_array_equal(lm.softmax([-np.inf, 0.0]), [0.0, 1.0])


@pytest.mark.parametrize(
    "values",
    [
        np.array(["1", "2"]),
        np.array([1, 2], dtype="datetime64[s]"),
        np.array([1, 2], dtype="timedelta64[s]"),
        np.array([1.0, None], dtype=object),
    ],
    ids=["str", "datetime", "timedelta", "object"],
)
def test_non_numeric_arrays_are_refused_by_name(values):
    with pytest.raises(TypeError, match=r"normalize: X must be numeric; got dtype"):
        lm.normalize(values)
