"""Site benchmark: prints figures for this machine, and the budget checks.

Absolute seconds on a shared machine swing by 2x within an hour, so each
figure is measured against an import floor, the time Python takes merely to
import what `pytest docs` needs (``FLOOR``), measured alternately with it in
the same run: floor, figure, floor, figure, ..., floor. Each figure's ratio
is its time over the mean of the two floors either side of it; the median
of these pairwise ratios is held to its budget (``TIME_BUDGETS``):

- `pytest docs`, at most 8x the floor (median of 3 runs), followed by the ten
  slowest page blocks of the last run (pytest's ``--durations``);
- the strict build (the Makefile's ``build`` command) cold, at most 30x
  (``MFL_CACHE=off``: no figure, notebook or page cache is read or kept,
  as after ``make clean``; median of 3, since one cold run can stray by a
  tenth either way), and warm, at most 4x (median of 3, after one build
  that fills the cache);
- the weight of each lesson page on a first visit, against the budget of
  300 KB gzipped (``BUDGET``): PASS or FAIL per page.

Run it on a quiet machine if you can, and quote the load (`uptime`) with
the figures: numpy's BLAS threads suffer most from contention, so the
ratios rise on a busy machine too, if less than the seconds do.

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
`--weight-only` skips the timings and reads the site already built in site/;
`--runs N` and `--cold-runs N` set the number of measurements. The exit
status is 1 if any budget fails.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlparse

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SITE = ROOT / "site"
BUDGET = 300 * 1024  # bytes, gzipped, per lesson page on a first visit
# The import floor every timing is divided by, and the budgets, as multiples of it.
FLOOR = [sys.executable, "-c", "import numpy, matplotlib.pyplot, sybil, pytest, llmmath"]
TIME_BUDGETS = {"pytest docs": 8.0, "build, cold": 30.0, "build, warm": 4.0}
SLOWEST = 10  # page blocks listed after the `pytest docs` timing
# lesson folders (hooks/reader.py), in course order
LESSONS = (
    "tokenization-math",
    "embedding-space-math",
    "attention-mechanism-math",
    "positional-encodings",
    "language-model-probability",
)
FONTS = (".woff2", ".woff", ".ttf", ".otf", ".eot")
SEARCH_INDEX = "search/search_index.json"
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)""")


# The environment the Makefile exports to every site build (see its comments),
# read from its `export NAME := value` lines, so that this times what
# `make build` does.
MAKEFILE = (ROOT / "Makefile").read_text()
MAKE_ENV = dict(re.findall(r"^export (\w+) := (\S+)$", MAKEFILE, re.M))
# The command line of the Makefile's `build-installed` target (properdocs, its
# options and the configuration it names), so that this times what `make build` runs.
BUILD = re.search(r"^build-installed:.*\n\t\$\(BIN\)/(.+)$", MAKEFILE, re.M)
BUILD_ARGS = BUILD.group(1).split() if BUILD else ["properdocs", "build", "--strict"]


def timed(cmd: list[str], env: dict[str, str] | None = None, output: list | None = None) -> float:
    """Wall time of ``cmd`` in seconds; its stdout is appended to ``output`` if given."""
    env = {**os.environ, **MAKE_ENV, **(env or {})}
    start = time.perf_counter()
    done = subprocess.run(
        cmd,
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.PIPE if output is not None else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if output is not None:
        output.append(done.stdout)
    return elapsed


@dataclass
class Paired:
    """A figure's times, the floors measured around them, and the pairwise ratios."""

    name: str
    times: list[float]
    floors: list[float]  # one more than times: floor, time, floor, ..., time, floor

    @property
    def ratios(self) -> list[float]:
        return [2 * t / (self.floors[i] + self.floors[i + 1]) for i, t in enumerate(self.times)]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)


def paired(name: str, cmd: list[str], runs: int, **kwargs) -> Paired:
    """Time ``cmd`` ``runs`` times, alternating with the import floor."""
    floors = [timed(FLOOR)]
    times = []
    for _ in range(runs):
        times.append(timed(cmd, **kwargs))
        floors.append(timed(FLOOR))
    return Paired(name, times, floors)


def slowest_blocks(durations: str, n: int = SLOWEST) -> list[tuple[float, str]]:
    """The ``n`` slowest page blocks in pytest's ``--durations`` report: (seconds, block)."""
    found = re.findall(r"^([\d.]+)s (?:call|setup|teardown)\s+(\S+)$", durations, re.M)
    return sorted(((float(s), block) for s, block in found), reverse=True)[:n]


def time_report(runs: int, cold_runs: int) -> bool:
    """Print each figure against the import floor; True if all are within budget."""
    load = os.getloadavg()[0]
    build = [str(BIN / BUILD_ARGS[0]), *BUILD_ARGS[1:]]
    report: list[str] = []
    figures = [
        paired(
            "pytest docs",
            [str(BIN / "pytest"), "-q", "-p", "no:cacheprovider", "docs", f"--durations={SLOWEST}"],
            runs,
            output=report,
        ),
        paired("build, cold", build, cold_runs, env={"MFL_CACHE": "off"}),
    ]
    timed(build)  # fills the cache the warm builds read
    figures.append(paired("build, warm", build, runs))
    floors = [f for figure in figures for f in figure.floors]
    print(f"import floor ({' '.join(FLOOR[1:])}):")
    print(
        f"  median {statistics.median(floors):.2f} s over {len(floors)} runs "
        f"({min(floors):.2f}-{max(floors):.2f} s); load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores"
    )
    print(f"{'measure':30} {'median s':>9} {'ratio to floor (each run)':>32}  budget")
    ok = True
    for figure in figures:
        budget = TIME_BUDGETS[figure.name]
        verdict = "PASS" if figure.ratio <= budget else "FAIL"
        ok &= verdict == "PASS"
        each = ", ".join(f"{r:.1f}" for r in figure.ratios)
        print(
            f"{figure.name + f' ({len(figure.times)} runs)':30} "
            f"{statistics.median(figure.times):>9.2f} {figure.ratio:>10.1f}x ({each})"
            f"  <= {budget:g}x {verdict}"
        )
    print("\nslowest page blocks (the last `pytest docs` run):")
    for seconds, block in slowest_blocks(report[-1]):
        print(f"  {seconds:6.2f} s  {block}")
    print()
    return ok


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
    parser.add_argument("--runs", type=int, default=3, help="runs of pytest docs, warm builds")
    parser.add_argument("--cold-runs", type=int, default=3, help="runs of the cold build")
    args = parser.parse_args(argv)
    ok = True
    if not args.weight_only:
        ok = time_report(args.runs, args.cold_runs)
    if not (SITE / "index.html").exists():
        print("site/ is not built: run `make build` first", file=sys.stderr)
        return 1
    ok &= weight_report(SITE)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
