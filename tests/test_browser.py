"""The built site in a real browser: Debian's Chromium driven by Playwright.

``site/`` is served on 127.0.0.1 and every request the pages make is checked:
one to any other host fails the test (the launch flags let none resolve), as
does a console error, an uncaught page error, an HTTP error response or a
JavaScript dialog. Covered, on one page of each kind (``sample_pages``) or,
with ``MFL_EVERY_PAGE=1`` (the weekly CI run), on every page: math typeset,
figures loaded, reading aids and previous/next links on lesson pages, and
axe-core in both palettes, with a skill check answered and the notes open
(tests/test_site.py checks every page's formulas,
images and reading line without a browser, and the API reference's console
examples). Then skill checks (score, reload, keyboard, numeric answers as
typed, first answers scored, clearing), the practice queue and its empty
state, private notes (persistence, export/import, no HTML interpretation,
import validation), the palette toggle with every control named in Chromium's
accessibility tree in both palettes, search (results, an index without interface text or
answers, highlighting on arrival from a result), the theory notebooks'
download, scroll cues on a phone, what a first visit fetches (against
bench/site.py's weight list), and the README screenshot.

Without /usr/bin/chromium these tests skip locally and fail in CI (``CI`` set).
"""

from __future__ import annotations

import base64
import html as html_lib
import importlib.util
import itertools
import json
import os
import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
LESSON = "embedding-space-math/similarity-geometry/"
XSS = "<img src=x onerror=alert(1)>"
STUB = re.compile(r"is being written\.", re.I)  # a placeholder page (tests/test_quiz.py)

_spec = importlib.util.spec_from_file_location("mfl_screenshot", ROOT / "tools" / "screenshot.py")
shot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shot)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def base_url(site_dir):
    with shot.serve(site_dir) as url:
        yield url


class Watch:
    """Everything a page did that a test must not allow."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.offsite: list[str] = []
        self.errors: list[str] = []

    def request(self, request) -> None:
        """Note a request for another host. It is only watched, not intercepted: the
        launch flags (tools/screenshot.py) already resolve every host but 127.0.0.1 to
        nothing, and intercepting would turn off Chromium's HTTP cache (each page would
        fetch and parse Material's bundle, KaTeX and the fonts afresh)."""
        parsed = urlparse(request.url)
        if parsed.scheme not in ("data", "blob", "about") and parsed.hostname != "127.0.0.1":
            self.offsite.append(request.url)

    def attach(self, page) -> None:
        page.on(
            "console",
            lambda m: m.type == "error" and self.errors.append(f"console: {m.text} @ {page.url}"),
        )
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e} @ {page.url}"))
        page.on(
            "response",
            lambda r: r.status >= 400 and self.errors.append(f"HTTP {r.status}: {r.url}"),
        )
        page.on(
            "dialog", lambda d: (self.errors.append(f"dialog opened: {d.message!r}"), d.dismiss())
        )

    def check(self) -> None:
        assert not self.offsite, f"requests left 127.0.0.1: {self.offsite}"
        assert not self.errors, "\n".join(self.errors)


DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def new_tab(browser, base_url, viewport=DESKTOP, scheme="light"):
    """A fresh browser context (empty localStorage) and page, with a Watch."""
    context = browser.new_context(
        base_url=base_url, viewport=viewport, color_scheme=scheme, accept_downloads=True
    )
    watch = Watch(base_url)
    context.on("request", watch.request)
    page = context.new_page()
    # generous: a wait only runs this long when something is wrong, and a page of
    # this site can take seconds to load and typeset on a busy two-core machine
    page.set_default_timeout(30_000)
    watch.attach(page)
    page.watch = watch
    return page


@pytest.fixture
def tab(browser, base_url):
    """A fresh desktop tab in the light palette."""
    page = new_tab(browser, base_url)
    yield page
    page.context.close()


@pytest.fixture(params=[(DESKTOP, "light"), (PHONE, "dark")], ids=["desktop-light", "phone-dark"])
def device_tab(request, browser, base_url):
    """A fresh tab on a desktop in the light palette, then on a phone in the dark one."""
    viewport, scheme = request.param
    page = new_tab(browser, base_url, viewport, scheme)
    yield page
    page.context.close()


TYPESET = (
    "() => [...document.querySelectorAll('.arithmatex')].every(e => e.querySelector('.katex'))"
)
RAW_TEX = """() => {
  const root = document.querySelector('article') || document.body;
  const SKIP = 'pre, code, .katex, .arithmatex, script, style, textarea';  // untypeset .arithmatex: UNTYPESET
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
    acceptNode: n => n.nodeType === 1 ? (n.matches(SKIP) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP)
                                      : NodeFilter.FILTER_ACCEPT});
  const bad = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode())
    for (const mark of ['$$', '\\\\(', '\\\\[']) if (n.data.includes(mark)) bad.push(mark + ' in: ' + n.data.trim().slice(0, 80));
  return bad;
}"""
SITEMAP_LOADED = (
    "() => performance.getEntriesByType('resource').some(r => r.name.endsWith('/sitemap.xml'))"
)
UNTYPESET = """() => [...document.querySelectorAll('.arithmatex')]
  .filter(e => !e.querySelector('.katex')).map(e => e.textContent.slice(0, 80))"""
BROKEN_IMAGES = """() => [...document.querySelectorAll('article img')]
  .filter(i => !i.complete || i.naturalWidth === 0).map(i => i.getAttribute('src'))"""


def site_pages(site: Path) -> list[str]:
    return sorted(
        p.parent.relative_to(site).as_posix() + "/" if p.parent != site else ""
        for p in site.rglob("index.html")
        if "assets" not in p.parts
    )


def open_page(page, path: str | None = None) -> None:
    """Go to ``path`` (reload the page shown when None) and wait for its math."""
    if path is None:
        page.reload()
    else:
        page.goto(path)
    try:
        page.wait_for_function(TYPESET, timeout=5_000)
    except Exception:  # report which formulas stayed raw
        pass


def local_storage(page, key: str):
    return json.loads(page.evaluate("k => localStorage.getItem(k) || 'null'", key))


# ---------------------------------------------------------------------------


def test_the_watch_sees_requests_for_other_hosts_and_the_flags_block_them(tab):
    """What every browser test relies on: a request that leaves 127.0.0.1 is noted
    (``Watch.request``) and never answered (the launch flags resolve no other host)."""
    open_page(tab, "")
    failed = []
    tab.on("requestfailed", lambda r: failed.append(r.url))
    outcome = tab.evaluate(
        "() => fetch('https://cdn.example.org/x.js').then(() => 'answered', () => 'failed')"
    )
    assert outcome == "failed" and failed == ["https://cdn.example.org/x.js"]
    assert tab.watch.offsite == ["https://cdn.example.org/x.js"]
    with pytest.raises(AssertionError, match="requests left 127.0.0.1"):
        tab.watch.check()


def is_lesson(path: str) -> bool:
    """Mirror of hooks/reader.py's rule: a page in a docs/ folder other than reference/."""
    stem = path.rstrip("/")
    for source in (f"{stem}.md", f"{stem}/index.md", f"{stem}.ipynb"):
        if stem and (DOCS / source).exists():
            parts = source.split("/")
            return len(parts) > 1 and parts[0] != "reference"
    return False


def check_reading_aids(page, path: str) -> None:
    meta = page.locator(".mfl-meta").inner_text()
    assert re.search(r"≈ \d+ min read · \d+ headings?", meta), f"{path}: {meta!r}"
    headings = page.locator("article :is(h1, h2, h3, h4, h5, h6)").count()
    assert f"{headings} heading" in meta, f"{path}: {meta!r} but the page has {headings} headings"
    assert page.locator(".mfl-notes").is_visible(), f"{path}: no notes panel"
    footer = page.locator("a.md-footer__link--prev, a.md-footer__link--next")
    assert footer.count() >= 1, f"{path}: no previous/next links"


