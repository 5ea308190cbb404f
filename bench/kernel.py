"""Kernel benchmark: prints timings for this machine, asserts only that compared codes agree.

1. `rope.apply_rope` on a (1, 8, 1024, 128) float64 array, against
   (a) a per-vector, per-pair pure Python loop, timed on 1 head x 64 positions and
       scaled linearly to the full size (its output is checked against apply_rope's), and
   (b) the plain elementwise cos/sin formula written inline with precomputed caches.
2. `similarity.top_k` (partial sort) over a (50000, 256) table against a full
   stable `np.argsort` of the same scores (top_k breaks ties by lower index). The shared
   scoring step is timed on its own, alternating with top_k, and top_k's selection cost
   is the median of the paired differences, so the sorts themselves are compared fairly.
3. `attention.scaled_dot_product_attention` at (4, 8, 1024, 64) float64, with a
   GFLOP/s estimate from the two matrix products (4 B H T^2 d flops).
4. `relative.shaw_attention` (relative keys and values, K = 16) at the same shape,
   against `scaled_dot_product_attention` alone: the ratio is the cost of the relative
   terms, which should be a small constant factor, not a loop.
5. `relative.t5_bias` for 8 heads at T = 4096 against a per-pair Python loop over
   `table[t5_bucket(j - i), h]`, timed on a 64 x 64 slice (its values checked) and
   scaled linearly to the full size.
6. `efficient.blockwise_attention` (FlashAttention-2's forward, key blocks of 128) at
   (4, 8, 1024, 64) float64 against `scaled_dot_product_attention` in the same process:
   the median of paired time ratios, and the peak memory each allocates during one call
   (`tracemalloc`, which sees numpy's buffers; timed runs are not traced). Target: at
   most 2x the time and a quarter of the memory, since it never holds the (T, T) scores.
7. `heads.multi_head_attention` against `torch.nn.MultiheadAttention` (float64, CPU,
   no biases, per-head weights returned by both) on (4, 512, 768) with 12 heads; outputs
   checked to 1e-10. Skipped with a message when torch is not installed.

Medians over several runs with `time.perf_counter`, all measured in one process.
Run from the project root: `.venv/bin/python bench/kernel.py` (a few minutes).
"""

from __future__ import annotations

import math
import statistics
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from llmmath.attention import scaled_dot_product_attention
from llmmath.efficient import blockwise_attention
from llmmath.heads import multi_head_attention
from llmmath.relative import shaw_attention, t5_bias, t5_bucket
from llmmath.rope import apply_rope, rope_frequencies
from llmmath.similarity import cosine, top_k


