"""The segmentation lattice and the unigram language model (Kudo 2018, arXiv:1804.10959).

A text of ``n`` characters (code points; ``bytes`` are decoded as UTF-8) has a lattice with
nodes ``0 … n`` and an edge ``i → j`` for every piece ``text[i:j]``; a segmentation is a path
``0 → n``. ``log_probs`` maps pieces (non-empty ``str``) to finite scores, usually ``log p``.
There is no unknown-piece fallback: a character no piece covers raises ``ValueError`` naming
it. The dynamic programs loop in Python over lattice nodes (the documented exception to the
no-loops rule); the work at a node is the kernel's ``logsumexp``/``softmax``. References: HF
``tokenizers`` ``models.Unigram`` and SentencePiece (``viterbi``, ``sample_segmentation``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

import numpy as np

from llmmath import _validate
from llmmath.softmax import logsumexp, softmax


class _Lattice(NamedTuple):
    n: int  # characters of the text
    keys: list[str]  # the pieces of log_probs, in its order
    pid: np.ndarray  # (E,) index into keys of each edge; edges sorted by (end, start)
    i: np.ndarray  # (E,) start node
    j: np.ndarray  # (E,) end node
    score: np.ndarray  # (E,) score of the edge's piece
    end_ptr: np.ndarray  # edges ending at node k: end_ptr[k]:end_ptr[k + 1]


def _text(text: Any, f: str, name: str = "text") -> str:
    text = _validate.text(text, name, f)
    if not text:
        raise ValueError(f"{f}: {name} is empty; a lattice needs at least one character")
    return text


def _pieces(vocab: Any, f: str, name: str) -> list[str]:
    if isinstance(vocab, (str, bytes)) or not isinstance(vocab, Collection):
        raise TypeError(f"{f}: {name} must be a set or mapping of str; got {type(vocab).__name__}")
    if not vocab:
        raise ValueError(f"{f}: {name} is empty; it must hold at least one piece")
    for p in vocab:
        if not isinstance(p, str):
            raise TypeError(f"{f}: {name} pieces must be str; got {p!r}")
        if not p:
            raise ValueError(f"{f}: {name} has an empty-string piece; pieces must be non-empty")
    return list(vocab)


def _scores(log_probs: Any, f: str) -> dict[str, float]:
    if not isinstance(log_probs, Mapping):
        raise TypeError(f"{f}: log_probs must be a mapping piece -> score; got {type(log_probs)}")
    _pieces(log_probs, f, "log_probs")
    return {p: _validate.finite_float(s, f"log_probs[{p!r}]", f) for p, s in log_probs.items()}


def _word_counts(word_counts: Any, f: str) -> list[tuple[str, int]]:
    if not isinstance(word_counts, Mapping):
        raise TypeError(f"{f}: word_counts must be a mapping word -> int; got {type(word_counts)}")
    if not word_counts:
        raise ValueError(f"{f}: word_counts is empty; it must hold at least one word")
    for w, c in word_counts.items():
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)):
            raise TypeError(f"{f}: word_counts[{w!r}] must be an int count; got {c!r}")
        if c < 1:
            raise ValueError(f"{f}: word_counts[{w!r}] must be >= 1; got {c}")
    return [(_text(w, f, f"word_counts word {w!r}"), int(c)) for w, c in word_counts.items()]


def _edges(text: str, pieces: Collection[str]) -> list[tuple[int, int, str]]:
    """Every ``(i, j, text[i:j])`` with the substring in ``pieces``, sorted by ``(j, i)``."""
    longest = max(map(len, pieces))
    return [
        (i, j, text[i:j])
        for j in range(1, len(text) + 1)
        for i in range(max(0, j - longest), j)
        if text[i:j] in pieces
    ]


def _first_gap(i: np.ndarray, j: np.ndarray, n: int) -> int:
    """The first position ``k < n`` inside no edge ``i ≤ k < j``, or -1."""
    depth = np.cumsum(np.bincount(i, minlength=n + 1) - np.bincount(j, minlength=n + 1))
    gaps = np.flatnonzero(depth[:n] == 0)
    return int(gaps[0]) if gaps.size else -1


def _lattice(text: str, scores: dict[str, float], f: str, where: str = "") -> _Lattice:
    """The lattice of ``text``; ``ValueError`` naming a position unless a path ``0 → n`` exists."""
    n, keys = len(text), list(scores)
    index = {p: k for k, p in enumerate(keys)}
    edges = _edges(text, scores)
    i, j = (np.array([e[c] for e in edges], dtype=np.int64) for c in (0, 1))
    pid = np.array([index[e[2]] for e in edges], dtype=np.int64)
    score = np.array(list(scores.values()))[pid]
    lat = _Lattice(n, keys, pid, i, j, score, np.searchsorted(j, np.arange(n + 2)))
    reach = np.zeros(n + 1, dtype=bool)
    reach[0] = True
    for k in range(1, n + 1):
        reach[k] = reach[i[lat.end_ptr[k] : lat.end_ptr[k + 1]]].any()
    if reach[n]:
        return lat
    k = _first_gap(i, j, n)
    if k >= 0:
        raise ValueError(
            f"{f}: no piece of log_probs covers position {k} ({text[k]!r}) of text{where}"
        )
    k = _first_gap(i[reach[i]], j[reach[i]], n)
    raise ValueError(
        f"{f}: text{where} has no segmentation: no path covers position {k} ({text[k]!r})"
    )


def _forward(lat: _Lattice, s: np.ndarray) -> np.ndarray:
    """``α_k = logsumexp over edges (i, k) of α_i + s``, ``α_0 = 0``: (n + 1,)."""
    a = np.full(lat.n + 1, -np.inf)
    a[0] = 0.0
    for k in range(1, lat.n + 1):
        e = slice(lat.end_ptr[k], lat.end_ptr[k + 1])
        if e.stop > e.start:
            a[k] = logsumexp(a[lat.i[e]] + s[e])
    return a


def _posterior(lat: _Lattice, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward log-sums ``α`` (n + 1,) and the posterior probability of every edge (E,)."""
    a, b = _forward(lat, s), np.full(lat.n + 1, -np.inf)
    b[lat.n] = 0.0
    order = np.argsort(lat.i, kind="stable")
    start_ptr = np.searchsorted(lat.i[order], np.arange(lat.n + 2))
    for k in range(lat.n - 1, -1, -1):  # β_k = logsumexp over edges (k, j) of s + β_j
        out = order[start_ptr[k] : start_ptr[k + 1]]
        if out.size:
            b[k] = logsumexp(s[out] + b[lat.j[out]])
    return a, np.exp(a[lat.i] + s + b[lat.j] - a[lat.n])