def first_question(page, kind: str):
    form = page.locator(f'form.mfl-quiz-q[data-type="{kind}"]').first
    assert form.count(), f"no {kind} question on the page"
    return form


answer = shot.answer_question


def test_answering_updates_the_score_and_it_survives_a_reload(tab):
    open_page(tab, LESSON)
    total = int(tab.locator(".mfl-quiz").get_attribute("data-total"))
    assert total >= 4
    form = first_question(tab, "choice")
    answer(form, right=True)
    assert form.locator(".mfl-quiz-feedback").inner_text().startswith("✓ Correct")
    assert form.locator(".mfl-quiz-explain").is_visible()
    review = form.locator(".mfl-quiz-review a")
    assert f"{LESSON}#" in review.evaluate("a => a.href")  # a heading on this same page
    assert tab.locator(f"[id='{review.evaluate('a => a.hash.slice(1)')}']").count() == 1
    score = tab.locator(".mfl-quiz-score")
    assert f"1 of {total} correct" in score.inner_text()
    open_page(tab)  # reload
    assert f"1 of {total} correct" in score.inner_text()
    assert form.locator("input:checked").count() == 1
    assert form.locator(".mfl-quiz-explain").is_visible()
    record = local_storage(tab, f"mfl:quiz:{LESSON}")
    assert record["answered"] == 1 and record["correct"] == 1 and record["total"] == total
    # the lesson overview shows the visit and the score
    open_page(tab, "embedding-space-math/")
    row = tab.locator(f'.mfl-progress tr[data-page="{LESSON}"]')
    assert "visited" in row.locator(".mfl-visited").inner_text()
    assert f"1 / {total} correct" in row.locator(".mfl-score").inner_text()
    assert "Visited 1 of" in tab.locator(".mfl-progress-summary").inner_text()
    # Material's instant navigation swaps the page without a reload: the features follow
    tab.evaluate("window.mflSameDocument = true")
    tab.wait_for_function(SITEMAP_LOADED)  # Material intercepts links once it has the sitemap
    row.locator("a").click()
    # navigation.tracking may already have put the active heading in the URL's hash
    tab.wait_for_url(re.compile(rf"/{re.escape(LESSON)}(#[^/]*)?$"))
    expect(score).to_contain_text(f"1 of {total} correct")
    expect(tab.locator(".mfl-notes")).to_be_visible()
    assert tab.evaluate("window.mflSameDocument === true"), (
        "expected an instant (same-document) navigation"
    )
    tab.watch.check()


def test_home_page_shows_every_lesson_with_reading_time_and_progress(tab):
    """Progress from each lesson reaches the home page, in course order; the queue
    spans every lesson, and each lesson counts only its own share of it."""
    pe_page = "positional-encodings/rotary-position-embeddings/"
    open_page(tab, pe_page)
    form = first_question(tab, "choice")
    answer(form, right=False)
    open_page(tab, LESSON)
    answer(first_question(tab, "choice"), right=True)
    open_page(tab, "")
    times = tab.locator(".mfl-lessons .mfl-reading-time").all_inner_texts()
    assert len(times) == 5 and all(re.fullmatch(r"≈ \d+ min", t) for t in times), times
    summaries = tab.locator(".mfl-progress-compact .mfl-progress-summary").all_inner_texts()
    assert len(summaries) == 5
    tokenization, esm, attention, pe, lmp = summaries
    assert "Visited 1 of" in esm and " 1 of " in esm and "correct" in esm, esm
    for untouched in (tokenization, attention, lmp):
        assert "Visited 0 of" in untouched and " 0 of " in untouched, untouched
    assert "Visited 1 of" in pe and " 0 of " in pe, pe
    # each lesson counts its own share of the practice queue
    assert "0 questions in your practice queue" in esm, esm
    for untouched in (tokenization, attention, lmp):
        assert "0 questions in your practice queue" in untouched, untouched
    assert "1 question in your practice queue" in pe, pe
    assert tab.locator(".mfl-progress-compact table").first.is_hidden()
    open_page(tab, "practice/")
    card = tab.locator(f'.mfl-practice-item[data-page="{pe_page}"]')
    card.locator("form.mfl-quiz-q").wait_for()
    tab.watch.check()


def test_wrong_answer_is_queued_and_a_correct_retry_removes_it(tab):
    open_page(tab, "practice/")
    assert "queue is empty" in tab.locator(".mfl-practice").inner_text()
    open_page(tab, LESSON)
    form = first_question(tab, "numeric")
    qid = form.get_attribute("data-qid")
    answer(form, right=False)
    assert form.locator(".mfl-quiz-feedback").inner_text().startswith("✗ Not quite")
    assert "practice queue" in form.locator(".mfl-quiz-feedback").inner_text()
    assert {"page": LESSON, "qid": qid} in [
        {k: item[k] for k in ("page", "qid")} for item in local_storage(tab, "mfl:practice")
    ]
    open_page(tab, "practice/")
    card = tab.locator(f'.mfl-practice-item[data-qid="{qid}"]')
    retry = card.locator("form.mfl-quiz-q")
    retry.wait_for()
    assert "1 question to practice" in tab.locator(".mfl-practice-status").inner_text()
    tab.wait_for_function(TYPESET)
    assert retry.locator(".mfl-quiz-explain").is_hidden()
    answer(retry, right=True)
    assert "Removed from your practice queue" in retry.locator(".mfl-quiz-feedback").inner_text()
    assert local_storage(tab, "mfl:practice") == []
    assert tab.locator(".mfl-practice-status").inner_text() == "Your practice queue is empty."
    # links inside the moved question point back at the lesson page
    review = retry.locator(".mfl-quiz-review a").evaluate("a => a.href")
    assert LESSON + "#" in review
    tab.reload()
    assert "queue is empty" in tab.locator(".mfl-practice").inner_text()
    tab.watch.check()


def test_quiz_and_notes_work_by_keyboard_alone(tab):
    open_page(tab, LESSON)
    form = first_question(tab, "choice")
    right = int(form.get_attribute("data-answer"))
    form.locator("legend").click()  # a non-focusable start point for sequential navigation
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.type") == "radio"
    for _ in range(right):
        tab.keyboard.press("ArrowDown")
    tab.keyboard.press("Space")
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.type") == "submit"
    outline = tab.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none", "the focused button has no visible focus outline"
    tab.keyboard.press("Enter")
    assert form.locator(".mfl-quiz-feedback").inner_text().startswith("✓ Correct")
    # notes: open the panel and type, without the mouse
    tab.locator("article h1").click(
        position={"x": 5, "y": 5}
    )  # start sequential navigation at the title
    for _ in range(6):
        tab.keyboard.press("Tab")
        if tab.evaluate("document.activeElement.matches('.mfl-notes > summary')"):
            break
    assert tab.evaluate("document.activeElement.matches('.mfl-notes > summary')"), (
        "Tab never reached the notes"
    )
    assert tab.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    tab.keyboard.press("Enter")
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.id") == "mfl-note-text"
    tab.keyboard.type("typed by keyboard")
    assert tab.locator(".mfl-notes-count").inner_text() == "17 / 8,000 characters"
    tab.watch.check()


