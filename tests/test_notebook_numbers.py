"""Every number a theory notebook's prose quotes is pinned by its demo.

Each lesson's ``theory.ipynb`` holds one demo per subsection: a Markdown cell
that describes an experiment, then the code cell(s) that run it. The prose
quotes numbers the code computes ("spread by 0.98", "1.65 %", "bases 52,664
and 141,214"). This guard reads the numbers out of each Markdown cell and
fails unless an ``assert`` in the code cells that follow it (up to the next
Markdown cell) ties each one to a computed value at the precision the prose
prints, so that changing the prose or the value the code computes fails.

The matching rule:

* A quoted number is *carried* when an assert pins a computed value to a
  literal that rounds to it at the printed number of decimals: the literal is
  one side of an ``==`` whose other side is computed (``round(x, 4) ==
  0.4712`` carries "0.47"; ``out.tolist() == [21, ..., 30]``; ``shares ==
  {"a": 0.13}``), or one array of an ``np.isclose`` / ``np.allclose`` /
  ``np.array_equal`` against a computed one, when every value its tolerance
  allows rounds to the printed number. A name bound once to such a literal
  (``expected = [1, 5, 13]``, never changed) counts as the literal. A
  percentage "1.65 %" is also carried by a fraction (``0.0165``). Signs are
  ignored, so "-4.5" and "−4.5" match ``-4.5`` and ``4.5``. Thousands
  separators (``52,664``, ``60{,}611.5``) and digit underscores are dropped.
* An inequality (``x > 0.98``), ``!=``, ``in`` or a negation pins nothing,
  except where the prose itself states that bound: "below 0.001", "under",
  "less than", "at most" are carried by an assert that keeps a computed value
  under that literal (``x < 0.001``, ``x <= 0.001``), and "above", "over",
  "more than", "at least", "exceeds" by one that keeps it over it.
* An *integer* written as a literal in the demo's code is taken as an input
  of the experiment (``T, d = 7, 8``; "pair 31" from ``ratio[31]``;
  ``np.float16(2048)`` inside an assert) and needs no assert, unless it is a
  literal an assert compares against (``== 31``, ``< 31``, ``[21, ..., 30]``,
  a tolerance): that is a claimed result, not an input.
  Any other number -- every decimal, every percentage, and every integer the
  code does not write down -- must be carried, or listed in ``INPUTS`` below
  with the reason it is an input.
* A *range* "21 to 30" or "21–30" with an end inside a run of consecutive
  integers that an assert pins in an increasing list (``[21, 22, ..., 30]``)
  must be a maximal run of that list: "21 to 31" and "21 to 29" both fail
  against ``[21, ..., 30]``, though 31 (an index) and 29 (in the list) each
  pass alone. ``all(v[s] == 1.83 for s in ...)`` pins like ``v[s] == 1.83``.
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
from dataclasses import dataclass, field
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
        # "falls below 1 %": the threshold that defines a reach, written
        # np.log(0.01) in the code
        "6.4 Properties and limits": {"1"},
    },
    "attention-mechanism-math": {
        # the temperatures of the loop (1.0, 0.1, 0.01)
        "3.3 The softmax Jacobian": {"0.1", "0.01"},
        # the float32 arguments the cell feeds to exp
        "3.4 Numerically stable softmax": {"88.0", "89.0"},
    },
    "embedding-space-math": {
        # the cosine whose distance from chance, in standard deviations, the
        # cell computes (0.3 / spread[256])
        "3.2 Cosine similarity": {"0.3"},
    },
    "tokenization-math": {
        # the share of the mass the cell searches for: the 0.9 of
        # np.searchsorted(c1, 0.9)
        "6.4 Zipf's law": {"90"},
    },
    "language-model-probability": {
        # the toy model's probability on the true successor, written 0.99
        "2.5 Teacher forcing and shifted targets": {"0.99"},
        # the total NLL both tokenizers are given: total = 9.0
        "4.3 Bits per byte across tokenizers": {"9.0"},
        # the two finished hypotheses' summed log-probabilities, written in
        # the code as the inputs of the tie
        "5.3 Length penalty as HF defines it": {"-1.2", "-2.5"},
        # the flat model's EOS probability (p_eos = 0.3), and the share of
        # empty samples that follows from it
        "5.4 The most probable string can be degenerate": {"0.3", "30"},
        # the cold temperature tried, t_cold = 0.01
        "6.1 Ancestral sampling and temperature": {"0.01"},
        # the temperatures of the loop and the typical mass 0.2 given to
        # typical_filter
        "6.3 Min-p, epsilon and typical sampling": {"0.5", "0.2"},
        # the penalty theta = 1.5 given to repetition_penalty
        "6.4 Repetition penalty as HF applies it": {"1.5"},
        # the cold temperature of the warper-order example
        "6.5 The order of the warpers": {"0.5"},
        # the draft's temperature: logits divided by 2.5
        "7.2 Why the output follows the target exactly": {"2.5"},
        # the lower acceptance rate tried, a_low = 0.6
        "7.3 Expected tokens per target pass": {"0.6"},
        # the cutoffs scanned and the lesson's expert and amateur
        # probabilities, written in the code
        "7.4 Contrastive decoding": {"0.02", "0.6", "0.1"},
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


# A bound the prose states in words, read from the text just before a number.
# "up to" and "within" are left out: "differ by up to 0.47" quotes a maximum.
BOUND = re.compile(
    r"\b(?:(?P<upper>below|under|less than|smaller than|at most|no more than)"
    r"|(?P<lower>above|over|more than|greater than|at least|exceeds?|beyond))"
    r"\s+(?:about\s+)?$"
)
# a range of integers, "pairs 21 to 30", "rows 8–11"
RANGE = re.compile(
    r"(?<![\w.\-/^{])(?P<a>\d+)\s*(?:to|–|through)\s*(?P<b>\d+)(?![\w\-%]|\.\d|/\d|\^|\s*%)"
)


def _prose(markdown: str) -> tuple[str, list[tuple[str, bool]]]:
    """The prose with headings, code, math, citations and names blanked out,
    and the results quoted inside math."""
    text = HEADING.sub(" ", markdown)
    text = CODE_SPAN.sub(" ", text)
    in_math = []
    for m in MATH.finditer(text):
        inner = m.group(0).strip("$")
        r = RESULT_IN_MATH.search(inner)
        if r:
            in_math.append((normalize(r.group("num")), bool(r.group("pct"))))
    text = MATH.sub(" ", text)
    text = CITATION.sub(" ", text)
    text = NAME.sub(" ", text)
    text = SECTION.sub(" ", text)
    return text, in_math


def quoted(markdown: str) -> list[tuple[str, bool, str]]:
    """(number as printed, is_percent, bound) for each number the prose quotes;
    bound is "<" or ">" when the words before it state one, else ""."""
    text, in_math = _prose(markdown)
    found = [(n, pct, "") for n, pct in in_math]
    for m in NUMBER.finditer(text):
        b = BOUND.search(text[max(m.start() - 30, 0) : m.start()])
        bound = "" if not b else ("<" if b.group("upper") else ">")
        found.append((normalize(m.group("num")), bool(m.group("pct")), bound))
    return found


def quoted_numbers(markdown: str) -> list[tuple[str, bool]]:
    """(number as printed, is_percent) for each number the prose quotes."""
    return [(n, pct) for n, pct, _ in quoted(markdown)]


def quoted_ranges(markdown: str) -> list[tuple[int, int]]:
    """Integer ranges "a to b" / "a–b" (a < b) the prose quotes."""
    text, _ = _prose(markdown)
    out = []
    for m in RANGE.finditer(text):
        a, b = int(m.group("a")), int(m.group("b"))
        if a < b:
            out.append((a, b))
    return out


NUMERIC = (int, float)


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _is_number(node.operand)
    if isinstance(node, ast.BinOp):  # 2**-12, 1 / 16: arithmetic on numbers
        return _is_number(node.left) and _is_number(node.right)
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, NUMERIC)
        and not isinstance(node.value, bool)
    )


def _is_literal(node: ast.AST) -> bool:
    """Is `node` written out in the code (numbers, strings, containers of them)?"""
    if _is_number(node) or isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.BinOp):  # [0] + [0.125] * 7
        return _is_literal(node.left) and _is_literal(node.right)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _is_literal(k) for k in node.keys) and all(
            _is_literal(v) for v in node.values
        )
    return False


def _flatten(value) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, NUMERIC):
        try:
            return [abs(float(value))]
        except OverflowError:  # 2**4096 as a float
            return []
    if isinstance(value, (list, tuple, set)):
        return [v for e in value for v in _flatten(e)]
    if isinstance(value, dict):
        return [v for kv in value.items() for e in kv for v in _flatten(e)]
    return []


def _literal_value(node: ast.AST):
    """The value a literal stands for, arithmetic evaluated (None if it fails)."""
    try:
        return eval(compile(ast.Expression(node), "<literal>", "eval"), {"__builtins__": {}})  # noqa: S307
    except Exception:  # e.g. 1 / 0
        return None


def _literal_values(node: ast.AST) -> list[float]:
    """The numbers a literal holds (a dict's keys and values)."""
    return _flatten(_literal_value(node))


def _run(node: ast.AST) -> list[int] | None:
    """A literal list or tuple of three or more increasing integers."""
    value = _literal_value(node)
    if not isinstance(value, (list, tuple)) or len(value) < 3:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    if any(b <= a for a, b in zip(value, value[1:])):
        return None
    return list(value)


# Calls that compare their first two arguments within a tolerance, with their
# default (rtol, atol); math.isclose's are handled apart.
CLOSE = {
    "isclose": (1e-5, 1e-8),
    "allclose": (1e-5, 1e-8),
    "assert_allclose": (1e-7, 0.0),
    "array_equal": (0.0, 0.0),
    "assert_array_equal": (0.0, 0.0),
    "assert_equal": (0.0, 0.0),
}
TOLERANCE_KW = {"rtol": 0, "rel_tol": 0, "atol": 1, "abs_tol": 1}
# the bound a literal on the left of an inequality states: ``0.5 < x`` keeps
# x above 0.5 (">"); on the right it states the opposite
LEFT_BOUND = {ast.Lt: ">", ast.LtE: ">", ast.Gt: "<", ast.GtE: "<"}
OPPOSITE = {">": "<", "<": ">"}


@dataclass
class Facts:
    """What a demo's code pins down, and the integers it writes as inputs."""

    pinned: list[tuple[float, float, float]] = field(default_factory=list)
    bounds: list[tuple[str, float]] = field(default_factory=list)
    runs: list[list[int]] = field(default_factory=list)
    inputs: set[float] = field(default_factory=set)
    # the literal sides and tolerances of asserts: what they compare against
    compared: set[int] = field(default_factory=set)

    def compare(self, node: ast.AST) -> None:
        self.compared.update(id(n) for n in ast.walk(node))


def _read_assert(test: ast.AST, literal, facts: Facts) -> None:
    """Add what one assert's test pins to `facts` (see the module docstring)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for v in test.values:
            _read_assert(v, literal, facts)
    elif isinstance(test, ast.Compare):
        sides = [test.left, *test.comparators]
        for op, a, b in zip(test.ops, sides, sides[1:]):
            la, lb = literal(a), literal(b)
            if (la is None) == (lb is None):
                continue  # two computed sides, or two literals
            lit = la if la is not None else lb
            facts.compare(a if la is not None else b)
            if isinstance(op, ast.Eq):
                facts.pinned += [(v, 0.0, 0.0) for v in _literal_values(lit)]
                run = _run(lit)
                if run:
                    facts.runs.append(run)
            elif type(op) in LEFT_BOUND and _is_number(lit):
                side = LEFT_BOUND[type(op)]
                side = side if lit is la else OPPOSITE[side]
                facts.bounds += [(side, v) for v in _literal_values(lit)]
    elif isinstance(test, ast.Call):
        func = test.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        comp = test.args[0] if len(test.args) == 1 else None
        if name == "all" and isinstance(comp, (ast.GeneratorExp, ast.ListComp)):
            _read_assert(comp.elt, literal, facts)  # all(x[s] == 1.83 for s in ...)
            return
        if name not in CLOSE or len(test.args) < 2:
            return
        tol = [1e-9, 0.0] if ast.unparse(func) == "math.isclose" else list(CLOSE[name])
        for i, arg in enumerate(test.args[2:4]):
            tol[i] = arg
        for kw in test.keywords:
            if kw.arg in TOLERANCE_KW:
                tol[TOLERANCE_KW[kw.arg]] = kw.value
        for t in tol:
            if isinstance(t, ast.AST):
                facts.compare(t)
        tol = [t if isinstance(t, float) else (_literal_values(t) or [None])[0] for t in tol]
        la, lb = literal(test.args[0]), literal(test.args[1])
        if (la is None) != (lb is None) and None not in tol:
            lit = la if la is not None else lb
            facts.compare(test.args[0] if la is not None else test.args[1])
            facts.pinned += [(v, tol[0], tol[1]) for v in _literal_values(lit)]
            run = _run(lit) if tol == [0.0, 0.0] else None
            if run:
                facts.runs.append(run)


def _integers(nodes) -> list[float]:
    return [
        v[0]
        for n in nodes
        if _is_number(n) and (v := _literal_values(n)) and float(v[0]).is_integer()
    ]


def _parse(src: str) -> ast.Module:
    # IPython magics and shell lines are not Python
    clean = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in src.splitlines()
    )
    return ast.parse(clean)


def code_facts(sources: list[str]) -> Facts:
    """What the asserts of a demo's code cells pin, and its integer inputs."""
    trees = [_parse(src) for src in sources]
    stores: dict[str, int] = {}
    bound_to: dict[str, ast.AST] = {}
    changed: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                stores[node.id] = stores.get(node.id, 0) + 1
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                t = node.targets[0]
                if isinstance(t, ast.Name) and _is_literal(node.value):
                    if _literal_values(node.value):
                        bound_to[t.id] = node.value
            # x[k] = ..., x.append(...): the name no longer holds its literal
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name):
                    changed.add(node.value.id)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if isinstance(node.func.value, ast.Name):
                    changed.add(node.func.value.id)
    named = {k: v for k, v in bound_to.items() if stores.get(k) == 1 and k not in changed}

    def literal(node):
        if isinstance(node, ast.Name) and node.id in named:
            return named[node.id]
        return node if _is_literal(node) else None

    facts = Facts()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                _read_assert(node.test, literal, facts)
        # inputs: every integer but those an assert compares against
        facts.inputs.update(_integers(n for n in ast.walk(tree) if id(n) not in facts.compared))
    return facts


