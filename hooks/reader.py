"""Reading aids and the private-notes panel on every lesson page.

A *lesson page* is any page in a top-level folder of ``docs/`` other than
``reference/`` (``tokenization-math/``, ``embedding-space-math/``,
``attention-mechanism-math/``, ``positional-encodings/``,
``language-model-probability/``; a new lesson folder gets
everything below without any work from its author). Home, References and
Practice sit at the top level and are not lessons.

Right under a lesson page's title this hook inserts, at build time:

* the estimated reading time and the number of headings, e.g.
  ``≈ 14 min read · 23 headings · 5 skill-check questions · theory notebook``
  (the last a link to the lesson's ``theory.ipynb``, on every other page of the lesson;
  on a numbered section page it opens the notebook at that section, the
  notebook's heading that starts with the same number, e.g.
  ``theory/#7-rotary-position-embeddings``);
* on the theory notebook's own page, a button that downloads the ``.ipynb``
  file: the copy that mkdocs-jupyter's ``include_source`` puts next to the
  page, linked relatively, so it works on any host and offline;
* a collapsed "Your notes" panel (``<details>``) whose textarea is wired up by
  ``docs/javascripts/reader.js`` (autosave to localStorage, counter, export,
  import). It carries ``hidden`` until the script runs, so a reader without
  JavaScript sees no dead controls.

The block carries ``data-search-exclude``: interface text is no search result
(``hooks/search.py``).

Reading time is estimated from the rendered HTML, so Markdown pages and
notebooks are measured alike:

* prose at 200 words per minute (an inline formula counts as 2 words);
* code at 15 lines per minute (every non-blank line of a ``<pre>``, doctest
  output included; a notebook's output cells are not counted, but their
  figures are);
* a display formula at 15 seconds, a figure at 10 seconds;
* text inside a collapsed ``<details>`` (figure source, optional asides) is
  not counted, since the reader need not open it; an exercise's worked
  solution (``??? success "Solution"``, class ``success``) is, since working
  through it is the point of the exercises page.

The result is rounded up to whole minutes (at least 1). Headings are the
``<h1>``–``<h6>`` elements of the page content, the title included.

Any page may also show another page's estimate with a comment such as
``<!-- reading-time: intuition.md -->`` (path relative to the page, as for a
link); it becomes ``≈ 9 min``. The lesson overview's section map uses this. A
folder (``<!-- reading-time: positional-encodings/ -->``) gives the sum over the
Markdown pages of that lesson (the theory notebook not included); the home page
uses this. An unknown path, or a folder with no page, fails the build.
"""

from __future__ import annotations

import html
import json
import math
import os
import posixpath
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import buildcache
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File
from mkdocs.utils import get_relative_url
from search import VOID, plain_code  # hooks/search.py (MkDocs runs hooks with hooks/ on sys.path)

WORDS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 15
SECONDS_PER_DISPLAY_FORMULA = 15
SECONDS_PER_FIGURE = 10
INLINE_FORMULA_WORDS = 2
NOT_LESSONS = {"reference", "includes"}  # the API pages; snippets (excluded from the build)
NOTE_LIMIT = 8000
H1_END = re.compile(r"</h1>")
MARKER = re.compile(r"<!--\s*reading-time:\s*(?P<path>[^\s>]+)\s*-->")
WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")


def is_lesson(page) -> bool:
    parts = page.file.src_uri.split("/")
    return len(parts) > 1 and parts[0] not in NOT_LESSONS


SOLUTION = "success"  # the admonition type of a worked solution


