"""Print the lessons of the built site to PDF with Debian's Chromium (`make pdf`).

Writes ``site/pdf/<lesson>.pdf`` for each lesson in ``mkdocs.yml``'s nav (its
overview page, sections, closing pages and theory notebook, in nav order) and
``site/pdf/math-for-llms.pdf`` for the whole course (the lessons, Notation and
References), so the deploy publishes them with the site::

    .venv/bin/python tools/pdf.py [--site site] [--out site/pdf]

``site/`` is served on 127.0.0.1 to the loopback-only Chromium of
``tools/screenshot.py``. Each lesson prints as one document, and so do the
pages after the lessons (Notation, References): its first page with the other
pages' articles appended, each from a new sheet, so fonts are embedded once a
document and links between its pages stay inside it. KaTeX typesets the math
first, figures stay vectors, and ``docs/stylesheets/print.css`` sets the
layout. A lesson's PDF is its print, with its links to the rest of the course
pointing at the published site; the course's PDF is the prints one after
another, those links jumping inside it again. Chromium prints each
document's footers (site, lesson, page number) on blank pages, and pypdf lays
them over the pages, adds a cover and a contents page, turns the headings into
bookmarks and trims Chromium's verbose drawing. No date is written: the same
site prints to the same files.
"""

from __future__ import annotations

import argparse
import functools
import html
import io
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

import yaml
from pypdf import PdfReader, PdfWriter
from pypdf.generic import ArrayObject, DictionaryObject, Fit, NameObject
from screenshot import CHROMIUM, SITE, launch, serve

