"""The build's cache in ``.cache/``: one store for the hooks that need it.

Not a hook itself: ``figures.py``, ``notebook.py``, ``bibliography.py`` and ``caches.py``
import it (MkDocs runs each hook with ``hooks/`` on ``sys.path``). Two forms:

- ``cached``: one file per entry, ``<stem>-<key>.<suffix>``, for large
  outputs (a figure, a stylesheet). Writing one removes the older entries of
  the same stem.
- ``Memo``: many small text results in one JSON file, read once at the start
  of a build and written once at the end.

In both, the key hashes everything the content depends on. ``MFL_CACHE=off``
skips every cache, as a clean build (the reproducibility test) wants.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"
KERNEL = ROOT / "src" / "llmmath"


def enabled() -> bool:
    return os.environ.get("MFL_CACHE") != "off"


def digest(parts: Iterable[bytes | str]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()[:20]


def kernel_digest() -> str:
    """Hash of the kernel's source: what figures and notebook outputs depend on."""
    return digest(p.name.encode() + p.read_bytes() for p in sorted(KERNEL.glob("*.py")))


def cached(folder: str, stem: str, key: str, suffix: str, produce: Callable[[], bytes]) -> bytes:
    """``produce()``, stored as ``.cache/<folder>/<stem>-<key>.<suffix>``."""
    if not enabled():
        return produce()
    target = CACHE / folder / f"{stem}-{key}.{suffix}"
    if target.exists():
        return target.read_bytes()
    content = produce()
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f"{stem}-*.{suffix}"):
        stale.unlink()
    target.write_bytes(content)
    return content


class Memo:
    """Text results kept between builds in ``.cache/<name>.json``.

    ``get(key, produce)`` returns the stored text for ``key``, or stores
    ``produce()``. ``save()`` writes only the entries that this build asked
    for, so entries for code that has since changed do not pile up.
    """

    def __init__(self, name: str) -> None:
        self.path = CACHE / f"{name}.json"
        self.active = enabled()
        self.stored: dict[str, str] = {}
        self.used: dict[str, str] = {}
        if self.active and self.path.exists():
            try:
                self.stored = json.loads(self.path.read_text(encoding="utf-8"))
            except ValueError:  # a build killed while writing: start afresh
                self.stored = {}

    def get(self, key: str, produce: Callable[[], str]) -> str:
        if not self.active:
            return produce()
        if key not in self.used:
            self.used[key] = self.stored[key] if key in self.stored else produce()
        return self.used[key]

    def save(self) -> None:
        if not self.active or self.used == self.stored:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".json.partial")
        partial.write_text(json.dumps(self.used, sort_keys=True), encoding="utf-8")
        partial.replace(self.path)
        self.stored = dict(self.used)