class _Measure(HTMLParser):
    """Counts prose words, code lines, formulas, figures and headings in HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[
            tuple[str, str]
        ] = []  # (tag, role): role in {"", pre, imath, dmath, skip, closed, output}
        self.words = self.code_lines = self.display = self.figures = self.headings = 0
        self.inline = 0
        self._code: list[str] = []

    def _role(self) -> str:
        for _, role in reversed(self.stack):
            if role:
                return role
        return ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self._role() != "closed":
            self.headings += 1
        if tag == "img" and self._role() not in ("closed", "skip"):
            self.figures += 1
        if tag in VOID:
            return
        role = ""
        if tag in ("script", "style", "svg", "button", "textarea", "noscript"):
            role = "skip"
        elif tag == "details" and "open" not in a and SOLUTION not in classes:
            role = "closed"
        elif "jp-OutputArea" in classes:  # a notebook's outputs: glanced at, not read
            role = "output"
        elif "clipboard-copy-txt" in classes:  # mkdocs-jupyter's hidden copy of a cell
            role = "skip"
        elif tag == "pre":
            role = "pre"
            self._code = []
        elif "arithmatex" in classes:
            role = "dmath" if tag == "div" else "imath"
        elif tag == "a" and "headerlink" in classes:
            role = "skip"
        self.stack.append((tag, role))

    def handle_endtag(self, tag):
        if not any(t == tag for t, _ in self.stack):
            return
        while self.stack:  # close implicitly-closed elements too, innermost first
            closed, role = self.stack.pop()
            outer = self._role()
            if outer not in ("closed", "skip", "pre", "output"):
                if role == "pre":
                    self.code_lines += sum(
                        1 for line in "".join(self._code).splitlines() if line.strip()
                    )
                elif role == "dmath":
                    self.display += 1
                elif role == "imath":
                    self.inline += 1
            if closed == tag:
                return

    def handle_data(self, data):
        role = self._role()
        if role == "pre":
            self._code.append(data)
        elif role == "":
            self.words += len(WORD.findall(data))


def measure(html_text: str) -> dict[str, int]:
    """Reading statistics of a page's HTML content (see the module docstring)."""
    m = _Measure()
    # Code blocks as plain text first: the highlighter's token spans are most
    # of a page's tags, and the parser only needs the lines they hold.
    m.feed(plain_code(html_text))
    m.close()
    words = m.words + INLINE_FORMULA_WORDS * m.inline
    seconds = (
        60 * words / WORDS_PER_MINUTE
        + 60 * m.code_lines / CODE_LINES_PER_MINUTE
        + SECONDS_PER_DISPLAY_FORMULA * m.display
        + SECONDS_PER_FIGURE * m.figures
    )
    return {
        "minutes": max(1, math.ceil(seconds / 60)),
        "words": words,
        "code_lines": m.code_lines,
        "display_formulas": m.display,
        "figures": m.figures,
        "headings": m.headings,
    }


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass(frozen=True)
class Notebook:
    """Where a lesson page finds its lesson's theory notebook."""

    page: str | None  # relative URL of the notebook page; None on that page itself
    file: str  # relative URL of the .ipynb file (copied by mkdocs-jupyter's include_source)
    name: str  # file name offered by the download, e.g. embedding-space-math-theory.ipynb
    size: int  # bytes
    uri: str = ""  # a page notebook's src_uri: its size is read again in on_post_page


SECTION_NUMBER = re.compile(r"^\s*(\d+)\.\s")
NOTEBOOK_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def notebook_anchor(title: str | None, notebook_path: str) -> str:
    """``#7-rotary-position-embeddings``: the notebook heading of the section that
    ``title`` ("7. Rotary Position Embeddings") numbers, or "" if there is none.

    The id is the one the notebook page gives that heading (Markdown's toc slug).
    """
    number = SECTION_NUMBER.match(title or "")
    if not number:
        return ""
    from markdown.extensions.toc import slugify

    cells = json.loads(Path(notebook_path).read_text(encoding="utf-8")).get("cells", [])
    for cell in cells:
        if cell.get("cell_type") != "markdown":
            continue
        source = "".join(cell.get("source", []))
        for heading in NOTEBOOK_HEADING.finditer(source):
            if re.match(rf"{number[1]}\.\s", heading[1]):
                return "#" + slugify(heading[1], "-")
    return ""


def notebook_link(page, files) -> Notebook | None:
    """The lesson's theory notebook, as seen from ``page`` (None if the lesson has none)."""
    if files is None:
        return None
    lesson = page.file.src_uri.split("/")[0]
    notebook = files.get_file_from_path(f"{lesson}/theory.ipynb")
    if notebook is None:
        return None
    source = posixpath.basename(notebook.src_uri)
    copy = posixpath.join(posixpath.dirname(notebook.dest_uri), source)
    on_it = notebook.src_uri == page.file.src_uri
    return Notebook(
        page=None
        if on_it
        else get_relative_url(notebook.url, page.url)
        + notebook_anchor(page.title, notebook.abs_src_path),
        file=get_relative_url(copy, page.url),
        name=f"{lesson}-{source}",
        size=Path(notebook.abs_src_path).stat().st_size,
    )


