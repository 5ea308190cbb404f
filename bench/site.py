"""Site benchmark: prints figures for this machine, and the page-weight budget check.

- `pytest docs` wall time (median of 3 runs);
- `mkdocs build --strict` cold (no figure or notebook cache) and warm (median of 3);
- the weight of each lesson page on a first visit, against the budget of
  300 KB gzipped (``BUDGET``): PASS or FAIL per page.

What a first visit fetches (``first_load``): the HTML; every script,
stylesheet, icon and image it references (``data:`` URIs are inside the HTML
already); images that those stylesheets reference; the search worker named in
Material's ``__config``; and ``sitemap.xml``, which instant navigation loads.
Not counted: fonts (KaTeX's are fetched only for the glyphs a page uses, and
the site has no web font of its own) and the search index, which
``docs/javascripts/lazy-search.js`` holds back until the reader uses search;
its size is printed on its own line. ``tests/test_browser.py`` checks this
list against the requests Chromium really makes, and ``tests/test_site.py``
holds every lesson page to the budget with the same function.

Run from the project root: `.venv/bin/python bench/site.py` (or `make bench`);
`--weight-only` skips the timings and reads the site already built in site/.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlparse

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SITE = ROOT / "site"
BUDGET = 300 * 1024  # bytes, gzipped, per lesson page on a first visit
# lesson folders (hooks/reader.py), in course order
LESSONS = ("embedding-space-math", "attention-mechanism-math", "positional-encodings")
FONTS = (".woff2", ".woff", ".ttf", ".otf", ".eot")
SEARCH_INDEX = "search/search_index.json"
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)""")


# The environment the Makefile exports to every mkdocs run (see its comments),
# read from its `export NAME := value` lines, so that this times what
# `make build` does.
MAKE_ENV = dict(re.findall(r"^export (\w+) := (\S+)$", (ROOT / "Makefile").read_text(), re.M))


def timed(cmd: list[str]) -> float:
    env = {**os.environ, **MAKE_ENV}
    start = time.perf_counter()
    subprocess.run(
        cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - start


class Assets(HTMLParser):
    """The URLs a page makes the browser fetch, plus Material's ``__config``."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.config: dict = {}
        self._in_config = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        rel = (a.get("rel") or "").lower().split()
        if tag == "script" and a.get("src"):
            self.urls.append(a["src"])
        elif tag == "script" and a.get("id") == "__config":
            self._in_config = True
        elif tag == "link" and a.get("href") and {"stylesheet", "modulepreload", "icon"} & set(rel):
            self.urls.append(a["href"])
        elif tag in ("img", "source", "video", "audio", "iframe", "embed") and a.get("src"):
            self.urls.append(a["src"])

    def handle_data(self, data):
        if self._in_config:
            self.config = json.loads(data)

    def handle_endtag(self, tag):
        self._in_config = False


def _local(page_url: str, url: str, where: Path, site: Path) -> Path | None:
    """The file under ``site`` for ``url`` (None for data: URIs); off-site is an error."""
    if url.startswith("data:"):
        return None
    parsed = urlparse(urljoin(page_url, url))
    if parsed.scheme or parsed.netloc:
        raise ValueError(f"{where}: asset from another host: {url}")
    path = site / parsed.path.lstrip("/")
    return path / "index.html" if path.is_dir() else path


def first_load(html_path: Path, site: Path = SITE) -> list[Path]:
    """The files a first visit to the page fetches, fonts and search index excluded."""
    parser = Assets()
    parser.feed(html_path.read_text(encoding="utf-8"))
    page_url = "/" + html_path.relative_to(site).as_posix()
    files = {html_path}
    for url in parser.urls:
        path = _local(page_url, url, html_path, site)
        if path is not None:
            files.add(path)
    config = parser.config
    if config.get("search"):  # Material starts its search worker on every page
        files.add(_local(page_url, config["search"], html_path, site))
    if "navigation.instant" in config.get("features", []):
        files.add(site / "sitemap.xml")
    for css in [f for f in files if f.suffix == ".css"]:
        css_url = "/" + css.relative_to(site).as_posix()
        for url in CSS_URL.findall(css.read_text(encoding="utf-8", errors="replace")):
            path = _local(css_url, url, css, site)
            if path is not None and path.suffix not in FONTS:
                files.add(path)
    missing = [f for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"{html_path}: referenced but not built: {missing}")
    return sorted(f for f in files if f.suffix not in FONTS)


def gzipped_size(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), 6, mtime=0))


def page_weight(html_path: Path, site: Path = SITE) -> tuple[int, int, int]:
    """(raw bytes, gzipped bytes, number of files) fetched by a first visit to the page."""
    files = first_load(html_path, site)
    return (
        sum(f.stat().st_size for f in files),
        sum(gzipped_size(f) for f in files),
        len(files),
    )


def lesson_pages(site: Path = SITE) -> list[Path]:
    return sorted(p for lesson in LESSONS for p in (site / lesson).rglob("index.html"))


def weight_report(site: Path = SITE) -> bool:
    """Print the first-visit weight of every lesson page; True if all are within budget."""
    ok = True
    print(
        f"{'lesson page (first visit, fonts excluded)':48} {'files':>5} {'raw KB':>8} "
        f"{'gzip KB':>8}  budget {BUDGET // 1024} KB"
    )
    for html in lesson_pages(site):
        raw, zipped, n = page_weight(html, site)
        name = html.parent.relative_to(site).as_posix()
        verdict = "PASS" if zipped <= BUDGET else "FAIL"
        ok &= verdict == "PASS"
        print(f"{name:48} {n:>5} {raw / 1024:>8.1f} {zipped / 1024:>8.1f}  {verdict}")
    index = site / SEARCH_INDEX
    if index.exists():
        print(
            f"{'search index (on first use of search)':48} {1:>5} "
            f"{index.stat().st_size / 1024:>8.1f} {gzipped_size(index) / 1024:>8.1f}"
        )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--weight-only", action="store_true", help="only the page weights of the built site/"
    )
    args = parser.parse_args(argv)
    if not args.weight_only:
        pytest_times = [
            timed([str(BIN / "pytest"), "-q", "-p", "no:cacheprovider", "docs"]) for _ in range(3)
        ]
        shutil.rmtree(ROOT / ".cache", ignore_errors=True)
        cold = timed([str(BIN / "mkdocs"), "build", "--strict"])
        warm = [timed([str(BIN / "mkdocs"), "build", "--strict"]) for _ in range(3)]

        print(f"{'measure':42} {'value':>12}")
        print(f"{'pytest docs (median of 3)':42} {statistics.median(pytest_times):>10.2f} s")
        print(f"{'mkdocs build --strict, cold':42} {cold:>10.2f} s")
        print(
            f"{'mkdocs build --strict, warm (median of 3)':42} {statistics.median(warm):>10.2f} s"
        )
        print()
    if not (SITE / "index.html").exists():
        print("site/ is not built: run `make build` first", file=sys.stderr)
        return 1
    return 0 if weight_report(SITE) else 1


if __name__ == "__main__":
    sys.exit(main())