def test_notes_persist_are_never_html_and_round_trip(tab, tmp_path):
    open_page(tab, LESSON)
    panel = tab.locator(".mfl-notes")
    panel.locator("summary").click()
    area = tab.locator("#mfl-note-text")
    text = f"My note {XSS}\nsecond line"
    area.fill(text)
    assert tab.locator(".mfl-notes-count").inner_text() == f"{len(text)} / 8,000 characters"
    tab.wait_for_function(
        "() => document.querySelector('.mfl-notes-status').textContent.startsWith('Saved')"
    )
    open_page(tab)  # reload
    assert panel.get_attribute("open") is not None, "the open panel should stay open"
    assert area.input_value() == text
    assert tab.evaluate("document.querySelectorAll('img[src=\"x\"]').length") == 0
    # the 8,000-character limit
    area.fill("a" * 8100)
    assert len(area.input_value()) == 8000
    assert tab.locator(".mfl-notes-count").inner_text() == "8,000 / 8,000 characters"
    area.fill(text)
    tab.wait_for_function(
        "() => document.querySelector('.mfl-notes-status').textContent.startsWith('Saved')"
    )
    # export all notes: one Markdown file, page titles as headings
    with tab.expect_download() as info:
        tab.locator(".mfl-notes-export").click()
    exported = tmp_path / "notes.md"
    info.value.save_as(exported)
    content = exported.read_text(encoding="utf-8")
    assert "# 3. Similarity Geometry\n" in content and text in content
    # import into a profile that has a different note on that page: the notes merge
    tab.evaluate("localStorage.clear()")
    tab.evaluate(
        "([k, v]) => localStorage.setItem(k, JSON.stringify(v))",
        [f"mfl:note:{LESSON}", {"title": "3. Similarity Geometry", "text": "older note"}],
    )
    open_page(tab, "embedding-space-math/intuition/")
    tab.locator(".mfl-notes > summary").click()
    tab.locator("#mfl-note-text").fill("intuition note")
    tab.wait_for_function(
        "() => document.querySelector('.mfl-notes-status').textContent.startsWith('Saved')"
    )
    tab.locator(".mfl-notes-file").set_input_files(str(exported))
    expect(tab.locator(".mfl-notes-status")).to_contain_text(
        "Imported notes for 1 page: “3. Similarity Geometry” (1 merged"
    )
    assert tab.locator("#mfl-note-text").input_value() == "intuition note"
    open_page(tab, LESSON)
    assert tab.locator("#mfl-note-text").input_value() == "older note\n\n" + text
    tab.watch.check()


def unnamed_controls(page) -> list[str]:
    """The skill check's and the notes panel's controls that Chromium's accessibility
    tree gives no name. axe's ``label`` rule cannot name a radio whose label is only
    a formula (it skips KaTeX's MathML); Chromium can, so labels are checked here."""
    tree = (
        page.locator(".mfl-quiz").aria_snapshot()
        + "\n"
        + page.locator(".mfl-notes").aria_snapshot()
    )
    return [
        f"unnamed control: {line.strip()}"
        for line in tree.splitlines()
        if re.match(r"\s*- (radio|spinbutton|textbox|button)\s*(\"\")?:?$", line)
    ]


def answer_and_open_notes(page) -> None:
    """The states a reader brings a skill-check page into: the notes panel open, a
    choice answered wrong and a number answered right (their feedback and
    explanations showing)."""
    page.locator(".mfl-notes > summary").click()
    answer(first_question(page, "choice"), right=False)
    answer(first_question(page, "numeric"), right=True)


def test_palette_toggle_and_accessibility_in_both_palettes(tab):
    """The toggle and its persistence; every control named in each palette (axe checks
    these states in both palettes on the sample skill-check page: ``sample_pages``)."""
    open_page(tab, LESSON)
    answer_and_open_notes(tab)
    scheme = "document.body.getAttribute('data-md-color-scheme')"
    assert tab.evaluate(scheme) == "default"
    assert unnamed_controls(tab) == [], "light palette"
    tab.locator("label.md-header__button[for='__palette_1']").click()
    tab.wait_for_function(f"() => {scheme} === 'slate'")
    open_page(tab)  # reload
    assert tab.evaluate(scheme) == "slate", "the chosen palette should survive a reload"
    assert unnamed_controls(tab) == [], "dark palette"
    tab.locator("label.md-header__button[for='__palette_0']").click()
    tab.wait_for_function(f"() => {scheme} === 'default'")
    tab.watch.check()


# A term, and the page whose section (or page) title names it: that page must
# be the first result, above the API reference, Notation, the exercises and
# every page that only mentions the term (issue #29).
SEARCHES = [
    ("byte pair encoding", "/tokenization-math/byte-pair-encoding/"),
    ("Viterbi", "/tokenization-math/unigram-language-model/"),
    ("cosine similarity", "/embedding-space-math/similarity-geometry/"),
    ("softmax", "/attention-mechanism-math/scaled-dot-product-attention/"),
    ("causal mask", "/attention-mechanism-math/masking/"),
    ("KV cache", "/attention-mechanism-math/kv-cache/"),
    ("multi-head attention", "/attention-mechanism-math/multi-head-attention/"),
    ("GQA", "/attention-mechanism-math/attention-variants/"),
    ("FlashAttention", "/attention-mechanism-math/efficient-exact-attention/"),
    ("RoPE", "/positional-encodings/rotary-position-embeddings/"),
    ("ALiBi", "/positional-encodings/alibi/"),
    ("YaRN", "/positional-encodings/rope-scaling/"),
    ("NTK", "/positional-encodings/rope-scaling/"),
    ("position interpolation", "/positional-encodings/rope-scaling/"),
    ("T5 bucket", "/positional-encodings/relative-position-encodings/"),
    ("label smoothing", "/language-model-probability/training-objective/"),
    ("beam search", "/language-model-probability/deterministic-decoding/"),
    ("speculative sampling", "/language-model-probability/speculative-and-guided-decoding/"),
]
FIRST_RESULT = "li.md-search-result__item >> nth=0 >> a.md-search-result__link >> nth=0"


def search_for(tab, query: str) -> None:
    """Type ``query`` into the search box. Material searches on key events, not on
    fill, so all but the last character are filled in and the last one is typed:
    one search, for the whole query, as a key-by-key typist's last keystroke runs."""
    box = tab.locator("input.md-search__input")
    box.fill(query[:-1])
    box.press(query[-1])
    expect(tab.locator(".md-search-result__meta")).not_to_have_text(
        re.compile("Initializing|Type to start"), timeout=15_000
    )


def test_search_puts_the_page_named_after_the_term_first(tab):
    """For each term the first result is the lesson page whose page or section
    title names it, and every link of that result carries the terms to highlight."""
    open_page(tab, "")
    tab.keyboard.press("/")  # Material's shortcut focuses the search box
    expect(tab.locator("input.md-search__input")).to_be_focused()
    checked = 0
    for query, page in SEARCHES:
        source = DOCS / (page.strip("/") + ".md")
        if STUB.search(source.read_text(encoding="utf-8")):
            continue  # a placeholder page names nothing yet
        search_for(tab, query)
        first = tab.locator(FIRST_RESULT)
        expect(first).to_have_attribute("href", re.compile(re.escape(page)), timeout=15_000)
        links = tab.locator("li.md-search-result__item >> nth=0 >> a.md-search-result__link")
        for href in links.evaluate_all("as => as.map(a => a.href)"):
            h = parse_qs(urlparse(href).query).get("h", [""])[0]
            assert h.strip(), f"{query!r}: a result link highlights nothing: {href}"
        checked += 1
    assert checked >= 10, f"only {checked} terms checked: pages still placeholders"
    tab.watch.check()