def _targets(number: str, percent: bool) -> list[tuple[Decimal, int]]:
    """(value, decimals printed) the quoted number can stand for."""
    value = abs(Decimal(number))
    places = max(-value.as_tuple().exponent, 0)
    targets = [(value, places)]
    if percent:
        targets.append((value / 100, places + 2))
    return targets


def carried(number: str, percent: bool, pinned) -> bool:
    """Is `number` (as printed) what a pinned value rounds to at its precision?

    `pinned` holds ``(value, rtol, atol)`` (or bare values, compared exactly):
    every value the tolerance allows must round to the printed number, so
    ``np.isclose(x, 0.98, atol=0.01)`` does not carry "0.98".
    """
    for entry in pinned:
        c, rtol, atol = entry if isinstance(entry, tuple) else (entry, 0.0, 0.0)
        centre = Decimal(repr(float(c)))
        width = Decimal(repr(float(atol + rtol * abs(c))))
        for v, n in _targets(number, percent):
            if round(centre - width, n) == v == round(centre + width, n):
                return True
    return False


def bounded(number: str, percent: bool, bound: str, bounds) -> bool:
    """Does an assert keep a computed value on the side of `number` the prose states?"""
    return any(
        side == bound and Decimal(repr(float(c))) == v
        for side, c in bounds
        for v, _ in _targets(number, percent)
    )


