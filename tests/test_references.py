"""references.bib is complete, pages cite only what it holds, and every URL is well-formed.

No network is used: well-formed means parseable, http(s), with a dotted host and
no stray characters, which is what can be checked offline.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from pybtex.database import parse_file

ROOT = Path(__file__).resolve().parent.parent
BIB = parse_file(str(ROOT / "references.bib"))
PAGES = sorted((ROOT / "docs").rglob("*.md"))
CITE = re.compile(r"\[@([\w:-]+)|;\s*@([\w:-]+)")
URL = re.compile(r"https?://[^\s<>\"'`\])}]+")
VENUE_FIELDS = ("journal", "booktitle", "institution", "howpublished", "publisher", "eprint")


@pytest.mark.parametrize("key", sorted(BIB.entries))
def test_entry_is_complete(key):
    entry = BIB.entries[key]
    assert entry.persons.get("author"), f"{key}: no authors"
    for field in ("title", "year", "url"):
        assert entry.fields.get(field), f"{key}: no {field}"
    assert any(entry.fields.get(f) for f in VENUE_FIELDS), f"{key}: no venue or arXiv id"
    if "eprint" in entry.fields:
        assert re.fullmatch(r"\d{4}\.\d{4,5}", entry.fields["eprint"]), (
            f"{key}: eprint is not an arXiv id"
        )


def test_pages_cite_only_known_keys():
    cited = {
        (page.name, key)
        for page in PAGES
        for m in CITE.finditer(page.read_text(encoding="utf-8"))
        for key in m.groups()
        if key
    }
    unknown = sorted((page, key) for page, key in cited if key not in BIB.entries)
    assert not unknown, unknown


def _urls():
    for page in PAGES:
        for url in URL.findall(page.read_text(encoding="utf-8")):
            yield page.name, url
    for key, entry in BIB.entries.items():
        if "url" in entry.fields:
            yield key, entry.fields["url"]


def test_every_url_is_well_formed():
    bad = []
    for where, raw in _urls():
        url = raw.rstrip(".,;:")
        parsed = urlparse(url)
        host = parsed.hostname or ""
        if parsed.scheme not in ("http", "https") or "." not in host or " " in url:
            bad.append((where, raw))
        elif not re.fullmatch(r"[A-Za-z0-9.-]+", host):
            bad.append((where, raw))
    assert not bad, bad


def test_touching_citation_marks_get_a_comma(load):
    hook = load("hooks/bibliography.py")
    mark = '<sup id="fnref:{0}"><a class="footnote-ref" href="#fn:{0}">{1}</a></sup>'
    two = mark.format("a", 1) + mark.format("b", 2)
    assert hook.separate_citations(two) == (
        mark.format("a", 1) + '<sup class="mfl-cite-sep">,</sup>' + mark.format("b", 2)
    )
    apart = mark.format("a", 1) + " and " + mark.format("b", 2)
    assert hook.separate_citations(apart) == apart


def test_the_references_page_lists_works_by_author_and_year(load):
    hook = load("hooks/bibliography.py")
    listing = hook.render_bibliography()
    entries = listing.split("- <a id=")[1:]
    assert len(entries) == len(hook.citation_labels())
    assert '<a id="ref-vaswani2017attention"></a>**Vaswani et al. 2017**. ' in listing
    assert "**Abdin et al. 2024**" in listing  # "Marah Abdin and others"
    assert "**vaswani2017attention**" not in listing  # no BibTeX keys shown to readers
    shown = [entry.split("**")[1].lower() for entry in entries]
    assert shown == sorted(shown)  # alphabetical by label


def test_citations_become_footnotes_defined_at_the_foot_of_the_page(load):
    """What mkdocs-bibtex made of them, which hooks/bibliography.py replaced (issue #53):
    a footnote reference per key, and one definition per work, in the order first cited,
    on a line appended to the page (the plugin appended one to every page)."""
    hook = load("hooks/bibliography.py")
    page = "Attention [@vaswani2017attention]; both [@a2; @vaswani2017attention].\n"
    data = parse_file(str(ROOT / "references.bib"))
    data.entries["a2"] = data.entries["vaswani2017attention"]
    out = hook.cite(page, "docs/x.md", data, text=lambda key: f"<{key}>")
    assert out == (
        "Attention [^vaswani2017attention]; both [^a2][^vaswani2017attention].\n\n"
        "[^vaswani2017attention]: <vaswani2017attention>\n[^a2]: <a2>"
    )
    assert hook.cite("No citation, [a link](x), `q[@]`.\n", "docs/x.md", data) == (
        "No citation, [a link](x), `q[@]`.\n\n"
    )
    text = hook.footnote_text(BIB, "vaswani2017attention")
    assert text.startswith("Ashish Vaswani, ") and "Attention is all you need" in text
    assert "\n" not in text


def test_an_unknown_key_fails_the_strict_build_naming_the_key_and_the_page(tmp_path):
    """A one-page site with the hook alone, built as `make build` builds (--strict)."""
    docs = tmp_path / "docs"
    (docs / "lesson").mkdir(parents=True)
    (docs / "lesson" / "page.md").write_text(
        "# Page\n\nKnown [@vaswani2017attention], unknown [@nosuchwork2099].\n", encoding="utf-8"
    )
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\ntheme: {name: material}\nmarkdown_extensions: [footnotes]\n"
        f"hooks: [{ROOT / 'hooks' / 'bibliography.py'}]\n",
        encoding="utf-8",
    )
    properdocs = Path(sys.executable).parent / "properdocs"
    run = subprocess.run(
        [properdocs, "build", "--strict", "-f", "mkdocs.yml", "-d", "site"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "MFL_CACHE": "off"},
    )
    assert run.returncode != 0
    assert (
        "docs/lesson/page.md: cites @nosuchwork2099, which references.bib does not hold"
        in run.stderr
    )
    assert "vaswani2017attention" not in run.stderr  # the known key is not reported