def _expected(lat: _Lattice, post: np.ndarray) -> np.ndarray:
    """Expected uses of every piece of ``lat.keys``: (V,)."""
    return np.bincount(lat.pid, weights=post, minlength=len(lat.keys))


def count_segmentations(text: Any, vocab: Any) -> int:
    """Number of ways to write ``text`` as a sequence of pieces of ``vocab`` (an exact int).

    vocab: a set (or mapping) of non-empty ``str``. Counts the lattice's paths ``0 → n`` by
    ``N_j = Σ_{i: text[i:j] ∈ vocab} N_i``, ``N_0 = 1``; 0 when some character is uncovered.

    Examples
    --------
    >>> count_segmentations("abab", {"a", "b", "ab", "ba"})
    5
    >>> count_segmentations("née", {"n", "e"})
    0
    """
    f = "count_segmentations"
    text = _text(text, f)
    n_paths = [1] + [0] * len(text)
    for i, j, _ in _edges(text, set(_pieces(vocab, f, "vocab"))):  # sorted by end node
        n_paths[j] += n_paths[i]
    return n_paths[-1]


def count_bounded_segmentations(n: int, max_len: int) -> int:
    """Segmentations of an ``n``-character string when every substring of length ≤ L is a token.

    ``N(0) = 1``, ``N(m) = Σ_{k=1}^{min(m, L)} N(m − k)`` (an exact int): the Fibonacci number
    ``F_{n+1}`` for ``L = 2``, ``2^{n−1}`` for ``L ≥ n ≥ 1``.

    Examples
    --------
    >>> [count_bounded_segmentations(10, L) for L in (2, 3, 4, 10)]
    [89, 274, 401, 512]
    """
    f = "count_bounded_segmentations"
    n = _validate.positive_int(n, "n", f, minimum=0)
    L = _validate.positive_int(max_len, "max_len", f)
    counts, window = [1], 1  # window = N(m − 1) + … + N(m − L)
    for m in range(1, n + 1):
        counts.append(window)
        window += window - (counts[m - L] if m >= L else 0)
    return counts[n]


