"""Skill checks: a ```` ```quiz ```` fence of YAML becomes an accessible self-check.

Why our own hook and not mkdocs-quiz
------------------------------------
mkdocs-quiz 1.7.1 was read before writing this. It offers single/multiple
choice and text fill-in-the-blank, but (1) no numeric answers with a
tolerance (blanks are compared as lower-cased strings), (2) no
machine-readable answer record the tests could recompute with the kernel
(answers are ``- [x]`` checkboxes in HTML-ish Markdown), (3) no cross-lesson
practice queue, and its per-page localStorage record has its own shape that
our lesson overview would have to reverse-engineer, (4) it inlines its CSS/JS
into each quiz page and writes typed answers back with ``innerHTML``, and (5) it
pulls ``requests``, ``rich``, ``questionary`` and a CLI into the docs
dependencies. This hook is about 400 lines, with a format the tests can check.

Format (documented for authors in CONTRIBUTING)
-----------------------------------------------
At the end of a section page, under ``## Skill check``, a fence whose info
string is exactly ``quiz`` holds a YAML list of questions::

    ```quiz
    - id: cosine-scale                 # unique across the site: [a-z0-9-]
      type: choice                     # choice | numeric
      question: 'Scaling $\\mathbf u$ by 3 multiplies the cosine by ...'
      options: ['3', '9', '1 (it is unchanged)', '1/3']
      answer: 2                        # 0-based index into options
      explain: 'Cosine divides by both norms, so ...'
      teaches: '#32-cosine-similarity' # a heading id on this page
      check: '2 if ... else -1'        # optional for choice questions
    - id: unit-distance
      type: numeric
      question: 'For unit vectors with cosine 0.5, what is ...?'
      answer: 1.0
      tolerance: 0.01                  # required for numeric questions
      explain: '...'
      teaches: '#33-euclidean-distance'
      check: 'float(lm.euclidean([1., 0.], [0.5, 3**0.5/2]))'  # required
    ```

* Text fields (question, options, explain) are Markdown; math works. Put
  text with backslashes in single quotes or a block scalar (``|`` / ``>``):
  YAML double quotes treat ``\\m`` as an (invalid) escape.
* ``check`` is a Python expression that ``tests/test_quiz.py`` evaluates with
  ``np`` (numpy) and ``lm`` (``import llmmath as lm``) in scope. A numeric
  question's ``check`` must land within ``tolerance`` of ``answer``; a choice
  question's must equal ``answer``, so write it as
  ``'<index> if <the fact holds> else -1'``. Here it is only compiled. A check
  that needs intermediate values goes in a folded block (``>-``) as a tuple
  of assignment expressions whose last item is the result, e.g.
  ``(E := ..., W := ..., 1 if ... else -1)[-1]``.
* Invalid YAML, an unknown or missing field, a duplicate id or a ``teaches``
  anchor that is not a heading on the page fails the build.

Output: a ``<section class="mfl-quiz">`` of one ``<form class="mfl-quiz-q">``
per question (fieldset + legend, real radio inputs or a labeled text input
that reader.js reads as a number, a submit button, a ``role="status"``
feedback line and a hidden explanation with a "Review" link to the teaching
heading). Everything but the question and its options is marked
``data-search-exclude``: buttons, labels, feedback and the explanation (which
gives the answer away) stay out of the search index (``hooks/search.py``).
The text goes through the page's own Markdown pipeline (``md_in_html``), so
KaTeX, links and link validation work as elsewhere.
``docs/javascripts/reader.js`` does the rest in the browser. The lesson
overview's ``mfl-progress`` placeholder and the Practice page's
``mfl-practice`` placeholder are filled here too; the latter carries every
question as its page shows it (``_practice_bank``), so the Practice page needs
no request, and works in the offline copy opened from ``file://``.
"""

from __future__ import annotations

