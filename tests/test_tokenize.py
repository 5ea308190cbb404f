"""Tests for llmmath.tokenize: bytes, GPT-2's pre-tokenizer, byte-level BPE, WordPiece."""

from __future__ import annotations

import json
import random
import unicodedata
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmmath.tokenize import (
    Merge,
    bpe_decode_ids,
    bpe_encode_text,
    bpe_encode_word,
    bpe_train,
    bpe_vocab,
    bytes_to_unicode,
    pretokenize,
    wordpiece_encode,
)

PROPS = settings(max_examples=60, deadline=None)

# The lesson's shared inputs (curriculum, Lesson D).
A = {"low": 5, "lower": 2, "lowest": 3, "newer": 6, "wider": 4, "new": 2}
M_A = bpe_train(A, 8)
V_W = {"a", "ab", "##b", "##c", "##d", "##bcd", "un", "##aff", "##able"}
V_W |= {"low", "##er", "##est", "##e", "##s", "##t"}
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# tiktoken's r50k_base pat_str: the same split written with possessive quantifiers
R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
MIXED = list("aab ba  ,.!'s\n1") + ["é", "😀", "ж"]  # the evidence's alphabet for full texts


def joined(tokens):
    return [t.decode() for t in tokens]


def random_texts(seed, alphabet, n, lo=5, hi=60):
    rnd = random.Random(seed)
    return ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(lo, hi))) for _ in range(n)]


def random_counts(rnd, alphabet, n_words, longest, max_count, shortest=1):
    """Up to ``n_words`` random words of ``shortest..longest`` letters, counts ``1..max_count``."""
    return {
        "".join(rnd.choices(alphabet, k=rnd.randint(shortest, longest))): rnd.randint(1, max_count)
        for _ in range(n_words)
    }


def trained_on(texts, k):
    return bpe_train(Counter(c for t in texts for c in pretokenize(t)), k)


MIXED_TEXTS = random_texts(9, MIXED, 300)
M_MIXED = trained_on(MIXED_TEXTS[:150], 40)  # held-out texts: MIXED_TEXTS[150:]


# ---------------------------------------------------------------- transcriptions (references)


