"""The build caches: ``buildcache.Memo`` and the highlighting memo built on it.

``tests/test_reproducible.py`` checks the whole warm build against a clean
one; these tests pin the pieces down one by one.
"""

from __future__ import annotations

from types import SimpleNamespace

import buildcache
import pygments
import pymdownx.highlight
import pytest
from jinja2 import Environment
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(buildcache, "CACHE", tmp_path)
    monkeypatch.delenv("MFL_CACHE", raising=False)
    return tmp_path


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


def test_a_memo_keeps_only_what_the_last_build_used(cache_dir):
    first = buildcache.Memo("demo")
    first.get("old", lambda: "x")
    first.get("kept", lambda: "y")
    first.save()
    second = buildcache.Memo("demo")
    second.get("kept", lambda: "unused")
    second.get("new", lambda: "z")
    second.save()
    assert buildcache.Memo("demo").stored == {"kept": "y", "new": "z"}


def test_a_memo_is_off_under_mfl_cache_off(cache_dir, monkeypatch):
    monkeypatch.setenv("MFL_CACHE", "off")
    memo = buildcache.Memo("demo")
    assert memo.get("a", lambda: "1") == "1"
    assert memo.get("a", lambda: "2") == "2"
    memo.save()
    assert not (cache_dir / "demo.json").exists()


def test_a_memo_starts_afresh_from_a_truncated_file(cache_dir):
    (cache_dir / "demo.json").write_text('{"a": "tru', encoding="utf-8")
    assert buildcache.Memo("demo").get("a", lambda: "fresh") == "fresh"


def test_cached_highlighting_is_pygments_output(cache_dir, load, monkeypatch):
    caches = load("hooks/caches.py")
    # on_config swaps pymdownx's highlight function; put it back afterwards.
    monkeypatch.setattr(pymdownx.highlight, "highlight", pymdownx.highlight.highlight)
    config = SimpleNamespace(plugins={"mkdocstrings": _NoHandler()})
    caches.on_config(config)
    assert pymdownx.highlight.highlight is caches.cached_highlight
    code = "def f(x):\n    return x @ x.T  # (T, T)\n"
    lexer, formatter = PythonLexer(stripnl=True), HtmlFormatter(cssclass="highlight")
    expected = pygments.highlight(code, lexer, formatter)
    assert caches.cached_highlight(code, lexer, formatter) == expected
    caches.on_post_build(config)
    caches.on_config(config)  # the next build
    assert caches._MEMO.stored  # read back from disk
    assert caches.cached_highlight(code, lexer, formatter) == expected
    # Different options are a different entry, never the cached one.
    numbered = HtmlFormatter(cssclass="highlight", linenos="table")
    assert caches.cached_highlight(code, lexer, numbered) == pygments.highlight(
        code, lexer, numbered
    )
    assert caches.cached_highlight(code, lexer, numbered) != expected


class _NoHandler:
    """Stands in for the mkdocstrings plugin: a handler whose templates go nowhere."""

    def get_handler(self, name):
        return type("Handler", (), {"env": Environment()})()


def test_highlighting_goes_straight_to_pygments_under_mfl_cache_off(cache_dir, load, monkeypatch):
    caches = load("hooks/caches.py")
    monkeypatch.setattr(pymdownx.highlight, "highlight", pymdownx.highlight.highlight)
    monkeypatch.setenv("MFL_CACHE", "off")
    caches.on_config(SimpleNamespace(plugins={"mkdocstrings": _NoHandler()}))
    assert pymdownx.highlight.highlight is pygments.highlight