def test_search_offers_near_matches_for_a_misspelling(tab):
    open_page(tab, "")
    tab.keyboard.press("/")
    search_for(tab, "rotory")
    expect(tab.locator(".md-search-result__meta")).to_contain_text("No exact match for “rotory”")
    first = tab.locator(FIRST_RESULT)
    expect(first).to_have_attribute(
        "href", re.compile("/positional-encodings/rotary-position-embeddings/")
    )
    assert "h=rotary" in first.get_attribute("href")
    # a word that is right is not fuzzed: the exact results stand
    search_for(tab, "ALiBi")
    expect(tab.locator(".md-search-result__meta")).not_to_contain_text("No exact match")
    tab.watch.check()


def test_readme_screenshot_is_written(browser, base_url, site_dir):
    out = shot.take(site_dir / "assets" / "screenshot.png", browser=browser, base=base_url)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 20_000


# What makes one built page a different kind of page from another, for axe:
# its template and the widgets the hooks add (each combination found in the
# site is one kind), then the content inside it (``sample_pages``).
PAGE_KINDS = {
    "lesson page": 'class="mfl-reader',
    "lesson overview": 'class="mfl-section-map',
    "skill check": 'class="mfl-quiz-q"',
    "home": 'class="mfl-lessons',
    "practice": 'class="mfl-practice',
    "notebook": 'class="jp-Notebook',
    "API reference": 'class="doc doc-object',
}
CONTENT = {
    "math": 'class="arithmatex"',
    "figure": "<img ",
    "admonition": 'class="admonition',
    "footnotes": 'class="footnote"',
    "table": "<table",
    "code": 'class="highlight"',
    "details": "<details",
}


