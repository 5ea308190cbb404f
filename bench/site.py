"""Site benchmark: prints figures for this machine, asserts nothing.

- `pytest docs` wall time (median of 3 runs);
- `mkdocs build --strict` cold (no figure or notebook cache) and warm (median of 3);
- the weight of each lesson page on first load: the HTML plus every script,
  stylesheet and image it references (fonts excluded: KaTeX's are fetched only
  for glyphs in use), raw and gzipped.

Run from the project root: `.venv/bin/python bench/site.py` (or `make bench`).
"""

from __future__ import annotations

import gzip
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


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


class Assets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.urls.append(a["src"])
        elif tag == "link" and a.get("rel") in ("stylesheet", "modulepreload") and a.get("href"):
            self.urls.append(a["href"])
        elif tag == "img" and a.get("src"):
            self.urls.append(a["src"])


def page_weight(html_path: Path) -> tuple[int, int, int]:
    """(raw bytes, gzipped bytes, number of files) for a page and its assets."""
    parser = Assets()
    parser.feed(html_path.read_text(encoding="utf-8"))
    page_url = "/" + html_path.relative_to(SITE).as_posix()
    files = {html_path}
    for url in parser.urls:
        parsed = urlparse(urljoin(page_url, url))
        if parsed.scheme or parsed.netloc:
            raise SystemExit(f"{html_path}: third-party asset {url}")
        files.add(SITE / parsed.path.lstrip("/"))
    raw = sum(f.stat().st_size for f in files)
    zipped = sum(len(gzip.compress(f.read_bytes(), 6, mtime=0)) for f in files)
    return raw, zipped, len(files)


def main() -> None:
    pytest_times = [
        timed([str(BIN / "pytest"), "-q", "-p", "no:cacheprovider", "docs"]) for _ in range(3)
    ]
    shutil.rmtree(ROOT / ".cache", ignore_errors=True)
    cold = timed([str(BIN / "mkdocs"), "build", "--strict"])
    warm = [timed([str(BIN / "mkdocs"), "build", "--strict"]) for _ in range(3)]

    print(f"{'measure':42} {'value':>12}")
    print(f"{'pytest docs (median of 3)':42} {statistics.median(pytest_times):>10.2f} s")
    print(f"{'mkdocs build --strict, cold':42} {cold:>10.2f} s")
    print(f"{'mkdocs build --strict, warm (median of 3)':42} {statistics.median(warm):>10.2f} s")
    print()
    print(
        f"{'lesson page (first load, fonts excluded)':48} {'files':>5} {'raw KB':>8} {'gzip KB':>8}"
    )
    for html in sorted((SITE / "embedding-space-math").rglob("index.html")):
        raw, zipped, n = page_weight(html)
        name = html.parent.relative_to(SITE).as_posix()
        print(f"{name:48} {n:>5} {raw / 1024:>8.1f} {zipped / 1024:>8.1f}")


if __name__ == "__main__":
    main()
