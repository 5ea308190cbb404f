"""The build caches: ``buildcache.Memo`` and the highlighting memo built on it.

``tests/test_reproducible.py`` checks the whole warm build against a clean
one; these tests pin the pieces down one by one.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import buildcache
import pygments
import pymdownx.highlight
import pytest
from jinja2 import Environment
from mkdocstrings_handlers.python._internal import rendering
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(buildcache, "CACHE", tmp_path)
    monkeypatch.setattr(buildcache, "DIRTY", False)
    monkeypatch.setattr(buildcache, "_OPEN", {})
    monkeypatch.setattr(buildcache, "CONFIG", "")
    monkeypatch.delenv("MFL_CACHE", raising=False)
    return tmp_path


def _saved(name: str = "demo", **entries: str) -> None:
    memo = buildcache.Memo(name)
    for key, value in entries.items():
        memo.get(key, lambda v=value: v)
    memo.save()


def test_a_memo_answers_a_second_build_without_producing(cache_dir):
    calls = []

    def produce(value):
        calls.append(value)
        return value

    first = buildcache.Memo("demo")
    assert first.get("a", lambda: produce("1")) == "1"
    assert first.get("a", lambda: produce("again")) == "1"  # once per build as well
    first.save()
    second = buildcache.Memo("demo")
    assert second.get("a", lambda: produce("2")) == "1"
    assert calls == ["1"]


def _build_with(config_file: str, key: str) -> dict[str, str]:
    """One build under ``config_file`` that uses only ``key``; what its memo held before."""
    buildcache.configure(config_file)
    held = dict(buildcache.memo("pages").stored)
    buildcache.memo("pages").get(key, lambda: f"page for {config_file}")
    buildcache.save_memos()
    return held


def test_the_offline_build_and_the_site_keep_each_others_pages(cache_dir):
    """``make offline`` between two site builds: the second site build finds its pages."""
    site, offline = "/repo/mkdocs.yml", "/repo/mkdocs.offline.yml"
    assert _build_with(site, "site page") == {}
    assert _build_with(offline, "offline page") == {}
    assert _build_with(site, "site page") == {"site page": "page for /repo/mkdocs.yml"}
    assert _build_with(offline, "offline page") == {
        "offline page": "page for /repo/mkdocs.offline.yml"
    }
    assert sorted(p.name for p in cache_dir.iterdir()) == ["pages-offline.json", "pages.json"]
    buildcache.configure(None)  # a configuration read without a file: the site's
    assert buildcache.memo("pages").path == cache_dir / "pages.json"


def test_the_caches_hook_names_the_configuration_before_any_memo_opens(caches, cache_dir):
    offline = SimpleNamespace(
        plugins={"mkdocstrings": _NoHandler()}, config_file_path="/repo/mkdocs.offline.yml"
    )
    caches.on_config(offline)
    assert buildcache.memo("highlight").path == cache_dir / "highlight-offline.json"
    caches.on_post_build(None)
    caches.on_config(SimpleNamespace(**{**vars(offline), "config_file_path": "/repo/mkdocs.yml"}))
    assert buildcache.memo("highlight").path == cache_dir / "highlight.json"


def test_a_build_shares_one_memo_per_name_and_saves_them_all_at_its_end(cache_dir):
    assert buildcache.memo("demo") is buildcache.memo("demo")
    buildcache.memo("demo").get("a", lambda: "1")
    buildcache.memo("other").get("b", lambda: "2")
    buildcache.save_memos()
    assert buildcache.memo("demo").stored == {"a": "1"}  # the next build's, read from disk
    assert buildcache.memo("other").stored == {"b": "2"}


def test_a_memo_keeps_only_what_the_last_build_used(cache_dir):
    _saved(old="x", kept="y")
    second = buildcache.Memo("demo")
    second.get("kept", lambda: "unused")
    second.get("new", lambda: "z")
    second.save()
    assert buildcache.Memo("demo").stored == {"kept": "y", "new": "z"}


def test_a_dirty_build_keeps_the_entries_of_the_pages_it_skipped(cache_dir, monkeypatch):
    _saved(skipped="x", rendered="y")
    monkeypatch.setattr(buildcache, "DIRTY", True)
    dirty = buildcache.Memo("demo")
    dirty.get("rendered", lambda: "unused")
    dirty.save()
    assert buildcache.Memo("demo").stored == {"skipped": "x", "rendered": "y"}


def test_a_memo_written_by_another_python_or_other_packages_is_not_read(cache_dir, monkeypatch):
    _saved(a="1")
    assert buildcache.Memo("demo").stored == {"a": "1"}
    monkeypatch.setattr(buildcache, "environment_digest", lambda: "another environment")
    assert buildcache.Memo("demo").get("a", lambda: "fresh") == "fresh"


def test_the_environment_digest_names_python_and_the_installed_packages():
    d = buildcache.environment_digest()
    assert d == buildcache.environment_digest() and len(d) == 20
    buildcache.environment_digest.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("sys.version", "3.99.0 (another build)")
            assert buildcache.environment_digest() != d
    finally:
        buildcache.environment_digest.cache_clear()
    assert buildcache.environment_digest() == d


@pytest.mark.parametrize(
    "content",
    ['{"environment": "x", "entries": {"a": "tru', "", "null", "[1, 2]", '"text"', b"\xff\xfe"],
)
def test_a_memo_starts_afresh_from_a_damaged_file(cache_dir, content):
    path = cache_dir / "demo.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert buildcache.Memo("demo").get("a", lambda: "fresh") == "fresh"


def test_a_memo_ignores_entries_that_are_not_text(cache_dir):
    env = buildcache.environment_digest()
    data = {"environment": env, "entries": {"a": 1, "b": None, "c": "kept"}}
    (cache_dir / "demo.json").write_text(json.dumps(data), encoding="utf-8")
    assert buildcache.Memo("demo").stored == {"c": "kept"}


def test_a_failed_save_does_not_fail_the_build(cache_dir, monkeypatch):
    memo = buildcache.Memo("demo")
    memo.get("a", lambda: "1")
    monkeypatch.setattr(buildcache, "CACHE", cache_dir / "file")
    (cache_dir / "file").write_text("not a folder")
    memo.path = cache_dir / "file" / "demo.json"
    memo.save()  # logs, does not raise
    assert not list(cache_dir.glob("*.partial"))


def test_two_builds_saving_at_once_each_write_a_whole_file(cache_dir):
    first, second = buildcache.Memo("demo"), buildcache.Memo("demo")
    first.get("a", lambda: "1")
    second.get("b", lambda: "2")
    first.save()
    second.save()  # each writes its own temporary file; the last one wins
    assert buildcache.Memo("demo").stored == {"b": "2"}
    assert [p.name for p in cache_dir.iterdir()] == ["demo.json"]


def test_a_memo_is_off_under_mfl_cache_off(cache_dir, monkeypatch):
    monkeypatch.setenv("MFL_CACHE", "off")
    memo = buildcache.Memo("demo")
    assert memo.get("a", lambda: "1") == "1"
    assert memo.get("a", lambda: "2") == "2"
    memo.save()
    assert not (cache_dir / "demo.json").exists()


class _NoHandler:
    """Stands in for the mkdocstrings plugin: a handler whose templates go nowhere."""

    def get_handler(self, name):
        return type("Handler", (), {"env": Environment()})()


@pytest.fixture
def caches(cache_dir, load, monkeypatch):
    """hooks/caches.py, with Pygments' calls counted and pymdownx restored afterwards."""
    module = load("hooks/caches.py")
    calls = []
    original = pygments.highlight

    def counted(*args, **kwargs):
        calls.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(pygments, "highlight", counted)
    monkeypatch.setattr(pymdownx.highlight, "highlight", pymdownx.highlight.highlight)
    monkeypatch.setattr(rendering, "_get_formatter", rendering._get_formatter)
    module.calls = calls
    return module