ROOT = Path(__file__).resolve().parent.parent
COURSE_FILE = "math-for-llms.pdf"
COURSE_PAGES = ["notation.md", "references.md"]  # after the lessons in the course PDF
BUDGET = 2 * 1024 * 1024  # bytes per lesson PDF (tests/test_pdf.py)
TYPESET = (
    "() => [...document.querySelectorAll('.arithmatex')].every(e => e.querySelector('.katex'))"
)
# Run in a document's first page: appends the other pages' articles, one
# <section class="mfl-print-page"> each. Ids get a prefix, the page's index in
# the course (``course``, every page the course prints); a link to a page of
# this document becomes a link inside it, any other link to the site points at
# the published site (127.0.0.1 is gone once printed). Chromium names a place
# in the PDF only where a link of the document points, so hidden links to
# every page's top and heading make them all named places, for the links of
# the course's other documents to land on (jump_inside()). Then the new math is
# typeset as docs/javascripts/katex-init.js does it. Returns each heading's
# level, text and id (headings() finds its place by that id).
COMBINE = """async ({urls, course, site}) => {
  const indices = new Map(course.map((u, k) => [new URL(u, location.href).pathname, k]));
  const paths = new Set(urls.map(u => new URL(u, location.href).pathname));
  const main = document.querySelector('article');
  const sections = [];
  for (const [n, url] of urls.entries()) {
    const pageUrl = new URL(url, location.href);
    const k = indices.get(pageUrl.pathname);
    const article = n === 0 ? main : new DOMParser().parseFromString(
      await (await fetch(pageUrl)).text(), 'text/html').querySelector('article');
    for (const el of article.querySelectorAll('[src]'))
      el.setAttribute('src', new URL(el.getAttribute('src'), pageUrl).href);
    for (const el of article.querySelectorAll('[id]')) el.id = `p${k}-${el.id}`;
    for (const a of article.querySelectorAll('a[href]')) {
      const target = new URL(a.getAttribute('href'), pageUrl);
      if (target.origin !== location.origin) continue;
      a.setAttribute('href', !paths.has(target.pathname) ? site + target.pathname.slice(1) + target.hash
        : `#p${indices.get(target.pathname)}-${decodeURIComponent(target.hash.slice(1)) || 'top'}`);
    }
    const section = document.createElement('section');
    section.className = 'mfl-print-page';
    section.id = `p${k}-top`;
    section.append(...article.childNodes);
    sections.push(section);
  }
  const places = document.createElement('div');
  places.hidden = true;
  for (const section of sections)
    for (const [i, el] of [section, ...section.querySelectorAll('h1, h2, h3, h4, h5, h6')].entries()) {
      el.id ||= `${section.id}-heading-${i}`;
      places.append(Object.assign(document.createElement('a'), {href: '#' + el.id}));
    }
  sections.push(places);
  main.replaceChildren(...sections);
  for (const element of main.querySelectorAll('.arithmatex'))
    if (!element.querySelector('.katex')) renderMathInElement(element, {
      delimiters: [{left: '\\\\(', right: '\\\\)', display: false},
                   {left: '\\\\[', right: '\\\\]', display: true}],
      throwOnError: false});
  await document.fonts.ready;
  const broken = [];
  await Promise.all([...document.images].map(i => i.decode().catch(() => broken.push(i.src))));
  if (broken.length) throw new Error('images that did not load: ' + broken.join(', '));
  return [...main.querySelectorAll('h1, h2, h3, h4, h5, h6')].map(h => {
    const text = h.cloneNode(true);
    text.querySelectorAll('.headerlink, .anchor-link, .katex-mathml').forEach(e => e.remove());
    return {level: Number(h.tagName[1]), text: text.textContent.trim(), id: h.id};
  });
}"""
FOOTER = (
    '<div style="font: 7pt sans-serif; color: #666; width: 100%; margin: 0 15mm; '
    'display: flex; justify-content: space-between"><span>{}</span>'
    '<span class="pageNumber"></span></div>'
)
PAGE_LINK = "page:"  # a contents line links to "page:N"; assemble() makes it a jump to page N
STYLE = """<style>
@page { margin: 16mm 15mm 18mm; }
body { font-family: sans-serif; color: #222; margin: 0; }
a { color: inherit; text-decoration: none; }
.cover { height: 250mm; display: flex; flex-direction: column; justify-content: center; }
.cover p { margin: 0 0 4mm; }
.course { font-size: 16pt; color: #3f51b5; }
.title { font-size: 30pt; font-weight: bold; }
.about { font-size: 13pt; max-width: 140mm; }
.small { font-size: 9pt; color: #555; margin-top: 20mm !important; }
h1 { font-size: 18pt; margin: 0 0 8mm; }
ol { margin: 0; padding: 0; }
li { list-style: none; font-size: 10pt; break-inside: avoid; }
li a { display: flex; gap: 2mm; padding: 0.6mm 0; }
li a::after { content: ""; order: 1; flex: 1; border-bottom: 1px dotted #999; margin-bottom: 1.2mm; }
li a span:last-child { order: 2; }
.l0 { font-weight: bold; margin-top: 2.5mm; }
.l1 { padding-left: 6mm; }
</style>"""


@dataclass
class Document:
    file: str
    title: str | None  # the lesson's; None for the course
    groups: list[tuple[str | None, list[str]]]  # (lesson title or None, site-relative page URLs)
    depth: int  # the contents lists each page's headings down to this level (0: its H1)

    @property
    def urls(self) -> list[str]:
        return [url for _, urls in self.groups for url in urls]


@dataclass
class Run:
    requests: list[str] = field(default_factory=list)  # every URL the browser asked for
    files: list[Path] = field(default_factory=list)


def page_url(src: str) -> str:
    """``lesson/index.md`` -> ``lesson/``, ``lesson/theory.ipynb`` -> ``lesson/theory/``."""
    stem = src.rsplit(".", 1)[0]
    return stem.removesuffix("index") if stem.endswith("index") else stem + "/"


def read_config(root: Path = ROOT) -> dict:
    return yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8"))


def lessons(config: dict) -> list[tuple[str, str, list[str]]]:
    """(slug, title, page URLs) of each nav section that starts at ``<slug>/index.md``."""
    found = []
    for entry in config["nav"]:
        ((title, items),) = entry.items() if isinstance(entry, dict) else [(None, None)]
        if not isinstance(items, list):
            continue
        srcs = [next(iter(i.values())) if isinstance(i, dict) else i for i in items]
        slug = srcs[0].split("/")[0]
        if srcs[0] == f"{slug}/index.md" and slug != "reference":  # the API is no lesson
            found.append((slug, title, [page_url(s) for s in srcs]))
    return found