def page_kind(site: Path, path: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the page's kind, the kinds of content it holds), from its built HTML."""
    built = (site / path / "index.html").read_text(encoding="utf-8")
    return tuple(
        frozenset(name for name, marker in markers.items() if marker in built)
        for markers in (PAGE_KINDS, CONTENT)
    )


def sample_pages(site: Path) -> list[str]:
    """Every page under ``MFL_EVERY_PAGE=1`` (the weekly CI run); otherwise one page of
    each kind, chosen so that together they hold every kind of content: of such
    choices, the one with the fewest bytes (axe's time and a page's load grow with
    the page), then the first in name order."""
    pages = site_pages(site)
    if os.environ.get("MFL_EVERY_PAGE"):
        return pages
    # per kind, only pages that no smaller page of that kind outdoes in content
    candidates: dict[frozenset[str], list[tuple[int, str, frozenset[str]]]] = {}
    for path in pages:
        kind, content = page_kind(site, path)
        candidates.setdefault(kind, []).append(
            ((site / path / "index.html").stat().st_size, path, content)
        )
    for kind, rows in candidates.items():
        rows.sort()
        candidates[kind] = [
            row for i, row in enumerate(rows) if not any(row[2] <= r[2] for r in rows[:i])
        ]
    everything = frozenset().union(*(row[2] for rows in candidates.values() for row in rows))
    covers = [
        (sum(row[0] for row in choice), sorted(row[1] for row in choice))
        for choice in itertools.product(*candidates.values())
        if frozenset().union(*(row[2] for row in choice)) == everything
    ]
    assert covers, "no choice of one page a kind holds every kind of content"
    return min(covers)[1]


def test_axe_samples_every_kind_of_page_and_content(site_dir):
    """The pages the browser tests load in `make test` (typesetting, axe) cover every
    kind of page the site has, and every kind of content that any page holds."""
    chosen = [page_kind(site_dir, path) for path in sample_pages(site_dir)]
    every = [page_kind(site_dir, path) for path in site_pages(site_dir)]
    assert {kind for kind, _ in chosen} == {kind for kind, _ in every}
    assert set().union(*(kind for kind, _ in every)) == set(PAGE_KINDS), "markup renamed?"
    assert set().union(*(c for _, c in chosen)) == set().union(*(c for _, c in every))
    assert set().union(*(c for _, c in every)) == set(CONTENT), "markup renamed?"
    assert len(chosen) >= 7


# A notebook page repeats its cells' markup many times over (a theory page has
# tens of thousands of highlighted tokens), and axe's time grows with the page:
# a cell whose every kind of element (tag and classes; colors and sizes come
# from the stylesheets' class rules) an earlier cell already showed is removed
# before axe runs, so axe sees each kind of element at least once. Removed, not
# excluded: axe walks the whole document either way (on a theory page, about
# 11 s with every cell, 6 s with the repeats excluded, under 2 s with them
# removed). The page's other checks run before. Every cell under
# MFL_EVERY_PAGE=1 (the weekly run).
AXE_RUN = """(everyCell) => {
  const seen = new Set();
  for (const cell of everyCell ? [] : document.querySelectorAll('.jp-Cell')) {
    const kinds = [...cell.querySelectorAll('*')].map(e => e.tagName + '.' + [...e.classList].sort().join('.'));
    if (kinds.every(k => seen.has(k))) cell.remove();
    else kinds.forEach(k => seen.add(k));
  }
  return axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa']},
                           rules: {label: {enabled: false}}, resultTypes: ['violations']})
    .then(r => r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
          .map(v => v.impact + ' ' + v.id + ': ' + v.nodes.length + ' nodes, e.g. '
                    + v.nodes.slice(0, 2).map(n => n.target.join(' ')).join(' | ')));
}"""


@pytest.mark.parametrize(("scheme", "expected"), [("light", "default"), ("dark", "slate")])
def test_pages_typeset_load_figures_and_pass_axe_in_either_palette(
    browser, base_url, site_dir, scheme, expected
):
    """In Chromium, in each palette the reader's system may ask for, one page of each
    kind (``sample_pages``; every page with ``MFL_EVERY_PAGE=1``, CI's weekly run):
    KaTeX typesets every formula, no TeX is left raw, every image loads, a lesson page
    shows its reading aids, and axe-core (WCAG 2.1 A/AA) finds nothing serious.
    tests/test_site.py checks every page without a browser: each formula with the
    site's KaTeX, each image built, no raw TeX, the reading line's heading count.

    On a page with a skill check, axe runs with the notes panel open and two questions
    answered (``answer_and_open_notes``). Radio labels made only of a formula are checked
    against Chromium's accessibility tree in the palette test above (axe cannot read
    KaTeX's MathML).
    """
    paths = sample_pages(site_dir)
    assert len(paths) >= 7
    problems = []
    math_pages = lessons = quizzes = 0
    # A context of its own: Material stores the palette it picked in localStorage
    # and prefers it to the media query from then on. One page at a time: the work
    # is CPU in the renderer, and pages side by side in three tabs took longer.
    tab = new_tab(browser, base_url, DESKTOP, scheme)
    for path in paths:
        open_page(tab, path)
        palette = tab.evaluate("document.body.getAttribute('data-md-color-scheme')")
        assert palette == expected, f"{path}: {palette} in the {scheme} scheme"
        assert tab.evaluate(UNTYPESET) == [], f"{path}: formulas left untypeset"
        assert tab.evaluate(RAW_TEX) == [], f"{path}: raw TeX delimiters visible"
        assert tab.evaluate(BROKEN_IMAGES) == [], f"{path}: images failed to load"
        math_pages += tab.locator(".katex").count() > 0
        if is_lesson(path):
            lessons += 1
            check_reading_aids(tab, path)
        else:
            assert tab.locator(".mfl-reader").count() == 0, f"{path} is not a lesson page"
        if tab.locator(".mfl-quiz").count():
            answer_and_open_notes(tab)  # axe sees feedback, explanations and notes
            quizzes += 1
        tab.add_script_tag(path=str(AXE))
        found = tab.evaluate(AXE_RUN, bool(os.environ.get("MFL_EVERY_PAGE")))
        problems += [f"{scheme} {path or '/'} {v}" for v in found]
    tab.context.close()
    assert lessons >= 3 and math_pages >= 3 and lessons < len(paths) and quizzes >= 1
    tab.watch.check()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", [LESSON, "embedding-space-math/theory/"])
def test_first_visit_fetches_what_the_weight_budget_counts(browser, base_url, site_dir, path, load):
    """bench/site.py's ``first_load`` lists every request a first visit makes (fonts aside),
    and the search index waits until search is used (docs/javascripts/lazy-search.js)."""
    bench_site = load("bench/site.py")
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
    watch = Watch(base_url)
    context.on("request", watch.request)
    fetched: set[str] = set()
    context.on(  # workers' requests too
        "request", lambda r: r.url.startswith(base_url) and fetched.add(urlparse(r.url).path)
    )
    page = context.new_page()
    watch.attach(page)
    open_page(page, path)
    page.wait_for_load_state("networkidle")  # no request for 500 ms
    counted = {
        "/" + f.relative_to(site_dir).as_posix()
        for f in bench_site.first_load(site_dir / path / "index.html", site_dir)
    }
    counted |= {c[: -len("index.html")] for c in counted if c.endswith("/index.html")}
    uncounted = {p for p in fetched if p not in counted and not p.endswith(bench_site.FONTS)}
    assert not uncounted, f"fetched but not counted by bench/site.py: {sorted(uncounted)}"
    index = "/" + bench_site.SEARCH_INDEX
    assert index not in fetched, "the search index should wait until search is used"
    with page.expect_request(f"**{index}"):
        page.keyboard.press("/")  # Material's shortcut focuses the search box
    context.close()
    watch.check()


# --- reader experience (issue #18) -----------------------------------------------


def numeric_question(page):
    form = first_question(page, "numeric")
    field = form.locator(".mfl-quiz-num input")
    return form, field


def submit(form, text: str) -> str:
    form.locator(".mfl-quiz-num input").fill(text)
    form.locator('button[type="submit"]').click()
    return form.locator(".mfl-quiz-feedback").inner_text()


def exact_notations(value: float) -> dict[str, str]:
    """``value`` written with a decimal comma, as a fraction and in e-notation, all exact."""
    text = repr(value)
    assert "e" not in text, text
    whole, _, frac = text.partition(".")
    if len(frac) == 3:  # "1,125" would be ambiguous (1.125 or 1125): "1,1250" is not
        frac += "0"
    return {
        "comma": f"{whole},{frac or '0'}",
        "fraction": f"{value * 4!r}/4",  # exact: a power of two
        "e-notation": f"{text}e0" if value == 0 else f"{value * 100!r}E-2",
    }


def test_numeric_answers_are_parsed_as_typed_and_unread_ones_never_graded(device_tab):
    tab = device_tab
    open_page(tab, LESSON)
    form, field = numeric_question(tab)
    qid = form.get_attribute("data-qid")
    correct = float(form.get_attribute("data-answer"))
    assert field.get_attribute("type") == "text"
    assert field.get_attribute("aria-describedby"), "the accepted formats are described"

    def nothing_recorded():
        record = local_storage(tab, f"mfl:quiz:{LESSON}") or {"answers": {}}
        assert qid not in record["answers"], record
        assert not [i for i in local_storage(tab, "mfl:practice") or [] if i["qid"] == qid]
        assert "is-correct" not in form.get_attribute("class")
        assert "is-wrong" not in form.get_attribute("class")
        assert form.locator(".mfl-quiz-explain").is_hidden(), "the answer must stay hidden"

    # Text a number field would have dropped or mangled: refused, quoted, not graded.
    for typed, says in [
        ("abc", "Could not read “abc” as a number"),
        ("1,234", "could mean 1.234 or 1234"),
        ("1/0", "divides by zero"),
        ("0,6,7", "Could not read “0,6,7”"),
        ("", "Type a number first"),
    ]:
        feedback = submit(form, typed)
        assert says in feedback, (typed, feedback)
        nothing_recorded()

    # The wheel and the arrow keys leave a typed answer alone.
    field.fill("12")
    field.focus()
    tab.keyboard.press("ArrowUp")
    tab.keyboard.press("ArrowDown")
    tab.keyboard.press("ArrowDown")
    field.hover()
    tab.mouse.wheel(0, -300)
    assert field.input_value() == "12"

    # Decimal comma, fraction and e-notation of the right answer are all right.
    notations = exact_notations(correct)
    feedback = submit(form, notations["comma"])
    assert feedback.startswith("✓ Correct"), feedback
    assert f"“{notations['comma']}” (read as" in feedback, "say how the comma was read"
    record = local_storage(tab, f"mfl:quiz:{LESSON}")["answers"][qid]
    assert record["correct"] and record["raw"] == notations["comma"]
    assert float(record["value"]) == correct
    for kind in ("fraction", "e-notation"):
        feedback = submit(form, notations[kind])
        assert feedback.startswith("✓ Correct"), (kind, notations[kind], feedback)
    # Thousands separators where they cannot be misread.
    for typed, read in [
        ("1 000 000", "1,000,000"),
        ("1.234,5", "1,234.5"),
        ("2.000.000", "2,000,000"),
    ]:
        feedback = submit(form, typed)
        assert f"“{typed}” (read as {read})" in feedback, feedback
    open_page(tab)  # reload
    form, field = numeric_question(tab)
    assert field.input_value() == notations["comma"], "the first answer, as it was typed"
    assert form.locator(".mfl-quiz-feedback").inner_text().startswith("✓ Correct")
    tab.watch.check()


def test_the_score_counts_first_answers_and_clearing_asks_first(tab):
    open_page(tab, LESSON)
    total = int(tab.locator(".mfl-quiz").get_attribute("data-total"))
    form = first_question(tab, "choice")
    qid = form.get_attribute("data-qid")
    answer(form, right=False)
    score = tab.locator(".mfl-quiz-score")
    assert f"0 of {total} correct" in score.inner_text()
    # the right answer is now on screen: choosing it again is no second attempt
    answer(form, right=True)
    feedback = form.locator(".mfl-quiz-feedback").inner_text()
    assert feedback.startswith("✓ Correct") and "score keeps your first answer" in feedback
    assert f"0 of {total} correct" in score.inner_text()
    assert [i["qid"] for i in local_storage(tab, "mfl:practice")] == [qid], "still to practice"
    # "Clear my answers" asks in the page, saying what happens to the queue
    tab.locator(".mfl-quiz-reset").click()
    confirm = tab.locator(".mfl-quiz-confirm")
    expect(confirm).to_be_visible()
    assert "practice queue keeps its question" in confirm.inner_text()
    confirm.locator(".mfl-quiz-confirm-no").click()
    expect(confirm).to_have_count(0)
    assert f"0 of {total} correct" in score.inner_text(), "kept"
    tab.locator(".mfl-quiz-reset").click()
    tab.locator(".mfl-quiz-confirm-yes").click()
    assert score.inner_text().startswith("Answers cleared; your practice queue is unchanged.")
    assert (local_storage(tab, f"mfl:quiz:{LESSON}") or {}).get("answered", 0) == 0
    assert [i["qid"] for i in local_storage(tab, "mfl:practice")] == [qid]
    tab.watch.check()


def test_practice_empty_state_names_the_pages_with_skill_checks(tab, site_dir):
    open_page(tab, "practice/")
    empty = tab.locator(".mfl-practice-empty")
    expect(empty).to_be_visible()
    text = empty.inner_text()
    assert "Each lesson page ends" not in text
    assert "kept only in this browser" not in text, "the page says so once, above"
    links = empty.locator("a")
    hrefs = {urlparse(a).path for a in links.evaluate_all("as => as.map(a => a.href)")}
    assert f"/{LESSON}" in hrefs
    with_quiz = {
        "/" + p.relative_to(site_dir).parent.as_posix() + "/"
        for p in site_dir.rglob("index.html")
        if 'class="mfl-quiz-q"' in p.read_text(encoding="utf-8")
    }
    assert hrefs == with_quiz
    tab.watch.check()


def test_search_index_holds_no_interface_text_or_answers(site_dir):
    """The built index (what search results show) has lesson text only."""
    docs = json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))[
        "docs"
    ]
    furniture = [
        "min read",
        "Your notes on this page",
        "Export all notes",
        "8,000 characters",
        "Check answer",
        "Clear my answers",
        "Your answer (a number)",
        "Question 1 of",
        "Review:",
        "Your answers and score are kept",
        "Your progress is read from",
        "practice queue needs JavaScript",
    ]
    # the home page names the notes panel's labels in its prose: that is content
    leaks = [
        f"{d['location']}: {word!r}"
        for d in docs
        for word in furniture
        if word in d["text"] and not d["location"].startswith("#")
    ]
    assert not leaks, "\n".join(leaks[:20])

    def words(fragment: str) -> list[str]:
        """The prose words of an HTML fragment (tags and formulas dropped)."""
        plain = html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment))
        return re.sub(r"\\\(.*?\\\)|\\\[.*?\\\]", " ", plain, flags=re.S).split()

    # the skill check's entries (the section and one a question, hooks/search.py): a
    # page's explanations sat there, giving answers away
    sections: dict[str, str] = {}
    for d in docs:
        page_url, _, anchor = d["location"].partition("#")
        if anchor == "skill-check" or anchor.startswith("q-"):
            sections[page_url] = sections.get(page_url, "") + " " + " ".join(words(d["text"]))
    explanations = 0
    for page in site_dir.rglob("index.html"):
        built = page.read_text(encoding="utf-8")
        url = page.parent.relative_to(site_dir).as_posix() + "/"
        found = re.findall(
            r'class="mfl-quiz-explain"[^>]*>(.*?)<p class="mfl-quiz-review"', built, re.S
        )
        if found:
            section = sections[url].strip()
            assert "Question" in built and section, f"{url}: the questions stay searchable"
        for fragment in found:
            prose = words(fragment)[:12]
            if sum(any(c.isalpha() for c in w) for w in prose) < 3:
                continue  # a formula-only explanation ("$0.16/0.2176=0.7353$.") leaves no words
            explanation = " ".join(prose)
            explanations += 1
            assert explanation not in section, f"{url}: answer indexed: {explanation!r}"
    assert explanations >= 40


