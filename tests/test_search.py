"""Tests for llmmath.search: greedy and beam search, length penalties, contrastive scores.

The numbers are those of Lesson E §5.1–§5.5, §7.4 and Exercise 7. Cross-checks against
transformers' ``generate`` (a minimal ``PreTrainedModel`` + ``GenerationMixin`` whose forward
returns the step function's log-probabilities as logits, no cache) skip without the reference
packages.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmmath.processors import no_repeat_ngram_mask
from llmmath.search import (
    beam_search,
    contrastive_scores,
    gnmt_length_penalty,
    greedy_decode,
    length_penalized_score,
)

PROPS = settings(max_examples=30, deadline=None)


def wrong(value: Any) -> Any:
    """An argument of the wrong type, passed on as is (typed ``Any`` for mypy)."""
    return value


def table(rows_by_prefix):
    """A step function from a dict {generated tuple: probabilities}; ``None`` key = default."""

    def step(prefix):
        g = tuple(prefix[1:].tolist())
        p = rows_by_prefix.get(g, rows_by_prefix[None])
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(p, float))

    return step


# §5.1 tree: 0 = EOS, 1 = A, 2 = B, 3 = BOS; EOS after two tokens
TREE = table(
    {(): [0, 0.6, 0.4, 0], (1,): [0, 0.55, 0.45, 0], (2,): [0, 0.1, 0.9, 0], None: [1, 0, 0, 0]}
)
# §5.3 toy: prompt [2]; EOS 0.4 at once, else 1; then EOS 0.2 per step; EOS forced after four 1s
TOY53 = table(
    {(): [0.4, 0.6, 0], **{(1,) * j: [0.2, 0.8, 0] for j in range(1, 4)}, None: [1, 0, 0]}
)
# Exercise 7: V = 4, 3 = BOS; EOS forced after three tokens
EX7 = table(
    {
        (): [0.5, 0.3, 0.2, 0],
        **{(1,) * j: [0.1, 0.9, 0, 0] for j in (1, 2)},
        **{(2,) * j: [0.3, 0, 0.7, 0] for j in (1, 2)},
        None: [1, 0, 0, 0],
    }
)
# §5.5 chain: 0 = BOS/EOS, 1 = a, 2 = b, 3 = c
CHAIN_T = np.array(
    [[0.0, 0.7, 0.2, 0.1], [0.2, 0.05, 0.6, 0.15], [0.2, 0.6, 0.05, 0.15], [0.5, 0.2, 0.2, 0.1]]
)


def chain(prefix):
    with np.errstate(divide="ignore"):
        return np.log(CHAIN_T[prefix[-1]])


def random_lm(V, seed, scale=2.0):
    """A model whose next-token log-probs are a hash of the whole prefix (evidence's make_lm)."""

    def step(prefix):
        s = seed
        for t in prefix:
            s = (s * 1000003 + int(t) + 1) % (2**32)
        z = np.random.default_rng(s).normal(size=V) * scale
        return z - z.max() - np.log(np.exp(z - z.max()).sum())

    return step


def pairs(out):
    return [(ids.tolist(), round(s, 6)) for ids, s in out]


# ---------------------------------------------------------------- unit tests: the lesson


def test_greedy_misses_the_mode_and_beam_finds_it():
    ids, lp = greedy_decode(TREE, [3], 5, eos_id=0)
    assert ids.tolist() == [3, 1, 1, 0] and ids.dtype == np.int64
    assert abs(lp - math.log(0.33)) < 1e-15  # ln 0.6 + ln 0.55 + ln 1
    textbook = beam_search(TREE, [3], 2, 5, eos_id=0, length_penalty=0.0, early_stopping="never")
    assert pairs(textbook) == [([3, 2, 2, 0], -1.021651), ([3, 1, 1, 0], -1.108663)]
    hf_default = beam_search(TREE, [3], 2, 5, eos_id=0)  # length_penalty=1, early_stopping=False
    assert pairs(hf_default) == [([3, 2, 2, 0], -0.34055), ([3, 1, 1, 0], -0.369554)]
    assert abs(hf_default[0][1] - math.log(0.36) / 3) < 1e-15
    assert all(isinstance(s, float) and i.dtype == np.int64 for i, s in hf_default)


def test_length_penalty_changes_the_beam_result():
    want = {
        0.0: [([2, 0], -0.916291), ([2, 1, 1, 1, 1, 0], -1.180256)],
        0.5: [([2, 1, 1, 1, 1, 0], -0.527827), ([2, 0], -0.916291)],
        1.0: [([2, 1, 1, 1, 1, 0], -0.236051), ([2, 1, 1, 1, 0], -0.641638)],
    }
    for alpha, expected in want.items():
        assert pairs(beam_search(TOY53, [2], 2, 6, eos_id=0, length_penalty=alpha)) == expected


def test_exercise_7_and_num_beams_1_is_not_greedy():
    want = {
        0.0: [([3, 0], -0.69315), ([3, 1, 1, 1, 0], -1.41469)],
        1.0: [([3, 1, 1, 1, 0], -0.35367), ([3, 2, 2, 2, 0], -0.5807)],
        2.0: [([3, 1, 1, 1, 0], -0.08842), ([3, 2, 2, 2, 0], -0.14517)],
    }
    for alpha, expected in want.items():
        out = beam_search(EX7, [3], 2, 5, eos_id=0, length_penalty=alpha)
        assert [(i.tolist(), round(s, 5)) for i, s in out] == expected
    assert greedy_decode(EX7, [3], 5, eos_id=0)[0].tolist() == [3, 0]
    one = beam_search(EX7, [3], 1, 5, eos_id=0, length_penalty=1.0)
    assert [i.tolist() for i, _ in one] == [[3, 0]]
    never = beam_search(EX7, [3], 1, 5, eos_id=0, length_penalty=1.0, early_stopping="never")
    assert [i.tolist() for i, _ in never] == [[3, 1, 1, 1, 0]]


def test_loops_and_ngram_blocking():
    ids, _ = greedy_decode(chain, [0], 12, eos_id=0)
    assert ids.tolist() == [0] + [1, 2] * 6  # never stops, though a sample stops after 4 tokens
    ids, lp = greedy_decode(chain, [0], 12, eos_id=0, no_repeat_ngram_size=2)
    assert ids.tolist() == [0, 1, 2, 1, 0]
    assert abs(lp - math.log(0.7 * 0.6 * 0.6 * 0.2)) < 1e-14  # the model's own log-probs
    # no eos_id: runs the full budget; a ban that leaves nothing is an error
    assert greedy_decode(chain, [0], 3)[0].tolist() == [0, 1, 2, 1]
    with pytest.raises(ValueError, match="greedy_decode: the n-gram ban leaves no id at step"):
        greedy_decode(chain, [0], 12, no_repeat_ngram_size=1)
    # the same chain in beam search: no output repeats a bigram
    for ids, _ in beam_search(chain, [0], 3, 10, eos_id=0, no_repeat_ngram_size=2):
        grams = list(zip(ids[:-1].tolist(), ids[1:].tolist()))
        assert len(grams) == len(set(grams))


def test_argmax_ties_go_to_the_lowest_id():
    flat = np.log(np.full(4, 0.25))
    assert greedy_decode(lambda prefix: flat, [3], 3)[0].tolist() == [3, 0, 0, 0]


def test_early_stopping_true_stops_once_num_beams_are_finished():
    lm = random_lm(5, 7)
    out_true = beam_search(lm, [3], 2, 8, eos_id=0, early_stopping=True)
    out_never = beam_search(lm, [3], 2, 8, eos_id=0, early_stopping="never")
    assert len(out_true) == 2 and len(out_never) == 2
    assert max(len(i) for i, _ in out_true) <= max(len(i) for i, _ in out_never)


def test_length_penalties():
    short = [length_penalized_score(-1.2, 2, a) for a in (0.0, 0.5, 1.0, 2.0)]
    long = [length_penalized_score(-2.5, 5, a) for a in (0.0, 0.5, 1.0, 2.0)]
    assert [s > lo for s, lo in zip(short, long)] == [True, True, False, False]
    assert [round(x, 4) for x in short] == [-1.2, -0.8485, -0.6, -0.3]
    assert length_penalized_score(-1.2, 2) == -0.6 and isinstance(short[0], float)
    np.testing.assert_array_equal(length_penalized_score([-1.2, -2.5], [2, 5]), [-0.6, -0.5])
    assert length_penalized_score(-np.inf, 3) == -np.inf
    assert round(-1.2 / gnmt_length_penalty(2, 0.6), 4) == -1.094
    assert round(-2.5 / gnmt_length_penalty(5, 0.6), 4) == -1.8401
    assert [round(-x / gnmt_length_penalty(n, 1.0), 4) for x, n in ((1.2, 2), (2.5, 5))] == [
        -1.0286,
        -1.5,
    ]
    assert gnmt_length_penalty(1, 3.0) == 1.0 and gnmt_length_penalty(
        np.array([1, 7]), 1.0
    ).shape == (2,)


def test_contrastive_decoding_of_the_lesson():
    pE, pA = np.log([0.50, 0.30, 0.19, 0.01]), np.log([0.60, 0.10, 0.299, 0.001])
    raw = pE - pA
    assert int(np.argmax(raw)) == 3  # the raw difference picks a token the expert gives 0.01
    s = contrastive_scores(pE, pA, alpha=0.1)
    np.testing.assert_array_equal(s[:3], raw[:3])
    assert s[3] == -np.inf and int(np.argmax(s)) == 1 and int(np.argmax(pE)) == 0
    # alpha = 0 keeps every token the expert allows; alpha = 1 keeps only its argmax
    assert np.isfinite(contrastive_scores(pE, pA, alpha=0.0)).all()
    assert np.isfinite(contrastive_scores(pE, pA, alpha=1.0)).tolist() == [
        True,
        False,
        False,
        False,
    ]
    # -inf amateur entries outside V_head are fine; expert -inf stays out; batched rows
    s2 = contrastive_scores([[0.0, -np.inf, -5.0]] * 2, [[-1.0, -np.inf, -np.inf]] * 2)
    assert s2.shape == (2, 3) and s2[0].tolist() == [1.0, -np.inf, -np.inf]


# ---------------------------------------------------------------- properties


@PROPS
@given(
    V=st.integers(2, 6),
    seed=st.integers(0, 10**6),
    n=st.integers(0, 3),
    steps=st.integers(1, 8),
)
def test_greedy_picks_the_first_argmax_and_sums_the_models_logprobs(V, seed, n, steps):
    lm = random_lm(V, seed, scale=1.0)
    try:
        ids, total = greedy_decode(lm, [V - 1], steps, eos_id=0, no_repeat_ngram_size=n)
    except ValueError as err:  # every id banned: only possible with a ban
        assert n > 0 and "leaves no id" in str(err)
        return
    assert 2 <= len(ids) <= steps + 1 and (ids[-1] == 0 or len(ids) == steps + 1)
    assert 0 not in ids[1:-1].tolist()
    recomputed = 0.0
    for t in range(1, len(ids)):
        lp = lm(ids[:t])
        if n:
            lp = np.where(no_repeat_ngram_mask(ids[:t], n, V), -np.inf, lp)
        assert ids[t] == int(np.argmax(lp))
        recomputed += lp[ids[t]]
    assert total == recomputed


@PROPS
@given(
    V=st.integers(2, 6),
    seed=st.integers(0, 10**6),
    k=st.integers(1, 4),
    steps=st.integers(1, 6),
    alpha=st.sampled_from([-0.5, 0.0, 1.0, 2.0]),
    early=st.sampled_from([False, True, "never"]),
    n=st.integers(0, 2),
)
def test_beam_hypotheses_are_finished_sorted_and_scored_by_their_logprobs(
    V, seed, k, steps, alpha, early, n
):
    lm = random_lm(V, seed)
    out = beam_search(
        lm, [V - 1], k, steps, eos_id=0, length_penalty=alpha, early_stopping=early,
        no_repeat_ngram_size=n,
    )  # fmt: skip
    assert 1 <= len(out) <= k
    scores = [s for _, s in out]
    assert scores == sorted(scores, reverse=True)
    for ids, score in out:
        L = len(ids) - 1
        assert ids[0] == V - 1 and (ids[-1] == 0 or L == steps) and 0 not in ids[1:-1].tolist()
        total = sum(lm(ids[:t])[ids[t]] for t in range(1, len(ids)))
        assert abs(score - total / L**alpha) <= 1e-12 * (1 + abs(score))  # a few roundings
        if n:
            grams = [tuple(ids[i : i + n].tolist()) for i in range(len(ids) - n + 1)]
            assert len(grams) == len(set(grams))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), steps=st.integers(1, 3))