def _build(caches):
    caches.on_config(SimpleNamespace(plugins={"mkdocstrings": _NoHandler()}))


def test_cached_highlighting_is_pygments_output_and_skips_pygments_on_a_hit(caches):
    code = "def f(x):\n    return x @ x.T  # (T, T)\n"
    lexer, formatter = PythonLexer(stripnl=True), HtmlFormatter(cssclass="highlight")
    expected = pygments.highlight(code, lexer, formatter)
    caches.calls.clear()
    _build(caches)
    assert pymdownx.highlight.highlight is caches.cached_highlight
    assert caches.cached_highlight(code, lexer, formatter) == expected
    caches.on_post_build(None)  # saves the build's memos
    _build(caches)  # the next build
    assert caches.cached_highlight(code, lexer, formatter) == expected
    assert caches.calls == [code]  # highlighted once, then answered from the memo


@pytest.mark.parametrize(
    "changed",
    [
        lambda code, lexer, formatter: (code + "# edited\n", lexer, formatter),
        lambda code, lexer, formatter: (code, PythonLexer(stripnl=False), formatter),
        lambda code, lexer, formatter: (code, lexer, HtmlFormatter(linenos="table")),
        lambda code, lexer, formatter: (code, lexer, HtmlFormatter(hl_lines=[1])),
        lambda code, lexer, formatter: (code, lexer, HtmlFormatter(filename="demo.py")),
    ],
    ids=["code", "lexer option", "line numbers", "highlighted lines", "title"],
)
def test_any_change_of_code_lexer_or_formatter_is_highlighted_afresh(caches, changed):
    code, lexer, formatter = "\nx = 1\n", PythonLexer(), HtmlFormatter()
    _build(caches)
    caches.cached_highlight(code, lexer, formatter)
    args = changed(code, lexer, formatter)
    caches.calls.clear()
    assert caches.cached_highlight(*args) == pygments.highlight(*args)
    assert len(caches.calls) == 2  # the cached call, and the reference above


