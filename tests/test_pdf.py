"""The PDFs of ``make pdf`` (tools/pdf.py), printed from the built site.

Printing the lessons (the course's PDF puts their prints together) takes a few
minutes on a loaded two-core machine, so only ``make test-pdf`` (which sets
``MFL_PDF=1``) prints them, into a temporary folder, once per session. The
tests run once per lesson (``LESSONS``, the nav's lessons in course order) and
check: every page of a lesson is in its PDF, in nav order (its H1 as a
bookmark and in the text); no TeX is left untypeset and KaTeX's fonts are
embedded; every figure is drawn (an SVG figure is hundreds of curves, a page
of text a few dozen) and the notebook's images are there; the reader's
widgets, the skill-check answers and the code under the figures are not
printed; its links to other course pages open the published site, the others
jump inside it; each lesson PDF is within its budget. The course PDF holds every
lesson in course order, then Notation and References: one bookmark per
lesson with its pages' H1s under it, each landing on the page that starts
with it, and its links to its own pages, between lessons too, jump inside it.
No request left 127.0.0.1 while printing. Without ``MFL_PDF`` only
the checks that each lesson's overview links its PDF and that the PDFs are
the nav's lessons run.

Without /usr/bin/chromium the printing tests skip locally and fail in CI (``CI`` set).
"""

from __future__ import annotations

import bisect
import html
import multiprocessing
import os
import re
import site
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parent.parent
FIGURE_CODE = re.compile(r"Code for this figure \(([\w.-]+\.py)\)")
RAW_TEX = re.compile(r"\\[()\[\]]|\$\$|\\(?:frac|mathbf|mathrm|sqrt|sum|cdot|left|right|begin)\b")
# The lessons in course order, as mkdocs.yml's nav lists them (tests/test_site.py
# checks its own copy of this list against the nav; the first test here, tools/pdf.py's).
LESSONS = [
    "tokenization-math",
    "embedding-space-math",
    "attention-mechanism-math",
    "positional-encodings",
    "language-model-probability",
]
WIDGETS = ["Check answer", "Your notes on this page", "Export all notes", "min read", "Visited 0"]


@pytest.fixture(scope="session")
def pdf(load):
    if str(ROOT / "tools") not in sys.path:
        sys.path.append(str(ROOT / "tools"))  # tools/pdf.py imports tools/screenshot.py by name
    return load("tools/pdf.py")


@pytest.fixture(scope="session")
def printed(pdf, site_dir, tmp_path_factory, request):
    if not os.environ.get("MFL_PDF"):
        pytest.skip("printing the PDFs takes minutes: `make test-pdf` runs these")
    browser = request.getfixturevalue("browser")  # skips or fails without chromium
    out = tmp_path_factory.mktemp("pdf")
    run = pdf.build(site_dir, out, browser, log=lambda line: None)
    return out, run


def lesson_docs(pdf):
    return [doc for doc in pdf.documents(pdf.read_config()) if doc.title]


def course_doc(pdf):
    return next(doc for doc in pdf.documents(pdf.read_config()) if doc.title is None)


def lesson_doc(pdf, slug: str):
    return next(doc for doc in lesson_docs(pdf) if doc.file == f"{slug}.pdf")


def h1(site_dir: Path, url: str) -> str:
    page = (site_dir / url / "index.html").read_text(encoding="utf-8")
    heading = re.search(r"<h1[^>]*>(.*?)</h1>", page, re.S)[1]
    heading = re.sub(r"<a [^>]*>.*?</a>", "", heading)  # the permalink
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", heading)).split())


def squeeze(text: str) -> str:
    """Text without its spaces: Chromium drops the space where a heading wraps."""
    return "".join(text.split())


def page_texts(path: Path) -> list[str]:
    """The text of each page of the PDF at ``path``, spaces squeezed (pypdf takes
    about a tenth of a second a page: the three lessons are read side by side)."""
    return [" ".join(page.extract_text().split()) for page in PdfReader(path).pages]