def test_textbook_beam_search_with_wide_beams_is_exact_search(seed, steps):
    """With ``k ≥ V^N`` nothing is pruned: the output is every complete string, best first."""
    V = 3
    lm = random_lm(V, seed)
    out = beam_search(
        lm, [2], V**steps, steps, eos_id=0, length_penalty=0.0, early_stopping="never"
    )
    complete = []
    for L in range(1, steps + 1):
        for g in itertools.product(range(V), repeat=L):
            if 0 in g[:-1] or (g[-1] != 0 and L < steps):
                continue
            ids = np.array((2, *g))
            complete.append((sum(lm(ids[:t])[ids[t]] for t in range(1, L + 1)), g))
    complete.sort(reverse=True)
    assert [tuple(i[1:].tolist()) for i, _ in out] == [g for _, g in complete]
    np.testing.assert_allclose([s for _, s in out], [s for s, _ in complete], rtol=1e-14)


# ---------------------------------------------------------------- bad inputs

LP = np.log(np.full(4, 0.25))
UNIF = lambda prefix: LP  # noqa: E731


def beam(**kw):
    args = {"eos_id": 0, **kw}
    return lambda: beam_search(
        UNIF, args.pop("prompt", [3]), args.pop("k", 2), args.pop("N", 3), **args
    )


