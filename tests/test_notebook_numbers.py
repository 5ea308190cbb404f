"""Every number a theory notebook's prose quotes is asserted by its demo.

Each lesson's ``theory.ipynb`` holds one demo per subsection: a Markdown cell
that describes an experiment, then the code cell(s) that run it. The prose
quotes numbers the code computes ("spread by 0.98", "1.65 %", "bases 52,664
and 141,214"). This guard reads the numbers out of each Markdown cell and
fails unless an ``assert`` in the code cells that follow it (up to the next
Markdown cell) carries each one at the precision the prose prints.

The matching rule:

* A quoted number is *carried* by an assert when a numeric literal inside an
  ``assert`` statement equals it after rounding the literal to the quoted
  number of decimals (``0.4712`` carries "0.47"; ``0.5`` does not). A
  percentage "1.65 %" is also carried by a fraction (``0.0165``). Signs are
  ignored, so "-4.5" and "−4.5" match ``-4.5`` and ``4.5``. Thousands
  separators (``52,664``, ``60{,}611.5``) and digit underscores are dropped.
* An *integer* that appears as a literal anywhere in the demo's code (outside
  comments) is taken as an input of the experiment (``T, d = 7, 8``) and
  needs no assert. Any other number -- every decimal, every percentage, and
  every integer the code does not write down -- must be asserted, or listed
  in ``INPUTS`` below with the reason it is an input.
* Not read as quoted numbers: headings (section numbers), inline code in
  backticks, citations and years ("Press et al. (2022)", "(Beltagy et al.,
  2020)"), digits that belong to a name or a word ("GPT-2", "float16",
  "Llama 3.1", "6-dimensional", "1e4"), section signs ("§3.4"), and, inside
  ``$...$`` math, everything except a decimal result written after ``=`` or
  ``\\approx`` at the end of the formula (``$2\\sin(1/8)=0.2493$`` is
  checked; ``$m_h=2^{-8h/H}$`` and ``$K=3$`` are definitions).
"""

from __future__ import annotations

import ast
import re
from decimal import Decimal
from pathlib import Path

import nbformat
import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
NOTEBOOKS = sorted(DOCS.glob("*/theory.ipynb"))
ids = [str(p.relative_to(DOCS)) for p in NOTEBOOKS]

# Numbers that are inputs of an experiment (chosen, not computed) but that the
# demo's code does not write as a literal. Keyed by the notebook's lesson
# folder and the demo's heading; each value lists the quoted numbers as the
# prose prints them, with the reason in a comment.
INPUTS: dict[str, dict[str, set[str]]] = {
    "positional-encodings": {
        # the window at positions 20-23 is the slice 20:24
        "1.2 Absolute versus relative position": {"23"},
        # slots 0-5 (np.arange(6)), rows 3-5 and 6-9 of the 10-row table:
        # ends of ranges the code writes as slices
        "4.1 Learned position table": {"5", "9"},
        # keys 3 to 11 of the 12-token sequence: np.arange(K, T)
        "5.1 Relative keys (Shaw et al.)": {"11"},
        # "trained on 512 or 1024 tokens": Press et al.'s training lengths,
        # reported from the paper, not computed here
        "1.4 Length extrapolation": {"1024"},
        # the shifts tried are the literals 2.5 and 1234.25 of the loop
        "3.3 Linear relative-offset intuition": {"2.5", "1234.25"},
        # rows 8-11: the unused rows L..T_max - 1 of the 12-row table
        "4.2 Training length limit": {"11"},
        # the query at position 1023 is the last of 4L = 1024 positions
        "6.3 Extrapolation mechanism": {"1023"},
    },
}

HEADING = re.compile(r"^#{1,6} .*$", re.M)
CODE_SPAN = re.compile(r"`[^`]*`")
MATH = re.compile(r"\$\$.+?\$\$|\$[^$]+\$", re.S)
CITATION = re.compile(r"[A-Z][\w'-]+(?: et al\.| and [A-Z][\w'-]+)?,? \(?(?:19|20)\d\d[a-z]?\)?")
# digits that belong to a model or library name: "Llama 3.1", "Gemma 2"
NAME = re.compile(
    r"\b(?:Llama|Gemma|Qwen|Mistral|Phi|PyTorch|Python|transformers)"
    r"[ -]?\d+(?:\.\d+)*"
)
SECTION = re.compile(r"§\s*[\d.]+|\b(?:cell|cells|App\.|Eq\.|Table)\s+[\dA.]+")
# a number with optional sign and thousands groups, not glued to a word
NUMBER = re.compile(
    r"(?<![\w.\-/^{])(?P<num>[−-]?(?:\d{1,3}(?:(?:,|\{,\})\d{3})+|\d+)"
    r"(?:\.\d+)?)(?P<pct>\s*(?:%|\\%))?(?![\w\-]|\.\d|/\d|\^)"
)
RESULT_IN_MATH = re.compile(r"(?:=|\\approx)\s*(?P<num>[−-]?\d[\d{},]*\.\d+)(?P<pct>\s*\\?%)?\s*$")