def viterbi(text: Any, log_probs: Mapping[str, float]) -> tuple[list[str], float]:
    """The segmentation with the largest total score, and that score: ``(pieces, score)``.

    ``δ_j = max_i δ_i + score(text[i:j])``, ``δ_0 = 0``; a tie goes to the longest last
    piece, then recursively on the remaining prefix (as HF's ``models.Unigram``).

    Examples
    --------
    >>> lp = {"a": np.log(0.3), "b": np.log(0.2), "ab": np.log(0.4), "ba": np.log(0.1)}
    >>> pieces, score = viterbi("abab", lp)
    >>> pieces, round(float(np.exp(score)), 6)
    (['ab', 'ab'], 0.16)
    """
    f = "viterbi"
    lat = _lattice(_text(text, f), _scores(log_probs, f), f)
    n = lat.n
    delta, back = np.full(n + 1, -np.inf), np.zeros(n + 1, dtype=np.int64)
    delta[0] = 0.0
    for k in range(1, n + 1):
        lo, hi = lat.end_ptr[k], lat.end_ptr[k + 1]
        if hi > lo:  # edges by increasing start: argmax's first maximum is the longest piece
            vals = delta[lat.i[lo:hi]] + lat.score[lo:hi]
            back[k] = lo + int(np.argmax(vals))
            delta[k] = vals[back[k] - lo]
    pieces, k = [], n
    while k > 0:
        e = back[k]
        pieces.append(lat.keys[lat.pid[e]])
        k = int(lat.i[e])
    return pieces[::-1], float(delta[n])


def forward_backward(text: Any, log_probs: Mapping[str, float]) -> tuple[float, dict[str, float]]:
    """``(log Z, expected)``: the log of ``Σ_x exp(score(x))`` over all segmentations ``x``,
    and the posterior expected number of uses of each piece.

    ``expected[t] = Σ_{(i,j): text[i:j] = t} exp(α_i + score(t) + β_j − log Z)`` from forward
    and backward log-sums (``llmmath.softmax.logsumexp``); pieces with zero expectation are
    absent; the values sum to the expected number of tokens.

    Examples
    --------
    >>> lp = {"a": np.log(0.3), "b": np.log(0.2), "ab": np.log(0.4), "ba": np.log(0.1)}
    >>> log_z, ex = forward_backward("abab", lp)
    >>> round(float(np.exp(log_z)), 6), {t: round(c, 6) for t, c in ex.items()}
    (0.2176, {'a': 0.28125, 'b': 0.28125, 'ab': 1.691176, 'ba': 0.027574})
    """
    f = "forward_backward"
    lat = _lattice(_text(text, f), _scores(log_probs, f), f)
    a, post = _posterior(lat, lat.score)
    ex = _expected(lat, post)
    return float(a[-1]), {lat.keys[k]: float(ex[k]) for k in np.flatnonzero(ex > 0)}