def page_notebook(page, files) -> Notebook | None:
    """The page's own notebook, written by hooks/page_notebooks.py (None if it has none)."""
    if files is None or not page.file.src_uri.endswith(".md"):
        return None
    uri = page.file.src_uri.removesuffix(".md") + ".ipynb"
    notebook = files.get_file_from_path(uri)
    if notebook is None:
        return None
    _NOTEBOOK_FILES[uri] = notebook
    return Notebook(
        page=None,
        file=get_relative_url(notebook.url, page.url),
        # every lesson has an exercises page: the lesson in the name keeps downloads apart
        name=uri.replace("/", "-"),
        size=len(notebook.content_bytes),
        uri=uri,
    )


def _download(notebook: Notebook, text: str, cls: str = "") -> str:
    attrs = f' class="{cls}"' if cls else ""
    return (
        f'<a{attrs} href="{html.escape(notebook.file, quote=True)}" '
        f'download="{html.escape(notebook.name, quote=True)}" type="application/x-ipynb+json">{text}</a>'
    )


def reader_block(
    page,
    stats: dict[str, int],
    questions: int,
    notebook: Notebook | None = None,
    own_notebook: Notebook | None = None,
) -> str:
    title = html.escape(page.title or "", quote=True)
    url = html.escape(page.url, quote=True)
    items = [
        f'<span class="mfl-meta-time">≈ {stats["minutes"]} min read</span>',
        f'<span class="mfl-meta-headings">{_plural(stats["headings"], "heading")}</span>',
    ]
    if questions:
        items.append(
            f'<span class="mfl-meta-quiz"><a href="#skill-check">{_plural(questions, "skill-check question")}</a></span>'
        )
    download = ""
    if notebook and notebook.page is not None:
        items.append(
            f'<span class="mfl-meta-notebook"><a href="{html.escape(notebook.page, quote=True)}">'
            "theory notebook</a></span>"
        )
    elif notebook:  # the notebook page itself
        kb = max(1, round(notebook.size / 1024))
        download = (
            '<p class="mfl-notebook-download">'
            + _download(notebook, f"Download this notebook (.ipynb, {kb} KB)", "md-button")
            # the download is the source notebook, without outputs (issue #54)
            + ' <span class="mfl-notebook-note">It holds the code without its outputs: '
            "run it (its first cell installs the kernel) to draw the figures shown here.</span>"
            + "</p>"
        )
    if own_notebook:
        # The size is filled in when the page is written (on_post_page):
        # hooks/page_notebooks.py embeds the figures after the pages render.
        kb = (
            f"<!-- notebook-kb: {own_notebook.uri} -->"
            if own_notebook.uri
            else max(1, round(own_notebook.size / 1024))
        )
        download += (
            '<p class="mfl-download">'
            + _download(own_notebook, "Download as notebook")
            + f" (.ipynb, {kb} KB, for Jupyter or Colab; its first cell installs the kernel)</p>"
        )
    detail = (
        f"{_plural(stats['words'], 'word')} of prose, {_plural(stats['code_lines'], 'line')} of code, "
        f"{_plural(stats['display_formulas'], 'display formula')}, {_plural(stats['figures'], 'figure')}"
    )
    return (
        f'<div class="mfl-reader" data-page="{url}" data-title="{title}" data-search-exclude>'
        f'<p class="mfl-meta" title="{detail}">{" · ".join(items)}</p>'
        f"{download}"
        '<details class="mfl-notes note" hidden>'
        "<summary>Your notes on this page</summary>"
        '<div class="mfl-notes-body">'
        '<label class="mfl-notes-label" for="mfl-note-text">Private notes, saved as you type and kept only in '
        "this browser (plain text; Markdown is fine)</label>"
        f'<textarea id="mfl-note-text" class="mfl-notes-text" maxlength="{NOTE_LIMIT}" rows="8" spellcheck="true" '
        'aria-describedby="mfl-note-count mfl-note-status"></textarea>'
        '<div class="mfl-notes-bar">'
        f'<span id="mfl-note-count" class="mfl-notes-count">0 / {NOTE_LIMIT:,} characters</span>'
        '<span id="mfl-note-status" class="mfl-notes-status" role="status"></span>'
        '<span class="mfl-notes-actions">'
        '<button type="button" class="md-button mfl-notes-export">Export all notes</button>'
        '<button type="button" class="md-button mfl-notes-import">Import notes…</button>'
        '<button type="button" class="md-button mfl-notes-delete">Delete this note</button>'
        '<button type="button" class="md-button mfl-notes-undo" hidden>Undo delete</button>'
        '<input type="file" class="mfl-notes-file" accept=".md,.markdown,.txt,text/markdown,text/plain" hidden>'
        "</span></div></div></details></div>"
    )


