"""Work that MkDocs and its plugins redo on every build, kept between builds.

A warm build re-renders every page (MkDocs has no page cache). Three parts of
that are pure functions of inputs we can name, and cost about a third of it:

- **Pygments.** Every fenced block, inline ``#!py`` snippet and API signature
  is colored by ``pymdownx.highlight``, which calls
  ``pygments.highlight(code, lexer, formatter)``: about 470 calls, three
  seconds. The output depends only on the code, the lexer's and formatter's
  classes and options, and the packages' versions, so this hook swaps in
  a version of that call that looks the result up by a hash of exactly those
  (``buildcache.memo("highlight")``) and highlights only on a miss. Anything it cannot key
  safely (a lexer with filters, output to a file) goes straight to Pygments.
- **Signatures.** mkdocstrings lays out each API signature with ``ruff
  format``, a subprocess a signature (about 40, a third of a second). The
  result depends on the code, the line length, ruff's version and the
  project's ruff settings, and is kept in ``buildcache.memo("signatures")``.
- **Jinja templates.** The theme's and mkdocstrings' templates (about 70)
  were compiled afresh each build, over a second. Jinja's own
  ``FileSystemBytecodeCache`` keeps the compiled code and checks it against
  each template's source; the folder is keyed by Python's and the packages'
  versions (``buildcache.environment_digest``), since an upgrade can change
  how an environment compiles.

This hook also runs the life of every ``buildcache.memo``: it tells them
whether the build is ``--dirty`` (``on_startup``) and saves them all when the
build ends (``on_post_build``, or ``on_build_error``; a dirty session, as
`make serve` runs, keeps them open and saves them in ``on_shutdown``), when it
also ends the worker processes of ``hooks/pool.py``; a clean build starts them
at once (``on_startup``). ``MFL_CACHE=off`` turns every cache off.

And it makes a dirty rebuild write its pages as a full build does: the pages
it does not read are restored from the earlier builds of the same process
(the section "Dirty rebuilds" below; ``tests/test_serve.py``).
``tests/test_reproducible.py`` checks that a warm build is byte-identical to
a clean one and reuses every stored entry.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import shutil
import sys
import threading
from pathlib import Path

import buildcache
import pool
import pygments
import pymdownx.highlight
from jinja2 import Environment, FileSystemBytecodeCache
from mkdocs.plugins import CombinedEvent, event_priority
from mkdocs.structure.toc import get_toc

ROOT = Path(__file__).resolve().parent.parent


def _describe(obj) -> str:
    kind = type(obj)
    return f"{kind.__module__}.{kind.__qualname__}{sorted(obj.options.items())!r}"


def cached_highlight(code, lexer, formatter, outfile=None):
    """``pygments.highlight``, answered from the memo when the same call was made before."""
    if outfile is not None or lexer.filters:
        return pygments.highlight(code, lexer, formatter, outfile)
    # Pygments' and pymdownx's versions are covered by the memo itself.
    key = buildcache.digest([_describe(lexer), _describe(formatter), code])
    _HIGHLIGHTED.append(key)
    return buildcache.memo("highlight").get(key, lambda: pygments.highlight(code, lexer, formatter))


# The highlight and signature keys of the page being rendered: a page restored
# from the page cache (below) is not highlighted again, and its entries must
# stay in the memos.
_HIGHLIGHTED: list[str] = []
_SIGNED: list[str] = []
# ruff also reads the project's own configuration (stdin-filename file.py, here).
RUFF_CONFIG = [ROOT / "pyproject.toml", ROOT / "ruff.toml"]


def _cache_signature_formatting() -> None:
    """mkdocstrings formats each API signature by running ``ruff format`` in a subprocess."""
    try:
        from mkdocstrings_handlers.python._internal import rendering
    except ImportError:  # a private module: if it moves, signatures are formatted as before
        return
    original = getattr(rendering, "_get_formatter", None)
    if original is None or getattr(original, "memoised", False):
        return
    config = [p.read_bytes() for p in RUFF_CONFIG if p.exists()]

    @functools.cache
    def get_formatter():
        format_code = original()

        def formatter(code: str, line_length: int) -> str:
            key = buildcache.digest([*config, str(line_length), code])
            _SIGNED.append(key)
            return buildcache.memo("signatures").get(key, lambda: format_code(code, line_length))

        return formatter

    get_formatter.memoised = True
    rendering._get_formatter = get_formatter


def _cache_templates(env: Environment, name: str) -> None:
    folder = buildcache.CACHE / "jinja" / f"{name}-{buildcache.environment_digest()}"
    for stale in folder.parent.glob(f"{name}-*"):
        if stale != folder:
            shutil.rmtree(stale)
    folder.mkdir(parents=True, exist_ok=True)
    env.bytecode_cache = FileSystemBytecodeCache(str(folder))


# ---------------------------------------------------------------------------
# Rendered pages

# A page whose Markdown holds a mkdocstrings block (``::: llmmath.x``) renders
# from the kernel's source, which its Markdown does not show, with signatures
# laid out by ruff under the project's settings: its key adds both
# (``_API_INPUTS``). mkdocstrings also registers each documented object in its
# inventory (``objects.inv``) as it renders; that is recorded and replayed on
# a hit, as autorefs' anchors are. Without the mkdocstrings plugin to record
# it, such a page is rendered every build.
API_BLOCK = re.compile(r"^:::", re.M)
_PAGE_INPUTS = ""  # this build's digest of what every page's HTML depends on (on_files)
_API_INPUTS = ""  # and of what an API page's HTML depends on besides (on_files)


def _toc_tokens(items) -> list[dict]:
    return [
        {"level": i.level, "id": i.id, "name": i.title, "children": _toc_tokens(i.children)}
        for i in items
    ]


def _build_logger() -> logging.Logger:
    """The top of the build command's logger tree, where every warning passes.

    Under MkDocs that is ``mkdocs``. ProperDocs logs its own warnings (a broken
    link, a missing anchor) to ``properdocs.*`` and makes ``properdocs`` the
    parent of ``mkdocs`` (which plugins and these hooks log to), so there it is
    ``properdocs``: a handler on ``mkdocs`` alone would miss a broken link.
    """
    logger = logging.getLogger("mkdocs")
    while logger.parent is not None and logger.parent is not logging.root:
        logger = logger.parent
    return logger


def _render_recorded(page, render, config, files) -> tuple[dict, int]:
    """Render ``page``; return what the page cache stores, and the warnings logged."""
    warned = buildcache.WarningCount()
    _HIGHLIGHTED.clear()
    _SIGNED.clear()
    logger = _build_logger()
    logger.addHandler(warned)
    try:
        render(config, files)
    finally:
        logger.removeHandler(warned)
    links = getattr(page, "links_to_anchors", None)
    registered = _registered(page.file.src_uri)
    result = {
        "content": page.content,
        "toc": _toc_tokens(page.toc.items),
        "title": page._title_from_render,
        "present_anchor_ids": sorted(page.present_anchor_ids or ()),
        "links_to_anchors": None
        if links is None
        else {f.src_uri: anchors_ for f, anchors_ in links.items()},
        # what autorefs' scanners and mkdocstrings registered while it rendered
        "autorefs": list(registered["autorefs"]),
        "highlights": sorted(set(_HIGHLIGHTED)),
        "signatures": sorted(set(_SIGNED)),
        "inventory": list(registered["inventory"]),
    }
    return result, warned.count


def _restore(page, result: dict, files) -> None:
    """Set on ``page`` what its render set, and record what the render registered."""
    page.content = result["content"]
    page.toc = get_toc(result["toc"])
    page._title_from_render = result["title"]
    page.present_anchor_ids = set(result["present_anchor_ids"])
    if result["links_to_anchors"] is not None:
        page.links_to_anchors = {
            files.get_file_from_path(uri): anchors_
            for uri, anchors_ in result["links_to_anchors"].items()
        }
    highlights = buildcache.memo("highlight")
    for key in result["highlights"]:
        highlights.keep(key)
    signatures = buildcache.memo("signatures")
    for key in result["signatures"]:
        signatures.keep(key)
    registered = _registered(page.file.src_uri)
    registered["autorefs"].extend(result["autorefs"])
    registered["inventory"].extend(result["inventory"])


def _inventory(config):
    """mkdocstrings' inventory of documented objects, or None without the plugin."""
    plugin = config.plugins.get("mkdocstrings")
    return plugin.handlers.inventory if plugin is not None else None