def gpt2_bytes_to_unicode():
    """openai/gpt-2 src/encoder.py, bytes_to_unicode (transcribed)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    bs += list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(2**8):
        if b not in bs:
            bs.append(b)
            cs.append(2**8 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


def gpt2_bpe(token, bpe_ranks):
    """openai/gpt-2 src/encoder.py, Encoder.bpe (transcribed; returns the list, no cache)."""
    word = tuple(token)
    pairs = set(zip(word, word[1:]))
    if not pairs:
        return list(word)
    while True:
        bigram = min(pairs, key=lambda pair: bpe_ranks.get(pair, float("inf")))
        if bigram not in bpe_ranks:
            break
        first, second = bigram
        new_word = []
        i = 0
        while i < len(word):
            try:
                j = word.index(first, i)
                new_word.extend(word[i:j])
                i = j
            except ValueError:
                new_word.extend(word[i:])
                break
            if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                new_word.append(first + second)
                i += 2
            else:
                new_word.append(word[i])
                i += 1
        word = tuple(new_word)
        if len(word) == 1:
            break
        pairs = set(zip(word, word[1:]))
    return list(word)


def bert_wordpiece(token, vocab, unk_token="[UNK]", max_input_chars_per_word=100):
    """google-research/bert tokenization.py, WordpieceTokenizer.tokenize on one word."""
    chars = list(token)
    if len(chars) > max_input_chars_per_word:
        return [unk_token]
    is_bad = False
    start = 0
    sub_tokens = []
    while start < len(chars):
        end = len(chars)
        cur_substr = None
        while start < end:
            substr = "".join(chars[start:end])
            if start > 0:
                substr = "##" + substr
            if substr in vocab:
                cur_substr = substr
                break
            end -= 1
        if cur_substr is None:
            is_bad = True
            break
        sub_tokens.append(cur_substr)
        start = end
    return [unk_token] if is_bad else sub_tokens


def sequential(word, merges):
    """Apply the merges one by one in list order (the training-time definition)."""
    w = [bytes([b]) for b in word.encode()]
    for a, b in merges:
        out, i = [], 0
        while i < len(w):
            if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                out.append(a + b)
                i += 2
            else:
                out.append(w[i])
                i += 1
        w = out
    return w


# ---------------------------------------------------------------- bytes and pre-tokens


def test_bytes_to_unicode_layout():
    m = bytes_to_unicode()
    assert len(m) == 256 and len(set(m.values())) == 256
    fixed = [b for b in range(256) if m[b] == chr(b)]
    assert fixed == [*range(33, 127), *range(161, 173), *range(174, 256)]
    moved = [ord(m[b]) for b in range(256) if b not in fixed]
    assert moved == list(range(0x100, 0x144))  # 68 bytes, in increasing byte order
    assert [m[b] for b in (32, 10, 9, 0, 127, 173)] == ["Ġ", "Ċ", "ĉ", "Ā", "ġ", "Ń"]
    assert "".join(m[b] for b in b" hello") == "Ġhello"
    assert m == gpt2_bytes_to_unicode()
    m[32] = "x"  # a fresh dict each call
    assert bytes_to_unicode()[32] == "Ġ"


SPLITS = {
    "Hello world's  2024!!": ["Hello", " world", "'s", " ", " 2024", "!!"],
    "I'm here, aren't you?": ["I", "'m", " here", ",", " aren", "'t", " you", "?"],
    "a   b": ["a", "  ", " b"],
    "a\n\nb": ["a", "\n", "\n", "b"],
    "trailing   ": ["trailing", "   "],
    "don't 'sup 'S": ["don", "'t", " '", "sup", " '", "S"],
    "IT'S": ["IT", "'", "S"],
    "naïve café 😀 ok": ["naïve", " café", " 😀", " ok"],
    "3.14159 and 1,000,000": ["3", ".", "14159", " and", " 1", ",", "000", ",", "000"],
    "नमस्ते": ["नमस", "्", "त", "े"],
    "Ⅻ ½ ² x²": ["Ⅻ", " ½", " ²", " x", "²"],
    "a\u00a0b": ["a", "\u00a0", "b"],
    "a\u3000b": ["a", "\u3000", "b"],
    "a\x1c\x1cb": ["a", "\x1c\x1c", "b"],  # U+001C is not White_Space: punctuation here
    "'ll've'd": ["'ll", "'ve", "'d"],
    "": [],
}


@pytest.mark.parametrize("text", list(SPLITS))
def test_pretokenize_known_splits(text):
    assert pretokenize(text) == SPLITS[text]
    assert pretokenize(text.encode()) == SPLITS[text]


@PROPS
@given(st.text(max_size=40))
def test_pretokenize_pieces_concatenate_to_the_text(text):
    pieces = pretokenize(text)
    assert "".join(pieces) == text and all(pieces)


# ---------------------------------------------------------------- BPE: training


def test_corpus_a_merges_counts_and_ids():
    got = [(m.left.decode(), m.right.decode(), m.count) for m in M_A]
    assert got == [
        ("e", "r", 12), ("l", "o", 10), ("lo", "w", 10), ("e", "w", 8),
        ("n", "ew", 8), ("new", "er", 6), ("d", "er", 4), ("i", "der", 4),
    ]  # fmt: skip
    assert all(isinstance(m, Merge) and type(m.count) is int for m in M_A)
    v = bpe_vocab(M_A)
    assert len(v) == 264 and v[b"a"] == 97
    assert [v[t] for t in (b"er", b"lo", b"low", b"ew", b"new", b"newer", b"der", b"ider")] == [
        *range(256, 264)
    ]
    # the order of the mapping does not matter under the smallest-id tie rule
    assert bpe_train(dict(reversed(A.items())), 8) == M_A


def test_corpus_a_compression_and_segmentations():
    sizes = [sum(len(bpe_encode_word(w, M_A[:k])) * c for w, c in A.items()) for k in range(9)]
    assert sizes == [99, 87, 77, 67, 59, 51, 45, 41, 37]
    assert [sizes[k] - sizes[k + 1] for k in range(8)] == [m.count for m in M_A]  # savings
    seg = {w: joined(bpe_encode_word(w, M_A)) for w in A}
    assert seg == {
        "low": ["low"], "lower": ["low", "er"], "lowest": ["low", "e", "s", "t"],
        "newer": ["newer"], "wider": ["w", "ider"], "new": ["new"],
    }  # fmt: skip
    assert joined(bpe_encode_word("lowers", M_A)) == ["low", "er", "s"]
    assert joined(bpe_encode_word(b"wide", M_A)) == ["w", "i", "d", "e"]
    pieces = [len(bpe_encode_word(w, M_A)) for w, c in A.items() for _ in range(c)]
    assert (sum(pieces), sum(p >= 2 for p in pieces), len(pieces)) == (37, 9, 22)
    used = Counter(t for w, c in A.items() for t in bpe_encode_word(w, M_A) for _ in range(c))
    assert {b"lo", b"ew", b"der"}.isdisjoint(used)  # §8.5: intermediate merges never used


def test_tie_rules():
    assert bpe_train({"cd": 1, "ab": 1}, 1)[0][:2] == (b"a", b"b")  # smallest ids, not first seen
    # step 4 of corpus A: e+w and n+e both count 8; (101, 119) < (110, 101)
    assert joined([m.left + m.right for m in bpe_train(A, 4)])[3] == "ew"
    # HF's byte-level trainer orders bytes by their GPT-2 character: "Ġ" (space) after "c"
    words = {"x": 3, " a": 3, "bc": 3}
    assert bpe_train(words, 1) == [Merge(b" ", b"a", 3)]
    assert bpe_train(words, 1, tie_order="gpt2") == [Merge(b"b", b"c", 3)]


def test_overlapping_pairs_and_early_stop():
    (m,) = bpe_train({"aaaa": 1, "aaa": 1}, 1)
    assert m == Merge(b"a", b"a", 5)  # counted at every position: 3 + 2
    assert [len(bpe_encode_word(w, [m])) for w in ("aaaa", "aaa")] == [2, 2]  # 7 -> 4, saving 3
    assert bpe_train({"a": 3, "b": 1}, 5) == [] and bpe_train(A, 0) == []
    assert len(bpe_train({"ab": 1}, 5)) == 1
    assert bpe_train({"ab": 1, b"ab": 2}, 1) == [Merge(b"a", b"b", 3)]  # str and bytes: one word
    assert bpe_train({"é": np.int64(2)}, 1) == [Merge(b"\xc3", b"\xa9", 2)]


@PROPS
@given(
    st.dictionaries(st.text("aabc", min_size=1, max_size=8), st.integers(1, 5), min_size=1),
    st.integers(0, 12),
)
def test_each_merge_saves_its_count_unless_self_pair(words, k):
    merges = bpe_train(words, k)
    size = lambda ms: sum(len(bpe_encode_word(w, ms)) * c for w, c in words.items())  # noqa: E731
    total = [size(merges[:j]) for j in range(len(merges) + 1)]
    for j, m in enumerate(merges):
        saving = total[j] - total[j + 1]
        assert saving == m.count if m.left != m.right else 0 < saving <= m.count
        assert bpe_encode_word(m.left + m.right, merges) == [m.left + m.right]  # reachable


# ---------------------------------------------------------------- BPE: encoding and ids


def test_curriculum_encodings():
    enc = lambda s, **kw: bpe_encode_text(s, M_A, **kw).tolist()  # noqa: E731
    assert enc("héllo") == [104, 195, 169, 108, 257]
    assert enc("lower newest 😀!") == [258, 256, 32, 260, 101, 115, 116, 32, 240, 159, 152, 128, 33]
    assert enc("née") == [110, 195, 169, 101]
    assert len(bpe_encode_text("नमस्ते", [])) == 18  # exercise 4: 18 byte tokens before merges
    assert enc("newest") == [260, 101, 115, 116] and enc("slower") == [115, 258, 256]
    assert enc("new") + enc("er") == [260, 256] and enc("newer") == [261]
    assert enc("") == [] and bpe_encode_text(b"", M_A).dtype == np.int64
    # decode is many-to-one: [l, o, w, er] decodes to "lower", which encodes to [low, er]
    assert bpe_decode_ids([108, 111, 119, 256], M_A) == "lower" and enc("lower") == [258, 256]
    # §2.4: corpus A as running text, 12 merges: a word has two spellings
    run = " ".join(w for w, c in A.items() for _ in range(c))
    assert Counter(pretokenize(run)) == {
        "low": 1, " low": 4, " lower": 2, " lowest": 3, " newer": 6, " wider": 4, " new": 2,
    }  # fmt: skip
    m12 = trained_on([run], 12)
    assert joined(m.left + m.right for m in m12) == [
        "er", "lo", "low", " low", " n", "ew", " new", " newer", " w", "der", "ider", " wider",
    ]  # fmt: skip
    got = [bpe_encode_text(s, m12).tolist() for s in ("low", " low", "new", " new")]
    assert got == [[258], [259], [110, 261], [262]]


def test_hand_made_merge_lists_and_tiktoken_counterexample():
    m = [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")]  # well formed, ab+c never fires on "abc"
    assert bpe_encode_word("abc", m) == [b"a", b"bc"]
    assert bpe_encode_word("abcd", m) == [b"a", b"bc", b"d"]
    assert bpe_encode_word("abc", [Merge(a, b, 0) for a, b in m]) == [b"a", b"bc"]
    assert bpe_encode_word("", m) == [] and bpe_encode_word("x", []) == [b"x"]
    # corpus B: BPE's sequence is not the greedy longest match [ab, cd] (= ids [257, 258])
    mb = bpe_train({"bc": 10, "ab": 5, "cd": 4, "abcd": 1}, 3)
    assert mb == [Merge(b"b", b"c", 11), Merge(b"a", b"b", 5), Merge(b"c", b"d", 4)]
    assert bpe_encode_text("abcd", mb).tolist() == [97, 256, 100]


@PROPS
@given(st.data())
def test_rank_encoding_equals_in_order_application(data):
    rnd = random.Random(data.draw(st.integers(0, 2**32)))
    tokens, merges = [b"a", b"b", b"c"], []
    for _ in range(rnd.randint(1, 8)):  # a random well-formed list: parts exist, no duplicate
        a, b = rnd.choice(tokens), rnd.choice(tokens)
        if a + b not in tokens:
            merges.append((a, b))
            tokens.append(a + b)
    word = data.draw(st.text("abc", max_size=12))
    assert bpe_encode_word(word, merges) == sequential(word, merges)


def test_special_tokens():
    sp = {"<|endoftext|>": 264}
    assert bpe_encode_text("hi <|endoftext|>", M_A, special_tokens=sp).tolist() == [
        104, 105, 32, 264,
    ]  # fmt: skip
    plain = bpe_encode_text("hi <|endoftext|>", M_A)
    assert len(plain) == 16 and 264 not in plain.tolist()  # user text: no special id
    # leftmost match, then the longest special at that position; ids need not be contiguous
    sp = {"<a>": 300, "<a><b>": 301, "b>": 270}
    assert bpe_encode_text("x<a><b>b>", M_A, special_tokens=sp).tolist() == [120, 301, 270]
    for s in ("<a><a>b>", "<a>", "a<a><b><<a>>"):
        ids = bpe_encode_text(s, M_A, special_tokens=sp)
        assert bpe_decode_ids(ids, M_A, special_tokens=sp) == s
    assert bpe_encode_text("<a>", M_A, special_tokens={}).tolist() == [60, 97, 62]


def test_decode_bytes_once():
    e = bpe_encode_text("é", M_A).tolist()
    assert e == [195, 169] and [bpe_decode_ids([i], M_A) for i in e] == ["\ufffd", "\ufffd"]
    assert bpe_decode_ids(np.array(e), M_A) == "é"
    assert bpe_decode_ids(list(b"\xf0\x9f\x98"), []) == "\ufffd"  # one maximal invalid subpart
    assert bpe_decode_ids(list(b"a\xffb\x80"), []) == "a\ufffdb\ufffd"
    with pytest.raises(UnicodeDecodeError):
        bpe_decode_ids([240, 159], [], errors="strict")
    assert bpe_decode_ids([], M_A) == "" and bpe_decode_ids(np.zeros(0, np.int64), M_A) == ""
    # a streaming decode of an emoji (bytes accumulated) equals the full decode
    ids = bpe_encode_text("😀", M_A).tolist()
    assert bpe_decode_ids(ids[:2], M_A, errors="replace") != "😀" == bpe_decode_ids(ids, M_A)


ROUND_TRIP_SPECIALS = {"<|endoftext|>": 296, "<|im_start|>": 297}  # 256 + len(M_MIXED), ...


@PROPS
@given(
    st.lists(st.sampled_from([*"ab c'!1\n\t.", "é", "ж", "😀", "  ", "<|endoftext|>"])).map("".join)
)
def test_decode_inverts_encode(s):
    for sp in (None, ROUND_TRIP_SPECIALS):
        ids = bpe_encode_text(s, M_MIXED, special_tokens=sp)
        assert ids.dtype == np.int64 and bpe_decode_ids(ids, M_MIXED, special_tokens=sp) == s


# ---------------------------------------------------------------- WordPiece


def test_wordpiece_curriculum_examples():
    wp = lambda w, **kw: wordpiece_encode(w, V_W, **kw)  # noqa: E731
    assert wp("abcd") == ["ab", "##c", "##d"]  # greedy: 3 pieces although [a, ##bcd] exists
    assert wp("unaffable") == ["un", "##aff", "##able"]
    assert wp("lowest") == ["low", "##est"] and wp("lower") == ["low", "##er"]
    assert wp("lowx") == ["[UNK]"] and wp("abx") == ["[UNK]"] and wp("a") == ["a"]
    assert wp("") == [] and wp(b"abcd") == ["ab", "##c", "##d"]
    xs = {"x": 0, "##x": 1}  # a mapping works as well
    assert wordpiece_encode("x" * 100, xs) == ["x"] + ["##x"] * 99
    assert wordpiece_encode("x" * 101, xs) == ["[UNK]"]
    assert wordpiece_encode("x" * 101, xs, max_chars=200)[:2] == ["x", "##x"]
    assert wordpiece_encode("xx", {"x", "@@x"}, prefix="@@", unk_token="<unk>") == ["x", "@@x"]
    assert wordpiece_encode("xy", ["x"], unk_token="<unk>") == ["<unk>"]


# ---------------------------------------------------------------- bad input


BAD = [
    (lambda: bpe_train([("low", 5)], 2), TypeError, "word_counts"),
    (lambda: bpe_train({}, 2), ValueError, "word_counts"),
    (lambda: bpe_train({3: 1}, 2), TypeError, "word_counts"),
    (lambda: bpe_train({"": 1}, 2), ValueError, "word_counts"),
    (lambda: bpe_train({"a": 3.0}, 2), TypeError, "word_counts"),
    (lambda: bpe_train({"a": True}, 2), TypeError, "word_counts"),
    (lambda: bpe_train({"a": 0}, 2), ValueError, "word_counts"),
    (lambda: bpe_train(A, 2.0), TypeError, "num_merges"),
    (lambda: bpe_train(A, -1), ValueError, "num_merges"),
    (lambda: bpe_train({"a": 1}, 0, tie_order="first"), ValueError, "tie_order"),
    (lambda: pretokenize(3), TypeError, "text"),
    (lambda: pretokenize(b"\xff"), ValueError, "text"),
    (lambda: bpe_encode_word(3, M_A), TypeError, "word"),
    (lambda: bpe_encode_word("a", "ab"), TypeError, "merges"),
    (lambda: bpe_encode_word("abc", [(b"ab", b"c"), (b"a", b"b")]), ValueError, r"merges\[0\]"),
    (lambda: bpe_encode_word("a", [(b"a", b"b"), (b"a", b"b")]), ValueError, r"merges\[1\]"),
    (
        lambda: bpe_encode_word("a", [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c"), (b"a", b"bc")]),
        ValueError,
        r"merges\[3\]",
    ),
    (lambda: bpe_encode_word("a", [("a", "b")]), TypeError, r"merges\[0\]"),
    (lambda: bpe_encode_word("a", [(b"a",)]), TypeError, r"merges\[0\]"),
    (lambda: bpe_vocab([(b"a", b"bc")]), ValueError, r"merges\[0\]"),
    (lambda: bpe_encode_text(None, M_A), TypeError, "text"),
    (lambda: bpe_encode_text(b"\xc3", M_A), ValueError, "text"),
    (lambda: bpe_encode_text("\ud800", M_A), ValueError, "text"),
    (lambda: bpe_encode_text("a", M_A, special_tokens={"": 300}), ValueError, "special_tokens"),
    (lambda: bpe_encode_text("a", M_A, special_tokens={"<a>": 263}), ValueError, "special_tok"),
    (
        lambda: bpe_encode_text("a", M_A, special_tokens={"<a>": 300, "<b>": 300}),
        ValueError,
        "special_tokens",
    ),
    (lambda: bpe_encode_text("a", M_A, special_tokens={"<a>": 300.0}), TypeError, "special_tok"),
    (lambda: bpe_encode_text("a", M_A, special_tokens=["<a>"]), TypeError, "special_tokens"),
    (lambda: bpe_decode_ids([1.0], M_A), TypeError, "ids"),
    (lambda: bpe_decode_ids([True], M_A), TypeError, "ids"),
    (lambda: bpe_decode_ids([-1], M_A), IndexError, "ids"),
    (lambda: bpe_decode_ids([264], M_A), IndexError, "ids"),
    (lambda: bpe_decode_ids([265], M_A, special_tokens={"<s>": 266}), IndexError, "ids"),
    (lambda: bpe_decode_ids([[1]], M_A), ValueError, "ids"),
    (lambda: bpe_decode_ids([1], M_A, errors="ignore"), ValueError, "errors"),
    (lambda: bpe_decode_ids([1], M_A, special_tokens={"<s>": 3}), ValueError, "special_tokens"),
    (lambda: wordpiece_encode(3, V_W), TypeError, "word"),
    (lambda: wordpiece_encode(b"\xff", V_W), ValueError, "word"),
    (lambda: wordpiece_encode("a", set()), ValueError, "vocab"),
    (lambda: wordpiece_encode("a", {"a", ""}), ValueError, "vocab"),
    (lambda: wordpiece_encode("a", {"a", 1}), TypeError, "vocab"),
    (lambda: wordpiece_encode("a", "abc"), TypeError, "vocab"),
    (lambda: wordpiece_encode("a", V_W, prefix=""), ValueError, "prefix"),
    (lambda: wordpiece_encode("a", V_W, unk_token=None), TypeError, "unk_token"),
    (lambda: wordpiece_encode("a", V_W, max_chars=0), ValueError, "max_chars"),
    (lambda: wordpiece_encode("a", V_W, max_chars=1.5), TypeError, "max_chars"),
]


@pytest.mark.parametrize("call,error,name", BAD, ids=[f"{i}-{b[2]}" for i, b in enumerate(BAD)])
def test_bad_input_names_the_argument(call, error, name):
    with pytest.raises(error, match=name):
        call()


# ---------------------------------------------------------------- reference cross-checks


def test_bytes_to_unicode_matches_transformers_and_hf_alphabet():
    convert = pytest.importorskip("transformers.convert_slow_tokenizer")
    pre_tokenizers = pytest.importorskip("tokenizers.pre_tokenizers")
    assert bytes_to_unicode() == convert.bytes_to_unicode()
    assert set(bytes_to_unicode().values()) == set(pre_tokenizers.ByteLevel.alphabet())


def test_pretokenize_matches_regex():
    regex = pytest.importorskip("regex")
    pattern = regex.compile(GPT2_PATTERN)
    # the whitespace set is exactly regex's \s (checked on the first 0x3001 code points)
    spaces = [chr(c) for c in range(0x3001) if regex.match(r"\s", chr(c))]
    assert pretokenize("a".join(spaces) + "a") == pattern.findall("a".join(spaces) + "a")
    assert len(spaces) == 25
    rnd = random.Random(0)
    assigned = 0
    while assigned < 3000:  # random assigned code points, each in a context string
        ch = chr(rnd.randrange(0x110000))
        if unicodedata.category(ch) in ("Cn", "Cs"):
            continue
        assigned += 1
        t = " " + ch + ch + "a 1" + ch + "  " + ch + "'s"
        assert pretokenize(t) == pattern.findall(t), hex(ord(ch))
    alphabet = list("ab Z1 9'strevmld.,!?\t\n") + ["\u00a0", "é", "\u0301", "😀", "二", "½"]
    alphabet += ["\u3000", "\x1c", "ß", "ا", "\u0915\u093f"]
    for t in random_texts(1, alphabet, 2000, 1, 12):
        assert pretokenize(t) == pattern.findall(t), repr(t)


def test_pretokenize_matches_hf_byte_level():
    pre_tokenizers = pytest.importorskip("tokenizers.pre_tokenizers")
    split = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True).pre_tokenize_str
    inverse = {c: b for b, c in bytes_to_unicode().items()}
    for t in list(SPLITS)[:-1] + random_texts(2, MIXED + ["\u3000", "\x1c"], 300, 1, 20):
        assert [bytes(inverse[c] for c in s).decode() for s, _ in split(t)] == pretokenize(t)


def hf_merges(tok):
    merges = json.loads(tok.to_str())["model"]["merges"]
    return [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in merges]


def test_bpe_train_matches_hf_bpe_trainer_on_words():
    tk = pytest.importorskip("tokenizers")

    def hf_train(counts, k):
        tok = tk.Tokenizer(tk.models.BPE())
        tok.pre_tokenizer = tk.pre_tokenizers.WhitespaceSplit()
        size = len(set("".join(counts))) + k
        trainer = tk.trainers.BpeTrainer(vocab_size=size, min_frequency=0, show_progress=False)
        tok.train_from_iterator((w for w, c in counts.items() for _ in range(c)), trainer=trainer)
        return hf_merges(tok)

    assert hf_train(A, 8) == [(m.left.decode(), m.right.decode()) for m in M_A]
    rnd = random.Random(1)
    for _ in range(80):
        counts = random_counts(rnd, "abcd", rnd.randint(2, 8), 6, 4)
        ours = [(m.left.decode(), m.right.decode()) for m in bpe_train(counts, 6)]
        assert hf_train(counts, 6)[: len(ours)] == ours, counts


def test_bpe_train_gpt2_order_matches_hf_byte_level_trainer():
    tk = pytest.importorskip("tokenizers")
    inverse = {c: b for b, c in bytes_to_unicode().items()}
    alphabet = list("ab c\n") + ["é", "ü", "😀", "1"]
    rnd = random.Random(2)
    for _ in range(60):
        texts = random_texts(rnd.randrange(2**32), alphabet, rnd.randint(2, 8), 1, 10)
        tok = tk.Tokenizer(tk.models.BPE())
        tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = tk.trainers.BpeTrainer(
            vocab_size=256 + 10,
            show_progress=False,
            initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(),
        )
        tok.train_from_iterator(texts, trainer=trainer)
        hf = [tuple(bytes(inverse[c] for c in s) for s in m) for m in hf_merges(tok)]
        counts = Counter(c for t in texts for c in pretokenize(t))
        assert [m[:2] for m in bpe_train(counts, 10, tie_order="gpt2")] == hf, texts


def hf_bpe_model(tk, merges):
    b2u = bytes_to_unicode()
    U = lambda bs: "".join(b2u[x] for x in bs)  # noqa: E731
    vocab = {U(t): i for t, i in bpe_vocab(merges).items()}
    return tk.models.BPE(vocab=vocab, merges=[(U(a), U(b)) for a, b, *_ in merges]), U


def test_bpe_encode_word_matches_hf_bpe_and_gpt2_encoder():
    tk = pytest.importorskip("tokenizers")
    inverse = {c: b for b, c in bytes_to_unicode().items()}
    rnd = random.Random(5)
    for _ in range(40):
        counts = random_counts(rnd, "abcé ", 6, 7, 5)
        merges = bpe_train(counts, rnd.randint(3, 15))
        model, U = hf_bpe_model(tk, merges)
        ranks = {(U(m.left), U(m.right)): k for k, m in enumerate(merges)}
        for _ in range(20):
            w = "".join(rnd.choices("abcé ", k=rnd.randint(1, 9))).encode()
            ours = bpe_encode_word(w, merges)
            assert [bytes(inverse[c] for c in t.value) for t in model.tokenize(U(w))] == ours
            assert [bytes(inverse[c] for c in s) for s in gpt2_bpe(U(w), ranks)] == ours
    model, _ = hf_bpe_model(tk, [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")])
    assert [t.value for t in model.tokenize("abcd")] == ["a", "bc", "d"]


def test_bpe_encode_word_and_tiktoken():
    tiktoken = pytest.importorskip("tiktoken")

    def tik(merges):
        ranks = bpe_vocab(merges)
        return tiktoken.Encoding(
            "toy", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={}
        )

    rnd = random.Random(11)
    for _ in range(60):  # trained merge lists: the two rules agree
        alphabet = rnd.choice(["ab", "abc", "aab"])
        counts = random_counts(rnd, alphabet, rnd.randint(2, 10), 10, 6, shortest=2)
        merges = bpe_train(counts, rnd.randint(3, 25))
        enc = tik(merges)
        for _ in range(20):
            w = "".join(rnd.choices(alphabet, k=rnd.randint(1, 14)))
            got = [enc.decode_single_token_bytes(i) for i in enc.encode(w)]
            assert got == bpe_encode_word(w, merges), (counts, w)
    enc = tik([(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")])  # a hand-made list: they differ
    assert [enc.decode_single_token_bytes(i) for i in enc.encode("abcd")] == [b"abc", b"d"]


def test_bpe_encode_text_matches_hf_and_tiktoken():
    tk = pytest.importorskip("tokenizers")
    tiktoken = pytest.importorskip("tiktoken")
    model, _ = hf_bpe_model(tk, M_MIXED)
    tok = tk.Tokenizer(model)
    tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tk.decoders.ByteLevel()
    ranks = bpe_vocab(M_MIXED)
    plain = tiktoken.Encoding(name="toy", pat_str=R50K, mergeable_ranks=ranks, special_tokens={})
    for t in MIXED_TEXTS[150:]:
        ids = bpe_encode_text(t, M_MIXED).tolist()
        assert ids == tok.encode(t).ids == plain.encode_ordinary(t)
        assert bpe_decode_ids(ids, M_MIXED) == tok.decode(ids) == t
    # with special tokens (ids 296, 297 = 256 + 40, ... as HF assigns them)
    sp = ROUND_TRIP_SPECIALS
    tok.add_special_tokens([tk.AddedToken(s, special=True) for s in sp])
    assert {s: tok.token_to_id(s) for s in sp} == sp
    enc = tiktoken.Encoding(name="toy", pat_str=R50K, mergeable_ranks=ranks, special_tokens=sp)
    alphabet = list("ab c<|>\n") + ["<|endoftext|>", "<|im_start|>", "é"]
    for t in random_texts(12, alphabet, 150, 3, 25):
        ids = bpe_encode_text(t, M_MIXED, special_tokens=sp).tolist()
        assert ids == enc.encode(t, allowed_special="all") == tok.encode(t).ids, t
        assert bpe_encode_text(t, M_MIXED).tolist() == enc.encode(t, disallowed_special=())


def test_bpe_decode_ids_replace_matches_hf_byte_level_decoder():
    decoders = pytest.importorskip("tokenizers.decoders")
    b2u, dec = bytes_to_unicode(), decoders.ByteLevel()
    rnd = random.Random(3)
    pool = [0x41, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80, 0xFF, 0x80]
    for _ in range(500):
        bs = bytes(rnd.choices(pool, k=rnd.randint(1, 8)))
        assert bpe_decode_ids(list(bs), []) == dec.decode(["".join(b2u[x] for x in bs)])


def test_wordpiece_matches_hf_and_bert():
    models = pytest.importorskip("tokenizers.models")
    rnd = random.Random(4)
    for _ in range(400):
        vocab = {"".join(rnd.choices("abc", k=rnd.randint(1, 3))) for _ in range(rnd.randint(1, 6))}
        vocab |= {"##" + "".join(rnd.choices("abc", k=rnd.randint(1, 3))) for _ in range(6)}
        ids = {v: i for i, v in enumerate(sorted(vocab | {"[UNK]"}))}
        hf = models.WordPiece(ids, unk_token="[UNK]", max_input_chars_per_word=8)
        for _ in range(5):
            w = "".join(rnd.choices("abc", k=rnd.randint(1, 10)))
            ours = wordpiece_encode(w, vocab, max_chars=8)
            assert ours == [t.value for t in hf.tokenize(w)] == bert_wordpiece(w, vocab, "[UNK]", 8)