# src_uri -> page content, and -> measure() of it once a lesson page or a
# reading-time marker needs it. Measuring is lazy because parsing the large
# pages nobody asks about (API reference, notebook) was a fifth of the build.
_CONTENT: dict[str, str] = {}
_STATS: dict[str, dict[str, int]] = {}
_NOTEBOOK_FILES: dict = {}  # page notebook src_uri -> its File (size read in on_post_page)
NOTEBOOK_KB = re.compile(r"<!-- notebook-kb: (?P<uri>[^\s>]+) -->")


# Between builds, measure() results are kept by the hash of the page and of
# the code that measures it (this hook and search.py's plain_code).
_CODE = [Path(__file__).read_bytes(), (Path(__file__).parent / "search.py").read_bytes()]


def stats_for(src_uri: str) -> dict[str, int]:
    if src_uri not in _STATS:
        content = _CONTENT[src_uri]
        key = buildcache.digest([*_CODE, content])
        measured = buildcache.memo("reading-time").get(key, lambda: json.dumps(measure(content)))
        _STATS[src_uri] = json.loads(measured)
    return _STATS[src_uri]


# A browser asks for /favicon.ico wherever a page names no icon: a figure opened
# full size (the raw SVG, hooks/reader.py's linked figures) asked for it and got
# a 404 in the console. The theme's own icon (a PNG) is served there too, in an
# ICO file, which may hold a PNG as it is (issue #54).
def favicon_ico(png: bytes) -> bytes:
    """An ICO file holding the one PNG image ``png``."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise PluginError("the theme's favicon is not a PNG")
    width, height = (int.from_bytes(png[at : at + 4], "big") for at in (16, 20))
    header = (0).to_bytes(2, "little") + (1).to_bytes(2, "little") + (1).to_bytes(2, "little")
    entry = (
        bytes([width % 256, height % 256, 0, 0])
        + (1).to_bytes(2, "little")
        + (32).to_bytes(2, "little")
        + len(png).to_bytes(4, "little")
        + (6 + 16).to_bytes(4, "little")
    )
    return header + entry + png


def on_files(files, config):
    if files.get_file_from_path("favicon.ico") is not None:
        return files
    icon = config.theme.get("favicon") or "assets/images/favicon.png"
    for folder in config.theme.dirs:
        if (Path(folder) / icon).is_file() and icon.endswith(".png"):
            data = favicon_ico((Path(folder) / icon).read_bytes())
            files.append(File.generated(config, "favicon.ico", content=data))
            break
    return files


def on_pre_build(config) -> None:
    _CONTENT.clear()
    _STATS.clear()
    _NOTEBOOK_FILES.clear()


def on_env(env, config, files):
    # A dirty rebuild does not read the pages it skips (hooks/caches.py): their
    # content is what this hook kept of them in an earlier build.
    kept = buildcache.session("reader")
    for uri in buildcache.RESTORED:
        _CONTENT[uri] = kept[uri]
    return env


# Short inline code such as `(T, d_model)` reads as one token; a line break at
# its space splits a shape in two. Longer spans may still wrap (narrow screens).
SHORT_INLINE_CODE = re.compile(r"<code>(?=[^<]{1,30}</code>)")


def keep_short_code_whole(html_text: str) -> str:
    return SHORT_INLINE_CODE.sub('<code class="mfl-nowrap">', html_text)


# The lesson overviews offer the lesson as a PDF ({ .mfl-pdf-link }). The PDFs
# are printed from the built site afterwards (tools/pdf.py, into site/pdf/), so
# the build is told whether this copy will carry them: MFL_PUBLISH_PDFS=1 (the
# deploy workflow and `make pdf` set it). Without it (a local build, the
# offline copy) the paragraph is kept but hidden, and no script asks the server
# for a file that is not there (a HEAD probe logged a 404 console error on
# every overview, issue #54). The link is made relative either way: it names
# this copy's own pdf/ folder, never the public site.
PDF_PARAGRAPH = re.compile(r'<p class="mfl-pdf-link"(?P<rest>[^>]*)>(?P<body>.*?)</p>', re.S)
HREF = re.compile(r'href="(?P<url>[^"]+\.pdf)"')
PUBLISH_PDFS = "MFL_PUBLISH_PDFS"


def pdfs_published(config) -> bool:
    """Whether this build's copy of the site will carry the lesson PDFs."""
    plugins = getattr(config, "plugins", None) or {}
    offline = "offline" in plugins or "material/offline" in plugins  # never in that copy
    return os.environ.get(PUBLISH_PDFS) == "1" and not offline


