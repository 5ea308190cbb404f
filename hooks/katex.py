"""Serve KaTeX from the site itself, taken from the npm package at build time.

The files come from ``node_modules/katex/dist`` (installed from the lock file by
``make install``); they are added to the build as generated files so that no
copy of a third-party library is committed and no page asks a CDN for them.
Only the woff2 fonts are shipped: every browser that runs KaTeX reads woff2,
and the css lists it first, so the older formats are never requested.

It also keeps inline math together with the punctuation that touches it: a
typeset formula is an atomic box, so a browser would otherwise break a line
between $x$ and the comma after it, or between an opening bracket and $x$.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
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


# Inline math as arithmatex leaves it (plain TeX inside; KaTeX runs in the
# browser), with the punctuation that touches it after.
MATH = re.compile(r'<span class="arithmatex">[^<]*</span>(?P<after>[,.;:!?)\]]*)')


def keep_punctuation_with_math(html: str) -> str:
    """Wrap inline math with a touching opening bracket before or punctuation after."""
    # The regex starts at the literal tag, so the scan is fast; an optional
    # bracket in front of it would make it try every position (ten times slower).
    out, last = [], 0
    for m in MATH.finditer(html):
        start = m.start()
        before = start > last and html[start - 1] in "(["
        if not (before or m["after"]):
            continue
        start -= before
        out += (html[last:start], '<span class="mfl-nobr">', html[start : m.end()], "</span>")
        last = m.end()
    out.append(html[last:])
    return "".join(out)


@event_priority(-50)  # after hooks/notebook.py has marked up the notebook's math
def on_page_content(html: str, page, config, files) -> str:
    return keep_punctuation_with_math(html)
