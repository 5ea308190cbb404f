"""Citations and the References page, from references.bib, with pybtex.

**Citations.** A page cites by key, ``[@vaswani2017attention]``, or several
at once, ``[@a; @b]``. Each mark becomes a Markdown footnote reference
(``[^vaswani2017attention]``) and the page's footnote definitions are
appended to its Markdown, one per work in the order first cited, the entry
formatted by pybtex's ``plain`` style with its Markdown backend; the
``footnotes`` extension numbers them and renders the list at the page's foot.
An unknown key, or text beside a key inside the brackets (``[see @a, p. 3]``),
is a warning that names the key and the page, so ``--strict`` fails on it;
an unknown key stays on the page as written. Only ``.md`` pages are read:
a theory notebook's cells (where ``[Q@K]`` is Python) are rendered by
mkdocs-jupyter from the notebook itself.

This replaces the mkdocs-bibtex plugin (4.4.0, no longer maintained; issue
#53) and gives the same pages: the same syntax (any ``[...]`` on one line
with an ``@key`` in it is read as a citation), the same footnote text and
the same Markdown, including the line the plugin appended to every page.
It runs before the other hooks' ``on_page_markdown``, where the plugin ran,
so the figure code that hooks/figures.py inserts is never read for citations.

**The References page.** The whole of references.bib, in place of the
``<!-- full-bibliography -->`` marker: each entry under its author-year
label ("Vaswani et al. 2017", ``citation_labels``; the page notebooks cite
with the same labels), sorted by label and anchored as ``#ref-<key>``.

It also separates adjacent citation marks: ``[@a; @b]`` becomes two footnote
references side by side, which read as one number ("12"); a superscript
comma goes between them.

Formatting an entry with pybtex takes about 10 ms. The formatted text
depends only on ``references.bib``, the entry's key, this file and the
packages' versions, so each entry and the full list are kept between builds
in ``buildcache.memo("bibliography")``.
"""

from __future__ import annotations

import codecs
import functools
import logging
import re
from pathlib import Path

import buildcache
from mkdocs.plugins import event_priority
from pybtex.backends.markdown import Backend
from pybtex.database import BibliographyData, parse_file
from pybtex.style.formatting.plain import Style

log = logging.getLogger("mkdocs.hooks.bibliography")

MARKER = "<!-- full-bibliography -->"
ADJACENT_CITATIONS = re.compile(
    r'(<sup id="fnref[^"]*"><a class="footnote-ref"[^>]*>[^<]*</a></sup>)(?=<sup id="fnref)'
)
BIB = Path(__file__).resolve().parent.parent / "references.bib"

# A citation mark: square brackets on one line holding, in one of their
# ";"-separated parts, an "@" followed by a key (what mkdocs-bibtex read). A
# part that opens with an e-mail address is not a citation.
BRACKETS = re.compile(r"\[(.*?)\]")
PART = re.compile(r"(?:(?P<prefix>[^@;]*?)\s*)?@(?P<key>[\w:-]+)(?:,\s*(?P<suffix>[^;]+))?")
EMAIL = re.compile(r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}")

_BIB_DIGEST = ""
_DATA: BibliographyData | None = None


def citation_labels(bib: Path = BIB, data: BibliographyData | None = None) -> dict[str, str]:
    """``key -> "Vaswani et al. 2017"`` for every entry of ``references.bib`` (or of
    ``data``, the file already parsed)."""
    import latexcodec  # noqa: F401  (registers the "ulatex" codec the labels decode with)

    def plain(name: str) -> str:
        return codecs.decode(name, "ulatex").replace("{", "").replace("}", "")

    labels = {}
    for key, entry in (data or parse_file(str(bib))).entries.items():
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


@functools.cache
def _formatter() -> tuple[Style, Backend]:
    """pybtex's ``plain`` style and Markdown backend, made once: making a style
    looks up its plugins among every installed package's entry points (60 ms,
    which a clean build paid for each of some 160 footnotes)."""
    return Style(), Backend()


def entry_text(data: BibliographyData, key: str) -> str:
    """One entry in pybtex's ``plain`` style, as Markdown."""
    style, backend = _formatter()
    return style.format_entry("", data.entries[key]).text.render(backend)


