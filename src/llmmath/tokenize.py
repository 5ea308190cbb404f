"""Text to token ids: UTF-8 bytes, GPT-2's pre-tokenizer, byte-level BPE, WordPiece.

Texts are ``str`` (UTF-8 encoded here) or ``bytes``; BPE tokens are ``bytes``, WordPiece pieces
``str``, ids int64 arrays. A byte's id is its value ``0..255``, the k-th merge's token's
``256 + k`` (minbpe's layout; GPT-2 numbers bytes in ``bytes_to_unicode`` order: space 220).
References: Sennrich et al. 2016 (arXiv:1508.07909); GPT-2 (Radford et al. 2019, ``openai/gpt-2``
``src/encoder.py``); HF ``tokenizers``; BERT (Devlin et al. 2019, ``tokenization.py``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import namedtuple
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from llmmath import _validate

Merge = namedtuple("Merge", "left right count")
Merge.__doc__ = """A BPE merge: ``left + right`` (bytes) becomes a token; ``count`` (int): pair count.

>>> m = Merge(b"e", b"r", 12)
>>> m.left + m.right, m.count
(b'er', 12)
"""

_KEEP = (*range(33, 127), *range(161, 173), *range(174, 256))  # printable: mapped to themselves
_MOVED = [b for b in range(256) if b not in _KEEP]  # 0..32, 127..160, 173 -> U+0100 ... U+0143
_B2U = {b: chr(b) if b in _KEEP else chr(256 + _MOVED.index(b)) for b in range(256)}
_SINGLE_BYTES = frozenset(bytes([x]) for x in range(256))
# Unicode's White_Space (`regex`'s \s); str.isspace() and re's \s add U+001C..U+001F
_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000").union(
    map(chr, range(0x2000, 0x200B))
)
_CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d")


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from the 256 byte values (int) to printable characters.

    The 188 printable bytes ``33..126, 161..172, 174..255`` map to themselves, the other 68
    to ``chr(256 + j)`` in increasing byte order (U+0100 … U+0143). Equal to ``encoder.py``'s
    map and transformers' ``convert_slow_tokenizer.bytes_to_unicode()``; a new dict each call.

    Examples
    --------
    >>> m = bytes_to_unicode()
    >>> m[32], m[10], m[ord("a")], "".join(m[b] for b in "é".encode())
    ('Ġ', 'Ċ', 'a', 'Ã©')
    """
    return dict(_B2U)


def pretokenize(text: str | bytes) -> list[str]:
    r"""GPT-2's pre-tokenizer: split ``text`` into the chunks that BPE merges never cross.

    ``'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`` without
    ``regex``: letters and numbers by ``unicodedata.category`` (``L*``, ``N*``), whitespace the 25
    White_Space code points, contractions case-sensitive. The pieces (str) join to ``text``;
    equal to ``regex.findall`` on characters assigned in the running Python's Unicode database.

    Examples
    --------
    >>> pretokenize("Hello world's  2024!!"), pretokenize("IT'S")
    (['Hello', ' world', "'s", ' ', ' 2024', '!!'], ['IT', "'", 'S'])
    """
    s: str = _validate.text(text, "text", "pretokenize")
    cls = ["s" if c in _SPACE else unicodedata.category(c)[0] for c in s]
    cls = [c if c in "sLN" else "o" for c in cls]  # whitespace, letter, number, other
    out, i, n = [], 0, len(s)
    while i < n:
        m = next((c for c in _CONTRACTIONS if s.startswith(c, i)), None) if s[i] == "'" else None
        if m is not None:
            out.append(m)
            i += len(m)
            continue
        j = i + 1 if s[i] == " " and i + 1 < n and cls[i + 1] != "s" else i  # the " ?"
        k = j + 1
        while k < n and cls[k] == cls[j]:  # one run of letters, numbers, other or whitespace
            k += 1
        if cls[j] == "s" and k < n and k - i > 1:
            k -= 1  # \s+(?!\S): the last whitespace goes with the next chunk
        out.append(s[i:k])
        i = k
    return out


def _merge_word(word: list[bytes], a: bytes, b: bytes) -> list[bytes]:
    """Replace the non-overlapping occurrences of ``a, b`` in ``word``, left to right."""
    out, i = [], 0
    while i < len(word):
        pair = i + 1 < len(word) and word[i] == a and word[i + 1] == b
        out.append(a + b if pair else word[i])
        i += 2 if pair else 1
    return out


