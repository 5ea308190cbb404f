"""The public API matches the contract: every name at the top level and in its module,
each with a shape-annotated docstring and a doctest."""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

import llmmath as lm

CONTRACT = {
    "embeddings": ["lookup", "one_hot", "tied_logits", "param_count", "resize"],
    "similarity": ["dot", "cosine", "euclidean", "normalize", "similarity_matrix", "top_k"],
    "geometry": [
        "center",
        "anisotropy",
        "pca",
        "whiten",
        "all_but_the_top",
        "analogy",
        "project_out",
    ],
    "training": [
        "softmax",
        "log_softmax",
        "cross_entropy",
        "cross_entropy_grad",
        "output_row_grad",
        "sgns_loss",
        "noise_distribution",
        "glove_weight",
        "glove_loss",
    ],
    "positions": ["sinusoidal", "sinusoidal_shift", "wavelengths", "interpolate_table"],
    "relative": [
        "relative_positions",
        "t5_bucket",
        "t5_bias",
        "shaw_attention",
        "transformer_xl_terms",
        "alibi_slopes",
        "alibi_bias",
    ],
    "rope": [
        "rope_frequencies",
        "apply_rope",
        "rope_matrix",
        "interleaved_to_half",
        "half_to_interleaved",
        "rope_cos_sin",
        "rope_weights_to_half",
        "linear_scaled_frequencies",
        "ntk_scaled_base",
        "dynamic_ntk_base",
        "yarn_frequencies",
        "yarn_attention_factor",
        "llama3_frequencies",
        "longrope_frequencies",
        "longrope_attention_factor",
    ],
    "attention": [
        "causal_mask",
        "scaled_dot_product_attention",
        "split_heads",
        "merge_heads",
        "position_ids",
        "packed_position_ids",
    ],
    "masks": [
        "causal_mask",
        "key_padding_mask",
        "sliding_window_mask",
        "prefix_lm_mask",
        "document_mask",
        "mask_to_bias",
    ],
    "heads": [
        "multi_head_attention",
        "repeat_kv",
        "mean_pool_kv_heads",
        "mha_param_count",
        "attention_flops",
        "kv_cache_bytes",
        "append_kv",
    ],
    "efficient": [
        "online_softmax_stats",
        "logsumexp",
        "softmax_jacobian",
        "blockwise_attention",
        "sdpa_backward",
        "linear_attention",
        "attention_entropy",
        "attention_rollout",
    ],
    "softmax": ["softmax", "log_softmax", "sigmoid", "logsumexp", "softmax_jacobian"],
    "diagnostics": [
        "quantize_int8",
        "dequantize",
        "memory_bytes",
        "norm_report",
        "outlier_rows",
        "remap_rows",
    ],
    "tokenize": [
        "Merge",
        "bytes_to_unicode",
        "pretokenize",
        "bpe_train",
        "bpe_encode_word",
        "bpe_vocab",
        "bpe_encode_text",
        "bpe_decode_ids",
        "wordpiece_encode",
    ],
    "segment": [
        "count_segmentations",
        "count_bounded_segmentations",
        "viterbi",
        "forward_backward",
        "segmentation_entropy",
        "sample_segmentation",
        "em_step",
        "removal_loss",
    ],
    "tokstats": ["renyi_entropy", "renyi_efficiency", "fertility", "premium"],
    "likelihood": [
        "cross_entropy",
        "cross_entropy_grad",
        "shift_labels",
        "causal_lm_loss",
        "token_logprobs",
        "sequence_logprob",
        "z_loss",
        "z_loss_grad",
    ],
    "measures": [
        "entropy",
        "cross_entropy_dist",
        "kl_divergence",
        "perplexity",
        "bits_per_byte",
        "strided_windows",
        "strided_nll",
    ],
    "sampling": [
        "apply_temperature",
        "top_k_filter",
        "top_p_filter",
        "min_p_filter",
        "typical_filter",
        "epsilon_filter",
        "sample",
    ],
    "processors": ["repetition_penalty", "no_repeat_ngram_mask", "cfg_logprobs", "warp"],
    "search": [
        "greedy_decode",
        "beam_search",
        "length_penalized_score",
        "gnmt_length_penalty",
        "contrastive_scores",
    ],
    "speculative": [
        "acceptance_rate",
        "residual_distribution",
        "speculative_output_distribution",
        "speculative_step",
        "expected_tokens_per_step",
        "speculative_speedup",
    ],
    "calibration": [
        "reliability_bins",
        "expected_calibration_error",
        "temperature_nll",
        "fit_temperature",
        "pass_at_k",
    ],
}
SIGNATURES = {
    "param_count": "(vocab_size, d_model, *, tied=True, n_positions=0)",
    "resize": "(E, new_vocab_size, *, init='mean', rng=None)",
    "cosine": "(u, v, eps=1e-12)",
    "similarity_matrix": "(A, B, metric='cosine')",
    "top_k": "(query, X, k, metric='cosine', exclude=())",
    "whiten": "(X, k=None)",
    "analogy": "(E, a, b, c, k=1, exclude=True)",
    "apply_rope": "(x, positions=None, *, base=10000.0, layout='interleaved', inv_freq=None)",
    "t5_bucket": "(relative_position, *, bidirectional=True, num_buckets=32, max_distance=128)",
    "yarn_frequencies": "(d_head, factor, original_max_positions, base=10000.0, beta_fast=32, beta_slow=1)",
    "scaled_dot_product_attention": "(q, k, v, *, mask=None, bias=None, causal=False, scale=None)",
    "remap_rows": "(E_old, old_vocab, new_vocab, *, init='mean', rng=None)",
    "glove_weight": "(x, x_max=100.0, alpha=0.75)",
    "noise_distribution": "(counts, power=0.75)",
    "sinusoidal": "(n_positions, d_model, base=10000.0)",
    "sinusoidal_shift": "(delta, d_model, base=10000.0)",
    "wavelengths": "(inv_freq)",
    # the contract's signature, plus query_offset (decode steps), added at the end
    "t5_bias": "(table, n_queries, n_keys=None, *, bidirectional=True, num_buckets=32, max_distance=128, query_offset=0)",
    "shaw_attention": "(q, k, v, rel_k, rel_v=None, *, max_distance, mask=None, causal=False)",
    "transformer_xl_terms": "(q, k, r, u, v)",
    "rope_cos_sin": "(positions, inv_freq, *, layout, attention_factor=1.0)",
    "dynamic_ntk_base": "(base, factor, d_head, seq_len, original_max_positions)",
    "llama3_frequencies": "(d_head, factor, original_max_positions=8192, *, low_freq_factor=1.0, high_freq_factor=4.0, base=500000.0)",
    "longrope_frequencies": "(d_head, ext_factors, base=10000.0)",
    "longrope_attention_factor": "(factor, original_max_positions)",
    "rope_weights_to_half": "(W, n_heads)",
    "position_ids": "(attention_mask)",
    "packed_position_ids": "(lengths)",
    "rope_matrix": "(p, d_head, base=10000.0)",
    "alibi_bias": "(n_heads, seq_len)",
    "relative_positions": "(n_queries, n_keys=None)",
    "causal_mask": "(n_queries, n_keys=None, *, align='top-left')",
    "key_padding_mask": "(attention_mask)",
    "sliding_window_mask": "(n_queries, n_keys=None, *, window)",
    "prefix_lm_mask": "(n, prefix_length)",
    "document_mask": "(lengths, *, causal=True)",
    "mask_to_bias": "(mask, *, fill=-inf)",
    "multi_head_attention": "(x, w_q, w_k, w_v, w_o, n_heads, *, n_kv_heads=None, context=None, mask=None, causal=False, bias=None)",
    "repeat_kv": "(x, n_rep)",
    "mean_pool_kv_heads": "(w, n_heads, n_groups)",
    "mha_param_count": "(d_model, n_heads, *, n_kv_heads=None, d_head=None, bias=False)",
    "attention_flops": "(n_queries, d_model, *, n_keys=None)",
    "kv_cache_bytes": "(n_layers, n_kv_heads, d_head, seq_len, *, batch=1, dtype='float16')",
    "append_kv": "(cache_k, cache_v, k_new, v_new, *, window=None, n_sink=0)",
    "online_softmax_stats": "(scores, *, block_size=1)",
    "logsumexp": "(x, axis=-1)",
    "softmax_jacobian": "(a)",
    "blockwise_attention": "(q, k, v, *, block_size, mask=None, bias=None, causal=False, scale=None)",
    "sdpa_backward": "(q, k, v, grad_out, *, mask=None, bias=None, causal=False, scale=None)",
    "linear_attention": "(q, k, v, *, causal=False, mode='parallel')",
    "attention_entropy": "(weights)",
    "attention_rollout": "(weights, *, residual=0.5)",
    "softmax": "(z, axis=-1)",
    "log_softmax": "(z, axis=-1)",
    "bytes_to_unicode": "()",
    "pretokenize": "(text)",
    "bpe_train": "(word_counts, num_merges, *, tie_order='bytes')",
    "bpe_encode_word": "(word, merges)",
    "bpe_vocab": "(merges)",
    "bpe_encode_text": "(text, merges, *, special_tokens=None)",
    "bpe_decode_ids": "(ids, merges, *, special_tokens=None, errors='replace')",
    "wordpiece_encode": "(word, vocab, *, unk_token='[UNK]', prefix='##', max_chars=100)",
    "count_segmentations": "(text, vocab)",
    "count_bounded_segmentations": "(n, max_len)",
    "viterbi": "(text, log_probs)",
    "forward_backward": "(text, log_probs)",
    "segmentation_entropy": "(text, log_probs, *, alpha=1.0)",
    "sample_segmentation": "(text, log_probs, *, rng, alpha=1.0, size=None)",
    "em_step": "(word_counts, log_probs)",
    "removal_loss": "(word_counts, log_probs, piece)",
    "renyi_entropy": "(counts, alpha, *, base=None)",
    "renyi_efficiency": "(counts, alpha=2.5, *, vocab_size=None)",
    "fertility": "(pieces_per_word)",
    "premium": "(n_tokens, n_tokens_reference)",
    "cross_entropy": "(logits, targets, *, ignore_index=None, label_smoothing=0.0, reduction='mean')",
    "cross_entropy_grad": "(logits, targets, *, ignore_index=None, label_smoothing=0.0)",
    "shift_labels": "(labels, *, ignore_index=-100)",
    "causal_lm_loss": "(logits, labels, *, ignore_index=-100, label_smoothing=0.0, num_items=None)",
    "token_logprobs": "(logits, ids)",
    "sequence_logprob": "(logits, ids, *, start=1, mask=None)",
    "z_loss": "(logits, *, coef=0.0001, mask=None)",
    "z_loss_grad": "(logits, *, coef=0.0001, mask=None)",
    "entropy": "(p, *, base=None)",
    "cross_entropy_dist": "(p, q, *, base=None)",
    "kl_divergence": "(p, q, *, base=None)",
    "perplexity": "(nll, n_tokens=None)",
    "bits_per_byte": "(nll, n_bytes)",
    "strided_windows": "(n_tokens, max_length, stride)",
    "strided_nll": "(window_logprobs, ids, max_length, stride, *, accounting='exact')",
    "apply_temperature": "(logits, temperature)",
    "top_k_filter": "(logits, k, *, min_keep=1)",
    "top_p_filter": "(logits, top_p, *, min_keep=1)",
    "min_p_filter": "(logits, min_p, *, min_keep=1)",
    "typical_filter": "(logits, mass, *, min_keep=1)",
    "epsilon_filter": "(logits, epsilon, *, min_keep=1)",
    "sample": "(logits, rng, *, size=None)",
    "repetition_penalty": "(logits, context_ids, penalty)",
    "no_repeat_ngram_mask": "(context_ids, n, vocab_size)",
    "cfg_logprobs": "(cond_logits, uncond_logits, guidance_scale)",
    "warp": (
        "(logits, *, context_ids=None, repetition_penalty=1.0, no_repeat_ngram_size=0, "
        "temperature=1.0, top_k=None, top_p=1.0, min_p=None, typical_p=1.0, epsilon_cutoff=0.0, "
        "min_keep=1)"
    ),
    "greedy_decode": "(step_logprobs, prompt, max_new_tokens, *, eos_id=None, no_repeat_ngram_size=0)",
    "beam_search": (
        "(step_logprobs, prompt, num_beams, max_new_tokens, *, eos_id, length_penalty=1.0, "
        "early_stopping=False, no_repeat_ngram_size=0)"
    ),
    "length_penalized_score": "(sum_logprob, length, length_penalty=1.0)",
    "gnmt_length_penalty": "(length, length_penalty)",
    "contrastive_scores": "(expert_logprobs, amateur_logprobs, *, alpha=0.1)",
    "acceptance_rate": "(p, q)",
    "residual_distribution": "(p, q)",
    "speculative_output_distribution": "(p, q)",
    "speculative_step": "(p, q, draft, rng)",
    "expected_tokens_per_step": "(accept_rate, gamma)",
    "speculative_speedup": "(accept_rate, gamma, cost_ratio)",
    "reliability_bins": "(confidences, correct, n_bins=15)",
    "expected_calibration_error": "(confidences, correct, n_bins=15)",
    "temperature_nll": "(logits, labels, temperature)",
    "fit_temperature": "(logits, labels)",
    "pass_at_k": "(n, c, k)",
}