def render_bibliography(path: Path = BIB, data: BibliographyData | None = None, text=None) -> str:
    """Every entry, by its author-year label (pages link to ``#ref-<key>``): of
    ``references.bib``, or of ``data``, the file already parsed; ``text(key)`` formats
    an entry (``entry_text`` by default)."""
    data = data or parse_file(str(path))
    text = text or (lambda key: entry_text(data, key))
    entries = {key: text(key) for key in data.entries}
    labels = citation_labels(data=data)
    return "\n".join(
        f'- <a id="ref-{key}"></a>**{labels[key]}**. {entries[key]}'
        for key in sorted(entries, key=lambda k: (labels[k].lower(), k))
    )


def footnote_text(data: BibliographyData, key: str, text: str | None = None) -> str:
    """One entry as its footnote reads: pybtex's ``plain`` style on one line (``text``,
    the entry already formatted by ``entry_text``, if given)."""
    text = (text or entry_text(data, key)).replace("\n", " ")
    # the Markdown backend's escapes that read badly in a footnote
    return text.replace("\\(", "(").replace("\\)", ")").replace("\\.", ".")


def cite(markdown: str, where: str, data: BibliographyData, text=None) -> str:
    """``markdown`` with its citation marks as footnotes and their definitions appended.

    ``where`` names the page in warnings; ``text(key)`` formats an entry
    (``footnote_text`` by default).
    """
    text = text or (lambda key: footnote_text(data, key))
    cited: dict[str, None] = {}  # known keys, in the order first cited

    def footnotes(match: re.Match) -> str:
        parts = [p for p in match[1].split(";") if not EMAIL.match(p)]
        found = [(p, PART.match(p)) for p in parts]
        if not any(m for _, m in found):
            return match[0]
        if any(not m or m["prefix"] or m["suffix"] or p[m.end() :].strip() for p, m in found):
            log.warning(
                "%s: %s: write a citation as [@key] or [@a; @b], with no other text "
                "inside the brackets",
                where,
                match[0],
            )
        marks = []
        for m in (m for _, m in found if m):
            key = m["key"]
            if key not in data.entries:
                log.warning("%s: cites @%s, which %s does not hold", where, key, BIB.name)
                marks.append(f"[@{key}]")
                continue
            cited.setdefault(key)
            marks.append(f"[^{key}]")
        return "".join(marks)

    markdown = BRACKETS.sub(footnotes, markdown)
    return markdown + "\n" + "\n".join(f"[^{key}]: {text(key)}" for key in cited)


# This build's formatted entries: a source cited on many pages is formatted
# once, also when the memo is off (a clean build), and the References page
# lists the entries the footnotes formatted (``_TEXT``).
_FORMATTED: dict[str, str] = {}
_TEXT: dict[str, str] = {}


def _entry_text(key: str) -> str:
    if key not in _TEXT:
        _TEXT[key] = entry_text(_DATA, key)
    return _TEXT[key]


def _cached(what: str, produce) -> str:
    if what not in _FORMATTED:
        key = buildcache.digest([_BIB_DIGEST, what])
        _FORMATTED[what] = buildcache.memo("bibliography").get(key, produce)
    return _FORMATTED[what]


def on_config(config):
    global _BIB_DIGEST, _DATA
    _FORMATTED.clear()
    _TEXT.clear()
    # Package versions (pybtex, latexcodec) are covered by the memo.
    bib_digest = buildcache.digest([BIB.read_bytes(), Path(__file__).read_bytes()])
    # Parsed again when the file changed (`properdocs serve` watches it, and
    # keeps this module between its builds).
    if _DATA is None or bib_digest != _BIB_DIGEST:
        _DATA = parse_file(str(BIB))
    _BIB_DIGEST = bib_digest
    return config


@event_priority(1)  # before the other hooks, as mkdocs-bibtex (a plugin) ran
def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri.endswith(".md"):
        markdown = cite(
            markdown,
            f"{Path(config['docs_dir']).name}/{page.file.src_uri}",
            _DATA,
            lambda key: _cached(
                f"entry {key}", lambda: footnote_text(_DATA, key, _entry_text(key))
            ),
        )
    if MARKER in markdown:
        full = _cached("full list", lambda: render_bibliography(data=_DATA, text=_entry_text))
        markdown = markdown.replace(MARKER, full)
    return markdown


def separate_citations(html: str) -> str:
    """Put a superscript comma between footnote references that touch."""
    return ADJACENT_CITATIONS.sub(r'\1<sup class="mfl-cite-sep">,</sup>', html)


def on_page_content(html: str, page, config, files) -> str:
    return separate_citations(html)