def _render_cached(page, render, config, files) -> None:
    """``page.render(config, files)``, or its stored result for the same inputs."""
    if not buildcache.enabled():
        _render_recorded(page, render, config, files)
        return None
    inputs = [_PAGE_INPUTS, page.file.src_uri, page.url, page.markdown]
    if API_BLOCK.search(page.markdown):
        if _inventory(config) is None:
            return render(config, files)
        inputs.append(_API_INPUTS)
    pages = buildcache.memo("pages")
    key = buildcache.digest(inputs)
    rendered, warnings = False, 0

    def produce() -> str:
        nonlocal rendered, warnings
        result, warnings = _render_recorded(page, render, config, files)
        rendered = True
        return json.dumps(result, sort_keys=True)

    stored = pages.get(key, produce)
    if warnings:  # a page that warns is rendered (and warns) every build
        pages.forget(key)
    if not rendered:
        _restore(page, json.loads(stored), files)
    return None


def on_files(files, config):
    global _PAGE_INPUTS, _API_INPUTS
    # What any page's HTML depends on besides its own Markdown, address and the
    # installed packages (the memo's own key): mkdocs.yml (the Markdown
    # extensions, their options, link validation), the extensions that plugins
    # add (by class: their code is an installed package), every file's address
    # (relative links are checked and rewritten against them), and the snippets
    # appended to every page.
    extensions = [
        e if isinstance(e, str) else f"{type(e).__module__}.{type(e).__qualname__}"
        for e in config["markdown_extensions"]
    ]
    snippets = config["mdx_configs"].get("pymdownx.snippets", {}).get("auto_append", [])
    _PAGE_INPUTS = buildcache.digest(
        [
            Path(__file__).read_bytes(),
            Path(config.config_file_path).read_bytes(),
            json.dumps(extensions),
            buildcache.site_files(files),
            *((ROOT / name).read_bytes() for name in snippets),
        ]
    )
    _API_INPUTS = buildcache.digest(
        [buildcache.kernel_digest(), *(p.read_bytes() for p in RUFF_CONFIG if p.exists())]
    )
    if buildcache.DIRTY:
        _note_site_inputs(config, files)
    return files


