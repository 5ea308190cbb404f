"""Skill checks: every stored answer is recomputed with the kernel.

The quiz blocks are parsed with the build hook's own parser
(``hooks/quiz.py``), so the tests and the site read the same questions. Each
question's ``check`` expression is evaluated with ``np`` and ``lm`` in scope:
a numeric answer must lie within its tolerance of the value, a choice answer
must equal it. Section pages (first heading ``# N. Title``) need at least
four questions under a final ``## Skill check`` heading; ids are unique
site-wide; and, once ``site/`` is built, every ``teaches`` anchor is a heading
id on the built page.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from mkdocs.exceptions import PluginError

import llmmath as lm

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
_spec = importlib.util.spec_from_file_location("mfl_quiz_hook", ROOT / "hooks" / "quiz.py")
quiz = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # dataclasses need it
_spec.loader.exec_module(quiz)

PAGES = sorted(DOCS.rglob("*.md"))
SECTION = re.compile(r"^# \d+\.\s+\S")
STUB = re.compile(r"is being written\.", re.I)
MIN_QUESTIONS = 4


def rel(path: Path) -> str:
    return path.relative_to(DOCS).as_posix()


def questions(path: Path):
    return quiz.questions_of(path.read_text(encoding="utf-8"), rel(path))


ALL = [(page, q) for page in PAGES for q in questions(page)]
SECTIONS = [
    p for p in PAGES if SECTION.match(p.read_text(encoding="utf-8").lstrip().split("\n", 1)[0])
]


def test_there_are_section_pages_and_questions():
    assert SECTIONS, "no section pages (first heading `# N. Title`) found"
    assert ALL, "no skill-check questions found"


@pytest.mark.parametrize("page,q", ALL, ids=[q.id for _, q in ALL])
def test_stored_answer_matches_the_kernel(page, q):
    if q.check is None:
        assert q.type == "choice", "numeric questions must have a check (the parser enforces it)"
        pytest.skip(f"{q.id}: a choice question with no computable check")
    value = eval(q.check, {"np": np, "lm": lm})  # noqa: S307 - expressions written by the authors
    if q.type == "numeric":
        value = float(value)
        assert math.isfinite(value), f"{q.id}: check gave {value}"
        assert abs(value - q.answer) <= q.tolerance, (
            f"{rel(page)} `{q.id}`: stored answer {q.answer} ± {q.tolerance}, but the kernel gives {value!r}"
        )
    else:
        assert int(value) == value and int(value) == q.answer, (
            f"{rel(page)} `{q.id}`: stored answer is option {q.answer} ({q.options[q.answer]!r}), "
            f"but the check gives {value!r}"
        )


def test_question_ids_are_unique_site_wide():
    seen: dict[str, str] = {}
    for page, q in ALL:
        assert q.id not in seen, f"`{q.id}` is used in {seen[q.id]} and {rel(page)}"
        seen[q.id] = rel(page)


@pytest.mark.parametrize("page", SECTIONS, ids=rel)
def test_every_section_page_ends_with_a_skill_check(page):
    text = page.read_text(encoding="utf-8")
    blocks = quiz.parse_quizzes(text, rel(page))
    if not blocks and STUB.search(text):
        pytest.skip(f"{rel(page)} is still a stub")
    total = sum(len(b.questions) for b in blocks)
    assert total >= MIN_QUESTIONS, (
        f"{rel(page)}: {total} skill-check questions, need at least {MIN_QUESTIONS}"
    )
    kinds = {q.type for b in blocks for q in b.questions}
    assert kinds == {"choice", "numeric"}, (
        f"{rel(page)}: mix choice and numeric questions (has {kinds})"
    )
    lines = text.split("\n")
    headings = [i for i, line in enumerate(lines) if line.startswith("## ")]
    assert headings and lines[headings[-1]].strip() == "## Skill check", (
        f"{rel(page)}: the last `##` heading must be `## Skill check`"
    )
    assert all(b.start > headings[-1] for b in blocks), (
        f"{rel(page)}: quiz blocks belong under `## Skill check`"
    )
    tail = "\n".join(lines[blocks[-1].end + 1 :]).strip()
    assert not tail, f"{rel(page)}: nothing may follow the skill check, found {tail[:60]!r}"


@pytest.mark.parametrize("page", sorted({p for p, _ in ALL}), ids=rel)
def test_teaches_anchors_exist_in_the_built_page(page, site_dir):
    src = rel(page)
    url = src[: -len("index.md")] if src.endswith("index.md") else src[: -len(".md")] + "/"
    built = (site_dir / url / "index.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'\bid="([^"]+)"', built))
    qs = questions(page)
    for q in qs:
        assert q.teaches in ids, (
            f"{src} `{q.id}`: teaches '#{q.teaches}' is not an id on the built page"
        )
        assert f'data-qid="{q.id}"' in built
    assert built.count('class="mfl-quiz-q"') == len(qs)
    assert "data-mfl-teaches" not in built, (
        "every Review link gets its heading's title at build time"
    )
    assert "```quiz" not in built


def test_the_practice_page_holds_every_question_as_its_page_shows_it(site_dir):
    """reader.js shows a queued question from this copy, fetching nothing (it works from file://)."""
    practice = (site_dir / "practice" / "index.html").read_text(encoding="utf-8")
    bank = json.loads(
        re.search(
            r'<script type="application/json" class="mfl-practice-bank">(.*?)</script>',
            practice,
            re.S,
        )[1]
    )
    for url, entry in bank.items():
        built = (site_dir / url / "index.html").read_text(encoding="utf-8")
        assert entry["questions"] == {m["qid"]: m[0] for m in quiz.FORM.finditer(built)}, url
        assert entry["total"] == len(entry["questions"])
    assert sorted(q for e in bank.values() for q in e["questions"]) == sorted(q.id for _, q in ALL)


# --- the parser ------------------------------------------------------------

GOOD = """\
```quiz
- id: t-choice
  type: choice
  question: 'Which is $\\mathbf u$?'
  options: ['a', 'b']
  answer: 1
  explain: 'Because.'
  teaches: '#a'
- id: t-numeric
  type: numeric
  question: 'How much?'
  answer: 2
  tolerance: 0.5
  explain: 'Two.'
  teaches: '#a'
  check: '1 + 1'
```
"""


def test_parser_reads_a_good_block():
    [block] = quiz.parse_quizzes(GOOD)
    a, b = block.questions
    assert (a.type, a.answer, a.options, a.teaches) == ("choice", 1, ["a", "b"], "a")
    assert a.question == "Which is $\\mathbf u$?"
    assert (b.type, b.answer, b.tolerance, b.check) == ("numeric", 2.0, 0.5, "1 + 1")


@pytest.mark.parametrize(
    "change,message",
    [
        (("answer: 1\n", "answer: 2\n"), "0-based index"),
        (("  check: '1 + 1'\n", ""), "needs a `check`"),
        (("  tolerance: 0.5\n", ""), "needs `answer` and `tolerance`"),
        (("  explain: 'Two.'\n", ""), "missing field"),
        (("  explain: 'Two.'\n", "  explanation: 'Two.'\n"), "unknown field"),
        (("type: numeric", "type: number"), "`type` must be"),
        (("id: t-numeric", "id: t-choice"), "duplicate question id"),
        (("id: t-numeric", "id: T_numeric"), "`id` must match"),
        (("teaches: '#a'\n  check", "teaches: 'a'\n  check"), "`teaches` must be an anchor"),
        (("check: '1 + 1'", "check: '1 +'"), "not a valid Python expression"),
        (
            ("question: 'Which is $\\mathbf u$?'", 'question: "Which is $\\mathbf u$?"'),
            "single quotes",
        ),
        (("  options: ['a', 'b']\n", "  options: ['a']\n"), "at least two"),
        (("tolerance: 0.5", "tolerance: -1"), "tolerance"),
        (("question: 'How much?'", "question: |\n    How\n\n    much?"), "one paragraph"),
    ],
)
def test_parser_rejects_bad_blocks(change, message):
    old, new = change
    assert old in GOOD
    with pytest.raises(PluginError, match=re.escape(message)):
        quiz.parse_quizzes(GOOD.replace(old, new, 1), "x.md")


def test_parser_rejects_yaml_that_is_not_a_list():
    with pytest.raises(PluginError, match="non-empty YAML list"):
        quiz.parse_quizzes("```quiz\nid: x\n```\n")
    with pytest.raises(PluginError, match="invalid quiz YAML"):
        quiz.parse_quizzes("```quiz\n- id: [x\n```\n")


def test_parser_ignores_quiz_fences_inside_other_fences():
    text = "````markdown\n" + GOOD + "````\n"
    assert quiz.parse_quizzes(text) == []


def test_rendered_question_is_accessible_and_hides_the_answer():
    [block] = quiz.parse_quizzes(GOOD)
    out = quiz.render_block(block, "lesson/page/", 1, 2)
    assert out.count("<fieldset") == 2 and out.count("<legend") == 2
    assert out.count('type="radio"') == 2
    for i in range(2):
        assert f'<label for="q-t-choice-{i}">' in out
    # a text field that reader.js parses: a number field silently drops what it cannot read
    assert '<label for="q-t-numeric-in">' in out and 'type="number"' not in out
    assert '<input type="text"' in out and 'aria-describedby="q-t-numeric-hint"' in out
    assert out.count('role="status" aria-live="polite"') == 2
    assert out.count('class="mfl-quiz-explain" hidden data-search-exclude') == 2
    assert 'data-answer="1"' in out and 'data-answer="2"' in out and 'data-tolerance="0.5"' in out
    assert "Within ±0.5 of the answer counts as right." in out  # said before answering
    assert quiz._tolerance_text(1e-7) == "Within ±1e-07 of the answer counts as right."
    assert quiz._tolerance_text(0.0) == "It must be exact."


def test_review_links_get_the_heading_title_and_unknown_anchors_fail():
    from types import SimpleNamespace

    page = SimpleNamespace(file=SimpleNamespace(src_uri="les/a.md"), url="les/a/")
    heading = '<h2 id="32-cosine">3.2 <em>Cosine</em><a class="headerlink" href="#32-cosine">&para;</a></h2>'
    link = (
        '<p class="mfl-quiz-review">Review: <a href="#{}" data-mfl-teaches="">this section</a></p>'
    )
    out = quiz.on_page_content(heading + link.format("32-cosine"), page, None, None)
    assert 'Review: <a href="#32-cosine">3.2 <em>Cosine</em></a>' in out
    with pytest.raises(PluginError, match="not a heading id on this page"):
        quiz.on_page_content(heading + link.format("33-missing"), page, None, None)


# --- readers' stored data across a change of the nav -------------------------


def _stored_keys(nav: list, reader) -> dict[str, set]:
    """The keys reader.js stores a reader's data under, as a build with ``nav`` writes them.

    Notes, visits and quiz records are keyed by the ``data-page`` of the page's
    reader block (hooks/reader.py); answers and the practice queue by a
    question's ``data-page`` and ``data-qid`` (hooks/quiz.py); the progress
    tables read each row's ``data-page``. Run through the hooks themselves, on
    every page of the real docs/ under the given nav.
    """
    from mkdocs.config import load_config
    from mkdocs.structure.files import get_files
    from mkdocs.structure.nav import get_navigation

    config = load_config(str(ROOT / "mkdocs.yml"), nav=nav, plugins=[], hooks=[])
    files = get_files(config)
    site_nav = get_navigation(files, config)
    quiz.on_pre_build(config)
    quiz.on_files(files, config)
    quiz.on_nav(site_nav, config, files)
    keys: dict[str, set] = {"page": set(), "question": set(), "progress": set()}
    for page in site_nav.pages:
        markdown = quiz.on_page_markdown(page.file.content_string, page, config, files)
        for form in quiz.FORM.finditer(markdown):
            page_attr = re.search(r'data-page="([^"]*)"', form[0])[1]
            keys["question"].add((page_attr, form["qid"]))
        block = reader.on_page_content("<h1>T</h1>", page, config, None)
        if reader.is_lesson(page):
            keys["page"].add(re.search(r'class="mfl-reader" data-page="([^"]*)"', block)[1])
    for lesson in {p.file.src_uri.split("/")[0] for p in site_nav.pages if reader.is_lesson(p)}:
        table = quiz._progress_table(lesson, site_nav.pages[0])
        keys["progress"] |= {
            (lesson, *row)
            for row in re.findall(r'<tr data-page="([^"]*)" data-total="(\d+)">', table)
        }
    quiz.on_pre_build(config)  # leave no build state behind
    quiz.on_nav(None, config, files)
    return keys


@pytest.mark.parametrize(
    "inserted,slug",
    [
        ("Tokenization Math", "tokenization-math"),
        ("Attention Mechanism Math", "attention-mechanism-math"),
        ("Language Model Probability", "language-model-probability"),
    ],
)
def test_inserting_a_lesson_changes_no_key_a_reader_has_stored(load, inserted, slug):
    """Adding Attention Mechanism Math as the second lesson moved Positional
    Encodings from second to third in the nav, and Tokenization Math, inserted
    first, moved every other lesson down: every note, answer, visit and practice
    entry stored before must be found under the same key after."""
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    before = [e for e in nav if not (isinstance(e, dict) and inserted in e)]
    assert len(before) == len(nav) - 1, f"no {inserted!r} section in the nav"
    reader = load("hooks/reader.py")
    old, new = _stored_keys(before, reader), _stored_keys(nav, reader)
    assert old["page"] and old["question"] and old["progress"]
    for kind in old:
        lost = old[kind] - new[kind]
        assert not lost, f"{kind} keys a reader may have stored are gone: {sorted(lost)[:5]}"
    # a key is the page's URL, made from its file's path (folder and slug),
    # and the question's id: no lesson number or nav position in it. (Without
    # the mkdocs-jupyter plugin a notebook's URL is its file's: theory.ipynb.)
    assert f"{slug}/" in new["page"]
    pattern = r"[a-z-]+/([a-z0-9-]+/|theory\.ipynb)?"
    odd = [key for key in new["page"] if not re.fullmatch(pattern, key)]
    assert not odd, odd