class Printed:
    """A lesson's PDF, with the text of each page."""

    def __init__(self, doc, path: Path, texts: list[str]) -> None:
        self.doc, self.reader, self.texts = doc, PdfReader(path), texts
        self.start = self.reader.page_labels.index("1")  # after the cover and contents

    @property
    def body(self) -> str:
        return " ".join(self.texts[self.start :])


@pytest.fixture(scope="session")
def extracted(pdf, printed) -> dict[str, Printed]:
    """Each lesson's Printed, its pages' text extracted in worker processes."""
    out, _ = printed
    docs = {slug: lesson_doc(pdf, slug) for slug in LESSONS}
    # spawned, not forked (this process runs Playwright's and the server's threads),
    # from the project's root, where this module is tests.test_pdf
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        os.cpu_count(), spawn, initializer=site.addsitedir, initargs=(str(ROOT),)
    ) as workers:
        texts = dict(zip(docs, workers.map(page_texts, [out / d.file for d in docs.values()])))
    return {slug: Printed(doc, out / doc.file, texts[slug]) for slug, doc in docs.items()}


@pytest.fixture(params=LESSONS)
def lesson(request, extracted) -> Printed:
    return extracted[request.param]


def test_the_pdfs_are_the_nav_lessons_in_course_order_then_the_course(pdf):
    files = [doc.file for doc in pdf.documents(pdf.read_config())]
    assert files == [f"{slug}.pdf" for slug in LESSONS] + [pdf.COURSE_FILE]


@pytest.mark.parametrize("slug", LESSONS)
def test_each_lesson_overview_links_its_pdf(pdf, site_dir, slug):
    """The overview's PDF paragraph links the published PDF, absolutely or relatively
    (hooks/reader.py may make it relative: it then resolves to the same file)."""
    config, doc = pdf.read_config(), lesson_doc(pdf, slug)
    page = (site_dir / doc.urls[0] / "index.html").read_text(encoding="utf-8")
    paragraph = re.search(r'<p class="mfl-pdf-link"[^>]*>(.*?)</p>', page, re.S)
    assert paragraph, f"{doc.urls[0]}: no .mfl-pdf-link paragraph"
    hrefs = re.findall(r'href="([^"]+\.pdf)"', paragraph[1])
    here = config["site_url"] + doc.urls[0]
    resolved = [urljoin(here, html.unescape(href)) for href in hrefs]
    assert resolved == [f"{config['site_url']}pdf/{doc.file}"], (doc.urls[0], hrefs)


def test_every_page_of_a_lesson_is_printed_in_nav_order(lesson, site_dir):
    titles = [h1(site_dir, url) for url in lesson.doc.urls]
    top = [item.title for item in lesson.reader.outline if not isinstance(item, list)]
    assert top == ["Contents", *titles], lesson.doc.file
    text, at = lesson.body, 0
    for title in titles:
        found = text.find(title, at)
        assert found >= 0, f"{lesson.doc.file}: {title!r} missing or out of order"
        at = found + len(title)


def test_the_math_is_typeset(lesson):
    raw = RAW_TEX.findall(lesson.body)
    assert not raw, f"{lesson.doc.file}: TeX left in the text: {raw[:10]}"
    fonts = {
        # a Type3 font (Chromium's colour emoji) has no /BaseFont
        str(font.get_object().get("/BaseFont", "/Type3"))
        for page in lesson.reader.pages
        for font in page["/Resources"].get("/Font", {}).values()
    }
    assert any("KaTeX_Main" in font for font in fonts), f"{lesson.doc.file}: {sorted(fonts)}"


def curves(page) -> int:
    return page.get_contents().get_data().count(b" c\n")