def on_pre_page(page, config, files):
    global _CURRENT
    _CURRENT = page.file.src_uri
    if page.file.src_uri.endswith(".md"):
        render = page.render
        page.render = lambda config, files: _render_cached(page, render, config, files)
    return page


def on_startup(command, dirty):
    buildcache.DIRTY = dirty
    pool.tune_gc()  # the build process, as each worker (hooks/pool.py)
    # `properdocs build` has no other thread yet: on Linux its workers are
    # forked (hooks/pool.py; macOS's system libraries are not fork-safe); the
    # server's are spawned.
    pool.fork_workers(
        command == "build" and sys.platform == "linux" and threading.active_count() == 1
    )
    # A clean build (no cache, or MFL_CACHE=off) draws every figure and
    # executes every notebook: start their workers now, before the build
    # collects its files. A warm build finds them cached and starts none.
    if not buildcache.enabled() or not buildcache.CACHE.is_dir():
        pool.start_early()


def _hook_sources() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(Path(__file__).parent.glob("*.py"))}


# The hooks as this process loaded them: `properdocs serve` loads them once
# and rebuilds with that code whatever the files say later.
HOOKS_AT_START = _hook_sources()


def changed_hooks() -> list[str]:
    """The hook files that differ from the code this process runs."""
    now = _hook_sources()
    return sorted(
        name for name in {*now, *HOOKS_AT_START} if now.get(name) != HOOKS_AT_START.get(name)
    )