def segmentation_entropy(text: Any, log_probs: Mapping[str, float], *, alpha: float = 1.0) -> float:
    """Entropy in nats of ``P_α(x | text) ∝ exp(α·score(x))`` over the segmentations ``x``.

    ``alpha > 0``. Equal to ``log Z_α − Σ_t E_α[c(t)]·α·score(t)``, computed as
    ``−Σ_edges P(edge)·log q(edge)`` with ``q`` the probabilities of backward sampling's steps,
    which avoids that difference's cancellation on long texts (``|log Z| ≫ H``).

    Examples
    --------
    >>> lp = {"a": np.log(0.3), "b": np.log(0.2), "ab": np.log(0.4), "ba": np.log(0.1)}
    >>> round(segmentation_entropy("abab", lp), 6)
    0.879275
    """
    f = "segmentation_entropy"
    lat = _lattice(_text(text, f), _scores(log_probs, f), f)
    s = _validate.positive_float(alpha, "alpha", f) * lat.score
    fwd, post = _posterior(lat, s)
    on = post > 0  # log q = α_i + s − α_j ≤ 0 on the edges of some path
    log_q = fwd[lat.i[on]] + s[on] - fwd[lat.j[on]]
    return max(0.0, -float(post[on] @ log_q))  # clip a rounding-level negative


def sample_segmentation(
    text: Any,
    log_probs: Mapping[str, float],
    *,
    rng: np.random.Generator,
    alpha: float = 1.0,
    size: int | None = None,
) -> list[str] | list[list[str]]:
    """A segmentation drawn from ``P_α(x | text) ∝ exp(α·score(x))`` (subword regularization).

    Forward filtering, backward sampling: from node ``n`` back to 0, the last piece
    ``text[i:j]`` is drawn with probability ``∝ exp(α_i + α·score)``, by inverse CDF on
    ``u = rng.random()``. ``alpha > 0``: ``α → 0`` approaches uniform over segmentations,
    ``α → ∞`` the Viterbi path. Agrees with spm's sampling in distribution, not draw for draw.

    ``size=None`` returns one segmentation (``list[str]``); ``size=m`` returns ``m``
    independent ones (``list[list[str]]``), from one forward pass, the backward choices
    of all draws standing on a node taken together. The ``m`` draws are not those of ``m``
    calls with the same generator (the uniforms are used in another order).

    Examples
    --------
    >>> lp = {"a": np.log(0.3), "b": np.log(0.2), "ab": np.log(0.4), "ba": np.log(0.1)}
    >>> x = sample_segmentation("abab", lp, rng=np.random.default_rng(0))
    >>> "".join(x), x in (["a", "b", "a", "b"], ["ab", "a", "b"], ["a", "ba", "b"],
    ...                   ["a", "b", "ab"], ["ab", "ab"])
    ('abab', True)
    >>> xs = sample_segmentation("abab", lp, rng=np.random.default_rng(0), size=3)
    >>> len(xs), all("".join(x) == "abab" for x in xs)
    (3, True)
    """
    f = "sample_segmentation"
    lat = _lattice(_text(text, f), _scores(log_probs, f), f)
    a = _validate.positive_float(alpha, "alpha", f)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{f}: rng must be a numpy.random.Generator; got {type(rng).__name__}")
    m = 1 if size is None else _validate.positive_int(size, "size", f)
    s = a * lat.score
    fwd = _forward(lat, s)
    # Every edge leads to a lower node, so visiting the nodes from n down to 1 meets each
    # draw at every node of its path, in order: one vectorized choice per node. One draw
    # (size=None) takes one uniform per node of its path, as a loop along the path would.
    at = np.full(m, lat.n)  # (m,) the node each draw stands on
    edge_into = np.full((m, lat.n), -1)  # (m, n) edge taken into node k + 1, -1 if none
    for k in range(lat.n, 0, -1):
        here = np.flatnonzero(at == k)
        if here.size:
            lo, hi = lat.end_ptr[k], lat.end_ptr[k + 1]
            cum = np.cumsum(softmax(fwd[lat.i[lo:hi]] + s[lo:hi]))  # inverse CDF
            u = rng.random(here.size) * cum[-1]
            chosen = lo + np.minimum(np.searchsorted(cum, u, side="right"), hi - lo - 1)
            edge_into[here, k - 1] = chosen
            at[here] = lat.i[chosen]
    draws = [[lat.keys[p] for p in lat.pid[row[row >= 0]]] for row in edge_into]
    return draws[0] if size is None else draws