def documents(config: dict) -> list[Document]:
    """One PDF per lesson, then the course's."""
    course = lessons(config)
    docs = [Document(f"{slug}.pdf", title, [(None, urls)], 1) for slug, title, urls in course]
    groups = [(title, urls) for _, title, urls in course]
    docs.append(
        Document(COURSE_FILE, None, [*groups, (None, list(map(page_url, COURSE_PAGES)))], 0)
    )
    return docs


def print_body(
    context, base: str, urls: list[str], course: Document, config: dict
) -> tuple[bytes, list[tuple[int, str, int, Fit]]]:
    """The pages at ``urls`` (some of the course's) printed as one document, without
    footers; and its headings, as ``headings()`` gives them."""
    page = context.new_page()
    page.goto(base + urls[0])
    page.wait_for_function(TYPESET)
    found = page.evaluate(
        COMBINE,
        {
            "urls": ["/" + u for u in urls],
            "course": ["/" + u for u in course.urls],
            "site": config["site_url"],
        },
    )
    page.wait_for_function(TYPESET)
    # Not tagged: the bookmarks come from the headings' named places, and a tagged
    # PDF with Chromium's outline took longer to print (the course: 169 s, not 148 s)
    pdf = trimmed(page.pdf(format="A4"))
    page.close()
    return pdf, headings(PdfReader(io.BytesIO(pdf)), found)


def print_footers(context, doc: Document, config: dict, count: int) -> PdfReader:
    """``count`` blank pages with the document's footers, as Chromium prints them
    under the print stylesheet's page margins."""
    footer = " · ".join(filter(None, [config["site_name"], doc.title]))
    page = context.new_page()
    blank = '<div style="break-after: page; height: 1px"></div>'
    page.set_content(f"<!doctype html><meta charset=utf-8>{STYLE}{blank * count}")
    pdf = page.pdf(
        format="A4",
        display_header_footer=True,
        header_template="<span></span>",
        footer_template=FOOTER.format(html.escape(footer)),
    )
    page.close()
    reader = PdfReader(io.BytesIO(trimmed(pdf)))
    if len(reader.pages) != count:
        raise RuntimeError(f"{doc.file}: {len(reader.pages)} footers for {count} pages")
    return reader


def lay_footers(writer: PdfWriter, pages, footers: PdfReader) -> None:
    """Draw each footer page over its page, as Chromium draws its own footers: after
    the page's drawing, under the same first transform. Its resources get new names."""
    for page, footer in zip(pages, footers.pages, strict=True):
        first, data = footer.get_contents().get_data().split(b"\n", 1)
        contents = page.get_contents()
        body = contents.get_data()
        if not body.startswith(first + b"\n"):
            raise RuntimeError(f"the footer's transform {first!r} is not the page's")
        resources = page["/Resources"]
        names = set()
        for kind, entries in footer["/Resources"].items():
            if isinstance(entries.get_object(), DictionaryObject):
                mine = resources.setdefault(NameObject(kind), DictionaryObject()).get_object()
                for name, value in entries.get_object().items():
                    mine[NameObject("/Footer" + name[1:])] = value.clone(writer)
                    names.add(name[1:].encode())
        data = re.sub(rb"/(%s)\b" % b"|".join(names), rb"/Footer\1", data)
        contents.set_data(body + data)
        page.replace_contents(contents)


def jump_inside(writer: PdfWriter, course: Document, config: dict) -> None:
    """In the course, a link that opens one of its pages on the site (each part was
    printed alone) jumps to that page's place in it instead: the place named after
    the page's index in the course and the link's anchor (COMBINE)."""
    indices = {config["site_url"] + url: k for k, url in enumerate(course.urls)}
    names = writer.named_destinations
    for page in writer.pages:
        for annot in page.get("/Annots", []):
            annot = annot.get_object()
            address, _, anchor = str(annot.get("/A", {}).get("/URI", "")).partition("#")
            if address in indices:
                name = f"/p{indices[address]}-{unquote(anchor) or 'top'}"
                if name not in names:
                    raise RuntimeError(f"{course.file}: no place {name} for a link to {address}")
                del annot["/A"]
                annot[NameObject("/Dest")] = NameObject(name)