def images(reader: PdfReader, pages: range) -> int:
    seen = set()

    def count(resources) -> int:
        found = 0
        for ref in (resources or {}).get("/XObject", {}).values():
            if ref.idnum not in seen:
                seen.add(ref.idnum)
                xobject = ref.get_object()
                found += (xobject["/Subtype"] == "/Image") + count(xobject.get("/Resources"))
        return found

    return sum(count(reader.pages[i].get("/Resources")) for i in pages)


def test_every_figure_is_drawn(lesson, site_dir):
    """An SVG figure prints as vectors: its labels alone are hundreds of curves (over
    1,300 on every figure's page), where a page of text and math has a few dozen at
    most. Each figure is just above the summary line of its code, or on the page before."""
    doc, reader, pages = lesson.doc, lesson.reader, lesson.texts
    drawn = {}
    for i in range(lesson.start, len(pages)):
        for script in FIGURE_CODE.findall(pages[i]):
            drawn[script] = max(curves(reader.pages[i]), curves(reader.pages[i - 1]))
    scripts = sorted(p.name for p in (ROOT / "docs" / doc.urls[0] / "figures").glob("*.py"))
    # hooks/figures.py adds the code block only under an image on its own unindented line
    missing, unknown = sorted(set(scripts) - set(drawn)), sorted(set(drawn) - set(scripts))
    assert not missing and not unknown, (
        f"{doc.file}: no code block: {missing}; no script: {unknown}"
    )
    faint = {script: n for script, n in drawn.items() if n < 500}
    assert not faint, f"{doc.file}: figures without their drawing: {faint}"
    # the theory notebook (the lesson's last page) shows its plots as images
    if not doc.urls[-1].endswith("theory/"):
        return  # a lesson being written, without its notebook yet
    notebook = h1(site_dir, doc.urls[-1])
    first = next(i for i in range(lesson.start, len(pages)) if notebook in pages[i])
    built = (site_dir / doc.urls[-1] / "index.html").read_text(encoding="utf-8")
    expected = built.count('<img alt="')
    assert expected and images(reader, range(first, len(pages))) >= expected, doc.file


def test_widgets_answers_and_figure_code_are_not_printed(lesson):
    text, name = lesson.body, lesson.doc.file
    assert "Question 1 of" in text, name
    printed = [widget for widget in WIDGETS if widget in text]
    assert not printed, f"{name}: {printed}"
    assert "Review: " not in text, f"{name}: a skill-check answer is printed"
    code = [s for s in FIGURE_CODE.findall(text) if f"figures/{s}" in text]
    assert not code, f"{name}: figure code printed: {code}"


def test_links_to_other_course_pages_open_the_site(pdf, lesson):
    """A lesson prints alone: a link to another lesson, Notation or References opens
    the published page, and every other link jumps to a page of the lesson."""
    config = pdf.read_config()
    course = course_doc(pdf)
    others = {config["site_url"] + url for url in course.urls if url not in lesson.doc.urls}
    own = {page.indirect_reference.idnum for page in lesson.reader.pages}
    opened, outside = 0, []
    for number, page in enumerate(lesson.reader.pages, 1):
        for annot in page.get("/Annots", []):
            annot = annot.get_object()
            dest = annot.get("/Dest")
            if dest is None:
                opened += annot["/A"]["/URI"].split("#")[0] in others
            elif isinstance(dest, str) or dest[0].idnum not in own:
                outside.append((number, dest))
    assert not outside, f"{lesson.doc.file}: links that jump nowhere: {outside[:5]}"
    assert opened, f"{lesson.doc.file}: no link opens another course page"


def bookmarks(reader: PdfReader) -> list[tuple[str, int, list[tuple[str, int]]]]:
    """The top-level bookmarks: (title, page index, [(child title, page index)])."""
    tree = []
    for item in reader.outline:
        if isinstance(item, list):
            tree[-1][2].extend(
                (child.title, reader.get_destination_page_number(child))
                for child in item
                if not isinstance(child, list)
            )
        else:
            tree.append((item.title, reader.get_destination_page_number(item), []))
    return tree