def bpe_train(
    word_counts: Mapping[Any, int], num_merges: int, *, tie_order: str = "bytes"
) -> list[Merge]:
    """Learn up to ``num_merges`` byte-level BPE merges from pre-token counts.

    word_counts: pre-token (``str``/``bytes``) → int count ≥ 1; merges never cross words. Each
    step counts the adjacent pairs of every word times its count (``(x, x)`` at every position
    of a run), merges the top pair's non-overlapping occurrences left to right and records
    ``Merge(left, right, count)``; stops early when no word has two tokens. Ties: smallest
    ``(rank(left), rank(right))``, a merged token ranking ``256 + k``, a byte by value
    (``"bytes"``, HF ``BpeTrainer``) or by its ``bytes_to_unicode`` character (``"gpt2"``).

    Examples
    --------
    >>> A = {"low": 5, "lower": 2, "lowest": 3, "newer": 6, "wider": 4, "new": 2}
    >>> [(m.left + m.right).decode() + f" {m.count}" for m in bpe_train(A, 4)]
    ['er 12', 'lo 10', 'low 10', 'ew 8']
    """
    f = "bpe_train"
    _validate.option(tie_order, ("bytes", "gpt2"), "tie_order", f)
    num_merges = _validate.positive_int(num_merges, "num_merges", f, minimum=0)
    if not isinstance(word_counts, Mapping):
        raise TypeError(f"{f}: word_counts must be a mapping word -> count; got {word_counts!r}")
    if not word_counts:
        raise ValueError(f"{f}: word_counts must not be empty; got {word_counts!r}")
    words: dict[tuple[bytes, ...], int] = {}
    for w, c in word_counts.items():
        b = _validate.text(w, "word_counts (a word)", f, utf8=True)
        if not b:
            raise ValueError(f"{f}: word_counts has an empty word {w!r}")
        key = tuple(b[i : i + 1] for i in range(len(b)))  # "low" and b"low" are one word
        words[key] = words.get(key, 0) + _validate.positive_int(c, f"word_counts[{w!r}]", f)
    order = range(256) if tie_order == "bytes" else sorted(range(256), key=_B2U.__getitem__)
    rank = {bytes([x]): r for r, x in enumerate(order)}
    # The pair counts are counted once, then kept up to date: a merge changes only the
    # pairs of the words it touches (HF's trainer does the same), which is what makes
    # training on a real text's vocabulary fast enough for a page.
    pairs: dict[tuple[bytes, bytes], int] = {}
    for w, c in words.items():
        _add_pairs(pairs, w, c)
    merges: list[Merge] = []
    while len(merges) < num_merges and pairs:
        a, b = max(pairs, key=lambda p: (pairs[p], -rank[p[0]], -rank[p[1]]))
        rank[a + b] = 256 + len(merges)
        merges.append(Merge(a, b, pairs[a, b]))
        for w in [w for w in words if a in w and b in w]:
            merged = tuple(_merge_word(list(w), a, b))
            if merged != w:
                c = words.pop(w)
                _add_pairs(pairs, w, -c)
                _add_pairs(pairs, merged, c)
                words[merged] = words.get(merged, 0) + c
    return merges


def _add_pairs(pairs: dict[tuple[bytes, bytes], int], word: tuple[bytes, ...], c: int) -> None:
    """Add ``c`` to the count of every adjacent pair of ``word``, dropping counts that reach 0."""
    for p in zip(word, word[1:], strict=False):
        n = pairs.get(p, 0) + c
        if n:
            pairs[p] = n
        else:
            del pairs[p]


def _check_merges(merges: Any, f: str) -> dict[tuple[bytes, bytes], int]:
    """Ranks ``(left, right) -> k`` of a well-formed merge list, in merge order."""
    if isinstance(merges, (str, bytes)) or not isinstance(merges, Iterable):
        raise TypeError(f"{f}: merges must be a list of (left, right) pairs; got {merges!r}")
    known = set(_SINGLE_BYTES)
    ranks: dict[tuple[bytes, bytes], int] = {}
    for k, m in enumerate(merges):
        pair = m[:2] if isinstance(m, Merge) else m
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise TypeError(f"{f}: merges[{k}] must be a Merge or a (left, right) pair; got {m!r}")
        for part in pair:
            if not isinstance(part, bytes):
                raise TypeError(f"{f}: merges[{k}] parts must be bytes; got {part!r}")
            if part not in known:
                why = "neither a single byte nor an earlier merge's token"
                raise ValueError(f"{f}: merges[{k}] part {part!r} is {why}")
        if pair[0] + pair[1] in known:
            raise ValueError(f"{f}: merges[{k}] makes {pair[0] + pair[1]!r}, which already exists")
        known.add(pair[0] + pair[1])
        ranks[pair[0], pair[1]] = k
    return ranks


