"""Serve KaTeX from the site itself, taken from the npm package at build time.

The files come from ``node_modules/katex/dist`` (installed from the lock file by
``make install``); they are added to the build as generated files so that no
copy of a third-party library is committed and no page asks a CDN for them.
Only the woff2 fonts are shipped: every browser that runs KaTeX reads woff2,
and the css lists it first, so the older formats are never requested.
"""

from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

log = logging.getLogger("mkdocs.hooks.katex")

DIST = Path(__file__).resolve().parent.parent / "node_modules" / "katex" / "dist"
SHIPPED = ["katex.min.js", "katex.min.css", "contrib/auto-render.min.js"]


def on_files(files: Files, config) -> Files:
    if not DIST.is_dir():
        raise PluginError(f"KaTeX not found at {DIST}; run `make install` (it runs `npm ci`).")
    wanted = [DIST / name for name in SHIPPED] + sorted((DIST / "fonts").glob("*.woff2"))
    for path in wanted:
        uri = "assets/katex/" + path.relative_to(DIST).as_posix()
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files
