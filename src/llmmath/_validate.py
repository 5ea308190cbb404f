"""Input checks shared by every kernel module.

Each helper raises with a message of the form
``"<function>: <argument> <what was expected>; got <what came>"`` so that a
reader who passes bad input learns which argument was wrong and why.
Conventions (see ``kernel-api.md``): ``TypeError`` for non-integer ids,
``IndexError`` for ids outside ``[0, V)`` (negative ids never wrap),
``ValueError`` for shapes, widths and options.

Non-finite input: every float array and float scalar must be finite, and a
NaN or infinity raises ``ValueError`` naming the argument (a NaN that slips
into a position or a table otherwise comes back as a plausible-looking
result). The one exception is ``-inf`` where it means "masked": logits given
to ``softmax``/``log_softmax``/``cross_entropy`` and an additive attention
``bias`` (``neg_inf=True`` below). NaN and ``+inf`` are rejected there too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np


def _asarray(x: Any, name: str, func: str) -> np.ndarray:
    """``np.asarray`` that names the argument when the input is ragged."""
    try:
        return np.asarray(x)
    except ValueError as err:  # e.g. [[1, 2], [3]]: rows of different lengths
        raise ValueError(
            f"{func}: {name} must be a rectangular array; got ragged input ({err})"
        ) from None


def float_array(
    x: Any, name: str, func: str, *, min_ndim: int = 0, neg_inf: bool = False
) -> np.ndarray:
    """Return ``x`` as a float64 array (or a wider float), rejecting empty input.

    Integer and narrower float inputs are promoted to float64; ``longdouble``
    stays as it is. Non-finite entries raise ``ValueError``, except ``-inf``
    when ``neg_inf`` is true (a masked logit or score).
    """
    arr = _asarray(x, name, func)
    kind = arr.dtype.kind  # b bool, i/u integer, f float, c complex; the rest is not numeric
    if kind == "c":
        raise TypeError(f"{func}: {name} must be real; got dtype {arr.dtype}")
    if kind not in "biuf":
        raise TypeError(f"{func}: {name} must be numeric; got dtype {arr.dtype}")
    if arr.ndim < min_ndim:
        raise ValueError(
            f"{func}: {name} must have at least {min_ndim} dimension(s); got shape {arr.shape}"
        )
    if arr.size == 0:
        raise ValueError(f"{func}: {name} is empty (shape {arr.shape})")
    arr = arr.astype(np.promote_types(arr.dtype, np.float64), copy=False)
    finite(arr, name, func, neg_inf=neg_inf)
    return arr


def finite(arr: np.ndarray, name: str, func: str, *, neg_inf: bool = False) -> None:
    """Raise ``ValueError`` if ``arr`` holds NaN or infinity (``-inf`` allowed if ``neg_inf``)."""
    if np.isfinite(arr).all():  # the common case, in one pass
        return
    ok = np.isfinite(arr)
    if neg_inf:
        ok |= np.isneginf(arr)
    if not ok.all():
        where = tuple(int(i) for i in np.argwhere(~ok)[0])
        bad = arr[where] if arr.ndim else arr
        allowed = " (-inf, meaning masked, is allowed)" if neg_inf else ""
        raise ValueError(f"{func}: {name} must be finite{allowed}; got {bad} at index {where}")


def _real(value: Any, name: str, func: str) -> float:
    """``float(value)``, with a ``TypeError`` that names the argument."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{func}: {name} must be a real number; got {value!r}") from None


def finite_float(value: Any, name: str, func: str) -> float:
    """Return ``value`` as a finite Python float."""
    v = _real(value, name, func)
    if not np.isfinite(v):
        raise ValueError(f"{func}: {name} must be finite; got {value!r}")
    return v


def matrix(x: Any, name: str, func: str) -> np.ndarray:
    """Return ``x`` as a non-empty 2-D float array ``(n, d)``."""
    arr = float_array(x, name, func)
    if arr.ndim != 2:
        raise ValueError(f"{func}: {name} must be 2-D (n, d); got shape {arr.shape}")
    return arr


def int_ids(ids: Any, vocab_size: int, func: str, name: str = "ids") -> np.ndarray:
    """Return ``ids`` as an int64 array, every entry in ``[0, vocab_size)``.

    Floats (even integral ones such as ``3.0``) and booleans raise ``TypeError``:
    an id is a label, and a float id usually means a bug upstream. Negative ids
    raise ``IndexError`` rather than counting from the end as numpy would.
    """
    arr = _asarray(ids, name, func)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{func}: {name} must be integers; got dtype {arr.dtype}")
    if arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        if lo < 0 or hi >= vocab_size:
            bad = lo if lo < 0 else hi
            raise IndexError(
                f"{func}: {name} must lie in [0, {vocab_size}); got {bad}"
                + (" (negative ids are not wrapped)" if bad < 0 else "")
            )
    return arr.astype(np.int64, copy=False)


