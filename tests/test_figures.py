"""Figures: every script draws deterministically, every page image has alt text and a script."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
_spec = importlib.util.spec_from_file_location("figures_hook", ROOT / "hooks" / "figures.py")
hook = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hook)

SCRIPTS = hook.figure_scripts(DOCS)
# A draw costs about 0.7 s of matplotlib. After `make test`'s build (MFL_BUILT=1)
# one script of each lesson is drawn again here; CI draws every one
# (MFL_EVERY_FIGURE=1), as does a run with no fresh build, and CI's clean build
# (`make test-reproducible`) redraws every figure in new processes as well.
FIRST_OF_EACH_LESSON = sorted({s.parent: s for s in reversed(SCRIPTS)}.values())
TO_DRAW = (
    FIRST_OF_EACH_LESSON
    if os.environ.get("MFL_BUILT") and not os.environ.get("MFL_EVERY_FIGURE")
    else SCRIPTS
)
PAGES = sorted(DOCS.rglob("*.md"))
ANY_IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)")


@pytest.fixture(scope="module")
def built_figures(request):
    """The site's figures when it is built (`make test`), else None (`make test-fast`)."""
    try:
        return request.getfixturevalue("site_dir")
    except pytest.skip.Exception:
        return None


@pytest.mark.parametrize("script", TO_DRAW, ids=lambda p: p.name)
def test_script_draws_the_same_bytes_every_time(script, built_figures):
    """A draw here, after whatever this process drew before, matches the build's
    draw (in a worker process, after other figures, or from the cache that an
    earlier build filled with the same script, kernel and packages); with no
    build, a second draw here."""
    first = hook.render(script)
    assert first.startswith(b"<?xml") and b"<svg" in first
    if built_figures is None:
        second = hook.render(script)
    else:
        second = (built_figures / script.relative_to(DOCS).with_suffix(".svg")).read_bytes()
    assert first == second, f"{script.name} is not deterministic"


def _page_images():
    for page in PAGES:
        for match in ANY_IMAGE.finditer(page.read_text(encoding="utf-8")):
            yield page, match["alt"], match["src"]


def test_every_image_has_alt_text_and_a_script():
    for page, alt, src in _page_images():
        assert alt.strip(), f"{page}: image {src} has no alt text"
        if src.endswith(".svg"):
            assert (page.parent / src).with_suffix(".py").exists(), f"{page}: no script draws {src}"
        else:
            pytest.fail(f"{page}: {src}: images must be drawn by a figure script, not committed")


def test_every_script_is_shown_on_a_page():
    shown = {(page.parent / src).with_suffix(".py").resolve() for page, _, src in _page_images()}
    orphans = [s.name for s in SCRIPTS if s.resolve() not in shown]
    assert not orphans, f"figure scripts no page shows: {orphans}"


def test_no_committed_images():
    images = [
        p for ext in ("png", "jpg", "jpeg", "gif", "svg", "webp") for p in DOCS.rglob(f"*.{ext}")
    ]
    assert not images, f"images are drawn at build time, not committed: {images}"


def test_figures_stand_on_their_own_unindented_line():
    # hooks/figures.py puts the "code for this figure" block under an image on a
    # line of its own; an image indented into a list item would lose it
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"!\[[^\]]*\]\(figures/", line):
                assert line.startswith("!["), f"{page}:{number}: figure not on its own line"


def test_each_script_has_its_own_cache_entry():
    """The build cache keeps one entry per name and replaces the others, so two
    lessons' scripts of one name (each lesson's ``bridge-pipeline.py``) must not
    share one: a warm build would redraw them and differ from a clean one."""
    stems = [hook.cache_stem(s) for s in SCRIPTS]
    assert len(set(stems)) == len(stems)
    assert len({s.stem for s in SCRIPTS}) < len(SCRIPTS)  # the case this guards exists


MATH_FIGURE = """
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(3, 2))
ax.plot([1, 10, 100], [1, 2, 3])
ax.set_xscale("log")  # tick labels are mathtext, $10^{0}$ ...
ax.set(xlabel=r"$\\frac{q_i \\cdot k_j}{\\sqrt{d_k}}$", title=r"$\\mathrm{softmax}(z)_i$")
fig.tight_layout()
"""


def test_renderers_share_one_text_to_path_and_draw_the_same_bytes(tmp_path, monkeypatch):
    """hooks/pool.py's ``one_text_to_path``: inside it every renderer gets the same
    TextToPath (so the tight-bbox pass and the drawing pass parse each formula once);
    a figure with formulas draws the same SVG with it as with a TextToPath each."""
    import matplotlib.text
    import matplotlib.textpath
    import pool

    own = matplotlib.text.TextToPath
    with pool.one_text_to_path():
        assert matplotlib.text.TextToPath() is matplotlib.text.TextToPath()
        assert matplotlib.text.TextToPath() is matplotlib.textpath.text_to_path
    assert matplotlib.text.TextToPath is own  # restored

    script = tmp_path / "math.py"
    script.write_text(MATH_FIGURE, encoding="utf-8")
    shared = pool.render_figure(str(script))
    monkeypatch.setattr(pool, "one_text_to_path", contextlib.nullcontext)
    separate = pool.render_figure(str(script))
    assert b"<svg" in shared and shared == separate


def test_text_layout_reads_each_font_table_once_and_draws_the_same_bytes(tmp_path, monkeypatch):
    """hooks/pool.py's ``font_tables_read_once``: inside it, text layout gets one
    stand-in per font, which reads a table once; the SVG is the same without it."""
    import matplotlib.font_manager
    import matplotlib.text
    import pool

    paths = matplotlib.font_manager.fontManager._find_fonts_by_props(
        matplotlib.font_manager.FontProperties()
    )
    own = matplotlib.text.get_font
    with pool.font_tables_read_once():
        font = matplotlib.text.get_font(paths)
        assert matplotlib.text.get_font(list(paths)) is font
        head = font.get_sfnt_table("head")
        assert font.get_sfnt_table("head") is head
        assert head == matplotlib.font_manager.get_font(paths).get_sfnt_table("head")
    assert matplotlib.text.get_font is own  # restored

    script = tmp_path / "math.py"
    script.write_text(MATH_FIGURE + 'ax.text(1, 2, "two\\nlines", fontsize=14)\n', encoding="utf-8")
    kept = pool.render_figure(str(script))
    monkeypatch.setattr(pool, "font_tables_read_once", contextlib.nullcontext)
    assert kept == pool.render_figure(str(script))