def test_search_results_start_with_the_lesson_not_the_page_furniture(tab):
    open_page(tab, "")
    tab.keyboard.press("/")
    tab.locator("input.md-search__input").fill("similarity geometry")
    hit = tab.locator(f'a.md-search-result__link[href*="/{LESSON}"]').filter(visible=True).first
    expect(hit).to_be_visible(timeout=15_000)
    teaser = hit.inner_text()
    for furniture in ("min read", "Your notes", "Export all notes", "Check answer"):
        assert furniture not in teaser, teaser
    tab.watch.check()


def test_arriving_from_a_search_result_highlights_the_terms(tab, site_dir, load):
    """``?h=`` (Material's search.highlight) marks the terms; a plain visit still waits for search."""
    index = "/" + load("bench/site.py").SEARCH_INDEX
    fetched: list[str] = []
    tab.context.on("request", lambda r: fetched.append(urlparse(r.url).path))
    open_page(tab, LESSON)
    tab.wait_for_load_state("networkidle")
    assert index not in fetched, "an ordinary visit must not load the search index"
    assert tab.locator("article mark").count() == 0
    open_page(tab, LESSON + "?h=cosine")
    marks = tab.locator("article mark")
    expect(marks.first).to_be_visible(timeout=15_000)
    assert {m.lower() for m in marks.evaluate_all("ms => ms.map(m => m.textContent)")} == {"cosine"}
    assert index in fetched
    # the real path: a result clicked in the search box of another page
    open_page(tab, "")
    tab.keyboard.press("/")
    tab.locator("input.md-search__input").fill("anisotropy")
    hit = tab.locator('a.md-search-result__link[href*="geometry-of-meaning/?h=anisotropy"]')
    expect(hit.filter(visible=True).first).to_be_visible(timeout=15_000)
    hit.filter(visible=True).first.click()
    tab.wait_for_url("**/geometry-of-meaning/?h=anisotropy*")
    expect(tab.locator("article mark").filter(visible=True).first).to_be_visible(timeout=15_000)
    tab.watch.check()


# The download on the two devices in turn, one lesson each: the link is one
# template, and tests/test_site.py checks every lesson's built link and file (a
# theory page is the heaviest page to load).
@pytest.mark.parametrize(
    ("lesson", "viewport", "scheme"),
    [("embedding-space-math", DESKTOP, "light"), ("attention-mechanism-math", PHONE, "dark")],
    ids=["embedding-space-math-desktop-light", "attention-mechanism-math-phone-dark"],
)
def test_theory_notebook_downloads_from_the_site(
    browser, base_url, lesson, viewport, scheme, tmp_path, site_dir
):
    tab = new_tab(browser, base_url, viewport, scheme)
    open_page(tab, f"{lesson}/theory/")
    button = tab.locator(".mfl-notebook-download a")
    expect(button).to_be_visible()
    assert urlparse(button.evaluate("a => a.href")).path == f"/{lesson}/theory/theory.ipynb"
    with tab.expect_download() as info:
        button.click()
    download = info.value
    assert download.suggested_filename == f"{lesson}-theory.ipynb"
    assert urlparse(download.url).hostname == "127.0.0.1"
    saved = tmp_path / "theory.ipynb"
    download.save_as(saved)
    assert saved.read_bytes() == (site_dir / lesson / "theory" / "theory.ipynb").read_bytes()
    # the page says that the download has no outputs until it is run, and it has none
    note = tab.locator(".mfl-notebook-download .mfl-notebook-note")
    expect(note).to_be_visible()
    assert "without its outputs" in note.inner_text()
    cells = json.loads(saved.read_text(encoding="utf-8"))["cells"]
    assert not [c for c in cells if c.get("outputs")], "the note says it has no outputs"
    # each figure the notebook drew opens full size on a tap, as a lesson figure does:
    # a link to the same image as a file (issue #54)
    images = tab.locator("article .jp-RenderedImage img")
    assert images.count() >= 1
    for i in range(images.count()):
        image = images.nth(i)
        href = image.evaluate("i => i.closest('a.mfl-figure-open') && i.closest('a').href")
        assert href, f"figure {i + 1} is not a link"
        opened = tab.request.get(href)
        inline = image.evaluate("i => i.src").split("base64,", 1)[1]
        assert opened.ok and opened.body() == base64.b64decode(inline), href
    if viewport == PHONE:
        cue = tab.locator("article a.mfl-notebook-figure").first.evaluate(
            "a => getComputedStyle(a, '::after').content"
        )
        assert "Tap the figure" in cue, cue
    tab.context.close()
    tab.watch.check()