def normalize(text: str) -> str:
    return text.replace("{,}", "").replace(",", "").replace("−", "-")


def quoted_numbers(markdown: str) -> list[tuple[str, bool]]:
    """(number as printed, is_percent) for each number the prose quotes."""
    text = HEADING.sub(" ", markdown)
    text = CODE_SPAN.sub(" ", text)
    found = []
    for m in MATH.finditer(text):
        inner = m.group(0).strip("$")
        r = RESULT_IN_MATH.search(inner)
        if r:
            found.append((normalize(r.group("num")), bool(r.group("pct"))))
    text = MATH.sub(" ", text)
    text = CITATION.sub(" ", text)
    text = NAME.sub(" ", text)
    text = SECTION.sub(" ", text)
    for m in NUMBER.finditer(text):
        found.append((normalize(m.group("num")), bool(m.group("pct"))))
    return found


def _constants(node: ast.AST) -> list[float]:
    return [
        abs(float(c.value))
        for c in ast.walk(node)
        if isinstance(c, ast.Constant)
        and isinstance(c.value, (int, float))
        and not isinstance(c.value, bool)
    ]


def code_constants(sources: list[str]) -> tuple[list[float], list[float]]:
    """(literals inside asserts, every literal) of the demo's code cells."""
    asserted, every = [], []
    for src in sources:
        # IPython magics and shell lines are not Python
        clean = "\n".join(
            "" if line.lstrip().startswith(("%", "!")) else line for line in src.splitlines()
        )
        tree = ast.parse(clean)
        every += _constants(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                asserted += _constants(node.test)
    return asserted, every


def carried(number: str, percent: bool, literals: list[float]) -> bool:
    """Is `number` (as printed) equal to a literal rounded to its precision?"""
    value = abs(Decimal(number))
    places = max(-value.as_tuple().exponent, 0)
    targets = [(value, places)]
    if percent:
        targets.append((value / 100, places + 2))
    for c in literals:
        for v, n in targets:
            if round(Decimal(repr(c)), n) == v:
                return True
    return False


def demos(nb) -> list[tuple[str, str, list[str]]]:
    """(heading, markdown, [code sources]) per Markdown cell."""
    out = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        code = []
        for nxt in nb.cells[i + 1 :]:
            if nxt.cell_type == "markdown":
                break
            code.append(nxt.source)
        head = re.search(r"^#{1,6} (.+)$", cell.source, re.M)
        out.append((head.group(1).strip() if head else "", cell.source, code))
    return out


def unchecked(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    allow = INPUTS.get(path.parent.name, {})
    problems = []
    for heading, markdown, code in demos(nb):
        asserted, every = code_constants(code)
        inputs = allow.get(heading, set())
        for number, percent in quoted_numbers(markdown):
            if number in inputs or carried(number, percent, asserted):
                continue
            is_int = "." not in number and not percent
            if is_int and abs(float(number)) in every:
                continue  # an input the code writes down
            problems.append(f"{heading or '(intro)'}: {number}" + (" %" if percent else ""))
    return problems


def test_there_are_theory_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_every_quoted_number_is_asserted(path):
    problems = unchecked(path)
    assert not problems, (
        f"{path.relative_to(DOCS)}: numbers quoted in the prose that no assert "
        "in the demo's code carries at the printed precision (assert them, or "
        "list an input in INPUTS with a reason):\n  " + "\n  ".join(problems)
    )


@pytest.mark.parametrize(
    "markdown, expected",
    [
        ("differ by up to 0.47.", [("0.47", False)]),
        (
            "1.65 % of it and 52,664 and 141,214",
            [("1.65", True), ("52664", False), ("141214", False)],
        ),
        ("$2\\sin(1/8)=0.2493$ and $K=3$, $m_h=2^{-8h/H}$", [("0.2493", False)]),
        ("$2\\pi\\cdot10^4\\approx60{,}611.5$", [("60611.5", False)]),
        ("Press et al. (2022) and (Beltagy et al., 2020) on GPT-2", []),
        ("### 3.4 Visualization\n`max_distance=128` in float16, a 6-dimensional", []),
        ("from −4.5 up to 0", [("-4.5", False), ("0", False)]),
        ("the Llama 3.1 rule, 2.5 times", [("2.5", False)]),
    ],
)
def test_quoted_numbers_reader(markdown, expected):
    assert quoted_numbers(markdown) == expected


@pytest.mark.parametrize(
    "number, percent, literals, ok",
    [
        ("0.47", False, [0.4712], True),
        ("0.47", False, [0.5], False),
        ("1.65", True, [0.0165], True),
        ("1.65", True, [1.65], True),
        ("52664", False, [52664.0], True),
        ("4.9", False, [4.95], False),
    ],
)
def test_carried_rule(number, percent, literals, ok):
    assert carried(number, percent, literals) is ok