def test_highlighting_goes_straight_to_pygments_under_mfl_cache_off(caches, monkeypatch):
    monkeypatch.setenv("MFL_CACHE", "off")
    _build(caches)
    assert pymdownx.highlight.highlight is pygments.highlight


def test_signatures_are_formatted_once_then_answered_from_the_memo(caches, monkeypatch):
    formatted = []

    def fake_ruff():
        def formatter(code, line_length):
            formatted.append(code)
            return code.upper()

        return formatter

    monkeypatch.setattr(rendering, "_get_formatter", fake_ruff)
    _build(caches)
    assert rendering._get_formatter()("def f(x): ...", 60) == "DEF F(X): ..."
    caches.on_post_build(None)
    _build(caches)  # the next build: the memo answers
    assert rendering._get_formatter()("def f(x): ...", 60) == "DEF F(X): ..."
    assert rendering._get_formatter()("def f(x): ...", 80) == "DEF F(X): ..."  # another width
    assert formatted == ["def f(x): ...", "def f(x): ..."]


class _Autorefs:
    def __init__(self):
        self.registered = []

    def register_anchor(self, page, identifier, anchor=None, *, title=None, primary=True):
        self.registered.append((page.url, identifier, anchor, title, primary))


class _Page:
    """A Markdown page whose render is counted (and can log a warning, as a broken link does)."""

    def __init__(self, markdown, autorefs, warn=""):
        self.markdown, self.url, self.renders = markdown, "a/", 0
        self.file = SimpleNamespace(src_uri="a.md")
        self._autorefs, self._warn = autorefs, warn

    def render(self, config, files):
        import logging

        from mkdocs.structure.toc import get_toc

        self.renders += 1
        if self._warn:
            logging.getLogger(self._warn).warning("a.md: link to missing.md")
        self._autorefs.register_anchor(self, "x", "x", title="X", primary=True)
        self.content = f"<h2 id='x'>{self.markdown}</h2>"
        self.toc = get_toc([{"level": 2, "id": "x", "name": "X", "children": []}])
        self._title_from_render = None
        self.present_anchor_ids = {"x"}
        self.links_to_anchors = {}