def _encode_chunk(chunk: bytes, ranks: dict[tuple[bytes, bytes], int]) -> list[bytes]:
    word = [chunk[i : i + 1] for i in range(len(chunk))]
    while len(word) > 1:
        best = min(zip(word, word[1:], strict=False), key=lambda p: ranks.get(p, len(ranks)))
        if best not in ranks:
            break
        word = _merge_word(word, *best)
    return word


def bpe_encode_word(word: str | bytes, merges: Any) -> list[bytes]:
    """Encode one pre-token: merge by rank until no adjacent pair is a merge.

    Repeatedly merge all non-overlapping occurrences of the adjacent pair with the lowest merge
    index, left to right (GPT-2's ``Encoder.bpe``, HF's ``models.BPE``). ``merges``: ``Merge``s
    or ``(left, right)`` pairs of ``bytes``, parts single bytes or earlier merges' tokens, no
    token made twice; so the result equals applying the merges one by one in order.

    Examples
    --------
    >>> M = [(b"e", b"r"), (b"l", b"o"), (b"lo", b"w")]
    >>> bpe_encode_word("lowest", M), bpe_encode_word("slower", M)
    ([b'low', b'e', b's', b't'], [b's', b'low', b'er'])
    """
    f = "bpe_encode_word"
    return _encode_chunk(_validate.text(word, "word", f, utf8=True), _check_merges(merges, f))


def _tokens(ranks: dict[tuple[bytes, bytes], int]) -> list[bytes]:
    return [bytes([b]) for b in range(256)] + [a + b for a, b in ranks]


def bpe_vocab(merges: Any) -> dict[bytes, int]:
    """Token → id: ``bytes([b]) → b`` for the 256 bytes, the k-th merge's token → ``256 + k``.

    Examples
    --------
    >>> v = bpe_vocab([(b"e", b"r"), (b"l", b"o")])
    >>> len(v), v[b"a"], v[b"lo"]
    (258, 97, 257)
    """
    return {t: i for i, t in enumerate(_tokens(_check_merges(merges, "bpe_vocab")))}


def _check_specials(special_tokens: Any, n: int, f: str) -> dict[str, int]:
    """``special_tokens``: None or a mapping non-empty str -> distinct ids >= n."""
    if special_tokens is None:
        return {}
    if not isinstance(special_tokens, Mapping):
        raise TypeError(f"{f}: special_tokens must be a mapping text -> id; got {special_tokens!r}")
    out = {}
    for s, i in special_tokens.items():
        if not isinstance(s, str) or not s:
            error = ValueError if s == "" else TypeError
            raise error(f"{f}: special_tokens keys must be non-empty str; got {s!r}")
        out[s] = _validate.positive_int(i, f"special_tokens[{s!r}] (after BPE's)", f, minimum=n)
    if len(set(out.values())) < len(out):
        raise ValueError(f"{f}: special_tokens ids must be distinct; got {out}")
    return out


def bpe_encode_text(text: str | bytes, merges: Any, *, special_tokens: Any = None) -> np.ndarray:
    """Encode a text to ids (T,): specials, then ``pretokenize`` and ``bpe_encode_word``.

    special_tokens: ``None`` (a special's text is ordinary text) or text → distinct ids
    ``>= 256 + len(merges)``, split out first (leftmost, then longest match) as with tiktoken's
    ``allowed_special="all"`` and HF's added tokens. Other ids from ``bpe_vocab``.

    Examples
    --------
    >>> M = bpe_train({"low": 5, "lower": 2, "lowest": 3, "newer": 6, "wider": 4, "new": 2}, 8)
    >>> bpe_encode_text("héllo", M).tolist()
    [104, 195, 169, 108, 257]
    >>> bpe_encode_text("hi <|endoftext|>", M, special_tokens={"<|endoftext|>": 264}).tolist()
    [104, 105, 32, 264]
    """
    f = "bpe_encode_text"
    s: str = _validate.text(_validate.text(text, "text", f, utf8=True), "text", f)
    ranks = _check_merges(merges, f)
    vocab = {t: i for i, t in enumerate(_tokens(ranks))}
    specials = _check_specials(special_tokens, len(vocab), f)
    pieces = [s]
    if specials:  # re.split with a group keeps the specials at the odd positions
        alternatives = "|".join(map(re.escape, sorted(specials, key=len, reverse=True)))
        pieces = re.split(f"({alternatives})", s)  # longest first: the longest match wins
    ids: list[int] = []
    cache: dict[str, list[int]] = {}
    for k, piece in enumerate(pieces):
        for chunk in pretokenize(piece) if k % 2 == 0 else ():
            if chunk not in cache:
                cache[chunk] = [vocab[t] for t in _encode_chunk(chunk.encode(), ranks)]
            ids.extend(cache[chunk])
        if k % 2:
            ids.append(specials[piece])
    return np.array(ids, dtype=np.int64)