def test_importing_notes_stores_only_known_pages_and_says_what_was_stored(device_tab, tmp_path):
    tab = device_tab
    open_page(tab, LESSON)
    tab.locator(".mfl-notes > summary").click()
    area = tab.locator("#mfl-note-text")
    area.fill("x" * 8000)  # a full note: nothing more fits
    tab.wait_for_function(
        "() => document.querySelector('.mfl-notes-status').textContent.startsWith('Saved')"
    )

    def note(page: str, title: str, text: str) -> str:
        return f"# {title}\n<!-- mfl-page: {page} -->\n\n{text}\n"

    intuition = "embedding-space-math/intuition/"
    upload = tmp_path / "notes.md"
    upload.write_text(
        "<!-- Math for LLMs: private notes exported 2026-01-01 -->\n\n"
        + note(intuition, "1. Intuition", "imported note")
        + note(LESSON, "3. Similarity Geometry", "does not fit")
        + note("__proto__", "Proto", "polluted")
        + note("../../etc/", "Escape", "outside")
        + note("embedding-space-math/no-such-page/", "Gone", "stale"),
        encoding="utf-8",
    )
    tab.locator(".mfl-notes-file").set_input_files(str(upload))
    status = tab.locator(".mfl-notes-status")
    expect(status).to_contain_text("Imported notes for 1 page")
    message = status.inner_text()
    assert "merged" not in message, message
    assert "already full" in message and "3 notes were skipped" in message, message
    keys = tab.evaluate("Object.keys(localStorage).filter(k => k.startsWith('mfl:note:')).sort()")
    assert keys == sorted([f"mfl:note:{LESSON}", f"mfl:note:{intuition}"]), keys
    assert area.input_value() == "x" * 8000
    # a file far larger than any export is not read at all
    big = tmp_path / "big.md"
    big.write_bytes(b"#" * (3 * 1024 * 1024))
    tab.locator(".mfl-notes-file").set_input_files(str(big))
    expect(status).to_contain_text("Nothing was imported: that file is 3,072 KB")
    # the panel stays open on this page only
    open_page(tab, intuition)
    assert tab.locator(".mfl-notes").get_attribute("open") is None
    assert tab.locator("#mfl-note-text").input_value() == "imported note"
    tab.watch.check()


def test_wide_formulas_and_code_show_that_they_scroll_on_a_phone(browser, base_url):
    """An overlay scrollbar is hidden until one scrolls: a block wider than a phone's
    column shades the edge it can scroll towards (a scroll shadow in its background)."""
    tab = new_tab(browser, base_url, PHONE, "dark")
    open_page(tab, "embedding-space-math/training-embeddings/")
    wide = """sel => [...document.querySelectorAll(sel)]
      .filter(e => e.scrollWidth > e.clientWidth + 2)
      .map(e => { const s = getComputedStyle(e);
                  return [s.backgroundImage.includes('radial-gradient'),
                          s.backgroundAttachment.includes('local')]; })"""
    for selector in (".katex-display", "pre > code"):
        found = tab.evaluate(wide, selector)
        assert found, f"expected a {selector} wider than a phone on this page"
        assert all(shadow and local for shadow, local in found), (selector, found)
    tab.context.close()
    tab.watch.check()


@pytest.mark.parametrize(
    "path",
    [
        "",
        "tokenization-math/",
        "embedding-space-math/",
        "attention-mechanism-math/",
        "positional-encodings/",
        "language-model-probability/",
    ],
)
def test_section_maps_fit_a_phone_with_every_reading_time_in_view(browser, base_url, path):
    """On a phone each row of a lesson table is a card: page, time, and what it covers."""
    for scheme in ("light", "dark"):
        tab = new_tab(browser, base_url, PHONE, scheme)
        open_page(tab, path)
        cells = tab.evaluate(
            """() => [...document.querySelectorAll('.mfl-section-map td, .mfl-lessons td')]
              .map(td => { const r = td.getBoundingClientRect();
                           return [td.textContent.trim().slice(0, 30), r.left, r.right]; })"""
        )
        assert len(cells) >= 6, cells
        width = tab.evaluate("() => document.documentElement.clientWidth")
        off = [c for c in cells if c[1] < 0 or c[2] > width + 1]
        assert not off, off  # nothing, the reading time included, needs a sideways scroll
        times = tab.evaluate(
            "() => [...document.querySelectorAll('.mfl-reading-time')].map(e => e.getBoundingClientRect().right)"
        )
        assert times and max(times) <= width, times
        tab.context.close()
        tab.watch.check()


# --- reader experience (issue #29) -----------------------------------------------


def test_answers_say_what_happens_to_the_practice_queue(tab):
    """A right answer after a wrong one keeps the question queued and says so;
    input that is no number gets the generic reason, quoted short."""
    open_page(tab, LESSON)
    form = first_question(tab, "choice")
    answer(form, right=False)
    answer(form, right=True)
    feedback = form.locator(".mfl-quiz-feedback").inner_text()
    assert "stays in your practice queue" in feedback, feedback
    assert "answer it on the Practice page to remove it" in feedback, feedback
    tab.locator(".mfl-quiz-reset").click()
    confirm = tab.locator(".mfl-quiz-confirm").inner_text()
    assert "a correct answer, here once cleared or on the Practice page, removes it" in confirm
    tab.locator(".mfl-quiz-confirm-yes").click()
    answer(form, right=True)  # a first answer again: it leaves the queue, as promised
    assert "Removed from your practice queue" in form.locator(".mfl-quiz-feedback").inner_text()
    assert local_storage(tab, "mfl:practice") == []

    numeric, _ = numeric_question(tab)
    feedback = submit(numeric, "<script>alert(1)</script>")
    assert "as a number" in feedback and "fraction" not in feedback.split(".")[0], feedback
    feedback = submit(numeric, "9" * 3000)
    assert "…”" in feedback and len(feedback) < 400, len(feedback)
    tab.watch.check()


def test_practice_queue_is_grouped_by_page_in_question_order(tab):
    pe = "positional-encodings/alibi/"
    open_page(tab, LESSON)
    forms = tab.locator("form.mfl-quiz-q")
    qids = [forms.nth(i).get_attribute("data-qid") for i in range(2)]
    answer(forms.nth(1), right=False)  # missed in reverse order,
    open_page(tab, pe)
    answer(first_question(tab, "choice"), right=False)  # with another lesson's between
    open_page(tab, LESSON)
    answer(tab.locator("form.mfl-quiz-q").nth(0), right=False)
    open_page(tab, "practice/")
    tab.locator(".mfl-practice-item form.mfl-quiz-q").first.wait_for()
    cards = tab.locator(".mfl-practice-item").evaluate_all(
        "cs => cs.map(c => [c.dataset.page, c.dataset.qid])"
    )
    assert cards[:2] == [[LESSON, qids[0]], [LESSON, qids[1]]], cards  # course order, then page
    assert cards[2][0] == pe, cards
    headings = tab.locator("h2.mfl-practice-page").all_inner_texts()
    assert headings == ["3. Similarity Geometry", "6. ALiBi: Attention with Linear Biases"], (
        headings
    )
    # each card names its question and section so that it cannot read as a count
    # ("Question 2 of 3. Similarity Geometry" did, issue #54)
    labels = tab.locator(".mfl-practice-from a").all_inner_texts()
    assert labels[:2] == [
        "Question 1 · §3 Similarity Geometry",
        "Question 2 · §3 Similarity Geometry",
    ]
    assert labels[2].startswith("Question ") and labels[2].endswith(
        " · §6 ALiBi: Attention with Linear Biases"
    ), labels
    assert not any(re.search(r"\bof \d", label) for label in labels), labels
    tab.watch.check()