def _read(caches, page, config):
    """What a build does with one page, as far as these hooks go: on_nav records
    what is registered, on_pre_page wraps the render, on_env replays the record."""
    page.file.page = page
    files = SimpleNamespace(documentation_pages=lambda: [page.file])
    caches._intercept_registrations(config)
    caches.on_pre_page(page, config, files)
    page.render(config, files)
    caches._replay_registrations(config, files)
    caches.on_post_build(None)


def _render_page(caches, page, autorefs):
    caches._PAGE_INPUTS = "site"
    _read(caches, page, SimpleNamespace(plugins={"autorefs": autorefs}))


def test_a_page_is_rendered_once_then_restored_whole_with_its_anchors(caches):
    autorefs = _Autorefs()
    first = _Page("Title", autorefs)
    _render_page(caches, first, autorefs)
    buildcache._OPEN.clear()  # the next build
    second = _Page("Title", autorefs)
    _render_page(caches, second, autorefs)
    assert (first.renders, second.renders) == (1, 0)
    assert second.content == first.content and second.present_anchor_ids == {"x"}
    assert [(a.id, a.title, a.level) for a in second.toc.items] == [("x", "X", 2)]
    assert autorefs.registered == [("a/", "x", "x", "X", True)] * 2  # replayed on the hit
    buildcache._OPEN.clear()
    edited = _Page("Title, edited", autorefs)
    _render_page(caches, edited, autorefs)
    assert edited.renders == 1


@pytest.mark.parametrize(
    ("markdown", "warn"),
    [
        ("Title", "mkdocs.structure.pages"),
        ("Title", "properdocs.structure.pages"),
        ("::: llmmath.rope", ""),
    ],
    ids=["a page that warns", "a page that warns under properdocs", "an API page"],
)
def test_some_pages_are_rendered_every_build(caches, markdown, warn, monkeypatch):
    """A warning must come again (``--strict``); an API page renders from the kernel's source."""
    if warn.startswith("properdocs."):
        # What the properdocs command sets up: its own modules log to properdocs.*,
        # and the legacy mkdocs logger (plugins, hooks) hangs below properdocs.
        import logging

        top = logging.getLogger("properdocs")
        monkeypatch.setattr(top, "propagate", False)
        monkeypatch.setattr(logging.getLogger("mkdocs"), "parent", top)
    autorefs = _Autorefs()
    for _ in range(2):
        buildcache._OPEN.clear()
        page = _Page(markdown, autorefs, warn=warn)
        _render_page(caches, page, autorefs)
        assert page.renders == 1


class _Inventory:
    def __init__(self):
        self.registered = []

    def register(self, *args, **kwargs):
        self.registered.append((args, kwargs))


class _ApiPage(_Page):
    """An API page: its render adds the documented object to mkdocstrings' inventory."""

    def __init__(self, autorefs, inventory):
        super().__init__("::: llmmath.rope", autorefs)
        self._inventory = inventory

    def render(self, config, files):
        super().render(config, files)
        self._inventory.register("llmmath.rope.apply_rope", "py:function", uri="a/#x")


def test_an_api_page_is_cached_with_its_inventory_and_rendered_again_after_a_kernel_edit(caches):
    autorefs, inventory = _Autorefs(), _Inventory()
    config = SimpleNamespace(
        plugins={
            "autorefs": autorefs,
            "mkdocstrings": SimpleNamespace(handlers=SimpleNamespace(inventory=inventory)),
        }
    )
    entry = (("llmmath.rope.apply_rope", "py:function"), {"uri": "a/#x"})
    renders = []
    for kernel in ("kernel", "kernel", "kernel, edited"):
        buildcache._OPEN.clear()  # the next build
        caches._PAGE_INPUTS, caches._API_INPUTS = "site", kernel
        inventory.registered.clear()
        page = _ApiPage(autorefs, inventory)
        _read(caches, page, config)
        renders.append(page.renders)
        assert inventory.registered == [entry]  # recorded on a render, replayed on a hit
        assert page.content == "<h2 id='x'>::: llmmath.rope</h2>"
    assert renders == [1, 0, 1]