def test_the_course_pdf_holds_every_lesson_in_course_order(pdf, printed, site_dir):
    """Contents, one bookmark per lesson (its overview as "Overview", then its pages'
    H1s), then Notation and References; each page's bookmark lands on the page
    that opens with its H1, and the pages follow one another in that order."""
    out, _ = printed
    course = course_doc(pdf)
    reader = PdfReader(out / course.file)
    tree = bookmarks(reader)
    groups = [(title, urls) for title, urls in course.groups if title]
    assert [title for title, _ in groups] == [lesson_doc(pdf, s).title for s in LESSONS]
    (_, tail), *_ = [group for group in course.groups if group[0] is None]
    expected = ["Contents", *(title for title, _ in groups), *(h1(site_dir, u) for u in tail)]
    assert [title for title, _, _ in tree] == expected

    landings = []  # (page title, H1 text, page index), in the order the nav gives them
    for (title, page, children), (_, urls) in zip(tree[1:], groups, strict=False):
        assert page == children[0][1], f"{title}: not on its overview's first page"
        assert [child for child, _ in children] == [
            "Overview",
            *(h1(site_dir, url) for url in urls[1:]),
        ], title
        landings += [
            (child, h1(site_dir, url), at) for (child, at), url in zip(children, urls, strict=True)
        ]
    landings += [(title, title, page) for title, page, _ in tree[1 + len(groups) :]]
    indices = [at for _, _, at in landings]
    assert indices == sorted(set(indices)), "the course's pages are out of order"
    for mark, heading, at in landings:
        text = reader.pages[at].extract_text()
        assert squeeze(heading) in squeeze(text), f"{mark!r}: page {at + 1} does not show it"


def test_the_course_pdf_links_its_own_pages_inside_it(pdf, printed):
    """The lessons print alone, each opening the others on the site; put together in
    the course PDF, their links to any page of the course jump inside it."""
    out, _ = printed
    config = pdf.read_config()
    course = course_doc(pdf)
    reader = PdfReader(out / course.file)
    index = {page.indirect_reference.idnum: i for i, page in enumerate(reader.pages)}
    # the first page of each lesson, then of Notation and of References
    starts = [at for _, at, _ in bookmarks(reader)[1:]]
    pages = {config["site_url"] + url for url in course.urls}
    opened, nowhere, across = [], [], 0
    for number, page in enumerate(reader.pages, 1):
        for annot in page.get("/Annots", []):
            annot = annot.get_object()
            dest = annot.get("/Dest")
            if dest is None:
                uri = annot["/A"]["/URI"]
                if uri.split("#")[0] in pages:
                    opened.append((number, uri))
            elif isinstance(dest, str) or dest[0].idnum not in index:
                nowhere.append((number, dest))
            else:
                target = index[dest[0].idnum]
                across += bisect.bisect(starts, target) != bisect.bisect(starts, number - 1)
    assert not opened, f"links that open the site: {opened[:5]}"
    assert not nowhere, f"links that jump nowhere: {nowhere[:5]}"
    assert across, "no link jumps from one part of the course to another"


def test_no_request_left_loopback_while_printing(printed):
    _, run = printed
    assert run.requests
    offsite = [url for url in run.requests if urlparse(url).hostname != "127.0.0.1"]
    assert not offsite, offsite


def test_every_pdf_is_printed(pdf, printed):
    out, run = printed
    assert sorted(p.name for p in run.files) == sorted(
        doc.file for doc in pdf.documents(pdf.read_config())
    )


@pytest.mark.parametrize("slug", LESSONS)
def test_each_lesson_pdf_is_within_budget(pdf, printed, slug):
    out, _ = printed
    size = (out / f"{slug}.pdf").stat().st_size
    assert size <= pdf.BUDGET, (
        f"{slug}.pdf: {size / 1024 / 1024:.2f} MB, over the {pdf.BUDGET // 1024 // 1024} MB budget"
    )
