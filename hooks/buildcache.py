"""The build's cache in ``.cache/``: one store for the hooks that need it.

Not a hook itself: the hooks import it (MkDocs runs each hook with
``hooks/`` on ``sys.path``). Two forms:

- ``cached``: one file per entry, ``<stem>-<key>.<suffix>``, for large
  outputs (a figure, a stylesheet). Writing one removes the older entries of
  the same stem.
- ``memo(name)``: many small text results in one JSON file, read on first use
  in a build and written once at its end (``save_memos``, which
  ``hooks/caches.py`` calls from ``on_post_build``). Each configuration has
  its own (``configure``): a build keeps only the entries it used, so
  sharing one file, the offline build (``mkdocs.offline.yml``) and the site's
  would each evict the other's pages.

A key hashes what the content depends on in the project (its inputs, the
hook's own code). What it depends on outside the project, Python and the
installed packages, is added here, once for every cache
(``environment_digest``). ``MFL_CACHE=off`` skips every cache, as a clean
build (the reproducibility test) wants.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# MFL_CACHE_DIR puts it elsewhere (tests/test_serve.py builds on a copy).
CACHE = Path(os.environ.get("MFL_CACHE_DIR") or ROOT / ".cache")
KERNEL = ROOT / "src" / "llmmath"
# info, not warning: under --strict a warning fails the build, and a cache never should
log = logging.getLogger("mkdocs.hooks.buildcache")


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


def _entry(folder: str, stem: str, key: str, suffix: str) -> Path:
    return CACHE / folder / f"{stem}-{digest([key, environment_digest()])}.{suffix}"


def lookup(folder: str, stem: str, key: str, suffix: str) -> bytes | None:
    """The bytes ``store`` kept under this key, or None (also when caching is off)."""
    if not enabled():
        return None
    target = _entry(folder, stem, key, suffix)
    return target.read_bytes() if target.exists() else None


def store(folder: str, stem: str, key: str, suffix: str, content: bytes) -> None:
    """Keep ``content`` as ``.cache/<folder>/<stem>-<hash>.<suffix>``, replacing older entries.

    The hash is of ``key`` and of the environment (``environment_digest``).
    """
    if not enabled():
        return
    target = _entry(folder, stem, key, suffix)
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f"{stem}-*.{suffix}"):
        stale.unlink()
    target.write_bytes(content)


def cached(folder: str, stem: str, key: str, suffix: str, produce: Callable[[], bytes]) -> bytes:
    """``produce()``, through ``lookup`` and ``store``."""
    content = lookup(folder, stem, key, suffix)
    if content is None:
        content = produce()
        store(folder, stem, key, suffix, content)
    return content


@functools.cache
def environment_digest() -> str:
    """Hash of the Python version and of every installed distribution's name and version.

    Read from the names of the ``*.dist-info`` folders on ``sys.path``, which
    carry both: a millisecond, where ``importlib.metadata`` takes half a second.
    """
    installed: list[str] = []
    for entry in sys.path:
        folder = Path(entry or ".")
        if folder.is_dir():
            installed += sorted(
                p.name for p in folder.iterdir() if p.suffix in (".dist-info", ".egg-info")
            )
    return digest([sys.version, *installed])


# The configuration this build reads, as a suffix of its memos' file names: ""
# for the site's mkdocs.yml, "offline" for mkdocs.offline.yml. Set by
# hooks/caches.py from on_config, before any hook opens a memo.
CONFIG = ""


def configure(config_file: str | os.PathLike | None) -> None:
    """Give this build's memos the files of the configuration ``config_file`` names."""
    global CONFIG
    name = Path(config_file).name if config_file else "mkdocs.yml"
    CONFIG = "" if name == "mkdocs.yml" else Path(name).stem.removeprefix("mkdocs.")


# `properdocs build --dirty` and `properdocs serve --dirty` re-render only the pages
# that changed; hooks/caches.py sets this from on_startup so that a Memo keeps
# the entries of the pages such a build skipped.
DIRTY = False

# What a build of this process left for the next one (`make serve` builds many
# times in one process): hooks keep there, by page, what a page contributes to
# other pages, so that a dirty rebuild, which does not read a page it skips,
# still has it (hooks/caches.py). ``RESTORED`` names the pages this build took
# from there instead of reading them (set in on_nav).
_SESSION: dict[str, dict] = {}
RESTORED: frozenset[str] = frozenset()


