"""The build's cache in ``.cache/``: one store for the hooks that need it.

Not a hook itself: ``figures.py`` and ``notebook.py`` import it (MkDocs runs
each hook with ``hooks/`` on ``sys.path``). An entry is named
``<stem>-<key>.<suffix>``, where the key hashes everything the content
depends on; writing one removes the older entries of the same stem.
``MFL_CACHE=off`` skips every cache, as a clean build (the reproducibility
test) wants.
"""

from __future__ import annotations

import hashlib
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
