"""llmmath: the numpy kernel behind the Math for LLMs lessons.

Every public function is importable from the top level::

    >>> import llmmath as lm
    >>> round(float(lm.cosine([1.0, 0.0], [1.0, 1.0])), 4)
    0.7071

and from its module (``llmmath.similarity.cosine``). The API contract, with
shapes and conventions, is in the API reference of the course site.
"""

from .attention import causal_mask, merge_heads, scaled_dot_product_attention, split_heads
from .diagnostics import (
    dequantize,
    memory_bytes,
    norm_report,
    outlier_rows,
    quantize_int8,
    remap_rows,
    row_drift,
)
from .embeddings import lookup, one_hot, pad_ids, param_count, resize, tied_logits
from .geometry import (
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
from .positions import (
    alibi_bias,
    alibi_slopes,
    apply_rope,
    half_to_interleaved,
    interleaved_to_half,
    interpolate_table,
    linear_scaled_frequencies,
    ntk_scaled_base,
    relative_positions,
    rope_frequencies,
    rope_matrix,
    sinusoidal,
    t5_bucket,
    yarn_attention_factor,
    yarn_frequencies,
)
from .similarity import (
    cosine,
    dot,
    euclidean,
    mean_pool,
    normalize,
    recall_at_k,
    similarity_matrix,
    top_k,
)
from .training import (
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

__version__ = "0.1.0"

__all__ = [
    "all_but_the_top",
    "alibi_bias",
    "alibi_slopes",
    "analogy",
    "anisotropy",
    "apply_rope",
    "causal_mask",
    "center",
    "cosine",
    "cross_entropy",
    "cross_entropy_grad",
    "dequantize",
    "directional_derivative",
    "dot",
    "euclidean",
    "fit_probe",
    "glove_grads",
    "glove_loss",
    "glove_weight",
    "half_to_interleaved",
    "hidden_grad",
    "interleaved_to_half",
    "interpolate_table",
    "linear_scaled_frequencies",
    "log_softmax",
    "lookup",
    "mean_pool",
    "memory_bytes",
    "merge_heads",
    "noise_distribution",
    "norm_report",
    "normalize",
    "ntk_scaled_base",
    "one_hot",
    "outlier_rows",
    "output_row_grad",
    "pad_ids",
    "param_count",
    "pca",
    "probe_accuracy",
    "project_out",
    "quantize_int8",
    "recall_at_k",
    "relative_positions",
    "remap_rows",
    "resize",
    "rope_frequencies",
    "rope_matrix",
    "row_drift",
    "scaled_dot_product_attention",
    "sgns_loss",
    "sigmoid",
    "similarity_matrix",
    "sinusoidal",
    "softmax",
    "split_heads",
    "t5_bucket",
    "tied_logits",
    "top_k",
    "whiten",
    "yarn_attention_factor",
    "yarn_frequencies",
]