def local_pdf_links(html_text: str, page, site_url: str, published: bool = False) -> str:
    """Each ``.mfl-pdf-link`` paragraph's absolute PDF link made relative, and the
    paragraph hidden unless the PDFs are ``published`` with this copy."""
    site_url = (site_url or "").rstrip("/") + "/"

    def relative(m: re.Match) -> str:
        url = html.unescape(m["url"])
        if site_url != "/" and url.startswith(site_url):
            url = get_relative_url(url[len(site_url) :], page.url)
        return f'href="{html.escape(url, quote=True)}"'

    def paragraph(m: re.Match) -> str:
        body = HREF.sub(relative, m["body"])
        hidden = "" if published else " hidden"
        return f'<p class="mfl-pdf-link"{hidden} data-mfl-pdf{m["rest"]}>{body}</p>'

    return PDF_PARAGRAPH.sub(paragraph, html_text)


# Figures open full size on a tap or click: each lesson figure (an SVG from
# figures/) is wrapped in a link to its own file. On a phone a figure is
# squeezed to the column (about 358 px), and its labels with it; the browser's
# own image view then zooms. A link needs no plugin and no script (the
# mkdocs-glightbox plugin would be one more dependency and one more script on
# every page); it works offline too.
FIGURE_IMG = re.compile(
    r'<p>\s*(<img\b[^>]*\bsrc="(?P<src>[^"]*figures/[\w-]+\.svg)"[^>]*>)\s*</p>'
)


def linked_figures(html_text: str) -> str:
    def link(m: re.Match) -> str:
        return (
            f'<p class="mfl-figure"><a class="mfl-figure-open" href="{m["src"]}" '
            f'title="Open the figure full size">{m[1]}</a></p>'
        )

    return FIGURE_IMG.sub(link, html_text)


# Tables of three or more columns become cards on a phone (reader.css), as the
# overview's section map does: each cell shows its column's header as a label
# (data-label). The section map, lesson list and progress tables have their own.
TABLE = re.compile(r"<table>(?P<body>.*?)</table>", re.S)
TH = re.compile(r"<th\b[^>]*>(?P<text>.*?)</th>", re.S)
OWN_LAYOUT = re.compile(r'class="(?:mfl-section-map|mfl-lessons|mfl-progress)\b')


def _in_own_layout(html_text: str, at: int) -> bool:
    """Whether the table at ``at`` sits in a block with its own phone layout."""
    window = html_text[max(0, at - 600) : at]
    found = list(OWN_LAYOUT.finditer(window))
    return bool(found) and "</div>" not in window[found[-1].end() :]