def range_problem(a: int, b: int, runs: list[list[int]]) -> bool:
    """Is "a to b" at odds with every pinned run that holds one of its ends?"""

    def in_stretch(n: int, r: list[int]) -> bool:  # n and a neighbor in r
        return n in r and (n - 1 in r or n + 1 in r)

    holding = [r for r in runs if in_stretch(a, r) or in_stretch(b, r)]
    if not holding:
        return False  # not a pinned result: inputs, or numbers checked one by one
    for r in holding:
        if set(range(a, b + 1)) <= set(r) and a - 1 not in r and b + 1 not in r:
            return False
    return True


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


def demo_problems(heading: str, markdown: str, code: list[str], inputs=frozenset()) -> list[str]:
    """The quoted numbers (and ranges) of one demo that its code does not pin."""
    facts = code_facts(code)
    where = heading or "(intro)"
    problems = []
    for number, percent, bound in quoted(markdown):
        if number in inputs or carried(number, percent, facts.pinned):
            continue
        if bound and bounded(number, percent, bound, facts.bounds):
            continue
        is_int = "." not in number and not percent
        if is_int and abs(float(number)) in facts.inputs:
            continue  # an input the code writes down
        problems.append(f"{where}: {number}" + (" %" if percent else ""))
    for a, b in quoted_ranges(markdown):
        if range_problem(a, b, facts.runs):
            problems.append(f"{where}: the range {a} to {b}")
    return problems


