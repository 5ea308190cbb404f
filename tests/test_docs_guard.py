"""No silently skipped code on the pages.

An independent fence scanner counts every Python-like fence on every page and
compares the count with what the sybil configuration in ``docs/conftest.py``
collects; a skip marker must carry a quoted reason so that pytest reports why.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from sybil import Document
from sybil.example import SybilFailure

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md"))
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$")
SKIP = re.compile(r"<!--+\s*skip:\s*(?P<action>\w+)(?P<rest>[^>]*?)-*-->")
REASON = re.compile(r"""^\s*(?:"[^"]+"|'[^']+'|if\(.+reason\s*=\s*(?:"[^"]+"|'[^']+')\s*\))\s*$""")


def _load_conftest():
    spec = importlib.util.spec_from_file_location("docs_conftest", DOCS / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CONFTEST = _load_conftest()


def python_fences(text: str) -> list[int]:
    """Line numbers of Python-like opening fences, skipping fenced contents."""
    found, open_fence = [], None
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if not match:
            continue
        if open_fence is None:
            open_fence = match["fence"]
            if CONFTEST.fence_tag(match["info"]) in CONFTEST.PYTHON_TAGS:
                found.append(number)
        elif (
            match["fence"][0] == open_fence[0]
            and len(match["fence"]) >= len(open_fence)
            and not match["info"].strip()
        ):
            open_fence = None
    return found


def collected_fences(path: Path) -> int:
    parser = CONFTEST.PythonExamplesParser().codeblock_parser
    document = Document(path.read_text(encoding="utf-8"), str(path))
    return sum(1 for _ in parser(document))


def test_pages_exist():
    assert PAGES, "no Markdown pages under docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_python_fence_is_collected(page):
    fences = python_fences(page.read_text(encoding="utf-8"))
    assert collected_fences(page) == len(fences), (
        f"{page}: {len(fences)} Python-like fences (lines {fences}) but sybil collects "
        f"{collected_fences(page)}; a fence the tests do not run must not look like a tested example"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_skip_has_a_reason(page):
    for match in SKIP.finditer(page.read_text(encoding="utf-8")):
        if match["action"] == "end":
            continue
        assert REASON.match(match["rest"]), (
            f'{page}: `{match.group(0)}` needs a reason, e.g. <!-- skip: next "needs a GPU" -->'
        )


def test_scanner_sees_tagged_variants():
    text = '```py\na\n```\n\n```python title="x.py"\nb\n```\n\n```pycon\n>>> 1\n1\n```\n\n```text\nc\n```\n'
    assert python_fences(text) == [1, 5, 9]
    document = Document(text, "inline.md")
    assert sum(1 for _ in CONFTEST.PythonExamplesParser().codeblock_parser(document)) == 3


def test_reason_rule():
    assert REASON.match(' "needs a GPU" ')
    assert REASON.match(" if(True, reason='slow') ")
    assert not REASON.match("")


@pytest.mark.parametrize(
    ("want", "got", "ok"),
    [
        ("0.7071\n", "0.7071\n", True),
        ("0.70710\n", "0.7071\n", True),  # the same float, written longer
        ("0.7071\n", "0.70710678\n", False),  # the code prints more digits
        ("0.93\n", "0.934\n", False),  # rounds to the written digits, yet differs
        ("0.9284\n", "0.9285\n", False),  # the slip this checker caught on a page
        ("(1.0, 0.5)\n", "(1.0, 0.54)\n", False),
        ("array([1., 0.])\n", "array([1., 0.])\n", True),
        ("array([1., 0.])\n", "array([1.5, 0.])\n", False),
        ("array([1., 0.])\n", "array([0.99999999, 0.])\n", False),
        ("1e-12\n", "1.2e-12\n", False),
        # floating-point noise in the last digits of a full repr is forgiven
        ("0.3\n", "0.30000000000000004\n", True),
        ("0.6666666666666666\n", "0.6666666666666667\n", True),
        ("(1e-12, 2.5)\n", "(1.0000000000000002e-12, 2.5)\n", True),
        ("0.3\n", "0.30000000001\n", False),  # more than noise
    ],
)
def test_numbers_are_written_as_printed(want, got, ok):
    import doctest

    checker = CONFTEST.PrintedNumberChecker()
    assert checker.check_output(want, got, CONFTEST.NUMBER | doctest.ELLIPSIS) is ok


@pytest.mark.parametrize(
    ("want", "got", "ok"),
    [
        # the sign of a zero depends on the BLAS kernel: forgiven, with numpy's padding
        (
            "array([[ 1.0000, -0.0000],\n       [-0.0000,  1.0000]])\n",
            "array([[1.0000, 0.0000],\n       [0.0000, 1.0000]])\n",
            True,
        ),
        ("array([1.0000, 0.0000])\n", "array([ 1.0000, -0.0000])\n", True),
        ("-0.0\n", "0.0\n", True),
        ("0.\n", "-0.\n", True),
        ("(0.0, -0.0)\n", "(-0.0, 0.0)\n", True),
        # and nothing else: a sign on anything but zero still counts
        ("-0.0001\n", "0.0001\n", False),
        ("array([ 1.0000, -0.5000])\n", "array([1.0000, 0.5000])\n", False),
        ("-0.05\n", "0.05\n", False),
        ("array([ 1., -0.])\n", "array([1., 1.])\n", False),
    ],
)
def test_signed_zeros_print_alike_and_nothing_else_is_forgiven(want, got, ok):
    import doctest

    checker = CONFTEST.PortableOutputChecker()
    flags = CONFTEST.NUMBER | doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    assert checker.check_output(want, got, flags) is ok


def test_a_doctest_block_is_one_test_that_reports_each_wrong_prompt(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n```pycon\n>>> x = 2\n>>> x + 1\n4\n>>> x * 10\n2\n```\n\n"
        "```python\nassert x == 2  # the namespace carries on down the page\n```\n",
        encoding="utf-8",
    )
    examples = list(CONFTEST.make_sybil().parse(page))
    assert len(examples) == 2  # one block of three prompts, one script
    with pytest.raises(SybilFailure) as failure:
        examples[0].evaluate()
    report = str(failure.value)
    # both wrong prompts are reported, each with its page line; the right one is not
    assert f"{page}, line 5:" in report and f"{page}, line 7:" in report
    assert "line 4:" not in report and "Got:\n    3" in report and "Got:\n    20" in report
    examples[1].evaluate()


# A code block on a page shows 80 characters before it scrolls (desktop
# widths; measured in Chromium), and a line that scrolls hides its end, often
# the comment that explains it. Figure scripts and docs/conftest.py are held
# to the same width by ruff (docs/ruff.toml); page examples and the notebook
# here. Doctest output lines are exempt (they are what the code prints), except
# an expected error message (ERROR_LINE below).
CODE_WIDTH = 79


# An error message a doctest expects is prose, and can be wrapped onto indented
# lines (doctest compares it with whitespace normalized): it must fit too.
ERROR_LINE = re.compile(r"^\s*\w+(?:Error|Exception|Warning): ")


def long_code_lines(source: str) -> list[str]:
    doctest = source.lstrip().startswith(">>>")
    return [
        line
        for line in source.splitlines()
        if len(line) > CODE_WIDTH
        and (not doctest or line.lstrip().startswith((">>>", "...")) or ERROR_LINE.match(line))
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_example_lines_fit_the_column(page):
    parser = CONFTEST.PythonExamplesParser().codeblock_parser
    document = Document(page.read_text(encoding="utf-8"), str(page))
    too_long = [
        (document.line_column(region.start), line)
        for region in parser(document)
        for line in long_code_lines(region.parsed)
    ]
    assert not too_long, f"{len(too_long)} code lines over {CODE_WIDTH} characters: {too_long[:5]}"


@pytest.mark.parametrize("path", sorted(DOCS.rglob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_lines_fit_the_column(path):
    import json

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    too_long = [
        (number, line)
        for number, cell in enumerate(cells)
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if len(line) > CODE_WIDTH
    ]
    assert not too_long, f"{len(too_long)} code lines over {CODE_WIDTH} characters: {too_long[:5]}"


def test_long_line_rule():
    assert long_code_lines(">>> x = 1\n" + "9" * 90) == []  # output may be wide
    assert long_code_lines(">>> " + "x" * 80) == [">>> " + "x" * 80]
    assert long_code_lines("y = 1  # " + "z" * 80) == ["y = 1  # " + "z" * 80]