def card_tables(html_text: str) -> str:
    def table(m: re.Match) -> str:
        if _in_own_layout(html_text, m.start()):
            return m.group(0)
        head, _, body = m["body"].partition("</thead>")
        labels = [
            html.unescape(re.sub(r"<[^>]+>", "", t["text"])).strip() for t in TH.finditer(head)
        ]
        if len(labels) < 3 or not body:
            return m.group(0)
        rows = []
        for row in re.split(r"(?=<tr\b)", body):
            cells = iter(labels)
            rows.append(
                re.sub(
                    r"<td\b",
                    lambda _, cells=cells: (
                        f'<td data-label="{html.escape(next(cells, ""), quote=True)}"'
                    ),
                    row,
                )
            )
        return f"<table data-mfl-cards>{head}</thead>{''.join(rows)}</table>"

    return TABLE.sub(table, html_text)


def on_page_content(html_text: str, page, config, files) -> str:
    html_text = keep_short_code_whole(html_text)
    if "<table>" in html_text and not page.file.src_uri.startswith("reference/"):
        html_text = card_tables(html_text)
    if "figures/" in html_text:
        html_text = linked_figures(html_text)
    if "mfl-pdf-link" in html_text:
        html_text = local_pdf_links(html_text, page, config.get("site_url"), pdfs_published(config))
    _CONTENT[page.file.src_uri] = html_text
    if buildcache.DIRTY:
        buildcache.session("reader")[page.file.src_uri] = html_text
    if not is_lesson(page):
        return html_text
    stats = stats_for(page.file.src_uri)
    questions = html_text.count('class="mfl-quiz-q"')
    block = reader_block(
        page, stats, questions, notebook_link(page, files), page_notebook(page, files)
    )
    match = H1_END.search(html_text)
    if match:
        return html_text[: match.end()] + "\n" + block + html_text[match.end() :]
    return block + "\n" + html_text


def on_post_page(output: str, page, config) -> str:
    # Every page's content has been measured before any page is written.
    def minutes(m: re.Match) -> str:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), m["path"]))
        if m["path"].endswith("/"):
            pages = [
                uri for uri in _CONTENT if uri.startswith(target + "/") and uri.endswith(".md")
            ]
            if not pages:
                raise PluginError(f"{page.file.src_uri}: `{m.group(0)}` names no lesson folder")
            total = sum(stats_for(uri)["minutes"] for uri in pages)
            return f'<span class="mfl-reading-time">≈ {total} min</span>'
        if target not in _CONTENT:
            raise PluginError(f"{page.file.src_uri}: `{m.group(0)}` names no page ({target})")
        return f'<span class="mfl-reading-time">≈ {stats_for(target)["minutes"]} min</span>'

    def kilobytes(m: re.Match) -> str:
        return str(max(1, round(len(_NOTEBOOK_FILES[m["uri"]].content_bytes) / 1024)))

    if "notebook-kb" in output:
        output = NOTEBOOK_KB.sub(kilobytes, output)
    return MARKER.sub(minutes, output) if "reading-time" in output else output


# Our scripts and stylesheets are commented for contributors; a reader's first
# visit need not download the comments (about 6 KB gzipped on every page, a
# fiftieth of the page-weight budget). Written here rather than with a minifier
# plugin because only comments go: whole-line `//` comments in our scripts
# (none of them has a string or template literal spanning lines, which
# tests/test_reader.py checks) and `/* ... */` blocks in our stylesheets (no
# CSS string of ours contains one). Code and its layout are served as written.
JS_LINE_COMMENT = re.compile(r"(?m)^[ \t]*//.*\n")
CSS_COMMENT = re.compile(r"/\*.*?\*/[ \t]*\n?", re.S)


def strip_comments(text: str, suffix: str) -> str:
    """``text`` of a ``.js`` or ``.css`` file of ours without its comments."""
    return JS_LINE_COMMENT.sub("", text) if suffix == ".js" else CSS_COMMENT.sub("", text)


def on_post_build(config) -> None:
    site = Path(config["site_dir"])
    for folder, suffix in (("javascripts", ".js"), ("stylesheets", ".css")):
        for path in sorted((site / folder).glob(f"*{suffix}")):
            path.write_text(
                strip_comments(path.read_text(encoding="utf-8"), suffix), encoding="utf-8"
            )
