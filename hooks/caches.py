"""Work that MkDocs and its plugins redo on every build, kept between builds.

A warm build re-renders every page (MkDocs has no page cache). Two parts of
that are pure functions of inputs we can name, and cost about a third of it:

- **Pygments.** Every fenced block, inline ``#!py`` snippet and API signature
  is coloured by ``pymdownx.highlight``, which calls
  ``pygments.highlight(code, lexer, formatter)``: about 470 calls, three
  seconds. The output depends only on the code, the lexer's and formatter's
  classes and options, and the packages' versions, so this hook swaps in
  a version of that call that looks the result up by a hash of exactly those
  (``buildcache.memo("highlight")``) and highlights only on a miss. Anything it cannot key
  safely (a lexer with filters, output to a file) goes straight to Pygments.
- **Jinja templates.** The theme's and mkdocstrings' templates (about 70)
  were compiled afresh each build, over a second. Jinja's own
  ``FileSystemBytecodeCache`` keeps the compiled code and checks it against
  each template's source; the folder is keyed by Python's and the packages'
  versions (``buildcache.environment_digest``), since an upgrade can change
  how an environment compiles.

This hook also runs the life of every ``buildcache.memo``: it tells them
whether the build is ``--dirty`` (``on_startup``) and saves them all when the
build ends (``on_post_build``, or ``on_build_error``), when it also ends the
worker processes of ``hooks/pool.py``. ``MFL_CACHE=off`` turns every cache off.
``tests/test_reproducible.py`` checks that a warm build is byte-identical to
a clean one and reuses every stored entry.
"""

from __future__ import annotations

import shutil

import buildcache
import pool
import pygments
import pymdownx.highlight
from jinja2 import Environment, FileSystemBytecodeCache
from mkdocs.plugins import event_priority


def _describe(obj) -> str:
    kind = type(obj)
    return f"{kind.__module__}.{kind.__qualname__}{sorted(obj.options.items())!r}"


def cached_highlight(code, lexer, formatter, outfile=None):
    """``pygments.highlight``, answered from the memo when the same call was made before."""
    if outfile is not None or lexer.filters:
        return pygments.highlight(code, lexer, formatter, outfile)
    # Pygments' and pymdownx's versions are covered by the memo itself.
    key = buildcache.digest([_describe(lexer), _describe(formatter), code])
    return buildcache.memo("highlight").get(key, lambda: pygments.highlight(code, lexer, formatter))


def _cache_templates(env: Environment, name: str) -> None:
    folder = buildcache.CACHE / "jinja" / f"{name}-{buildcache.environment_digest()}"
    for stale in folder.parent.glob(f"{name}-*"):
        if stale != folder:
            shutil.rmtree(stale)
    folder.mkdir(parents=True, exist_ok=True)
    env.bytecode_cache = FileSystemBytecodeCache(str(folder))


def on_startup(command, dirty):
    buildcache.DIRTY = dirty


@event_priority(-10)  # after mkdocstrings' on_config has set up its handlers
def on_config(config):
    pymdownx.highlight.highlight = pygments.highlight
    if buildcache.enabled():
        # pymdownx looks the function up in its module at each call.
        pymdownx.highlight.highlight = cached_highlight
        # Pages (and so the API reference) render before on_env.
        handler = config.plugins["mkdocstrings"].get_handler("python")
        _cache_templates(handler.env, "mkdocstrings")
    return config


def on_env(env, config, files):
    if buildcache.enabled():
        _cache_templates(env, "theme")
    return env


def on_post_build(config):
    buildcache.save_memos()
    pool.shutdown()


def on_build_error(error):
    # Under `mkdocs serve` the next build must not inherit this one's memos;
    # what they hold is correct (content-keyed), so it is kept.
    buildcache.save_memos()
    pool.shutdown()