@pytest.mark.parametrize(
    ("setting", "cache_exists", "early"),
    [("off", True, True), (None, False, True), (None, True, False)],
)
def test_a_clean_build_starts_its_workers_at_startup(
    caches, cache_dir, monkeypatch, setting, cache_exists, early
):
    # Clean (MFL_CACHE=off, or no cache yet): everything is drawn and executed,
    # so the workers start loading at once. Warm: none may start.
    started = []
    monkeypatch.setattr(caches.pool, "start_early", lambda: started.append(True))
    monkeypatch.setattr(caches.pool, "tune_gc", lambda: None)  # not this test process's
    monkeypatch.setattr(caches.pool, "fork_workers", lambda fork: None)
    if setting:
        monkeypatch.setenv("MFL_CACHE", setting)
    monkeypatch.setattr(buildcache, "CACHE", cache_dir if cache_exists else cache_dir / "none")
    caches.on_startup("build", False)
    assert started == ([True] if early else [])


@pytest.mark.parametrize(
    ("command", "platform", "threads", "method"),
    [
        ("build", "linux", 1, "fork"),
        ("serve", "linux", 1, "spawn"),  # the server's threads come later
        ("build", "darwin", 1, "spawn"),
        ("build", "linux", 2, "spawn"),
    ],
)
def test_only_a_build_alone_in_its_process_forks_its_workers(
    caches, monkeypatch, command, platform, threads, method
):
    monkeypatch.setattr(caches.pool, "start_early", lambda: None)
    monkeypatch.setattr(caches.pool, "tune_gc", lambda: None)
    monkeypatch.setattr(caches.pool, "_START_METHOD", ["spawn"])
    monkeypatch.setattr(caches.sys, "platform", platform)
    monkeypatch.setattr(caches.threading, "active_count", lambda: threads)
    caches.on_startup(command, command == "serve")
    assert caches.pool._START_METHOD == [method]


def test_a_server_says_when_a_hook_changed_since_it_started(caches, caplog, monkeypatch):
    # `properdocs serve` loads the hooks once; a rebuild after editing one
    # still runs the old code, so each build says so until the restart.
    _build(caches)
    assert "changed since this server started" not in caplog.text
    monkeypatch.setitem(caches.HOOKS_AT_START, "quiz.py", b"# the code as it was loaded")
    _build(caches)
    assert "hooks/quiz.py changed since this server started" in caplog.text


def test_a_pool_worker_leaves_without_teardown_and_loses_no_output(tmp_path):
    """hooks/pool.py: a worker skips module teardown when it exits (about 0.8 s at the
    end of a clean build), yet what it printed or logged still arrives, with exit code 0."""
    import subprocess
    import sys

    import pool

    log = tmp_path / "worker.log"
    script = (
        f"import logging, sys; sys.path.insert(0, {str(pool.HERE)!r}); import pool\n"
        "pool.exit_without_teardown()\n"
        f"logging.basicConfig(filename={str(log)!r}); logging.warning('logged')\n"
        "class TornDown:\n"
        "    def __del__(self): sys.stderr.write('torn down')\n"
        "kept = TornDown()\n"
        "print('printed', end='')\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert (run.returncode, run.stdout, run.stderr) == (0, "printed", "")
    assert "logged" in log.read_text()
    # and without it, teardown runs (the check above can fail)
    plain = script.replace("pool.exit_without_teardown()\n", "")
    assert (
        "torn down"
        in subprocess.run([sys.executable, "-c", plain], capture_output=True, text=True).stderr
    )