BAD = [
    ("prompt-float", lambda: greedy_decode(UNIF, [3.0], 2), TypeError, "greedy_decode: prompt must be integers"),
    ("prompt-negative", lambda: greedy_decode(UNIF, [-1], 2), IndexError, "prompt must be >= 0; got -1 \\(negative ids are not wrapped\\)"),
    ("prompt-too-big", lambda: greedy_decode(UNIF, [4], 2), IndexError, r"prompt must lie in \[0, 4\)"),
    ("prompt-empty", lambda: greedy_decode(UNIF, np.array([], int), 2), ValueError, "prompt must be a non-empty 1-D"),
    ("prompt-2d", beam(prompt=[[3]]), ValueError, "beam_search: prompt must be a non-empty 1-D"),
    ("max-new-zero", lambda: greedy_decode(UNIF, [3], 0), ValueError, "max_new_tokens"),
    ("max-new-float", lambda: greedy_decode(UNIF, [3], wrong(2.0)), TypeError, "max_new_tokens"),
    ("eos-float", lambda: greedy_decode(UNIF, [3], 2, eos_id=wrong(0.0)), TypeError, "eos_id"),
    ("eos-bool", beam(eos_id=True), TypeError, "eos_id"),
    ("eos-none-beam", beam(eos_id=None), TypeError, "beam_search: eos_id must be an integer"),
    ("eos-negative", lambda: greedy_decode(UNIF, [3], 2, eos_id=-1), IndexError, "eos_id must be >= 0"),
    ("eos-too-big", beam(eos_id=4), IndexError, r"eos_id must lie in \[0, 4\)"),
    ("ngram-negative", lambda: greedy_decode(UNIF, [3], 2, no_repeat_ngram_size=-1), ValueError, "no_repeat_ngram_size"),
    ("ngram-float", beam(no_repeat_ngram_size=1.0), TypeError, "no_repeat_ngram_size"),
    ("beams-zero", beam(k=0), ValueError, "num_beams"),
    ("beams-float", beam(k=2.0), TypeError, "num_beams"),
    ("early-unknown", beam(early_stopping="always"), ValueError, "early_stopping must be True, False or 'never'"),
    ("early-int", beam(early_stopping=1), ValueError, "early_stopping"),
    ("alpha-nan", beam(length_penalty=float("nan")), ValueError, "length_penalty"),
    (
        "step-shape",
        lambda: greedy_decode(lambda p: np.log(np.full(len(p) + 2, 1 / (len(p) + 2))), [1], 3),
        ValueError,
        r"greedy_decode: step_logprobs at prefix length 2 must return shape \(3,\); got \(4,\)",
    ),
    ("step-2d", lambda: greedy_decode(lambda p: LP[None], [3], 2), ValueError, r"step_logprobs at prefix length 1 must return shape"),
    ("step-logits", lambda: greedy_decode(lambda p: np.zeros(4), [3], 2), ValueError, "must return normalized log-probabilities"),
    ("step-all-neginf", lambda: greedy_decode(lambda p: np.full(4, -np.inf), [3], 2), ValueError, "normalized"),
    ("step-plus-inf", lambda: greedy_decode(lambda p: np.array([np.inf, 0.0]), [1], 2), ValueError, "step_logprobs at prefix length 1 must be finite"),
    ("step-str", lambda: greedy_decode(lambda p: "abc", [1], 2), TypeError, "step_logprobs at prefix length 1 must be numeric"),
    ("lp-length-zero", lambda: length_penalized_score(-1.0, 0), ValueError, "length_penalized_score: length must be >= 1"),
    ("lp-length-float", lambda: length_penalized_score(-1.0, 2.0), TypeError, "length must be integers"),
    ("lp-nan", lambda: length_penalized_score(np.nan, 2), ValueError, "sum_logprob must be finite"),
    ("lp-alpha-inf", lambda: length_penalized_score(-1.0, 2, np.inf), ValueError, "length_penalty"),
    ("lp-shapes", lambda: length_penalized_score([-1.0, -2.0], [1, 2, 3]), ValueError, "must broadcast"),
    ("gnmt-length", lambda: gnmt_length_penalty(0, 1.0), ValueError, "gnmt_length_penalty: length"),
    ("gnmt-alpha", lambda: gnmt_length_penalty(2, wrong("a")), TypeError, "length_penalty"),
    ("cd-alpha", lambda: contrastive_scores(LP, LP, alpha=1.5), ValueError, r"alpha must lie in \[0, 1\]"),
    ("cd-alpha-neg", lambda: contrastive_scores(LP, LP, alpha=-0.1), ValueError, "alpha"),
    ("cd-amateur-neginf", lambda: contrastive_scores(LP, [0.0, -np.inf, 0.0, 0.0]), ValueError, r"amateur_logprobs is -inf inside V_head at index \(1,\)"),
    ("cd-expert-all-neginf", lambda: contrastive_scores(np.full(4, -np.inf), LP), ValueError, "every entry -inf"),
    ("cd-vocab", lambda: contrastive_scores(LP, LP[:3]), ValueError, "share the last dimension"),
    ("cd-lead", lambda: contrastive_scores(np.ones((2, 4)), np.ones((3, 4))), ValueError, "must broadcast"),
    ("cd-nan", lambda: contrastive_scores([np.nan, 0.0], [0.0, 0.0]), ValueError, "expert_logprobs must be finite"),
    ("cd-plus-inf", lambda: contrastive_scores([0.0, 0.0], [np.inf, 0.0]), ValueError, "amateur_logprobs must be finite"),
]  # fmt: skip