# Names that moved out of llmmath.positions keep their old import path.
MOVED = [
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "half_to_interleaved",
    "interleaved_to_half",
    "linear_scaled_frequencies",
    "ntk_scaled_base",
    "relative_positions",
    "rope_frequencies",
    "rope_matrix",
    "t5_bucket",
    "yarn_attention_factor",
    "yarn_frequencies",
]


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "sigmoid"])
def test_softmax_family_still_imports_from_training(name):
    # the module, not lm.softmax (the top-level name is the function)
    family = importlib.import_module("llmmath.softmax")
    training = importlib.import_module("llmmath.training")
    assert getattr(training, name) is getattr(family, name) is getattr(lm, name)


def test_causal_mask_still_imports_from_attention():
    from llmmath import attention, masks

    assert attention.causal_mask is masks.causal_mask is lm.causal_mask


@pytest.mark.parametrize("name", MOVED)
def test_moved_names_still_import_from_positions(name):
    from llmmath import positions

    assert getattr(positions, name) is getattr(lm, name)


PUBLIC = [(m, name) for m, names in CONTRACT.items() for name in names]


def _strip_annotations(sig: inspect.Signature) -> str:
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


@pytest.mark.parametrize("module,name", PUBLIC, ids=[f"{m}.{n}" for m, n in PUBLIC])
def test_contract_name_is_exported_everywhere(module, name):
    mod = importlib.import_module(f"llmmath.{module}")
    assert getattr(lm, name) is getattr(mod, name)
    assert name in lm.__all__


@pytest.mark.parametrize("name,expected", SIGNATURES.items())
def test_signature_matches_contract(name, expected):
    assert _strip_annotations(inspect.signature(getattr(lm, name))) == expected


@pytest.mark.parametrize("name", sorted(lm.__all__))
def test_public_function_documents_shapes_and_has_an_example(name):
    doc = inspect.getdoc(getattr(lm, name)) or ""
    assert ">>>" in doc, f"{name}: docstring needs a doctest"
    assert re.search(r"\(\.\.\.|\(\w+,|\(\w+\)|shape|\bfloat\b|\bint\b", doc), (
        f"{name}: docstring should state shapes"
    )


def test_modules_name_their_references():
    for module in CONTRACT:
        doc = importlib.import_module(f"llmmath.{module}").__doc__ or ""
        assert re.search(r"arXiv|Reference|reference", doc), (
            f"llmmath.{module}: module docstring names no reference"
        )
