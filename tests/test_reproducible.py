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


def _build(site: Path, *, cache: bool, python: str = sys.executable) -> Path:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "MFL_CACHE": "on" if cache else "off"}
    properdocs = Path(python).parent / "properdocs"  # as `make build` runs it
    build = [str(properdocs), "build", "--strict", "--quiet", "-f", "mkdocs.yml"]
    subprocess.run(
        [*build, "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    return site


def _assert_identical(first: Path, second: Path, may_differ: frozenset[str] = frozenset()) -> None:
    a, b = _files(first), _files(second)
    assert sorted(a) == sorted(b)
    differ = sorted(name for name in a if a[name] != b[name] and name not in may_differ)
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


# What a build on another Python release may change: the Zipf figure counts the help
# topics that ship with Python (pydoc_data), which change between patch releases, and
# the page notebook that embeds that figure.
PYTHON_RELEASE_DEPENDENT = frozenset(
    {
        "tokenization-math/figures/s6-zipf-rank.svg",
        "tokenization-math/information-theoretic-view.ipynb",
    }
)


@pytest.mark.slow
def test_the_lock_branch_for_older_3_11_builds_the_same_site(site_dir, tmp_path):
    """requirements.lock pins pymdown-extensions 12.3 below Python 3.11.5 (13 needs it) and
    13 from there (tests/test_locks.py). `make test-floor` installs the lock with a 3.11
    older than 3.11.5 (Debian 12's python3, 3.11.2) into .venv-floor; its clean build must
    give the site/ that this Python built, byte for byte, but for what the Python release
    itself changes."""
    python = os.environ.get("MFL_FLOOR_PYTHON")
    if not python:
        pytest.skip("`make test-floor` builds with the lock's branch for Python < 3.11.5")
    probe = "import sys, importlib.metadata as m; print(sys.version.split()[0], m.version('pymdown-extensions'))"
    release, pymdown = subprocess.run(
        [python, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert tuple(map(int, release.split("."))) < (3, 11, 5), f"{python} is Python {release}"
    assert pymdown == "12.3"
    floor_site = _build(tmp_path / "site", cache=False, python=python)
    _assert_identical(site_dir, floor_site, may_differ=PYTHON_RELEASE_DEPENDENT)