def _corpus(words: list, scores: dict, f: str, why: str = "") -> tuple[float, np.ndarray]:
    """``(Σ_w c(w) log Z(w), Σ_w c(w) E[c(t) | w] over the pieces of scores)``."""
    ll, total = 0.0, np.zeros(len(scores))
    for w, c in words:
        lat = _lattice(w, scores, f, f" (word {w!r}{why})")
        a, post = _posterior(lat, lat.score)
        ll, total = ll + c * float(a[-1]), total + c * _expected(lat, post)
    return ll, total


def em_step(word_counts: Mapping, log_probs: Mapping) -> tuple[dict[str, float], float]:
    """One EM step of the unigram model: ``(new_log_probs, log_likelihood)``.

    E-step: ``forward_backward`` on each word, weighted by its count; M-step:
    ``p'(t) = E[c(t)] / Σ_t' E[c(t')]`` (maximum likelihood). ``log_likelihood`` is
    ``Σ_w c(w) log Z(w)`` under the **input** scores; pieces with expected count 0 are
    dropped. spm's and HF's trainers use a digamma M-step instead and drop counts < 0.5.

    Examples
    --------
    >>> lp = {"a": np.log(0.3), "b": np.log(0.2), "ab": np.log(0.4), "ba": np.log(0.1)}
    >>> new, ll = em_step({"abab": 2, "aba": 1, "bab": 1}, lp)
    >>> {t: round(float(np.exp(v)), 4) for t, v in new.items()}, round(ll, 4)
    ({'a': 0.2024, 'b': 0.2024, 'ab': 0.5481, 'ba': 0.047}, -7.0232)
    """
    f = "em_step"
    words, scores = _word_counts(word_counts, f), _scores(log_probs, f)
    ll, total = _corpus(words, scores, f)
    keys, keep = list(scores), np.flatnonzero(total > 0)
    new = np.log(total[keep] / total.sum())
    return {keys[k]: float(v) for k, v in zip(keep, new, strict=True)}, ll


def removal_loss(word_counts: Mapping, log_probs: Mapping, piece: str) -> float:
    """Loss of corpus log-likelihood ``L(p) − L(p')`` when ``piece`` is removed.

    ``L = Σ_w c(w) log Z(w)``; ``p'`` is ``p`` without ``piece``, renormalized to sum to 1
    (so ``log_probs`` must be log-probabilities: ``Σ exp(score)`` within 1e-9 of 1). May be
    negative: the freed mass can help more than the piece did. ``ValueError`` naming the
    word when some word has no segmentation without ``piece``.

    Examples
    --------
    >>> lp = {"a": np.log(0.3), "b": np.log(0.2), "ab": np.log(0.4), "ba": np.log(0.1)}
    >>> C = {"abab": 2, "aba": 1, "bab": 1}
    >>> round(removal_loss(C, lp, "ab"), 6), round(removal_loss(C, lp, "ba"), 6)
    (2.746486, -0.479874)
    """
    f = "removal_loss"
    words, scores = _word_counts(word_counts, f), _scores(log_probs, f)
    if not isinstance(piece, str):
        raise TypeError(f"{f}: piece must be a str; got {piece!r}")
    if piece not in scores:
        raise ValueError(f"{f}: piece {piece!r} is not a piece of log_probs")
    mass = float(np.exp(np.array(list(scores.values()))).sum())
    if abs(mass - 1.0) > 1e-9:
        raise ValueError(
            f"{f}: log_probs must be log-probabilities (Σ exp(score) = 1 within "
            f"1e-9) for the renormalization; got Σ exp(score) = {mass!r}"
        )
    if len(scores) == 1:
        raise ValueError(f"{f}: removing {piece!r} leaves log_probs with no piece")
    rest = {t: s for t, s in scores.items() if t != piece}
    shift = float(logsumexp(list(rest.values())))  # renormalize: Σ p' = 1
    rest = {t: s - shift for t, s in rest.items()}
    before, _ = _corpus(words, scores, f)
    after, _ = _corpus(words, rest, f, f" once {piece!r} is removed")
    return before - after
