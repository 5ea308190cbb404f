"""Site benchmark: prints figures for this machine, and the budget checks.

Absolute seconds on a shared machine swing by 2x within an hour, so each
figure is measured against an import floor, the time Python takes merely to
import what `pytest docs` needs (``FLOOR``), measured alternately with it in
the same run: floor, figure, floor, figure, ..., floor. Each figure's ratio
is its time over the mean of the two floors either side of it, and the median
of these pairwise ratios is the figure's ratio.

What grows with the course is held to a budget **per lesson**: its ratio over
the number of lessons in the nav (``nav_lessons``), so that the budgets hold
as lessons are added and a lesson that costs more than its share shows
(``PER_LESSON_BUDGETS``; the total ratio is printed too, with the count):

- `pytest docs`, at most 2.5x the floor per lesson (median of 3 runs), as a
  contributor runs it: on every core (pyproject's ``-n auto``), followed by
  the ten slowest page blocks of the last run (pytest's ``--durations``);
- the strict build (the Makefile's ``build`` command) cold, at most 8x per
  lesson (``MFL_CACHE=off``: no figure, notebook or page cache is read or
  kept, as after ``make clean``; median of 3, since one cold run can stray by
  a tenth either way), and warm, at most 1x per lesson (median of 3, after
  one build that fills the cache).

A contributor's loop must not slow down with every lesson, so it is held to
budgets that do not depend on the number of lessons (``LOOP_BUDGETS``):

- **the edit loop**, at most 1.5x the floor: the Makefile's ``serve`` command
  (``make serve``) is started on a free port, and once it serves, a probe
  paragraph is appended to one lesson page (``--page``); the figure is the
  time from saving the page to the rebuilt page being served with the probe
  (the page is fetched from 127.0.0.1 every 50 ms until it has it). The page
  is then restored, byte for byte, and the server's rebuild of it awaited
  before the next run (median of 3). The file is restored even if the
  benchmark fails or is interrupted;
- `pytest docs/<lesson>/<page>.md` for that one page, at most 2x the floor
  (median of 3; one file runs in one process, conftest.py);
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
`--loop-only` times only the edit loop and the one-page `pytest` (no build);
`--runs N`, `--cold-runs N` and `--edit-runs N` set the number of
measurements; `--serve-arg ARG` adds an option to the serve command (e.g.
`--serve-arg=--clean`, to time full rebuilds). The exit status is 1 if any budget fails.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlparse

import yaml

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SITE = ROOT / "site"
BUDGET = 300 * 1024  # bytes, gzipped, per lesson page on a first visit
# The import floor every timing is divided by, and the budgets, as multiples of it.
FLOOR = [sys.executable, "-c", "import numpy, matplotlib.pyplot, sybil, pytest, llmmath"]
# Per lesson: the ratio over the number of lessons in the nav.
PER_LESSON_BUDGETS = {"pytest docs": 2.5, "build, cold": 8.0, "build, warm": 1.0}
# Whatever the number of lessons: a contributor's loop on one page.
LOOP_BUDGETS = {"edit loop": 1.5, "pytest one page": 2.0}
# The lesson page the edit loop saves and `pytest` runs (--page), under docs/.
EDIT_PAGE = "tokenization-math/byte-pair-encoding.md"
POLL = 0.05  # seconds between two fetches of the page being rebuilt
SERVE_START = 900  # seconds allowed for the server's first build (a cold one, after `make clean`)
REBUILD = 300  # seconds allowed for one rebuild
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
# And of its `serve` target, which the edit loop runs (on another port).
SERVE = re.search(r"^serve:.*\n\t\$\(BIN\)/(.+)$", MAKEFILE, re.M)
SERVE_ARGS = SERVE.group(1).split() if SERVE else ["properdocs", "serve", "-f", "mkdocs.yml"]


def nav_lessons() -> list[str]:
    """The lessons in the nav: its sections that open with a ``<lesson>/index.md``
    overview, the API reference aside (as ``tests/test_site.py`` reads them)."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    lessons = []
    for entry in config["nav"]:
        for items in entry.values() if isinstance(entry, dict) else []:
            first = items[0] if isinstance(items, list) and items else None
            if isinstance(first, str) and first.endswith("/index.md"):
                lessons.append(first.split("/")[0])
    return [lesson for lesson in lessons if lesson != "reference"]


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