@pytest.mark.parametrize("call, exc, match", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_bad_step_result_in_a_later_beam_step_names_the_prefix():
    def lm(prefix):
        return LP if len(prefix) < 3 else np.array([0.0, np.nan, -np.inf, -np.inf])

    with pytest.raises(
        ValueError, match="beam_search: step_logprobs at prefix length 3 must be finite"
    ):
        beam_search(lm, [3], 2, 5, eos_id=0, early_stopping="never")


# ------------------------------------------------ cross-checks with transformers generate


@pytest.fixture(scope="module")
def toy_lm():
    """``toy_lm(step, V)``: an HF causal LM whose last-position logits are ``step(prefix)``."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from transformers.modeling_outputs import CausalLMOutput

    class ToyConfig(transformers.PretrainedConfig):
        model_type = "llmmath-toy-step"

    class ToyLM(transformers.PreTrainedModel, transformers.GenerationMixin):
        config_class = ToyConfig

        def __init__(self, config, step):
            super().__init__(config)
            self.dummy = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
            self.step = step

        def forward(self, input_ids=None, attention_mask=None, **kwargs):
            B, T = input_ids.shape
            out = torch.zeros((B, T, self.config.vocab_size), dtype=torch.float64)
            for b in range(B):  # only the last position is read by generate
                out[b, -1] = torch.from_numpy(self.step(input_ids[b].numpy()))
            return CausalLMOutput(logits=out + 0 * self.dummy)

        def prepare_inputs_for_generation(self, input_ids, **kwargs):
            return {"input_ids": input_ids}

    def make(step, V, eos=0):
        config = ToyConfig(vocab_size=V, eos_token_id=eos, pad_token_id=eos)
        model = ToyLM(config, step)

        def generate(prompt, **kw):
            return model.generate(torch.tensor([prompt]), do_sample=False, use_cache=False, **kw)

        return generate

    # torch's intra-op threads cost ~15 ms per tiny log_softmax on a busy machine
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield make
    torch.set_num_threads(threads)


def strip(seq, eos=0):
    """HF pads finished hypotheses with the pad id (= EOS here): cut after the first EOS."""
    seq = list(seq)
    for i, t in enumerate(seq[1:], 1):
        if t == eos:
            return seq[: i + 1]
    return seq


def hf_beam(generate, prompt, k, N, **kw):
    o = generate(
        prompt, num_beams=k, num_return_sequences=k, max_new_tokens=N,
        output_scores=True, return_dict_in_generate=True, **kw,
    )  # fmt: skip
    return [strip(s) for s in o.sequences.tolist()], o.sequences_scores.tolist()


def test_lesson_toys_equal_hf_generate(toy_lm):
    gen = toy_lm(TREE, 4)
    assert gen([3], max_new_tokens=5)[0].tolist() == [3, 1, 1, 0]
    seqs, scores = hf_beam(gen, [3], 2, 5, length_penalty=0.0, early_stopping="never")
    assert seqs == [[3, 2, 2, 0], [3, 1, 1, 0]]
    np.testing.assert_allclose(scores, [math.log(0.36), math.log(0.33)], rtol=0, atol=1e-6)
    gen = toy_lm(chain, 4)
    assert gen([0], max_new_tokens=12, no_repeat_ngram_size=2)[0].tolist() == [0, 1, 2, 1, 0]
    for step, V, prompt, N in ((TOY53, 3, [2], 6), (EX7, 4, [3], 5)):
        gen = toy_lm(step, V)
        for alpha in (0.0, 0.5, 1.0, 2.0):
            seqs, scores = hf_beam(gen, prompt, 2, N, length_penalty=alpha)
            mine = beam_search(step, prompt, 2, N, eos_id=0, length_penalty=alpha)
            assert seqs == [i.tolist() for i, _ in mine]
            np.testing.assert_allclose(scores, [s for _, s in mine], rtol=0, atol=1e-5)


def test_greedy_equals_hf_generate_on_random_toys(toy_lm):
    for seed in range(20):
        V = 4 + seed % 3
        lm = random_lm(V, seed)
        gen = toy_lm(lm, V)
        for n in (0, 1, 2, 3):
            hf = strip(gen([V - 1], max_new_tokens=8, no_repeat_ngram_size=n)[0].tolist())
            mine = greedy_decode(lm, [V - 1], 8, eos_id=0, no_repeat_ngram_size=n)[0]
            assert hf == mine.tolist(), (seed, n)


SETTINGS = [  # (num_beams, length_penalty, early_stopping, max_new_tokens, no_repeat_ngram_size)
    (2, 1.0, False, 5, 0),
    (3, 0.0, False, 6, 0),
    (3, 2.0, False, 5, 0),
    (2, 1.0, True, 5, 0),
    (3, 1.0, "never", 5, 0),
    (3, -0.5, False, 4, 0),
    (2, 1.0, False, 6, 2),
    (3, 0.0, "never", 6, 2),
    (2, 2.0, True, 6, 3),
    (3, 1.0, False, 7, 1),
]


def test_beam_search_equals_hf_generate_on_random_toys(toy_lm):
    """Sequences identical, scores to 1e-5 (HF keeps beam scores in float32)."""
    worst = 0.0
    for seed in range(36):
        V = 5 if seed % 2 else 6
        lm = random_lm(V, 100 + seed)
        gen = toy_lm(lm, V)
        for k, alpha, early, N, n in (SETTINGS[(seed + j) % 10] for j in (0, 3, 7)):
            seqs, scores = hf_beam(
                gen, [V - 1], k, N, length_penalty=alpha, early_stopping=early,
                no_repeat_ngram_size=n,
            )  # fmt: skip
            mine = beam_search(
                lm, [V - 1], k, N, eos_id=0, length_penalty=alpha, early_stopping=early,
                no_repeat_ngram_size=n,
            )  # fmt: skip
            assert seqs == [i.tolist() for i, _ in mine], (seed, k, alpha, early, N, n)
            diff = np.abs(np.array(scores) - [s for _, s in mine]).max()
            assert diff < 1e-5, (seed, k, alpha, early, N, n, diff)
            worst = max(worst, diff)
    assert worst > 0  # float32 in HF: the comparison is not vacuous
