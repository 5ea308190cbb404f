"""hooks/highlight.py keeps Pygments' per-block set-up: the highlighted HTML must be
the same with and without it, for every code block the lessons show."""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

import markdown
import pymdownx.highlight
import pytest
from pygments.formatters.html import HtmlFormatter

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^( *)```(\w+)[^\n]*\n(.*?)^\1```", re.M | re.S)


def code_blocks() -> list[tuple[str, str]]:
    """(language, source) of every fenced block in the lessons, and every figure script."""
    blocks = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for indent, language, body in FENCE.findall(page.read_text(encoding="utf-8")):
            lines = [line[len(indent) :] for line in body.splitlines()]
            blocks.append((language, "\n".join(lines)))
    blocks += [(s.suffix[1:], s.read_text()) for s in sorted(ROOT.glob("docs/**/figures/*.py"))]
    return blocks


def highlighted(blocks) -> list[str]:
    """Each block as the build's pymdownx.highlight settings write it, with its options
    varied: a highlighted line, numbered lines, and inline code."""
    highlight = pymdownx.highlight.Highlight(markdown.Markdown(), pygments_style="default")
    out = []
    for n, (language, source) in enumerate(blocks):
        out.append(highlight.highlight(source, language))
        if n % 25 == 0:
            out.append(highlight.highlight(source, language, hl_lines=[1], linestart=1))
            code = highlight.highlight(source[:40], language, inline=True)  # an Element
            out.append(ElementTree.tostring(code, encoding="unicode"))
    return out


@pytest.fixture
def hook(load, monkeypatch):
    module = load("hooks/highlight.py")
    monkeypatch.setattr(HtmlFormatter, "_create_stylesheet", module._OWN_CREATE_STYLESHEET)
    monkeypatch.setattr(
        pymdownx.highlight, "get_lexer_by_name", pymdownx.highlight.get_lexer_by_name
    )
    module._TABLES.clear()
    return module


def test_every_lesson_block_is_highlighted_the_same_with_the_setup_kept(hook):
    blocks = code_blocks()
    assert len(blocks) > 1000
    assert {language for language, _ in blocks} >= {"python", "py", "quiz"}  # quiz: no lexer
    before = highlighted(blocks)
    hook.cache_pygments_setup()
    hook.cache_pygments_setup()  # a second build in the same process wraps nothing twice
    after = highlighted(blocks)
    assert after == before
    lookups = pymdownx.highlight.get_lexer_by_name.cache_info()
    assert lookups.hits > 1000 and lookups.currsize <= 5  # python, py, text (for quiz)
    assert len(hook._TABLES) == 2  # the block and the inline formatter, one style


def test_each_formatter_gets_tables_of_its_own(hook):
    hook.cache_pygments_setup()
    first, second = HtmlFormatter(), HtmlFormatter()
    assert first.ttype2class == second.ttype2class and first.ttype2class is not second.ttype2class
    first.class2style.clear()
    assert HtmlFormatter().class2style == second.class2style != {}


def test_the_tables_follow_the_style_and_the_prefix(hook):
    hook.cache_pygments_setup()
    own = HtmlFormatter(style="monokai", classprefix="x-")
    hook._TABLES.clear()
    HtmlFormatter._create_stylesheet = hook._OWN_CREATE_STYLESHEET
    fresh = HtmlFormatter(style="monokai", classprefix="x-")
    assert (own.ttype2class, own.class2style) == (fresh.ttype2class, fresh.class2style)
    assert HtmlFormatter(style="default").class2style != own.class2style