def test_a_note_can_be_deleted_and_the_delete_undone(tab):
    open_page(tab, LESSON)
    tab.locator(".mfl-notes > summary").click()
    area = tab.locator("#mfl-note-text")
    area.fill("keep me")
    tab.wait_for_function(
        "() => document.querySelector('.mfl-notes-status').textContent.startsWith('Saved')"
    )
    tab.locator(".mfl-notes-delete").click()
    assert area.input_value() == ""
    assert local_storage(tab, f"mfl:note:{LESSON}") is None
    expect(tab.locator(".mfl-notes-status")).to_have_text("Note deleted from this browser.")
    tab.locator(".mfl-notes-undo").click()
    assert area.input_value() == "keep me"
    assert local_storage(tab, f"mfl:note:{LESSON}")["text"] == "keep me"
    expect(tab.locator(".mfl-notes-undo")).to_be_hidden()
    tab.watch.check()


def test_the_lesson_pdf_link_is_decided_at_build_time(tab, site_dir, load):
    """The overview links its PDF relatively, shown only in a build told that the copy
    will carry the PDFs (MFL_PUBLISH_PDFS=1: the deploy, `make pdf`; hooks/reader.py).
    No script asks the server whether the PDF is there: that HEAD request logged a 404
    console error on every overview of a build without PDFs (issue #54)."""
    lesson = "positional-encodings"
    built = (site_dir / lesson / "index.html").read_text(encoding="utf-8")
    assert f'href="../pdf/{lesson}.pdf"' in built  # relative: never the public site
    assert "/pdf/" not in built.replace(f'href="../pdf/{lesson}.pdf"', "")
    published = os.environ.get("MFL_PUBLISH_PDFS") == "1"
    asked: list[str] = []
    tab.on("request", lambda r: urlparse(r.url).path.endswith(".pdf") and asked.append(r.url))
    open_page(tab, f"{lesson}/")
    tab.wait_for_load_state("networkidle")
    paragraph = tab.locator("p.mfl-pdf-link")
    expect(paragraph).to_be_visible() if published else expect(paragraph).to_be_hidden()
    assert asked == [], f"the page asked for a PDF: {asked}"
    # the same hook, told that the PDFs are published, shows the paragraph
    hook = load("hooks/reader.py")
    page = type("P", (), {"url": f"{lesson}/"})()
    source = '<p class="mfl-pdf-link"><a href="https://x.org/s/pdf/a.pdf">PDF</a></p>'
    shown = hook.local_pdf_links(source, page, "https://x.org/s/", published=True)
    hidden = hook.local_pdf_links(source, page, "https://x.org/s/", published=False)
    assert shown == '<p class="mfl-pdf-link" data-mfl-pdf><a href="../pdf/a.pdf">PDF</a></p>'
    assert hidden == shown.replace('link" data', 'link" hidden data')
    tab.watch.check()


def test_the_console_stays_clean_across_the_sample_pages(browser, base_url, site_dir):
    """No console error, page error, HTTP error or dialog on one page of each kind
    (``sample_pages``) and on every lesson overview, on a desktop in the light palette
    and on a phone in the dark one; nor when a figure is opened full size, where the
    browser asks for /favicon.ico (issue #54: a PDF probe and the favicon both 404ed)."""
    overviews = [
        path
        for path in site_pages(site_dir)
        if 'class="mfl-section-map' in (site_dir / path / "index.html").read_text("utf-8")
    ]
    assert len(overviews) >= 4, overviews
    figure = "positional-encodings/figures/s1-where-position-enters.svg"
    assert (site_dir / figure).is_file() and (site_dir / "favicon.ico").is_file()
    for viewport, scheme, paths in (
        (DESKTOP, "light", sorted({*sample_pages(site_dir), *overviews})),
        (PHONE, "dark", overviews),
    ):
        tab = new_tab(browser, base_url, viewport, scheme)
        for path in paths:
            open_page(tab, path)
            tab.wait_for_load_state("networkidle")
        open_page(tab, FIGURE_PAGE)
        tab.locator("article a.mfl-figure-open").first.click()
        tab.wait_for_url(f"**/{figure}")
        tab.wait_for_load_state("networkidle")
        icon = tab.request.get(base_url.rstrip("/") + "/favicon.ico")
        assert icon.ok and icon.body()[:4] == b"\x00\x00\x01\x00", icon.status
        tab.context.close()
        tab.watch.check()


FIGURE_PAGE = "positional-encodings/intuition/"


def test_on_a_phone_figures_open_full_size_and_formulas_and_tables_fit(browser, base_url):
    tab = new_tab(browser, base_url, PHONE)
    open_page(tab, FIGURE_PAGE)
    width = tab.evaluate("() => document.documentElement.clientWidth")
    # figures: a link to the SVG itself, which the browser shows full size
    links = tab.locator("article a.mfl-figure-open")
    assert links.count() >= 1
    for i in range(links.count()):
        link = links.nth(i)
        src = link.locator("img").get_attribute("src")
        assert link.get_attribute("href") == src and src.endswith(".svg")
        shown, natural = link.locator("img").evaluate("i => [i.clientWidth, i.naturalWidth]")
        assert shown <= width < natural, (shown, natural)  # squeezed here, larger full size
    # display formulas stay inside the text column, never flush with the screen edge
    edges = tab.evaluate(
        """() => [...document.querySelectorAll('article .katex-display')]
          .map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })"""
    )
    assert edges and all(left >= 8 and right <= width - 8 for left, right in edges), edges
    # the scroll cue's shadow follows the palette (the tables below are then seen in the dark one)
    shadow = (
        "() => getComputedStyle(document.querySelector('.katex-display'))"
        ".getPropertyValue('--mfl-cue-shadow').trim()"
    )
    light = tab.evaluate(shadow)
    tab.locator("label.md-header__button[for='__palette_1']").click()
    tab.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'slate'")
    assert tab.evaluate(shadow) == "#000000cc" != light, light
    # wide tables are cards: every cell in view, labelled with its column
    for path in (
        "notation/",
        "positional-encodings/formal-setup/",
        "positional-encodings/why-this-matters/",
    ):
        open_page(tab, path)
        cells = tab.evaluate(
            """() => [...document.querySelectorAll('article table[data-mfl-cards] td')]
              .map(td => { const r = td.getBoundingClientRect();
                           return [r.left, r.right, getComputedStyle(td, '::before').content]; })"""
        )
        assert cells, path
        off = [c for c in cells if c[0] < 0 or c[1] > width + 1]
        assert not off, (path, off[:3])
        assert all(c[2] not in ("none", "normal", '""') for c in cells), (path, cells[:3])
        # a card per row, not a column squeezed to a few characters a line
        height, rows = tab.evaluate(
            """() => { const t = document.querySelector('article table[data-mfl-cards]');
                       return [t.offsetHeight, t.querySelectorAll('tbody tr').length]; }"""
        )
        assert height / rows < 600, (path, height, rows)
    tab.context.close()
    tab.watch.check()


def test_keyboard_skips_the_hidden_search_box_and_space_toggles_the_palette(tab):
    open_page(tab, LESSON)
    tab.locator("input.md-search__input").focus()
    tab.keyboard.press("Escape")
    tab.locator("input.md-search__input").focus()
    tab.keyboard.press("Tab")
    landed = tab.evaluate(
        """() => { const e = document.activeElement; const r = e.getBoundingClientRect();
                   return [e.className, r.width * r.height]; }"""
    )
    assert "md-search__scrollwrap" not in landed[0] and landed[1] > 0, landed
    scheme = "document.body.getAttribute('data-md-color-scheme')"
    assert tab.evaluate(scheme) == "default"
    toggle = tab.locator("label.md-header__button[for='__palette_1']")
    toggle.focus()
    tab.keyboard.press("Space")
    tab.wait_for_function(f"() => {scheme} === 'slate'")
    tab.watch.check()
