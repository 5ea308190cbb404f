"""The offline copy (``make offline``): the zip, unzipped, opened from file:// in Chromium.

``make test-offline`` builds the zip and runs this file with ``$MFL_OFFLINE_ZIP``
naming it (about two minutes); without that variable (``make test``) only the
check of ``mkdocs.offline.yml`` runs and the rest skips. The zip is unzipped
into a temporary folder and the pages are opened from there. A request that
is not for a file (any http(s) request: a CDN, the live site) fails a test,
as does a console error or an uncaught page error.

Checked in the browser: math typeset by KaTeX and figures loaded on a page
of each kind, in each of the five lessons; a lesson page in both palettes on
a desktop and a phone (its math and figures, a skill-check question graded,
notes kept across a reload); search finding a page of each lesson (a desktop
in the light palette, a phone in the dark one); notes written in each lesson
exported and imported together; the Practice page showing questions from the
five lessons. Without a browser: the zip is
deterministic, every local link and asset on every page is a file in it, and
``mkdocs.offline.yml`` repeats ``mkdocs.yml``'s plugins and hooks.

Without /usr/bin/chromium the browser tests skip locally and fail in CI (``CI`` set).
"""

from __future__ import annotations

import os
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from mkdocs.utils.yaml import yaml_load
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parent.parent
# A section page of each lesson, in course order.
TOK = "tokenization-math/byte-pair-encoding.html"
ESM = "embedding-space-math/similarity-geometry.html"
AMM = "attention-mechanism-math/scaled-dot-product-attention.html"
PE = "positional-encodings/rotary-position-embeddings.html"
LMP = "language-model-probability/training-objective.html"
LESSON_PAGES = [TOK, ESM, AMM, PE, LMP]
LOCAL = ("file", "data", "blob", "about")

TYPESET = (
    "() => [...document.querySelectorAll('.arithmatex')].every(e => e.querySelector('.katex'))"
)
# Text nodes of the page (code, typeset math and the notes' textarea aside) with a TeX delimiter left.
RAW_TEX = r"""() => {
  const SKIP = 'pre, code, .katex, script, style, textarea';
  const walker = document.createTreeWalker(document.querySelector('article') || document.body,
    NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {acceptNode: n => n.nodeType === 1
      ? (n.matches(SKIP) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP) : NodeFilter.FILTER_ACCEPT});
  const bad = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode())
    for (const mark of ['$$', '\\(', '\\[']) if (n.data.includes(mark)) bad.push(n.data.trim().slice(0, 80));
  return bad;
}"""
BROKEN_IMAGES = """() => [...document.querySelectorAll('article img')]
  .filter(i => !i.complete || i.naturalWidth === 0).map(i => i.getAttribute('src'))"""

# How long a step may take: the pages answer in well under a second on an idle
# machine, but the course's two-core machines run several builds and browsers at
# once (a load of 20), where a lesson page with its math has taken over 10 s.
TIMEOUT = 45_000  # ms

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
DEVICES = [(DESKTOP, "light"), (DESKTOP, "dark"), (PHONE, "light"), (PHONE, "dark")]
DEVICE_IDS = ["desktop-light", "desktop-dark", "phone-light", "phone-dark"]


@pytest.fixture(scope="session")
def offline_zip() -> Path:
    given = os.environ.get("MFL_OFFLINE_ZIP")
    if not given:
        pytest.skip("the offline copy is tested by `make test-offline` (it builds the zip first)")
    return Path(given).resolve()


@pytest.fixture(scope="session")
def offline(offline_zip, tmp_path_factory, load) -> Path:
    """The unzipped copy's folder (the one holding index.html)."""
    out = tmp_path_factory.mktemp("unzipped")
    with zipfile.ZipFile(offline_zip) as archive:
        archive.extractall(out)
    return out / load("tools/offline.py").FOLDER