def median_time(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm-up: page faults, first-call caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def paired_times(fn_a: Callable[[], object], fn_b: Callable[[], object]) -> tuple[float, float]:
    """Time two calls back to back, so that machine noise hits both alike."""
    start = time.perf_counter()
    fn_a()
    middle = time.perf_counter()
    fn_b()
    return middle - start, time.perf_counter() - middle


def rope_python_loop(x: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """Interleaved RoPE one vector and one coordinate pair at a time (the naive reference)."""
    out = np.empty_like(x)
    H, T, d = x.shape
    for h in range(H):
        for t in range(T):
            row, dst, p = x[h, t].tolist(), out[h, t], float(positions[t])
            for k in range(d // 2):
                a, b = row[2 * k], row[2 * k + 1]
                c, s = math.cos(p * inv_freq[k]), math.sin(p * inv_freq[k])
                dst[2 * k] = a * c - b * s
                dst[2 * k + 1] = a * s + b * c
    return out


def bench_rope(rng: np.random.Generator) -> list[tuple[str, str, str]]:
    B, H, T, d = 1, 8, 1024, 128
    x = rng.normal(size=(B, H, T, d))
    pos = np.arange(T, dtype=np.float64)
    inv_freq = rope_frequencies(d)
    angles = pos[:, None] * inv_freq
    cos_cache, sin_cache = np.cos(angles), np.sin(angles)

    def inline() -> np.ndarray:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = x1 * cos_cache - x2 * sin_cache
        out[..., 1::2] = x1 * sin_cache + x2 * cos_cache
        return out

    reference = apply_rope(x)
    np.testing.assert_allclose(inline(), reference, rtol=0, atol=1e-12)
    h_s, t_s = 1, 64
    slice_ = x[0, :h_s, :t_s]
    loop_out = rope_python_loop(slice_, pos[:t_s], inv_freq.tolist())
    np.testing.assert_allclose(loop_out, reference[0, :h_s, :t_s], rtol=0, atol=1e-12)

    t_rope = median_time(lambda: apply_rope(x), 7)
    t_inline = median_time(inline, 7)
    scale = (B * H * T) / (h_s * t_s)
    t_loop = median_time(lambda: rope_python_loop(slice_, pos[:t_s], inv_freq.tolist()), 3) * scale
    shape = f"({B}, {H}, {T}, {d})"
    return [
        (f"apply_rope {shape}", fmt(t_rope), "1.00x"),
        ("  inline cos/sin, cached", fmt(t_inline), f"{t_inline / t_rope:.2f}x"),
        (
            f"  Python loop (1x{t_s} slice x{scale:.0f}, extrapolated)",
            fmt(t_loop),
            f"{t_loop / t_rope:.0f}x",
        ),
    ]


def bench_top_k(rng: np.random.Generator) -> list[tuple[str, str, str]]:
    n, d, k = 50_000, 256, 10
    X = rng.normal(size=(n, d))
    query = rng.normal(size=d)
    scores = cosine(X, query)  # the scoring top_k does internally
    idx, _ = top_k(query, X, k)
    full = np.argsort(-scores, kind="stable")[:k]
    np.testing.assert_array_equal(idx, full)

    paired = [paired_times(lambda: top_k(query, X, k), lambda: cosine(X, query)) for _ in range(15)]
    t_topk, t_score = (statistics.median(t) for t in zip(*paired, strict=True))
    t_select = max(statistics.median(a - b for a, b in paired), 1e-9)
    t_argsort = median_time(lambda: np.argsort(-scores, kind="stable"), 9)
    t_full = t_score + t_argsort

    def partial_core() -> np.ndarray:  # the bare partial sort, without top_k's bookkeeping
        part = np.argpartition(-scores, k - 1)[:k]
        return part[np.argsort(-scores[part], kind="stable")]

    t_core = median_time(partial_core, 9)
    return [
        (f"top_k k={k}, ({n}, {d}) cosine", fmt(t_topk), ""),
        ("  scoring step alone (cosine)", fmt(t_score), ""),
        ("  top_k selection (top_k - scoring)", fmt(t_select), "1.00x"),
        ("  full np.argsort of the scores", fmt(t_argsort), f"{t_argsort / t_select:.2f}x"),
        ("  bare np.argpartition + sort of k", fmt(t_core), f"{t_core / t_select:.2f}x"),
        ("  scoring + full argsort", fmt(t_full), f"{t_full / t_topk:.2f}x of top_k"),
    ]


def bench_attention(rng: np.random.Generator) -> list[tuple[str, str, str]]:
    B, H, T, d = 4, 8, 1024, 64
    q, k, v = (rng.normal(size=(B, H, T, d)) for _ in range(3))
    t = median_time(lambda: scaled_dot_product_attention(q, k, v), 5)
    gflops = 4 * B * H * T * T * d / t / 1e9
    return [(f"scaled_dot_product_attention ({B}, {H}, {T}, {d})", fmt(t), f"{gflops:.1f} GFLOP/s")]


def bench_shaw(rng: np.random.Generator) -> list[tuple[str, str, str]]:
    B, H, T, d, K = 4, 8, 1024, 64, 16
    q, k, v = (rng.normal(size=(B, H, T, d)) for _ in range(3))
    rel_k, rel_v = rng.normal(size=(2, 2 * K + 1, d))
    zeros = np.zeros((2 * K + 1, d))
    out, _ = shaw_attention(q, k, v, zeros, zeros, max_distance=K)
    np.testing.assert_allclose(out, scaled_dot_product_attention(q, k, v)[0], atol=1e-12)
    paired = [
        paired_times(
            lambda: shaw_attention(q, k, v, rel_k, rel_v, max_distance=K),
            lambda: scaled_dot_product_attention(q, k, v),
        )
        for _ in range(5)
    ]
    t_shaw, t_sdpa = (statistics.median(t) for t in zip(*paired, strict=True))
    t_keys = median_time(lambda: shaw_attention(q, k, v, rel_k, max_distance=K), 5)
    shape = f"({B}, {H}, {T}, {d})"
    return [
        (f"scaled_dot_product_attention {shape} (baseline)", fmt(t_sdpa), "1.00x"),
        (f"  shaw_attention, keys and values, K={K}", fmt(t_shaw), f"{t_shaw / t_sdpa:.2f}x"),
        (f"  shaw_attention, keys only, K={K}", fmt(t_keys), f"{t_keys / t_sdpa:.2f}x"),
    ]


def t5_bias_loop(table: np.ndarray, tq: int, tk: int) -> np.ndarray:
    """T5's bias one (head, query, key) entry at a time (the naive reference)."""
    H = table.shape[1]
    out = np.empty((H, tq, tk))
    for h in range(H):
        for i in range(tq):
            for j in range(tk):
                out[h, i, j] = table[int(t5_bucket(np.int64(j - i))), h]
    return out


def bench_t5_bias(rng: np.random.Generator) -> list[tuple[str, str, str]]:
    H, T, s = 8, 4096, 64
    table = rng.normal(size=(32, H))
    full = t5_bias(table, T)
    np.testing.assert_array_equal(t5_bias_loop(table, s, s), full[:, :s, :s])
    t_vec = median_time(lambda: t5_bias(table, T), 5)
    t_loop = median_time(lambda: t5_bias_loop(table, s, s), 3) * (T * T) / (s * s)
    return [
        (f"t5_bias H={H}, T={T}", fmt(t_vec), "1.00x"),
        (
            f"  per-pair Python loop ({s}x{s} slice, extrapolated)",
            fmt(t_loop),
            f"{t_loop / t_vec:.0f}x",
        ),
    ]


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak memory traced while ``fn`` runs, above what was allocated before it."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before


def bench_blockwise(rng: np.random.Generator) -> list[tuple[str, str, str]]:
    B, H, T, d, bs = 4, 8, 1024, 64, 128
    q, k, v = (rng.normal(size=(B, H, T, d)) for _ in range(3))
    out, _ = blockwise_attention(q, k, v, block_size=bs)
    ref, _ = scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12 * np.abs(v).max())
    del out, ref
    paired = [
        paired_times(
            lambda: blockwise_attention(q, k, v, block_size=bs),
            lambda: scaled_dot_product_attention(q, k, v),
        )
        for _ in range(5)
    ]
    t_block, t_sdpa = (statistics.median(t) for t in zip(*paired, strict=True))
    ratio = statistics.median(a / b for a, b in paired)
    m_sdpa = peak_bytes(lambda: scaled_dot_product_attention(q, k, v))
    m_block = peak_bytes(lambda: blockwise_attention(q, k, v, block_size=bs))
    scores = B * H * T * T * 8
    shape = f"({B}, {H}, {T}, {d})"
    return [
        (f"scaled_dot_product_attention {shape} (baseline)", fmt(t_sdpa), "1.00x"),
        (f"  blockwise_attention, block_size={bs}", fmt(t_block), f"{ratio:.2f}x (target <= 2x)"),
        (f"  peak memory, SDPA (scores alone {mib(scores)})", mib(m_sdpa), "1.00x"),
        (
            "  peak memory, blockwise_attention",
            mib(m_block),
            f"{m_block / m_sdpa:.3f}x (target <= 0.25x)",
        ),
    ]


def bench_mha(rng: np.random.Generator) -> list[tuple[str, str, str]]:
    B, T, d, H = 4, 512, 768, 12
    label = f"multi_head_attention ({B}, {T}, {d}), {H} heads"
    try:
        import torch
    except ImportError:
        print("skipped: multi_head_attention vs torch.nn.MultiheadAttention (torch not installed)")
        return [(label, "skipped", "torch not installed")]
    x = rng.normal(size=(B, T, d))
    w_q, w_k, w_v, w_o = (rng.normal(size=(d, d)) / np.sqrt(d) for _ in range(4))
    mha = torch.nn.MultiheadAttention(d, H, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.tensor(np.concatenate([w_q.T, w_k.T, w_v.T])))
        mha.out_proj.weight.copy_(torch.tensor(w_o.T))
    xt = torch.tensor(x)

    def theirs() -> tuple:
        with torch.no_grad():
            return mha(xt, xt, xt, need_weights=True, average_attn_weights=False)

    def ours() -> tuple:
        return multi_head_attention(x, w_q, w_k, w_v, w_o, H)

    np.testing.assert_allclose(ours()[0], theirs()[0].numpy(), rtol=0, atol=1e-10)
    paired = [paired_times(ours, theirs) for _ in range(5)]
    t_ours, t_torch = (statistics.median(t) for t in zip(*paired, strict=True))
    ratio = statistics.median(a / b for a, b in paired)
    return [
        (f"torch.nn.MultiheadAttention ({B}, {T}, {d}), {H} heads", fmt(t_torch), "1.00x"),
        ("  multi_head_attention (numpy)", fmt(t_ours), f"{ratio:.2f}x"),
    ]


def mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:.0f} MiB"


def fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def main() -> None:
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    rows = (
        bench_rope(rng)
        + bench_top_k(rng)
        + bench_attention(rng)
        + bench_shaw(rng)
        + bench_t5_bias(rng)
        + bench_blockwise(rng)
        + bench_mha(rng)
    )
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    print(f"{'benchmark':<{w0}}  {'median':>{w1}}  ratio (time / the group's 1.00x row)")
    print("-" * (w0 + w1 + 40))
    for name, t, ratio in rows:
        print(f"{name:<{w0}}  {t:>{w1}}  {ratio}")
    print(f"\nnumpy {np.__version__}; total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