@event_priority(-10)  # after mkdocstrings' on_config has set up its handlers
def on_config(config):
    changed = changed_hooks()
    if changed:
        logging.getLogger("mkdocs.hooks.caches").warning(
            "hooks/%s changed since this server started, which still runs the old code: "
            "restart `make serve` to build with it",
            ", hooks/".join(changed),
        )
    # Before any hook opens a memo (they do from on_files on).
    buildcache.configure(getattr(config, "config_file_path", None))
    pymdownx.highlight.highlight = pygments.highlight
    if buildcache.enabled():
        # pymdownx looks the function up in its module at each call.
        pymdownx.highlight.highlight = cached_highlight
        # Pages (and so the API reference) render before on_env.
        handler = config.plugins["mkdocstrings"].get_handler("python")
        _cache_templates(handler.env, "mkdocstrings")
        _cache_signature_formatting()
    return config


@event_priority(100)  # before autorefs and mkdocstrings read what was registered
def _register(env, config, files):
    if buildcache.enabled():
        _cache_templates(env, "theme")
    _replay_registrations(config, files)
    return env


@event_priority(-100)  # after autorefs has fixed the cross-references of the pages read
def _restore_skipped(env, config, files):
    _restore_skipped_pages(files)
    return env


on_env = CombinedEvent(_register, _restore_skipped)


@event_priority(-100)  # the page as the template got it
def on_post_page(output, page, config):
    if buildcache.DIRTY:
        _keep_for_next_build(page)
    return output


def on_post_build(config):
    if buildcache.DIRTY:
        # A dirty session keeps its memos open for the next build (reading and
        # writing them took a third of a rebuild); on_shutdown saves them.
        buildcache.session("pages")["inputs"] = _SITE_INPUTS
    else:
        buildcache.save_memos()
    pool.shutdown()


def on_shutdown():
    buildcache.save_memos()


def on_build_error(error):
    # Under `mkdocs serve` the next build must not inherit this one's memos;
    # what they hold is correct (content-keyed), so it is kept. What this build
    # left for a dirty rebuild may be half done: the next build reads every page.
    buildcache.end_session()
    buildcache.save_memos()
    pool.shutdown()


# ---------------------------------------------------------------------------
# Dirty rebuilds (`make serve`)
#
# `properdocs serve --dirty` rebuilds only the pages whose Markdown changed
# since they were written; it does not read the others. But a page shows what
# other pages register as they are read: the API anchors its links resolve to
# (autorefs), the headings its links check, their titles in the navigation,
# their reading times (hooks/reader.py), their skill checks (the Practice
# bank, hooks/quiz.py), their entries in the search index (hooks/search.py).
# So every build of a dirty session keeps, for each page it writes, what the
# page registered and its final state (``_keep_for_next_build``), in memory
# (``buildcache.session``); a later build of the same process restores the
# pages it skips from there, so that the pages it writes are the pages a full
# build writes (tests/test_serve.py). What it keeps is valid only for the same
# inputs besides the pages' Markdown (``_SITE_INPUTS``: mkdocs.yml, the
# hooks the process loaded, the theme overrides, the kernel, references.bib, every other file
# under docs/, the files' addresses); when any changed, or there is nothing
# kept (the first build, `properdocs build --dirty`), every page is read and
# written. Pages are not rewritten for a change elsewhere: an overview's
# reading time or the Practice bank catch up at the next full build.
#
# Registrations are replayed in page order (``_replay_registrations``), as a
# full build makes them: autorefs takes the first page that registers an
# identifier, so the order decides where a link goes.

_SITE_INPUTS = ""
_CURRENT = ""  # the page being read (on_pre_page): what it registers is its own
_REGISTERED: dict[str, dict[str, list]] = {}  # this build's registrations, by page


def _registered(src_uri: str) -> dict[str, list]:
    return _REGISTERED.setdefault(src_uri, {"autorefs": [], "inventory": []})