def time_report(runs: int, cold_runs: int) -> tuple[list[Paired], list[str]]:
    """Time `pytest docs` and the strict build, cold and warm, against the import floor;
    also return the `--durations` report of the last `pytest docs` run."""
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
    return figures, report


# ---------------------------------------------------------------------------
# The edit loop: save a page under `make serve`, wait for the rebuilt page.


def page_address(src_uri: str) -> str:
    """The path ``properdocs serve`` serves the page ``src_uri`` at: under the
    path of ``site_url``, with directory URLs (the default)."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    mount = urlparse(config.get("site_url") or "/").path.rstrip("/")
    stem = src_uri.removesuffix(".md")
    page = stem.removesuffix("index") if stem.endswith(("/index", "index")) else stem + "/"
    return f"{mount}/{page}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> str | None:
    """The page at ``url``, or None while the server does not serve it."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.read().decode("utf-8", errors="replace")
    except (urllib.error.URLError, OSError):
        return None


def shows(url: str, text: str, present: bool) -> bool | None:
    """True once the page served at ``url`` has ``text`` (or, if not ``present``,
    is served without it); None until then."""
    page = fetch(url)
    return True if page is not None and (text in page) == present else None


class Server:
    """The Makefile's serve command on a free port of 127.0.0.1, in its own
    process group, its output in a temporary file (``log``)."""

    def __init__(self, extra: list[str]) -> None:
        self.port = free_port()
        args = [*SERVE_ARGS, *extra]
        if "--dev-addr" in args:
            args[args.index("--dev-addr") + 1] = f"127.0.0.1:{self.port}"
        else:
            args += ["--dev-addr", f"127.0.0.1:{self.port}"]
        self.cmd = [str(BIN / args[0]), *args[1:]]
        self.out = tempfile.NamedTemporaryFile("w+", prefix="bench-serve-", suffix=".log")
        self.proc = subprocess.Popen(
            self.cmd,
            cwd=ROOT,
            env={**os.environ, **MAKE_ENV},
            stdout=self.out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def log(self) -> str:
        return Path(self.out.name).read_text(encoding="utf-8", errors="replace")

    def builds(self) -> tuple[int, int]:
        """(builds started, builds ended, in success or failure) so far.

        Not counted by "Documentation built in": ProperDocs logs a build
        message only once per process (a filter drops repeats), so a rebuild
        that took as long as an earlier one says nothing. The server's own
        messages are not filtered: the first build has ended once it serves,
        and every later one with "Reloading browsers" or the error it logs.
        """
        text = self.log()
        ended = len(re.findall(r"Reloading browsers|An error happened during the rebuild", text))
        # "Building documentation..." starts a build; a clean one (--clean) also
        # logs "Building documentation to directory: ...".
        return text.count("Building documentation..."), ended + ("Serving on" in text)

    def wait(self, done, timeout: float, what: str) -> str:
        """Poll until ``done()`` returns a value other than None; return it."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{' '.join(self.cmd)} exited:\n{self.log()[-3000:]}")
            value = done()
            if value is not None:
                return value
            time.sleep(POLL)
        raise TimeoutError(f"{what}: not within {timeout} s:\n{self.log()[-3000:]}")

    def idle(self) -> None:
        """Wait until every build the server started has ended."""

        def settled():
            started, ended = self.builds()
            return True if started and ended >= started else None

        self.wait(settled, REBUILD, "the server's build")

    def stop(self) -> None:
        """Ctrl-C, as a contributor stops it (it removes its temporary site); then a kill."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.out.close()


def edit_loop(src_uri: str, runs: int, extra: list[str]) -> Paired:
    """Seconds from saving ``docs/<src_uri>`` under the serve command to the
    rebuilt page being served, ``runs`` times, alternating with the floor."""
    source = ROOT / "docs" / src_uri
    original = source.read_bytes()
    server = Server(extra)
    url = server.url(page_address(src_uri))
    # SIGTERM (a CI timeout) must restore the page too: make it an exception.
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        server.wait(lambda: fetch(url), SERVE_START, f"the first build serving {url}")
        server.idle()
        floors = [timed(FLOOR)]
        times = []
        for run in range(runs):
            probe = f"mfl-bench-edit-probe-{os.getpid()}-{run}"
            edited = original.rstrip(b"\n") + f"\n\nEdit-loop probe {probe}.\n".encode()
            start = time.perf_counter()
            source.write_bytes(edited)
            server.wait(functools.partial(shows, url, probe, True), REBUILD, url)
            times.append(time.perf_counter() - start)
            source.write_bytes(original)
            server.wait(functools.partial(shows, url, probe, False), REBUILD, url)
            server.idle()
            floors.append(timed(FLOOR))
        return Paired("edit loop", times, floors)
    finally:
        if source.read_bytes() != original:
            source.write_bytes(original)
        signal.signal(signal.SIGTERM, previous)
        server.stop()


def loop_report(src_uri: str, runs: int, extra: list[str]) -> list[Paired]:
    """The edit loop on ``src_uri``, and `pytest` on that page alone."""
    one_page = [str(BIN / "pytest"), "-q", "-p", "no:cacheprovider", f"docs/{src_uri}"]
    return [edit_loop(src_uri, runs, extra), paired("pytest one page", one_page, runs)]


def print_figures(figures: list[Paired], lessons: list[str], load: float) -> bool:
    """Print each figure against the import floor and its budget; True if all pass."""
    floors = [f for figure in figures for f in figure.floors]
    print(f"import floor ({' '.join(FLOOR[1:])}):")
    print(
        f"  median {statistics.median(floors):.2f} s over {len(floors)} runs "
        f"({min(floors):.2f}-{max(floors):.2f} s); load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores"
    )
    n = len(lessons)
    print(f"lessons in the nav: {n} ({', '.join(lessons)})")
    print(
        f"{'measure':26} {'median s':>9} {'ratio to floor (each run)':>26} "
        f"{'per lesson':>10}  budget"
    )
    ok = True
    for figure in figures:
        each = ", ".join(f"{r:.1f}" for r in figure.ratios)
        line = (
            f"{figure.name + f' ({len(figure.times)} runs)':26} "
            f"{statistics.median(figure.times):>9.2f} {figure.ratio:>9.1f}x ({each})"
        )
        if figure.name in PER_LESSON_BUDGETS:
            budget, ratio = PER_LESSON_BUDGETS[figure.name], figure.ratio / n
            verdict = "PASS" if ratio <= budget else "FAIL"
            line = f"{line:64} {ratio:>9.2f}x  <= {budget:g}x a lesson {verdict}"
        else:
            budget = LOOP_BUDGETS[figure.name]
            verdict = "PASS" if figure.ratio <= budget else "FAIL"
            line = f"{line:64} {'':>10}  <= {budget:g}x {verdict}"
        ok &= verdict == "PASS"
        print(line)
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
    only = parser.add_mutually_exclusive_group()
    only.add_argument(
        "--weight-only", action="store_true", help="only the page weights of the built site/"
    )
    only.add_argument(
        "--loop-only", action="store_true", help="only the edit loop and the one-page pytest"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of pytest docs, warm builds")
    parser.add_argument("--cold-runs", type=int, default=3, help="runs of the cold build")
    parser.add_argument(
        "--edit-runs", type=int, default=3, help="saves of the page, and one-page pytest runs"
    )
    parser.add_argument(
        "--page", default=EDIT_PAGE, help=f"the page under docs/ to edit (default {EDIT_PAGE})"
    )
    parser.add_argument(
        "--serve-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="an option added to the Makefile's serve command (repeatable), e.g. --serve-arg=--clean",
    )
    args = parser.parse_args(argv)
    ok = True
    if not args.weight_only:
        load = os.getloadavg()[0]
        figures: list[Paired] = []
        report: list[str] = []
        if not args.loop_only:
            figures, report = time_report(args.runs, args.cold_runs)
        figures += loop_report(args.page, args.edit_runs, args.serve_arg)
        ok = print_figures(figures, nav_lessons(), load)
        if report:
            print("\nslowest page blocks (the last `pytest docs` run):")
            for seconds, block in slowest_blocks(report[-1]):
                print(f"  {seconds:6.2f} s  {block}")
        print()
        if args.loop_only:
            return 0 if ok else 1
    if not (SITE / "index.html").exists():
        print("site/ is not built: run `make build` first", file=sys.stderr)
        return 1
    ok &= weight_report(SITE)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