import html
import json
import math
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.utils import get_relative_url

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*?)[ \t]*$")
ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
REQUIRED = {"id", "type", "question", "explain", "teaches"}
ALLOWED = {
    "choice": REQUIRED | {"options", "answer", "check"},
    "numeric": REQUIRED | {"answer", "tolerance", "check"},
}
HEADING = re.compile(r"<h(?P<level>[1-6])(?P<attrs>[^>]*)>(?P<body>.*?)</h(?P=level)>", re.S)
HEADING_ID = re.compile(r'\bid="(?P<id>[^"]+)"')
HEADERLINK = re.compile(r'<a class="headerlink"[^>]*>.*?</a>', re.S)
TEACHES = re.compile(
    r'<a href="#(?P<anchor>[^"]*)" data-mfl-teaches(?:="")?>(?P<text>.*?)</a>', re.S
)
# A lesson overview's progress table; "mfl-progress mfl-progress-compact" (the home
# page) shows only the summary line, the table being kept for the script to read.
PROGRESS = re.compile(
    r'<div class="mfl-progress(?P<compact> mfl-progress-compact)?" data-lesson="(?P<lesson>[^"]+)"></div>'
)
PRACTICE = re.compile(r'<div class="mfl-practice"></div>')
FORM = re.compile(r'<form class="mfl-quiz-q"[^>]*\sdata-qid="(?P<qid>[^"]+)".*?</form>', re.S)
# Filled in on_post_page, once every page's content is final.
BANK = '<script type="application/json" class="mfl-practice-bank"></script>'
# libyaml's parser when PyYAML was built with it (its wheels are): the same
# safe constructor, a tenth of the time of the pure-Python one.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class Question:
    id: str
    type: str
    question: str
    explain: str
    teaches: str
    answer: Any
    options: list[str] = field(default_factory=list)
    tolerance: float | None = None
    check: str | None = None


@dataclass
class QuizBlock:
    start: int  # line index of the opening fence (0-based)
    end: int  # line index of the closing fence
    questions: list[Question]


def _text(value: Any, key: str, where: str, *, multiline: bool) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise PluginError(f"{where}: `{key}` must be non-empty text")
    value = value.strip()
    if not multiline and re.search(r"\n[ \t]*\n", value):
        raise PluginError(f"{where}: `{key}` must be one paragraph (no blank lines)")
    return value