def positive_int(value: Any, name: str, func: str, *, minimum: int = 1) -> int:
    """Return ``value`` as a Python int, requiring ``value >= minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{func}: {name} must be an integer; got {value!r}")
    if value < minimum:
        raise ValueError(f"{func}: {name} must be >= {minimum}; got {value}")
    return int(value)


def positive_float(value: Any, name: str, func: str) -> float:
    """Return ``value`` as a float, requiring a finite ``value > 0``."""
    v = _real(value, name, func)
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{func}: {name} must be a finite number > 0; got {value!r}")
    return v


def even_int(d: Any, name: str, func: str, *, minimum: int = 2) -> int:
    """Return ``d`` as an even Python int ``>= minimum`` (a width made of pairs)."""
    d = positive_int(d, name, func, minimum=minimum)
    if d % 2:
        raise ValueError(f"{func}: {name} must be even (coordinates come in pairs); got {d}")
    return d


def even_width(d: int, name: str, func: str, why: str) -> int:
    """Require an even width ``d``; ``why`` says what needs the pairs."""
    if d % 2:
        raise ValueError(f"{func}: {name} has odd last dimension {d}; {why}, so d must be even")
    return d


def option(value: Any, choices: Iterable[str], name: str, func: str) -> str:
    """Require ``value`` to be one of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{func}: {name} must be one of {choices}; got {value!r}")
    return value


def same_last_dim(a: np.ndarray, b: np.ndarray, names: str, func: str) -> None:
    """Require two arrays to agree on their last axis."""
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"{func}: {names} must share the last dimension; got shapes {a.shape} and {b.shape}"
        )


def prob_rows(x: Any, name: str, func: str, *, ndim: int | None = None) -> np.ndarray:
    """Probability rows ``(..., V)``: finite, non-negative, each summing to 1 within 1e-9.

    Never renormalizes silently: a row that does not sum to 1 is an error that names
    the row. ``ndim`` also fixes the number of dimensions.
    """
    arr = float_array(x, name, func, min_ndim=1)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{func}: {name} must be {ndim}-D; got shape {arr.shape}")
    if arr.min() < 0:
        raise ValueError(f"{func}: {name} must be non-negative probabilities; got {arr.min()}")
    err = np.abs(arr.sum(axis=-1) - 1.0)
    if np.max(err) > 1e-9:
        row = tuple(int(i) for i in np.unravel_index(np.argmax(err), err.shape))
        raise ValueError(
            f"{func}: {name} rows must sum to 1 within 1e-9 (no silent renormalization); "
            f"got a row summing to {float(arr.sum(axis=-1)[row])!r} at index {row}"
        )
    return arr


def logit_rows(x: Any, name: str, func: str, *, min_ndim: int = 1) -> np.ndarray:
    """Logits ``(..., V)``: ``-inf`` allowed (a removed token), NaN and ``+inf`` not,
    and at least one finite logit in every row."""
    z = float_array(x, name, func, min_ndim=min_ndim, neg_inf=True)
    dead = np.isneginf(z.max(axis=-1))
    if dead.any():
        where = tuple(int(i) for i in np.argwhere(dead)[0])
        raise ValueError(
            f"{func}: {name} must keep at least one finite entry per row; got a row with "
            f"every logit -inf at index {where}"
        )
    return z


def prob_pair(p: Any, q: Any, func: str) -> tuple[np.ndarray, np.ndarray]:
    """Two probability arrays ``p``, ``q`` over one vocabulary whose leading shapes broadcast."""
    p, q = prob_rows(p, "p", func), prob_rows(q, "q", func)
    same_last_dim(p, q, "p and q", func)
    try:
        np.broadcast_shapes(p.shape, q.shape)
    except ValueError:
        raise ValueError(
            f"{func}: p and q must broadcast over their leading dimensions; "
            f"got shapes {p.shape} and {q.shape}"
        ) from None
    return p, q


def text(x: Any, name: str, func: str, *, utf8: bool = False) -> Any:
    """``x`` as ``str`` (``bytes`` must be valid UTF-8), or as UTF-8 ``bytes`` if ``utf8``."""
    if not isinstance(x, (str, bytes)):
        raise TypeError(f"{func}: {name} must be str or bytes; got {type(x).__name__} {x!r}")
    try:  # invalid bytes, or a str with a lone surrogate
        if utf8:
            return x.encode("utf-8") if isinstance(x, str) else x
        return x.decode("utf-8") if isinstance(x, bytes) else x
    except UnicodeError as err:
        raise ValueError(f"{func}: {name} must be valid UTF-8; got {err}") from None