def bpe_decode_ids(
    ids: Any, merges: Any, *, special_tokens: Any = None, errors: str = "replace"
) -> str:
    """Decode ids (T,): join the tokens' bytes (a special's as its text), decode UTF-8 once.

    ``errors="replace"``: U+FFFD per maximal invalid subpart (as ``encoder.py`` and HF's
    ``decoders.ByteLevel``); ``"strict"`` raises ``UnicodeDecodeError``. Ids: in
    ``[0, 256 + len(merges))`` or a special's. Inverts ``bpe_encode_text`` on every ``str``.

    Examples
    --------
    >>> M = [(b"e", b"r")]
    >>> bpe_decode_ids([104, 256, 111], M), bpe_decode_ids([195], M), bpe_decode_ids([195, 169], M)
    ('hero', '�', 'é')
    """
    f = "bpe_decode_ids"
    _validate.option(errors, ("replace", "strict"), "errors", f)
    table = dict(enumerate(_tokens(_check_merges(merges, f))))
    n = len(table)
    table |= {i: s.encode() for s, i in _check_specials(special_tokens, n, f).items()}
    arr = _validate._asarray(ids, "ids", f)
    if arr.ndim != 1:
        raise ValueError(f"{f}: ids must be 1-D (T,); got shape {arr.shape}")
    if arr.size == 0:
        return ""
    out = [table.get(i) for i in _validate.int_ids(arr, max(table) + 1, f).tolist()]
    if None in out:
        bad = arr[out.index(None)]
        raise IndexError(f"{f}: ids must lie in [0, {n}) or be a special token's id; got {bad}")
    return b"".join(out).decode("utf-8", errors=errors)  # type: ignore[arg-type]


def wordpiece_encode(
    word: str | bytes,
    vocab: Any,
    *,
    unk_token: str = "[UNK]",
    prefix: str = "##",
    max_chars: int = 100,
) -> list[str]:
    """WordPiece: greedy longest-match-first on one pre-split word.

    From each position the longest entry of ``vocab`` (set or mapping of ``str``), with
    ``prefix`` after the first piece; no match anywhere, or more than ``max_chars`` code points:
    the whole word is ``[unk_token]`` (which need not be in ``vocab``). As BERT's
    ``WordpieceTokenizer`` (default limit 200) and HF's ``models.WordPiece`` (100).

    Examples
    --------
    >>> V = {"a", "ab", "##b", "##c", "##d", "##bcd", "un", "##aff", "##able"}
    >>> wordpiece_encode("abcd", V), wordpiece_encode("unaffable", V), wordpiece_encode("abx", V)
    (['ab', '##c', '##d'], ['un', '##aff', '##able'], ['[UNK]'])
    """
    f = "wordpiece_encode"
    s: str = _validate.text(word, "word", f)
    if isinstance(vocab, (str, bytes)) or not isinstance(vocab, Iterable):
        raise TypeError(f"{f}: vocab must be a set or mapping of str; got {vocab!r}")
    pieces = vocab if isinstance(vocab, (Mapping, set, frozenset)) else frozenset(vocab)
    for p in pieces:
        if not isinstance(p, str):
            raise TypeError(f"{f}: vocab entries must be str; got {p!r}")
    if not pieces or "" in pieces:
        raise ValueError(f"{f}: vocab must be non-empty without an empty-string piece")
    if not isinstance(unk_token, str) or not isinstance(prefix, str):
        raise TypeError(f"{f}: unk_token and prefix must be str; got {unk_token!r}, {prefix!r}")
    if not prefix:
        raise ValueError(f"{f}: prefix must be non-empty; got ''")
    if len(s) > _validate.positive_int(max_chars, "max_chars", f):
        return [unk_token]
    longest = max(map(len, pieces))
    out, start = [], 0
    while start < len(s):
        for end in range(min(len(s), start + longest), start, -1):
            piece = s[start:end] if start == 0 else prefix + s[start:end]
            if piece in pieces:
                break
        else:
            return [unk_token]
        out.append(piece)
        start = end
    return out