def headings(reader: PdfReader, found: list[dict]) -> list[tuple[int, str, int, Fit]]:
    """One bookmark per heading COMBINE found: (level, title, page index, where), each
    at its named place; a heading that is not printed (print.css hides it) has none."""
    places = reader.named_destinations
    marks = []
    for heading in found:
        place = places.get(f"/{heading['id']}")
        if place is not None:
            where = Fit.xyz(place.left, place.top)
            at = reader.get_destination_page_number(place)
            marks.append((heading["level"] - 1, heading["text"], at, where))
    return marks


def render(context, body: str) -> PdfReader:
    page = context.new_page()
    page.set_content(f"<!doctype html><meta charset=utf-8>{STYLE}{body}")
    pdf = page.pdf(format="A4")
    page.close()
    return PdfReader(io.BytesIO(trimmed(pdf)))


def cover(doc: Document, config: dict) -> str:
    e, url = html.escape, config["site_url"]
    if doc.title:
        lines = [
            f'<p class="course">{e(config["site_name"])}</p>',
            f'<p class="title">{e(doc.title)}</p>',
        ]
        url += doc.urls[0]
    else:
        lines = [
            f'<p class="title">{e(config["site_name"])}</p>',
            f'<p class="about">{e(config["site_description"])}</p>',
        ]
    lines.append(f'<p class="small">Printed from {e(url)}<br>{e(config["copyright"])}</p>')
    return '<div class="cover">' + "".join(lines) + "</div>"


def contents(entries: list[tuple[int, str, int]]) -> str:
    items = "".join(
        f'<li class="l{level}"><a href="{PAGE_LINK}{number}"><span>{html.escape(title)}</span>'
        f"<span>{number}</span></a></li>"
        for level, title, number in entries
    )
    return f"<h1>Contents</h1><ol>{items}</ol>"


def page_starts(found: list, doc: Document) -> list[int]:
    """The indices in ``found`` (as ``headings()`` gives them) of each page's H1."""
    starts = [i for i, heading in enumerate(found) if heading[0] == 0]
    if len(starts) != len(doc.urls):
        raise RuntimeError(f"{doc.file}: {len(starts)} H1 bookmarks for {len(doc.urls)} pages")
    return starts


def assemble(context, doc: Document, bodies: list[PdfReader], found: list, config: dict):
    """Cover, contents and the ``bodies`` one after another, with bookmarks (``found``:
    their headings, as ``headings()`` gives them, pages counted through the bodies)
    and page labels that match the footers."""
    starts = page_starts(found, doc)
    ends = [*starts[1:], len(found)]
    marks = []  # (bookmark level, title, body page index, where, heading level in its page)
    for group, urls in doc.groups:
        if group:
            marks.append((0, group, found[starts[0]][2], Fit.fit(), -1))
        for start, end in zip(starts[: len(urls)], ends[: len(urls)], strict=True):
            for level, text, *rest in found[start:end]:
                text = (
                    "Overview" if (level, text) == (0, group) else text
                )  # the lesson's first page
                marks.append((level + bool(group), text, *rest, level))
        starts, ends = starts[len(urls) :], ends[len(urls) :]
    entries = [(level, text, index + 1) for level, text, index, _, own in marks if own <= doc.depth]
    front = [render(context, cover(doc, config)), render(context, contents(entries))]

    writer = PdfWriter()
    for reader in front:
        writer.append(reader, import_outline=False)
    for body in bodies:
        writer.append(body, import_outline=False)
    skip = sum(len(reader.pages) for reader in front)
    writer.set_page_label(0, skip - 1, style="/r")
    writer.set_page_label(skip, len(writer.pages) - 1, style="/D", start=1)
    for page in writer.pages[1:skip]:
        for annot in page.get("/Annots", []):
            annot = annot.get_object()
            uri = annot.get("/A", {}).get("/URI", "")
            if uri.startswith(PAGE_LINK):
                target = writer.pages[skip + int(uri.removeprefix(PAGE_LINK)) - 1]
                del annot["/A"]
                annot[NameObject("/Dest")] = ArrayObject(
                    [target.indirect_reference, NameObject("/Fit")]
                )
    writer.add_outline_item(title="Contents", page_number=1)
    parents = {}
    for level, text, index, where, _ in marks:
        parents[level] = writer.add_outline_item(
            title=text, page_number=skip + index, parent=parents.get(level - 1), fit=where
        )
    name = config["site_name"]
    writer.add_metadata({"/Title": f"{name}: {doc.title}" if doc.title else name, "/Author": name})
    return writer