def _number(value: Any, key: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise PluginError(f"{where}: `{key}` must be a finite number, got {value!r}")
    return float(value)


def _question(raw: Any, where: str) -> Question:
    if not isinstance(raw, dict):
        raise PluginError(f"{where}: each question must be a mapping (`- id: ...`), got {raw!r}")
    qid = raw.get("id")
    if not isinstance(qid, str) or not ID.match(qid):
        raise PluginError(f"{where}: `id` must match [a-z0-9][a-z0-9-]*, got {qid!r}")
    where = f"{where} (question `{qid}`)"
    kind = raw.get("type")
    if kind not in ALLOWED:
        raise PluginError(f"{where}: `type` must be `choice` or `numeric`, got {kind!r}")
    unknown = raw.keys() - ALLOWED[kind]
    if unknown:
        raise PluginError(f"{where}: unknown field(s) {sorted(unknown)} for a {kind} question")
    missing = REQUIRED - raw.keys()
    if missing:
        raise PluginError(f"{where}: missing field(s) {sorted(missing)}")
    teaches = raw["teaches"]
    if not isinstance(teaches, str) or not re.fullmatch(r"#[^\s#\"<>]+", teaches):
        raise PluginError(
            f"{where}: `teaches` must be an anchor on this page such as '#32-cosine-similarity'"
        )
    q = Question(
        id=qid,
        type=kind,
        question=_text(raw["question"], "question", where, multiline=False),
        explain=_text(raw["explain"], "explain", where, multiline=True),
        teaches=teaches[1:],
        answer=None,
    )
    check = raw.get("check")
    if check is not None:
        if not isinstance(check, str) or not check.strip():
            raise PluginError(f"{where}: `check` must be a Python expression (text)")
        try:
            compile(check, f"<check {qid}>", "eval")
        except SyntaxError as exc:
            raise PluginError(f"{where}: `check` is not a valid Python expression: {exc}") from exc
        q.check = check.strip()
    if kind == "choice":
        options = raw.get("options")
        if not isinstance(options, list) or len(options) < 2:
            raise PluginError(f"{where}: a choice question needs `options`, a list of at least two")
        q.options = [_text(o, "options", where, multiline=False) for o in options]
        answer = raw.get("answer")
        if (
            isinstance(answer, bool)
            or not isinstance(answer, int)
            or not 0 <= answer < len(options)
        ):
            raise PluginError(
                f"{where}: `answer` must be the 0-based index of the right option (0..{len(options) - 1})"
            )
        q.answer = answer
    else:
        if "answer" not in raw or "tolerance" not in raw:
            raise PluginError(f"{where}: a numeric question needs `answer` and `tolerance`")
        q.answer = _number(raw["answer"], "answer", where)
        q.tolerance = _number(raw["tolerance"], "tolerance", where)
        if q.tolerance < 0:
            raise PluginError(f"{where}: `tolerance` must be >= 0")
        if q.check is None:
            raise PluginError(
                f"{where}: a numeric question needs a `check` expression that recomputes the answer"
            )
    return q


def parse_quizzes(markdown: str, where: str = "<page>") -> list[QuizBlock]:
    """Every top-level ```` ```quiz ```` fence in ``markdown``, parsed and validated.

    The same function serves the build and ``tests/test_quiz.py``. Fences
    nested inside other fences (e.g. a Markdown example) are not quizzes.
    Raises ``PluginError`` on any problem.
    """
    lines = markdown.split("\n")
    blocks: list[QuizBlock] = []
    open_fence: tuple[str, int, bool] | None = None  # (fence, start line, is quiz)
    for number, line in enumerate(lines):
        match = FENCE.match(line)
        if not match:
            continue
        if open_fence is None:
            is_quiz = match["info"].strip() == "quiz"
            if is_quiz and match["indent"]:
                raise PluginError(
                    f"{where}:{number + 1}: a quiz fence must start at the beginning of the line"
                )
            open_fence = (match["fence"], number, is_quiz)
        elif (
            match["fence"][0] == open_fence[0][0]
            and len(match["fence"]) >= len(open_fence[0])
            and not match["info"].strip()
        ):
            fence, start, is_quiz = open_fence
            open_fence = None
            if not is_quiz:
                continue
            here = f"{where}:{start + 1}"
            source = "\n".join(lines[start + 1 : number])
            try:
                data = yaml.load(source, Loader=SAFE_LOADER)
            except yaml.YAMLError as exc:
                hint = ""
                if "escape" in str(exc):
                    hint = (
                        " (text with backslashes belongs in single quotes or a | / > block scalar)"
                    )
                raise PluginError(f"{here}: invalid quiz YAML{hint}: {exc}") from exc
            if not isinstance(data, list) or not data:
                raise PluginError(
                    f"{here}: a quiz block must be a non-empty YAML list of questions"
                )
            questions = [_question(raw, here) for raw in data]
            seen: set[str] = set()
            for q in questions:
                if q.id in seen:
                    raise PluginError(f"{here}: duplicate question id `{q.id}`")
                seen.add(q.id)
            blocks.append(QuizBlock(start, number, questions))
    if open_fence is not None and open_fence[2]:
        raise PluginError(f"{where}:{open_fence[1] + 1}: unclosed quiz fence")
    return blocks


def questions_of(markdown: str, where: str = "<page>") -> list[Question]:
    return [q for block in parse_quizzes(markdown, where) for q in block.questions]


def _attr(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _number_text(x: float) -> str:
    return repr(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def _tolerance_text(tolerance: float) -> str:
    """How exact a numeric answer must be, said before the reader answers."""
    if tolerance == 0:
        return "It must be exact."
    return f"Within ±{tolerance:g} of the answer counts as right."


def render_question(q: Question, number: int, total: int, page_url: str) -> str:
    """HTML (with ``markdown`` attributes for md_in_html) for one question."""
    base = f"q-{q.id}"
    data = {
        "class": "mfl-quiz-q",
        "id": base,
        "data-qid": q.id,
        "data-page": page_url,
        "data-type": q.type,
        "data-answer": q.answer if q.type == "choice" else _number_text(q.answer),
        "novalidate": "",
        "markdown": "1",
    }
    if q.type == "numeric":
        data["data-tolerance"] = _number_text(q.tolerance)
    attrs = " ".join(f'{k}="{_attr(v)}"' if v != "" else k for k, v in data.items())
    out = [f"<form {attrs}>", '<fieldset markdown="1">']
    out.append(
        f'<legend markdown="span"><span class="mfl-quiz-n" data-search-exclude>Question {number} of {total}.</span> {q.question}</legend>'
    )
    if q.type == "choice":
        for i, option in enumerate(q.options):
            oid = f"{base}-{i}"
            out.append(
                f'<div class="mfl-quiz-opt" markdown="span"><input type="radio" name="{base}" id="{oid}" value="{i}">'
                f' <label for="{oid}">{option}</label></div>'
            )
    else:
        # A text field, read by reader.js: a number field drops what it cannot
        # parse ("0,6" became 6) and changes on the mouse wheel and arrow keys.
        out.append(
            f'<div class="mfl-quiz-num" data-search-exclude><label for="{base}-in">Your answer (a number)</label> '
            f'<input type="text" autocomplete="off" autocapitalize="off" spellcheck="false" '
            f'name="{base}" id="{base}-in" aria-describedby="{base}-hint">'
            f'<span class="mfl-quiz-hint" id="{base}-hint">A decimal (point or comma), a fraction a/b, or e-notation. '
            f"{_tolerance_text(q.tolerance)}</span></div>"
        )
    out.append("</fieldset>")
    out.append(
        '<div class="mfl-quiz-actions" data-search-exclude><button type="submit" class="md-button md-button--primary">Check answer</button></div>'
    )
    out.append(
        '<p class="mfl-quiz-feedback" role="status" aria-live="polite" data-search-exclude></p>'
    )
    explain = textwrap.dedent(q.explain).strip()
    out.append('<div class="mfl-quiz-explain" hidden data-search-exclude markdown="1">')
    out.append("")
    out.append(explain)
    out.append("")
    out.append(
        f'<p class="mfl-quiz-review">Review: <a href="#{_attr(q.teaches)}" data-mfl-teaches="">this section</a></p>'
    )
    out.append("")
    out.append("</div>")
    out.append("</form>")
    return "\n".join(out)


def render_block(block: QuizBlock, page_url: str, first: int, total: int) -> str:
    parts = [
        f'<section class="mfl-quiz" data-page="{_attr(page_url)}" data-total="{total}" markdown="1">',
        '<p class="mfl-quiz-score" aria-live="polite" data-search-exclude>'
        f"{total} questions. Your answers and score are kept only in this browser.</p>",
    ]
    for offset, q in enumerate(block.questions):
        parts.append(render_question(q, first + offset, total, page_url))
    parts.append(
        '<p class="mfl-quiz-tools" data-search-exclude><button type="button" class="md-button mfl-quiz-reset">'
        "Clear my answers on this page</button></p>"
    )
    parts.append("</section>")
    return "\n" + "\n".join(parts) + "\n"


# --- build state ---------------------------------------------------------

_TOTALS: dict[str, int] = {}  # page url -> number of questions
_NAV: Any = None


def on_pre_build(config) -> None:
    _TOTALS.clear()


# src_uri -> (its Markdown, its questions): `properdocs serve` keeps this module
# between its builds, and a rebuild need not parse the pages that did not change.
_PARSED: dict[str, tuple[str, list[Question]]] = {}


def _questions_of_file(file) -> list[Question]:
    markdown = file.content_string
    seen = _PARSED.get(file.src_uri)
    if seen is None or seen[0] != markdown:
        seen = _PARSED[file.src_uri] = (markdown, questions_of(markdown, file.src_uri))
    return seen[1]


def on_files(files, config):
    """Parse every page's quizzes up front: ids must be unique site-wide."""
    owner: dict[str, str] = {}
    for file in files.documentation_pages():
        if not file.src_uri.endswith(".md"):
            continue
        questions = _questions_of_file(file)
        for q in questions:
            if q.id in owner:
                raise PluginError(
                    f"{file.src_uri}: question id `{q.id}` is also used in {owner[q.id]}"
                )
            owner[q.id] = file.src_uri
        if questions:
            _TOTALS[file.url] = len(questions)
    return files


def on_nav(nav, config, files):
    global _NAV
    _NAV = nav
    return nav


def on_page_markdown(markdown: str, page, config, files) -> str:
    blocks = parse_quizzes(markdown, page.file.src_uri)
    if not blocks:
        return markdown
    total = sum(len(b.questions) for b in blocks)
    lines = markdown.split("\n")
    first = 1 + total
    for block in reversed(blocks):  # replace from the end so line numbers stay valid
        first -= len(block.questions)
        lines[block.start : block.end + 1] = [render_block(block, page.url, first, total)]
    return "\n".join(lines)


def _heading_texts(html_text: str) -> dict[str, str]:
    found = {}
    for m in HEADING.finditer(html_text):
        ident = HEADING_ID.search(m["attrs"])
        if ident:
            found[ident["id"]] = HEADERLINK.sub("", m["body"]).strip()
    return found


def _lesson_pages(lesson: str) -> list:
    pages = _NAV.pages if _NAV is not None else []
    return [p for p in pages if p.url.startswith(lesson.rstrip("/") + "/") and not p.is_index]


def _progress_table(lesson: str, page, compact: bool = False) -> str:
    rows = []
    for p in _lesson_pages(lesson):
        total = _TOTALS.get(p.url, 0)
        href = get_relative_url(p.url, page.url)
        rows.append(
            f'<tr data-page="{_attr(p.url)}" data-total="{total}">'
            f'<td><a href="{_attr(href)}">{html.escape(p.title or p.url)}</a></td>'
            f'<td class="mfl-visited">–</td>'
            f'<td class="mfl-score">{"–" if total else "no skill check"}</td></tr>'
        )
    return (
        f'<div class="mfl-progress{" mfl-progress-compact" if compact else ""}" '
        f'data-lesson="{_attr(lesson)}" data-search-exclude>'
        '<p class="mfl-progress-summary">Your progress is read from this browser\'s storage; '
        "nothing is sent anywhere.</p>"
        '<table><thead><tr><th scope="col">Section</th><th scope="col">Visited</th>'
        '<th scope="col">Skill check</th></tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table></div>"
    )


def on_page_content(html_text: str, page, config, files) -> str:
    if "data-mfl-teaches" in html_text:
        headings = _heading_texts(html_text)

        def review(m: re.Match) -> str:
            anchor = html.unescape(m["anchor"])
            if anchor not in headings:
                raise PluginError(
                    f"{page.file.src_uri}: quiz `teaches: '#{anchor}'` is not a heading id on this page; "
                    f"headings: {', '.join('#' + h for h in headings)}"
                )
            return f'<a href="#{m["anchor"]}">{headings[anchor]}</a>'

        html_text = TEACHES.sub(review, html_text)
    html_text = PROGRESS.sub(
        lambda m: _progress_table(m["lesson"], page, bool(m["compact"])), html_text
    )
    if PRACTICE.search(html_text):
        root = get_relative_url(".", page.url)
        html_text = PRACTICE.sub(
            lambda m: (
                f'<div class="mfl-practice" data-root="{_attr(root)}/" data-search-exclude>'
                "<p>The practice queue needs JavaScript; it is kept in this browser only.</p>"
                f"{_quiz_pages(page)}{BANK}</div>"
            ),
            html_text,
        )
    return html_text


def _quiz_pages(page) -> str:
    """The pages that have a skill check, by lesson, for the Practice page's empty state."""
    lessons: dict[str, list[str]] = {}
    for p in _NAV.pages if _NAV is not None else []:
        if _TOTALS.get(p.url):
            lesson = p.parent.title if p.parent is not None else ""
            href = _attr(get_relative_url(p.url, page.url))
            lessons.setdefault(lesson, []).append(
                f'<a href="{href}">{html.escape(p.title or p.url)}</a>'
            )
    items = "".join(
        f"<li>{html.escape(lesson)}{': ' if lesson else ''}{', '.join(links)}</li>"
        for lesson, links in lessons.items()
    )
    return (
        '<div class="mfl-practice-pages" hidden><p>Skill checks end these pages:</p>'
        f"<ul>{items}</ul></div>"
    )


def on_post_page(output: str, page, config) -> str:
    return output.replace(BANK, _practice_bank()) if BANK in output else output


def _practice_bank() -> str:
    """Every skill-check question as its page shows it, as JSON for the Practice page.

    reader.js shows a queued question from here instead of fetching its page,
    which the offline copy, opened from file://, may not do. MkDocs renders
    every page's content before it writes any page, so ``p.content`` is final.
    """
    bank = {
        p.url: {
            "title": p.title,
            "total": _TOTALS[p.url],
            "questions": {m["qid"]: m[0] for m in FORM.finditer(p.content or "")},
        }
        for p in (_NAV.pages if _NAV is not None else [])
        if _TOTALS.get(p.url)
    }
    # No "<" in the script's text: "</script>" or "<!--" would end or confuse it.
    text = json.dumps(bank, ensure_ascii=False).replace("<", "\\u003c")
    return f'<script type="application/json" class="mfl-practice-bank">{text}</script>'
