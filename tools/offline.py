"""Zip the offline copy of the site (``make offline``).

``python tools/offline.py SITE OUT`` writes the site built from
``mkdocs.offline.yml`` (``SITE``, normally ``site-offline/``) into the zip file
``OUT`` (normally ``dist/math-for-llms-offline.zip``), under one folder,
``math-for-llms-offline/``: unzipped anywhere, its ``index.html`` opens the
course from ``file://``. The site's ``404.html`` is left out: only a server
shows it, and its links are absolute paths on the live site.

The zip is deterministic: entries sorted by path, every timestamp 1980-01-01
(the earliest a zip can hold) and every file mode 0644, so the same site
gives the same bytes. ``tests/test_offline.py`` checks that, and opens the
unzipped copy in Chromium.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

FOLDER = "math-for-llms-offline"
EPOCH = (1980, 1, 1, 0, 0, 0)


def zip_site(site: Path, out: Path) -> Path:
    """Write every file under ``site`` into the zip ``out``; returns ``out``."""
    if not (site / "index.html").is_file():
        raise SystemExit(f"{site}/index.html not found: build it with mkdocs.offline.yml first")
    out.parent.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in site.rglob("*") if p.is_file() and p != site / "404.html")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for path in files:
            entry = zipfile.ZipInfo(f"{FOLDER}/{path.relative_to(site).as_posix()}", EPOCH)
            entry.external_attr = 0o100644 << 16  # a regular file, rw-r--r--
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, path.read_bytes())
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    print(zip_site(Path(argv[0]), Path(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