# Chromium's drawing of a page is verbose: it places every glyph with its own
# move (`dx 0 Td <glyph> Tj`) and writes coordinates to seven digits.
# trimmed() writes each run of text as one string with kerning where needed
# (`[<glyphs> -12 <glyphs>] TJ`: the same positions, to a thousandth of an em)
# and rounds positions to a tenth of a CSS pixel and other numbers to two decimals
# (not in `cm`: its scale factors need every digit). With
# the print stylesheet's savings, this is what keeps a lesson under BUDGET.
TEXT_RUN = re.compile(
    rb"BT\n(/\w+) ([\d.]+) Tf\n(1 0 0 -1 [-\d.]+ [-\d.]+ Tm)\n<([0-9A-F]+)> Tj\n"
    rb"((?:[-\d.]+ 0 Td <[0-9A-F]+> Tj\n)*)ET"
)
MOVE = re.compile(rb"([-\d.]+) 0 Td <([0-9A-F]+)> Tj")
POSITION = re.compile(rb"^[-\d. ]+ (?:Tm|m|l|c|v|y|re)$", re.M)
DECIMALS = re.compile(rb"^(?!.* cm$).*\.\d{3}.*$", re.M)
NUMBER = re.compile(rb"-?\d*\.\d+")


def glyph_widths(font) -> tuple[dict[int, float], float] | None:
    """A two-byte (Identity-H) font's glyph widths, in thousandths of an em."""
    if font.get("/Encoding") != "/Identity-H":
        return None
    cid = font["/DescendantFonts"][0].get_object()
    w, widths = list(cid.get("/W", [])), {}
    while w:  # first [w1 w2 ...] or first last w
        if isinstance(w[1], list):
            widths.update((w[0] + k, v) for k, v in enumerate(w[1]))
            w = w[2:]
        else:
            widths.update((c, w[2]) for c in range(w[0], w[1] + 1))
            w = w[3:]
    return widths, cid.get("/DW", 1000)


def one_string(run: re.Match, fonts: dict) -> bytes:
    metrics = fonts.get(run[1].decode())
    if metrics is None:
        return run[0]
    widths, default = metrics
    size, previous, parts = float(run[2]), run[4], [run[4]]
    for dx, glyphs in MOVE.findall(run[5]):
        advance = sum(
            widths.get(int(previous[i : i + 4], 16), default) for i in range(0, len(previous), 4)
        )
        kern = round(advance - float(dx) * 1000 / size)
        if kern:
            parts += [b"%d" % kern, glyphs]
        else:
            parts[-1] += glyphs
        previous = glyphs
    text = b" ".join(p if i % 2 else b"<" + p + b">" for i, p in enumerate(parts))
    return b"BT\n%s %s Tf\n%s\n[%s] TJ\nET" % (run[1], run[2], run[3], text)


def rounded(line: re.Match, places: int) -> bytes:
    def number(match: re.Match) -> bytes:
        text = (b"%.*f" % (places, float(match[0]))).rstrip(b"0").rstrip(b".")
        return b"0" if text == b"-0" else text

    return NUMBER.sub(number, line[0])