def unchecked(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    allow = INPUTS.get(path.parent.name, {})
    problems = []
    for heading, markdown, code in demos(nb):
        problems += demo_problems(heading, markdown, code, allow.get(heading, set()))
    return problems


def test_there_are_theory_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_every_quoted_number_is_asserted(path):
    problems = unchecked(path)
    assert not problems, (
        f"{path.relative_to(DOCS)}: numbers quoted in the prose that no assert "
        "in the demo's code ties to a computed value at the printed precision "
        "(pin them with == or a rounding, not a bound; or list an input in "
        "INPUTS with a reason):\n  " + "\n  ".join(problems)
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


RUN = "out = np.flatnonzero(x)\nassert out.tolist() == [21, 22, 23, 24, 25, 26, 27, 28, 29, 30]\n"


@pytest.mark.parametrize(
    "markdown, code, flagged",
    [
        # an equality or a rounding pins the number; a loose bound does not
        ("spread by 0.98", "assert round(s, 2) == 0.98", []),
        ("spread by 0.98", "assert s > 0.98", ["0.98"]),
        ("spread by 0.98", "assert np.isclose(s, 0.98, atol=0.05)", ["0.98"]),
        ("spread by 0.98", "assert np.isclose(s, 0.98, atol=0.001)", []),
        ("spread by 0.98", "assert 0.98 == 0.98 and s", ["0.98"]),
        # ... unless the prose states that bound itself
        ("from below 0.001", "assert a.min() < 0.001", []),
        ("from above 0.001", "assert a.min() < 0.001", ["0.001"]),
        # integers: inputs the code writes, not values an assert compares to
        ("over 8 positions", "T = 8\nassert x.shape == (T,)", []),
        ("pair 31 is divided", "assert np.isclose(r[31], 0.25)", []),
        ("it finds 31", "assert n > 31", ["31"]),
        ("it finds 31", "assert n == 30\nprint(31 + n)", []),
        # ranges pinned in a list must be its maximal run
        ("Pairs 21 to 30 are out.", RUN, []),
        ("Pairs 21 to 31 are out.", RUN + "assert r[31] == 1", ["the range 21 to 31"]),
        ("Pairs 21 to 29 are out.", RUN, ["the range 21 to 29"]),
        ("from 1 to 13 tokens", "k = range(1, 14)\nassert n == [11, 13, 15]", []),
        ("all 1.83", "assert all(p[s] == 1.83 for s in range(3))", []),
        # a name bound once to a literal, and a dict filled by a loop
        ("by 1, 5 and 13", "want = [1, 5, 13]\nassert np.allclose(d, want)", []),
        ("0.62 and 0.53", "sp = {}\nsp[1] = 2\nassert sp == {16: 0.62, 64: 0.53}", []),
        ("1.65 %", "assert round(100 * v, 2) == 1.65", []),
        ("1.65 %", "assert round(v, 4) == 0.0165", []),
    ],
)
def test_demo_rule(markdown, code, flagged):
    assert demo_problems("", markdown, [code]) == [f"(intro): {f}" for f in flagged]