def new_tab(browser, root: Path, viewport=DESKTOP, scheme="light"):
    """A fresh context (empty localStorage) and page; ``page.check()`` asserts nothing went wrong."""
    context = browser.new_context(viewport=viewport, color_scheme=scheme, accept_downloads=True)
    outside: list[str] = []
    errors: list[str] = []

    # iframes (the search worker runs in one here) and workers included; watched, not
    # intercepted (the launch flags resolve no host but 127.0.0.1)
    context.on(
        "request",
        lambda r: urlparse(r.url).scheme not in LOCAL and outside.append(r.url),
    )
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    page.on("console", lambda m: m.type == "error" and errors.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.on("dialog", lambda d: (errors.append(f"dialog: {d.message!r}"), d.dismiss()))

    def check():
        assert not outside, f"requests left file://: {sorted(set(outside))}"
        assert not errors, "\n".join(errors)

    page.root = root.as_uri() + "/"
    page.check = check
    return page


def open_page(page, path: str) -> None:
    page.goto(page.root + path)
    page.wait_for_function(TYPESET)


@pytest.fixture(params=DEVICES, ids=DEVICE_IDS)
def device_tab(request, browser, offline):
    viewport, scheme = request.param
    page = new_tab(browser, offline, viewport, scheme)
    yield page
    page.context.close()


@pytest.fixture
def tab(browser, offline):
    page = new_tab(browser, offline)
    yield page
    page.context.close()


@pytest.fixture(scope="session")
def answer(load):
    """Answer a skill-check question right or wrong (tools/screenshot.py)."""
    return load("tools/screenshot.py").answer_question


# --- in the browser -------------------------------------------------------------


# Each kind of page once: home, lesson overview and sections, a theory notebook, the
# API reference, notation, references. (tests/test_browser.py opens every page of
# the site; here what differs is file://, and the link test below covers every page.)
SAMPLE = [
    "index.html",
    "tokenization-math/index.html",
    TOK,
    "embedding-space-math/index.html",
    ESM,
    "embedding-space-math/theory.html",
    "attention-mechanism-math/index.html",
    AMM,
    "attention-mechanism-math/masking.html",
    "attention-mechanism-math/theory.html",
    "positional-encodings/index.html",
    PE,
    "positional-encodings/alibi.html",
    "language-model-probability/index.html",
    LMP,
    "notation.html",
    "kernel-checks.html",
    "reference/rope.html",
    "references.html",
]


@pytest.mark.browser
def test_pages_typeset_their_math_and_load_their_figures(tab, offline):
    figures = 0
    for path in SAMPLE:
        tab.goto(tab.root + path)
        try:
            tab.wait_for_function(TYPESET)
        except Exception:  # the assertion below names the page
            pass
        assert tab.evaluate(TYPESET), f"{path}: formulas left untypeset"
        assert tab.evaluate(RAW_TEX) == [], f"{path}: raw TeX left"
        tab.wait_for_load_state("load")
        assert tab.evaluate(BROKEN_IMAGES) == [], f"{path}: images failed to load"
        figures += tab.locator("article img[src$='.svg']").count()
        if path.endswith("/index.html") and not path.startswith("reference/"):
            # a lesson overview: the copy carries no PDF, so its link stays hidden
            pdf = tab.locator("p.mfl-pdf-link")
            assert pdf.count() == 1 and pdf.is_hidden(), f"{path}: PDF link shown"
    assert figures >= 5
    tab.check()


@pytest.mark.browser
@pytest.mark.parametrize(
    "device_tab", [DEVICES[0], DEVICES[3]], ids=[DEVICE_IDS[0], DEVICE_IDS[3]], indirect=True
)
def test_search_works_from_a_file(device_tab):
    """On a desktop in the light palette and on a phone in the dark one: the two
    layouts of the search box, each palette once (it finds the same pages in either).
    Each run builds the search index from file:// anew, about 12 s of Chromium."""
    tab = device_tab
    open_page(tab, "index.html")
    tab.keyboard.press("/")  # Material's shortcut opens and focuses the search box
    box = tab.locator("input.md-search__input")
    expect(box).to_be_focused()
    for query, page in [
        ("cosine similarity", ESM),
        ("scaled dot-product attention", AMM),
        ("RoPE", PE),
        ("byte pair encoding", TOK),
        ("label smoothing", LMP),
    ]:
        box.fill("")
        # typed: Material searches on keyup (fill() would go unseen, the index being ready)
        box.press_sequentially(query)
        hit = tab.locator(f'a.md-search-result__link[href*="{page}"]').filter(visible=True)
        expect(hit.first).to_be_visible(timeout=TIMEOUT)
    hit.first.click()
    tab.wait_for_url(f"**/{LMP}*")
    tab.wait_for_function(TYPESET)
    tab.check()


@pytest.mark.browser
def test_a_lesson_page_works_from_a_file(device_tab, answer):
    """Math, figures, the palette, a graded question, notes kept across a reload."""
    tab = device_tab
    open_page(tab, ESM)
    dark = tab.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")
    scheme = tab.evaluate("document.body.getAttribute('data-md-color-scheme')")
    assert scheme == ("slate" if dark else "default")
    assert tab.evaluate(RAW_TEX) == []
    tab.wait_for_load_state("load")
    assert tab.locator("article img[src$='.svg']").count() >= 2
    assert tab.evaluate(BROKEN_IMAGES) == []
    # no instant navigation here: a link opens the next page as a file
    assert "navigation.instant" not in tab.evaluate(
        "JSON.parse(document.getElementById('__config').textContent).features"
    )
    form = tab.locator('form.mfl-quiz-q[data-type="numeric"]').first
    answer(form, right=True)
    assert form.locator(".mfl-quiz-feedback").inner_text().startswith("✓ Correct")
    assert "1 of" in tab.locator(".mfl-quiz-score").inner_text()
    tab.locator(".mfl-notes > summary").click()
    note = "Offline note: cosine ignores length."
    tab.locator("#mfl-note-text").fill(note)
    tab.wait_for_function(
        "() => document.querySelector('.mfl-notes-status').textContent.startsWith('Saved')"
    )
    tab.reload()
    open_page(tab, ESM)
    assert tab.locator("#mfl-note-text").input_value() == note
    assert form.locator(".mfl-quiz-feedback").inner_text().startswith("✓ Correct")
    tab.check()


@pytest.mark.browser
def test_notes_import_accepts_the_copys_own_pages(tab, tmp_path):
    """Offline page keys end in .html; an imported note for one is stored, not skipped."""
    open_page(tab, ESM)
    tab.locator(".mfl-notes > summary").click()
    upload = tmp_path / "notes.md"
    upload.write_text(
        "# 1. Intuition\n<!-- mfl-page: embedding-space-math/intuition.html -->\n\nimported\n"
        "# Gone\n<!-- mfl-page: embedding-space-math/no-such-page.html -->\n\nstale\n",
        encoding="utf-8",
    )
    tab.locator(".mfl-notes-file").set_input_files(str(upload))
    status = tab.locator(".mfl-notes-status")
    expect(status).to_contain_text("Imported notes for 1 page")
    assert "1 note was skipped" in status.inner_text()
    open_page(tab, "embedding-space-math/intuition.html")
    assert tab.locator("#mfl-note-text").input_value() == "imported"
    tab.check()


@pytest.mark.browser
def test_notes_from_every_lesson_export_and_import_together(tab, tmp_path):
    """A note on a page of each lesson: each page keeps its own; "Export all notes"
    writes them all under their .html keys; a fresh profile imports them all."""
    notes = {path: f"Offline note {k}: {path}" for k, path in enumerate(LESSON_PAGES)}
    for path, note in notes.items():
        open_page(tab, path)
        tab.locator(".mfl-notes > summary").click()
        tab.locator("#mfl-note-text").fill(note)
        tab.wait_for_function(
            "() => document.querySelector('.mfl-notes-status').textContent.startsWith('Saved')"
        )
    for path, note in notes.items():
        open_page(tab, path)
        assert tab.locator("#mfl-note-text").input_value() == note, path
    with tab.expect_download() as info:
        tab.locator(".mfl-notes-export").click()
    exported = tmp_path / "notes.md"
    info.value.save_as(exported)
    content = exported.read_text(encoding="utf-8")
    for path, note in notes.items():
        assert f"<!-- mfl-page: {path} -->\n\n{note}\n" in content, path
    tab.evaluate("localStorage.clear()")
    open_page(tab, LESSON_PAGES[0])
    tab.locator(".mfl-notes > summary").click()
    tab.locator(".mfl-notes-file").set_input_files(str(exported))
    expect(tab.locator(".mfl-notes-status")).to_contain_text(
        f"Imported notes for {len(LESSON_PAGES)} pages"
    )
    for path, note in notes.items():
        open_page(tab, path)
        assert tab.locator("#mfl-note-text").input_value() == note, path
    tab.check()


@pytest.mark.browser
@pytest.mark.parametrize("device", [0, 3], ids=[DEVICE_IDS[0], DEVICE_IDS[3]])
def test_practice_shows_questions_from_every_lesson(browser, offline, device, answer):
    tab = new_tab(browser, offline, *DEVICES[device])
    wrong = {}
    for path in LESSON_PAGES:
        open_page(tab, path)
        form = tab.locator('form.mfl-quiz-q[data-type="choice"]').first
        answer(form, right=False)
        wrong[path] = form.get_attribute("data-qid")
    open_page(tab, "practice.html")
    status = tab.locator(".mfl-practice-status").inner_text()
    assert status.startswith(f"{len(LESSON_PAGES)} questions to "), status
    for path, qid in wrong.items():
        card = tab.locator(f'.mfl-practice-item[data-page="{path}"][data-qid="{qid}"]')
        expect(card.locator("form.mfl-quiz-q")).to_be_visible()
        assert (
            card.locator(".mfl-practice-from a").evaluate("a => a.href").startswith(tab.root + path)
        )
    tab.wait_for_function(TYPESET)
    assert tab.evaluate(RAW_TEX) == []
    retry = tab.locator(f'.mfl-practice-item[data-qid="{wrong[AMM]}"] form.mfl-quiz-q')
    answer(retry, right=True)
    assert "Removed from your practice queue" in retry.locator(".mfl-quiz-feedback").inner_text()
    status = tab.locator(".mfl-practice-status").inner_text()
    assert status.startswith(f"{len(LESSON_PAGES) - 1} questions to "), status
    tab.check()
    tab.context.close()


# --- without a browser -----------------------------------------------------------


def test_the_zip_is_deterministic(offline_zip, offline, load, tmp_path):
    """Zipping the unzipped copy again gives the same bytes: sorted, fixed times and modes."""
    again = load("tools/offline.py").zip_site(offline, tmp_path / "again.zip")
    assert again.read_bytes() == offline_zip.read_bytes()
    with zipfile.ZipFile(offline_zip) as archive:
        names = archive.namelist()
    assert names == sorted(names, key=lambda n: Path(n).parts)
    assert all(n.startswith("math-for-llms-offline/") for n in names)
    assert "math-for-llms-offline/assets/javascripts/iframe-worker.js" in names
    assert "math-for-llms-offline/search/search_index.js" in names


class Links(HTMLParser):
    """Every href and src in a page, and which of them the browser fetches as it loads.

    The links in a lesson overview's hidden PDF paragraph (hooks/reader.py: the
    copy's own pdf/ folder, shown only in a build whose copy carries the PDFs,
    never the offline one) are kept apart in ``pdf``: the offline copy has none."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.fetched: list[str] = []
        self.pdf: list[str] = []
        self.in_pdf = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "p" and "data-mfl-pdf" in a and "hidden" in a:
            self.in_pdf = True
        links = [v for k, v in attrs if k in ("href", "src") and v]
        if self.in_pdf:
            self.pdf += links
            return
        self.urls += links
        if tag in ("script", "img", "iframe", "source") and a.get("src"):
            self.fetched.append(a["src"])
        if tag == "link" and a.get("href") and a.get("rel") not in ("canonical", "alternate"):
            self.fetched.append(a["href"])

    def handle_endtag(self, tag):
        if tag == "p":
            self.in_pdf = False


def test_every_local_link_and_asset_is_a_file_in_the_copy(offline):
    """From file:// a link to a folder shows a directory listing, and a missing file nothing;
    a script or stylesheet from another host (say the offline plugin's CDN shim) is never loaded."""
    missing, remote, pdfs = [], [], {}
    for page in sorted(offline.rglob("*.html")):
        links = Links()
        links.feed(page.read_text(encoding="utf-8"))
        where = page.relative_to(offline)
        if links.pdf:
            pdfs[where.as_posix()] = [Path(urlparse(url).path).name for url in links.pdf]
        remote += [f"{where}: {url}" for url in links.fetched if urlparse(url).netloc]
        for url in links.urls:
            parsed = urlparse(url)
            if parsed.scheme or parsed.netloc or not parsed.path:
                continue  # a link to another site
            if not (page.parent / unquote(parsed.path)).resolve().is_file():
                missing.append(f"{where}: {url}")
    assert not missing, "\n".join(missing[:20])
    assert not remote, "\n".join(remote[:20])
    # only the lesson overviews hold a (hidden) PDF link, each to its own lesson's
    lessons = [path.split("/")[0] for path in LESSON_PAGES]
    assert pdfs == {f"{lesson}/index.html": [f"{lesson}.pdf"] for lesson in lessons}


def test_the_offline_config_repeats_the_sites_plugins_and_hooks():
    """MkDocs replaces lists on INHERIT: the offline config must add to mkdocs.yml's, not drift."""
    with open(ROOT / "mkdocs.yml", "rb") as f:
        site = yaml_load(f)
    with open(ROOT / "mkdocs.offline.yml", "rb") as f:
        offline = yaml_load(f)
    assert offline["plugins"] == [*site["plugins"], "offline"]
    assert offline["hooks"] == [*site["hooks"], "hooks/offline.py"]
    changed = {k for k in offline.keys() | site.keys() if offline.get(k) != site.get(k)}
    assert changed == {"plugins", "hooks", "site_dir"}
