"""Render the whole of references.bib on the References page.

mkdocs-bibtex cites per page as footnotes; its full-bibliography command emits
footnote definitions that nothing references, which strict anchor validation
rejects. This hook renders the list itself with the same pybtex style
(``plain``, Markdown backend), each entry under its author-year label
("Vaswani et al. 2017", ``citation_labels``; the page notebooks cite with the
same labels), sorted by label and anchored as ``#ref-<key>``, in place of the
``<!-- full-bibliography -->`` marker.

It also separates adjacent citation marks: ``[@a; @b]`` becomes two footnote
references side by side, which read as one number ("12"); a superscript
comma goes between them.

Formatting an entry with pybtex takes about 10 ms, and mkdocs-bibtex formats
one for every citation on every page, with no cache (about a second of each
build). The formatted text depends only on ``references.bib``, the entry's
key and the packages' versions, so both that formatting and the full list
are kept between builds in ``buildcache.memo("bibliography")``.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

import buildcache
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs_bibtex.registry import SimpleRegistry
from pybtex.backends.markdown import Backend
from pybtex.database import parse_file
from pybtex.style.formatting.plain import Style

MARKER = "<!-- full-bibliography -->"
ADJACENT_CITATIONS = re.compile(
    r'(<sup id="fnref[^"]*"><a class="footnote-ref"[^>]*>[^<]*</a></sup>)(?=<sup id="fnref)'
)
BIB = Path(__file__).resolve().parent.parent / "references.bib"

_BIB_DIGEST = ""


def citation_labels(bib: Path = BIB) -> dict[str, str]:
    """``key -> "Vaswani et al. 2017"`` for every entry of ``references.bib``."""
    import latexcodec  # noqa: F401  (registers the "ulatex" codec the labels decode with)

    def plain(name: str) -> str:
        return codecs.decode(name, "ulatex").replace("{", "").replace("}", "")

    labels = {}
    for key, entry in parse_file(str(bib)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [plain(" ".join(p.last_names)) for p in people]
        more = names[-1:] == ["others"]  # BibTeX's "and others"
        names = names[:-1] if more else names
        if not names:
            who = plain(entry.fields.get("organization", key))
        elif len(names) > 2 or more:
            who = f"{names[0]} et al."
        else:
            who = " and ".join(names)
        labels[key] = f"{who} {entry.fields.get('year', '')}".strip()
    return labels


def render_bibliography(path: Path = BIB) -> str:
    """Every entry, by its author-year label (pages link to ``#ref-<key>``)."""
    data = parse_file(str(path))
    style, backend = Style(), Backend()
    entries = {e.key: e.text.render(backend) for e in style.format_entries(data.entries.values())}
    labels = citation_labels(path)
    return "\n".join(
        f'- <a id="ref-{key}"></a>**{labels[key]}**. {entries[key]}'
        for key in sorted(entries, key=lambda k: (labels[k].lower(), k))
    )


# This build's formatted entries: a source cited on many pages is formatted
# once, also when the memo is off (a clean build).
_FORMATTED: dict[str, str] = {}


def _cached(what: str, produce) -> str:
    if what not in _FORMATTED:
        key = buildcache.digest([_BIB_DIGEST, what])
        _FORMATTED[what] = buildcache.memo("bibliography").get(key, produce)
    return _FORMATTED[what]


@event_priority(-10)  # after mkdocs-bibtex's on_config has made its registry
def on_config(config):
    global _BIB_DIGEST
    _FORMATTED.clear()
    plugin = config.plugins["bibtex"]
    configured = Path(config.config_file_path).parent / (plugin.config.bib_file or "")
    if not configured.is_file() or not configured.samefile(BIB):
        # The full list and the cache keys below read BIB; the citations must too.
        raise PluginError(f"mkdocs.yml: bibtex's bib_file must be {BIB.name}")
    # Package versions (pybtex, latexcodec, mkdocs-bibtex) are covered by the memo.
    _BIB_DIGEST = buildcache.digest([BIB.read_bytes(), Path(__file__).read_bytes()])
    registry = plugin.registry
    if isinstance(registry, SimpleRegistry):
        # The plugin keeps its registry across `mkdocs serve` rebuilds: wrap
        # the original method, never a previous build's wrapper.
        format_entry = getattr(registry.reference_text, "__wrapped__", registry.reference_text)

        def reference_text(citation):
            return _cached(f"entry {citation.key}", lambda: format_entry(citation))

        reference_text.__wrapped__ = format_entry
        registry.reference_text = reference_text
    return config


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, _cached("full list", render_bibliography))
    return markdown


def separate_citations(html: str) -> str:
    """Put a superscript comma between footnote references that touch."""
    return ADJACENT_CITATIONS.sub(r'\1<sup class="mfl-cite-sep">,</sup>', html)


def on_page_content(html: str, page, config, files) -> str:
    return separate_citations(html)