def trimmed(pdf: bytes) -> bytes:
    """``pdf`` with each page's drawing trimmed. Every print is trimmed once, as it
    comes from Chromium: a lesson's pages go into its PDF and the course's."""
    reader = PdfReader(io.BytesIO(pdf))
    writer = PdfWriter()
    writer.pdf_header = reader.pdf_header  # Chromium's version, not pypdf's 1.3
    writer.append(reader)
    for page in writer.pages:
        fonts = {
            name: glyph_widths(font.get_object())
            for name, font in page.get("/Resources", {}).get("/Font", {}).items()
        }
        contents = page.get_contents()
        data = TEXT_RUN.sub(functools.partial(one_string, fonts=fonts), contents.get_data())
        data = POSITION.sub(lambda line: rounded(line, 1), data)
        data = DECIMALS.sub(lambda line: rounded(line, 2), data)
        contents.set_data(data)
        page.replace_contents(contents)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def finish(writer: PdfWriter) -> None:
    """Compress the pages' drawing, give links their places, merge identical objects."""
    for page in writer.pages:
        page.compress_content_streams(level=9)
    explicit_links(writer)
    writer.compress_identical_objects(remove_duplicates=True, remove_unreferenced=True)


def explicit_links(writer: PdfWriter) -> None:
    """Links say which page and place they jump to, and the list of named places goes.

    Chromium names every place a link points at, and pypdf writes each name
    twice with its punctuation escaped (`/p3-a.b` as `(\\057p3\\055a\\056b)`).
    """
    names = writer.named_destinations
    for page in writer.pages:
        for annot in page.get("/Annots", []):
            annot = annot.get_object()
            dest = annot.get("/Dest")
            if isinstance(dest, str) and dest in names:
                annot[NameObject("/Dest")] = names[dest].dest_array
    names = writer.root_object.pop("/Names", None)
    if names is not None:  # emptied, so that the tree of names below it is unreferenced too
        names.get_object().clear()


def build(site: Path = SITE, out: Path | None = None, browser=None, log=print) -> Run:
    """Print every lesson and the course into ``out`` (default ``site/pdf``).

    Pass a running Playwright ``browser`` to reuse it (the tests do).
    """
    if browser is None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = launch(p)
            try:
                return build(site, out, browser, log)
            finally:
                browser.close()
    out = out or site / "pdf"
    out.mkdir(parents=True, exist_ok=True)
    config = read_config()
    run = Run()

    with serve(site) as base:
        context = browser.new_context()
        # Watched, not intercepted: the launch flags already keep every request on
        # 127.0.0.1, and intercepting would turn off Chromium's HTTP cache.
        context.on("request", lambda request: run.requests.append(request.url))
        try:
            *_, course = docs = documents(config)
            # Each lesson, and the pages after them, print as a document of their own:
            # Chromium lays out the whole document whatever part of it prints, so the
            # course at once took twice as long as its parts one by one (148 s and 72 s).
            printed = {}  # a part's first page: its print and headings
            for _, urls in course.groups:
                started = time.perf_counter()
                printed[urls[0]] = print_body(context, base, urls, course, config)
                took = time.perf_counter() - started
                log(f"printed {len(urls)} pages from /{urls[0]} in {took:.0f} s")
            for doc in docs:
                started = time.perf_counter()
                bodies, found, count = [], [], 0  # count: the pages of the bodies so far
                for _, urls in doc.groups:
                    pdf, heads = printed[urls[0]]
                    found += [(level, text, count + at, where) for level, text, at, where in heads]
                    bodies.append(PdfReader(io.BytesIO(pdf)))
                    count += len(bodies[-1].pages)
                footers = print_footers(context, doc, config, count)
                writer = assemble(context, doc, bodies, found, config)
                if doc is course:
                    jump_inside(writer, course, config)
                lay_footers(writer, writer.pages[-count:], footers)
                finish(writer)
                path = out / doc.file
                with path.open("wb") as f:
                    writer.write(f)
                run.files.append(path)
                size = path.stat().st_size / 1024 / 1024
                took = time.perf_counter() - started
                log(f"{path}: {len(writer.pages)} pages, {size:.2f} MB, {took:.0f} s")
        finally:
            context.close()
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=SITE, help="built site (default: site/)")
    parser.add_argument("--out", type=Path, help="output folder (default: SITE/pdf)")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").exists():
        print(f"{args.site} is not built: run `make build` first", file=sys.stderr)
        return 1
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} not found: `apt-get install chromium`", file=sys.stderr)
        return 1
    run = build(args.site, args.out)
    offsite = [url for url in run.requests if urlparse(url).hostname != "127.0.0.1"]
    if offsite:
        print(f"requests for hosts other than 127.0.0.1: {offsite}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
