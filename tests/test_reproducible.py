"""Builds give byte-identical sites: two clean builds, and a warm build against a clean one.

The only files allowed to differ carry the build date by design:
``sitemap.xml`` (each URL's ``<lastmod>``) and ``sitemap.xml.gz`` (the same,
compressed). Search engines read the date; it is not content.

The warm build proves the build caches (``hooks/buildcache.py`` and its
users: figures, notebook, highlighting, templates, bibliography, reading
time) change nothing but the time a build takes. It runs after site/ was
built, so in CI, where that first build starts with no ``.cache/``, it is the
build that reads everything the first one stored; it must take every entry
from the cache and write none.

A clean build takes about a minute of both cores (most of it the figures and
the three theory notebooks), so only ``make test-reproducible`` (which sets
``MFL_CLEAN_BUILD=1``; CI runs it) makes one; ``make test`` skips these.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"
DATED = {"sitemap.xml", "sitemap.xml.gz"}
# Written into site/ by the browser tests (the README screenshot), not by the build.
NOT_BUILT = {"assets/screenshot.png"}


def _files(site: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in site.rglob("*")
        if p.is_file() and p.name not in DATED and p.relative_to(site).as_posix() not in NOT_BUILT
    }


def _build(site: Path, *, cache: bool) -> Path:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "MFL_CACHE": "on" if cache else "off"}
    properdocs = Path(sys.executable).parent / "properdocs"  # as `make build` runs it
    build = [str(properdocs), "build", "--strict", "--quiet", "-f", "mkdocs.yml"]
    subprocess.run(
        [*build, "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    return site


def _assert_identical(first: Path, second: Path) -> None:
    a, b = _files(first), _files(second)
    assert sorted(a) == sorted(b)
    differ = sorted(name for name in a if a[name] != b[name])
    assert not differ, f"files that differ between the builds: {differ[:20]}"


@pytest.fixture(scope="module")
def clean_site(tmp_path_factory) -> Path:
    if not os.environ.get("MFL_CLEAN_BUILD"):
        pytest.skip("a clean build takes about a minute: `make test-reproducible` runs these")
    return _build(tmp_path_factory.mktemp("clean") / "site", cache=False)


@pytest.mark.slow
def test_a_second_clean_build_is_byte_identical(site_dir, clean_site):
    _assert_identical(site_dir, clean_site)


def _cache_files() -> dict[str, int]:
    """Every file in .cache/ with its modification time (ns)."""
    return {
        p.relative_to(CACHE).as_posix(): p.stat().st_mtime_ns
        for p in CACHE.rglob("*")
        if p.is_file()
    }


@pytest.mark.slow
def test_a_warm_build_is_byte_identical_to_a_clean_one(site_dir, clean_site, tmp_path):
    before = _cache_files()
    assert "highlight.json" in before, "site/ was built without the caches"
    _assert_identical(clean_site, _build(tmp_path / "site", cache=True))
    # Nothing was produced afresh: every cache file is as the build of site/
    # left it (a Memo is rewritten, and a figure or template re-cached, only
    # when an entry was missing). A key that never matched would fail here.
    assert _cache_files() == before
