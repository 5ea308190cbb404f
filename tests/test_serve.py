"""`make serve` rewrites only the page you saved, and writes it as a full build does.

`make serve` runs `properdocs serve --dirty`: a rebuild reads and writes only
the pages whose Markdown changed, and hooks/caches.py restores the others
from what the earlier builds of the same process kept (their anchors, titles,
content, search entries). This test runs such a session on a copy of docs/
and of the build cache, as the serve command runs it (one process, the
configuration loaded afresh for each build, ``on_startup`` once):

1. a first build, which writes every page;
2. a figure script's comment changed: not a page, so every page is read and
   written again (the code shown under the figure changed);
3. a lesson page changed (a sentence with a link to an API object, which
   only the API reference registers, and one to another page's heading):
   only that page is written.

Then a full build of the same sources, in a fresh process, must give the same
site, file for file. The steps take about half a minute, on the copied cache
(``MFL_CACHE_DIR``), so the site's own cache is left as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVE_URL = "http://127.0.0.1:8000/math-for-llms/"
DATED = {"sitemap.xml", "sitemap.xml.gz"}  # each URL's <lastmod> (tests/test_reproducible.py)
PAGE = "tokenization-math/byte-pair-encoding.md"
FIGURE_SCRIPT = "tokenization-math/figures/bridge-pipeline.py"
SENTENCE = (
    "\n\nA probe sentence: [`bpe_encode_word`][llmmath.tokenize.bpe_encode_word] "
    "and [the WordPiece section](wordpiece.md#52-unknown-words).\n"
)


def _build(docs: Path, site: Path, dirty: bool):
    """One build as `properdocs serve` makes it (its ``builder``)."""
    from properdocs.commands.build import build
    from properdocs.config import load_config

    config = load_config(config_file="mkdocs.yml", docs_dir=str(docs), site_dir=str(site))
    config.site_url = SERVE_URL
    build(config, serve_url=SERVE_URL, dirty=dirty)
    return config


def _pages_written(site: Path, since: dict[str, int]) -> list[str]:
    now = _html_times(site)
    return sorted(name for name, t in now.items() if since.get(name) != t)


def _html_times(site: Path) -> dict[str, int]:
    return {p.relative_to(site).as_posix(): p.stat().st_mtime_ns for p in site.rglob("*.html")}


def session(docs: Path, site: Path) -> dict[str, list[str]]:
    """The three builds of a `make serve` session; the pages each rebuild wrote."""
    import properdocs.replacement  # noqa: F401  (mkdocs.* imports, as the CLI sets up)
    from properdocs.config import load_config

    first = load_config(config_file="mkdocs.yml", docs_dir=str(docs), site_dir=str(site))
    first.plugins.on_startup(command="serve", dirty=True)
    written = {}
    try:
        _build(docs, site, dirty=True)
        before = _html_times(site)
        script = docs / FIGURE_SCRIPT
        script.write_text(script.read_text(encoding="utf-8") + "# a comment\n", encoding="utf-8")
        _build(docs, site, dirty=True)
        written["figure script"] = _pages_written(site, before)
        before = _html_times(site)
        page = docs / PAGE
        page.write_text(page.read_text(encoding="utf-8") + SENTENCE, encoding="utf-8")
        _build(docs, site, dirty=True)
        written["page"] = _pages_written(site, before)
    finally:
        first.plugins.on_shutdown()
    return written


def full(docs: Path, site: Path) -> None:
    import properdocs.replacement  # noqa: F401

    config = _build(docs, site, dirty=False)
    config.plugins.on_shutdown()


def _files(site: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in site.rglob("*")
        if p.is_file() and p.name not in DATED
    }


@pytest.mark.slow
def test_a_serve_rebuild_writes_the_saved_page_as_a_full_build(tmp_path, site_dir):
    # site_dir: `make test` has built the site, so the cache copied here is warm.
    docs = tmp_path / "docs"
    shutil.copytree(
        ROOT / "docs", docs, ignore=shutil.ignore_patterns(".ruff_cache", "__pycache__")
    )
    cache = tmp_path / "cache"
    shutil.copytree(ROOT / ".cache", cache)
    env = {**os.environ, "MFL_CACHE_DIR": str(cache), "NO_MKDOCS_2_WARNING": "1"}

    def run(mode: str, site: Path) -> str:
        done = subprocess.run(
            [sys.executable, __file__, mode, str(docs), str(site)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    served = tmp_path / "served"
    written = json.loads(run("session", served))
    pages = {name for name in _html_times(served) if not name.startswith("assets/")}
    # A change that is not a page's Markdown: every page written again.
    assert pages <= set(written["figure script"])
    # A page's Markdown: that page alone (and the theme's 404 page, every build).
    assert written["page"] == ["404.html", "tokenization-math/byte-pair-encoding/index.html"]

    built = tmp_path / "built"
    run("full", built)
    a, b = _files(served), _files(built)
    assert sorted(a) == sorted(b)
    differ = sorted(name for name in a if a[name] != b[name])
    assert not differ, f"files the serve session wrote unlike a full build: {differ[:20]}"
    page = b["tokenization-math/byte-pair-encoding/index.html"].decode()
    assert "A probe sentence" in page
    assert 'href="../../reference/tokenize/#llmmath.tokenize.bpe_encode_word"' in page


if __name__ == "__main__":
    mode, docs_arg, site_arg = sys.argv[1:4]
    if mode == "session":
        print(json.dumps(session(Path(docs_arg), Path(site_arg))))
    else:
        full(Path(docs_arg), Path(site_arg))