def session(name: str) -> dict:
    """The dict ``name`` kept for the life of this process (empty at first)."""
    return _SESSION.setdefault(name, {})


def end_session() -> None:
    """Forget what earlier builds left: the next build reads every page."""
    global RESTORED
    _SESSION.clear()
    RESTORED = frozenset()


class Memo:
    """Text results kept between builds in ``.cache/<name>.json``.

    Hooks use ``memo(name)``, this build's instance (in
    ``.cache/<name>-<configuration>.json`` for a configuration other than
    mkdocs.yml, see ``configure``). ``get(key, produce)``
    returns the stored text for ``key``, or stores ``produce()``. The file is
    read only if Python and every installed package are the versions that
    wrote it (``environment_digest``). ``save()`` writes
    the entries this build asked for (and, in a dirty build, the others too),
    so entries for code that has since changed do not pile up.

    The cache can never fail a build: an unreadable or foreign file is
    ignored, and a failed write is only logged. Two builds that save at once
    each write a whole file; the last one wins.
    """

    def __init__(self, name: str) -> None:
        self.path = CACHE / (f"{name}-{CONFIG}.json" if CONFIG else f"{name}.json")
        self.active = enabled()
        self.stored: dict[str, str] = {}
        self.used: dict[str, str] = {}
        if self.active:
            self.stored = self._load()

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # absent, or a build killed while writing
            return {}
        if not isinstance(data, dict) or data.get("environment") != environment_digest():
            return {}
        entries = data.get("entries")
        if not isinstance(entries, dict):
            return {}
        return {k: v for k, v in entries.items() if isinstance(v, str)}

    def get(self, key: str, produce: Callable[[], str]) -> str:
        if not self.active:
            return produce()
        if key not in self.used:
            self.used[key] = self.stored[key] if key in self.stored else produce()
        return self.used[key]

    def find(self, key: str) -> str | None:
        """The stored text for ``key`` (used by this build), or None: then ``put`` it."""
        if self.active and key not in self.used and key in self.stored:
            self.used[key] = self.stored[key]
        return self.used.get(key)

    def put(self, key: str, text: str) -> None:
        """Keep ``text`` for ``key``: ``get`` for a result made elsewhere."""
        if self.active:
            self.used[key] = text

    def keep(self, key: str) -> None:
        """Count ``key`` as used by this build without asking for it (a stored page used it)."""
        if self.active and key in self.stored:
            self.used.setdefault(key, self.stored[key])

    def forget(self, key: str) -> None:
        """Keep nothing for ``key``: this build's result is not to be reused."""
        self.used.pop(key, None)
        self.stored.pop(key, None)

    def save(self) -> None:
        entries = {**self.stored, **self.used} if DIRTY else self.used
        if not self.active or entries == self.stored:
            return
        data = {"environment": environment_digest(), "entries": entries}
        partial = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=self.path.parent, suffix=".partial", delete=False
            ) as out:
                partial = Path(out.name)
                json.dump(data, out, sort_keys=True)
            os.replace(partial, self.path)
        except OSError as exc:
            log.info("build cache %s not saved: %s", self.path.name, exc)
            if partial is not None:
                partial.unlink(missing_ok=True)
            return
        self.stored = dict(entries)


_OPEN: dict[str, Memo] = {}  # this build's memos, by name


def memo(name: str) -> Memo:
    """This build's ``Memo`` called ``name``, opened (read from disk) on first use."""
    if name not in _OPEN:
        _OPEN[name] = Memo(name)
    return _OPEN[name]


def save_memos() -> None:
    """Write this build's memos and close them: the next build reads them afresh."""
    for opened in _OPEN.values():
        opened.save()
    _OPEN.clear()


class WarningCount(logging.Handler):
    """Counts the warnings logged while it is attached: a result made with one
    is not stored (``Memo.forget``), so that the next build warns again and
    ``--strict`` still fails on it."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def site_files(files) -> str:
    """Every file the build includes, with its address, as text for a cache key.

    Excluded files (``docs/.ruff_cache``, which ``make lint`` writes) are left
    out: they are not served, and would change the key between two builds.
    """
    return json.dumps(
        sorted((f.src_uri, f.url, f.inclusion.name) for f in files if not f.inclusion.is_excluded())
    )