def _note_site_inputs(config, files) -> None:
    global _SITE_INPUTS
    docs = Path(config["docs_dir"]).resolve()
    others = sorted(
        f.src_uri
        for f in files
        if not f.inclusion.is_excluded()
        and f.abs_src_path
        and not f.src_uri.endswith(".md")
        and Path(f.abs_src_path).resolve().is_relative_to(docs)
    )
    _SITE_INPUTS = buildcache.digest(
        [
            _PAGE_INPUTS,
            _API_INPUTS,
            *HOOKS_AT_START.values(),  # the code this process runs, whatever the files say now
            *(p.read_bytes() for p in sorted((ROOT / "overrides").rglob("*")) if p.is_file()),
            (ROOT / "references.bib").read_bytes(),
            *(uri.encode() + (docs / uri).read_bytes() for uri in others),
        ]
    )


def _modified() -> bool:
    return True


@event_priority(-100)  # the last on_nav: just before MkDocs reads the pages
def on_nav(nav, config, files):
    """Decide which pages a dirty build restores, and record what every page registers."""
    _intercept_registrations(config)
    buildcache.RESTORED = frozenset()
    if not buildcache.DIRTY:
        return nav
    kept = buildcache.session("pages")
    if kept.get("inputs") != _SITE_INPUTS:
        kept.clear()
        kept["pages"] = {}
    restored = set()
    for file in files.documentation_pages():
        if file.src_uri in kept["pages"] and not file.is_modified():
            restored.add(file.src_uri)
        else:  # read and written, whatever MkDocs would do
            file.is_modified = _modified
    buildcache.RESTORED = frozenset(restored)
    return nav


def _intercept_registrations(config) -> None:
    """Until on_env, what autorefs and mkdocstrings are told to register is recorded by page."""
    _REGISTERED.clear()
    autorefs = config.plugins.get("autorefs")
    inventory = _inventory(config)
    if autorefs is not None:

        def register_anchor(page, identifier, anchor=None, *, title=None, primary=True):
            _registered(_CURRENT)["autorefs"].append([identifier, anchor, title, primary])

        autorefs.register_anchor = register_anchor
    if inventory is not None:

        def register(*args, **kwargs):
            _registered(_CURRENT)["inventory"].append([list(args), kwargs])

        inventory.register = register


def _replay_registrations(config, files) -> None:
    autorefs = config.plugins.get("autorefs")
    inventory = _inventory(config)
    if autorefs is not None:
        del autorefs.register_anchor  # the plugin's own method again
    if inventory is not None:
        del inventory.register
    kept = buildcache.session("pages").get("pages", {})
    for file in files.documentation_pages():
        if file.src_uri in buildcache.RESTORED:
            registered = kept[file.src_uri]["registered"]
        else:
            registered = _REGISTERED.get(file.src_uri, {"autorefs": [], "inventory": []})
        if autorefs is not None:
            for identifier, anchor, title, primary in registered["autorefs"]:
                autorefs.register_anchor(
                    file.page, identifier, anchor, title=title, primary=primary
                )
        if inventory is not None:
            for args, kwargs in registered["inventory"]:
                inventory.register(*args, **kwargs)


def _restore_skipped_pages(files) -> None:
    kept = buildcache.session("pages").get("pages", {})
    for uri in buildcache.RESTORED:
        page, state = files.get_file_from_path(uri).page, kept[uri]
        page.content = state["content"]
        page.toc = state["toc"]
        page._title_from_render = state["title"]
        page.meta = dict(state["meta"])
        page.present_anchor_ids = state["present_anchor_ids"]
        page.links_to_anchors = None  # checked when it was written


def _keep_for_next_build(page) -> None:
    buildcache.session("pages").setdefault("pages", {})[page.file.src_uri] = {
        "content": page.content,
        "toc": page.toc,
        "title": page._title_from_render,
        "meta": dict(page.meta),
        "present_anchor_ids": page.present_anchor_ids,
        "registered": _REGISTERED.get(page.file.src_uri, {"autorefs": [], "inventory": []}),
    }
