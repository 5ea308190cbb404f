"""Render the whole of references.bib on the References page.

mkdocs-bibtex cites per page as footnotes; its full-bibliography command emits
footnote definitions that nothing references, which strict anchor validation
rejects. This hook renders the list itself with the same pybtex style
(``plain``, Markdown backend), sorted by key and anchored as ``#ref-<key>``, in
place of the ``<!-- full-bibliography -->`` marker.

It also separates adjacent citation marks: ``[@a; @b]`` becomes two footnote
references side by side, which read as one number ("12"); a superscript
comma goes between them.
"""

from __future__ import annotations

import re
from pathlib import Path

from pybtex.backends.markdown import Backend
from pybtex.database import parse_file
from pybtex.style.formatting.plain import Style

MARKER = "<!-- full-bibliography -->"
ADJACENT_CITATIONS = re.compile(
    r'(<sup id="fnref[^"]*"><a class="footnote-ref"[^>]*>[^<]*</a></sup>)(?=<sup id="fnref)'
)
BIB = Path(__file__).resolve().parent.parent / "references.bib"


def render_bibliography(path: Path = BIB) -> str:
    data = parse_file(str(path))
    style, backend = Style(), Backend()
    entries = {e.key: e.text.render(backend) for e in style.format_entries(data.entries.values())}
    return "\n".join(
        f'- <a id="ref-{key}"></a>**{key}**: {entries[key]}' for key in sorted(entries)
    )


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, render_bibliography())
    return markdown


def separate_citations(html: str) -> str:
    """Put a superscript comma between footnote references that touch."""
    return ADJACENT_CITATIONS.sub(r'\1<sup class="mfl-cite-sep">,</sup>', html)


def on_page_content(html: str, page, config, files) -> str:
    return separate_citations(html)
