"""Two clean builds give byte-identical sites.

The only files allowed to differ carry the build date by design:
``sitemap.xml`` (each URL's ``<lastmod>``) and ``sitemap.xml.gz`` (the same,
compressed). Search engines read the date; it is not content.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATED = {"sitemap.xml", "sitemap.xml.gz"}
# Written into site/ by the browser tests (the README screenshot), not by the build.
NOT_BUILT = {"assets/screenshot.png"}


def _files(site: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in site.rglob("*")
        if p.is_file() and p.name not in DATED and p.relative_to(site).as_posix() not in NOT_BUILT
    }


@pytest.mark.slow
def test_a_second_clean_build_is_byte_identical(site_dir, tmp_path):
    env = {**os.environ, "MFL_CACHE": "off", "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = Path(sys.executable).parent / "mkdocs"
    subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    first, second = _files(site_dir), _files(tmp_path / "site")
    assert sorted(first) == sorted(second)
    differ = sorted(name for name in first if first[name] != second[name])
    assert not differ, f"files that differ between two builds: {differ[:20]}"
