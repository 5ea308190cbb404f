"""Run every Python example on every page under docs/ (``pytest docs``).

Fences tagged ``python``, ``py``, ``python3`` or ``pycon`` are collected,
including ones with attributes such as ``python title="x.py"``: sybil's stock
Markdown parser only takes a bare ``python`` tag and silently ignores the
rest, so this file widens it. A block that starts with ``>>>`` is a doctest
(output checked, numbers as the code prints them: see
``PrintedNumberChecker``) and is one test, however many prompts it has;
any other block runs as a script and proves its point with ``assert``. The
namespace is shared down a page.
``tests/test_docs_guard.py`` checks that nothing python-like escapes
collection and that every skip gives a reason.
"""

from __future__ import annotations

import doctest
import re
from collections.abc import Iterable

import numpy as np
from sybil import Document, Example, Region, Sybil
from sybil.evaluators.doctest import (
    NUMBER,
    DocTest,
    OutputChecker,
)
from sybil.parsers.markdown import ClearNamespaceParser, SkipParser
from sybil.parsers.markdown.codeblock import (
    CodeBlockParser,
    PythonCodeBlockParser,
)

PYTHON_TAGS = frozenset({"python", "py", "python3", "pycon"})
INFO_TAG = re.compile(r"^\s*\{?\s*\.?([\w+-]+)")


def fence_tag(info: str) -> str:
    """The language tag of a fence's info string.

    ``python title="a.py"`` -> ``python``.
    """
    match = INFO_TAG.match(info)
    return match.group(1).lower() if match else ""


class AnyPythonFenceParser(CodeBlockParser):
    """A code-block parser that accepts every Python-like fence tag."""

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in self.lexers(document):
            if fence_tag(region.lexemes["arguments"]) in PYTHON_TAGS:
                region.parsed = region.lexemes["source"]
                region.evaluator = self._evaluator or self.evaluate
                yield region


class PrintedNumberChecker(OutputChecker):
    """A number in the output must be the number the code prints.

    Sybil's ``NUMBER`` flag accepts any float within ``10**-digits`` of the
    written one, so ``0.87`` would pass for anything in [0.86, 0.88], and a
    page could show ``0.93`` where the code prints ``0.934``: a reader who
    pastes the block would see something else. Here a written number matches
    a printed one only when the two are the same float, or differ by
    floating-point noise in the last digits of a full ``repr`` (relative
    difference at most ``NOISE``, about the last three of Python's 17
    significant digits): ``0.30000000000000004`` for a written ``0.3``, or a
    mean of 0.6666666666666666 that another BLAS returns as
    0.6666666666666667. A number printed to fewer digits (``round(x, 4)``,
    numpy's eight) must be written exactly as printed.
    """

    NOISE = 1e-13

    def _remove_unwanted_precision(self, want: str, got: str) -> str:
        wants = list(self._number_re.finditer(want))
        gots = list(self._number_re.finditer(got))
        if len(wants) != len(gots):
            return got
        offset = 0
        for w, g in zip(wants, gots, strict=True):
            a, b = float(w.group()), float(g.group())
            if a == b or abs(a - b) <= self.NOISE * max(abs(a), abs(b)):
                got = (
                    got[: g.start() + offset]
                    + w.group()
                    + got[g.end() + offset :]
                )
                offset += w.end() - w.start() - (g.end() - g.start())
        return got


# A printed zero with a minus sign: "-0", "-0.", "-0.0000", "-0.e+00".
SIGNED_ZERO = re.compile(r"(?<![\w.])-(?=0+\.?0*(?:[eE][-+]?\d+)?(?![\w.]))")
# numpy pads every entry of an array to the widest one, so a "-0." entry puts a
# space after the opening bracket that the unsigned array does not have.
BRACKET_PADDING = re.compile(r"([\[(])\s+")


def unsign_zeros(text: str) -> str:
    """``text`` with each printed zero unsigned: ``-0.0000`` -> ``0.0000``."""
    text = SIGNED_ZERO.sub(" ", text)
    return BRACKET_PADDING.sub(r"\1", text)


class PortableOutputChecker(PrintedNumberChecker):
    """Also treats ``-0.0`` and ``0.0`` alike, and only that.

    Whether a tiny result comes out as ``-0.0`` or ``0.0`` depends on the order
    of a reduction, which differs between BLAS kernels (OpenBLAS picks one per
    CPU), SIMD widths and libraries (macOS Accelerate): the same expression
    prints ``-0.0000`` on one machine and ``0.0000`` on another. No numpy print
    option hides the sign of a zero, so the checker forgives it, with the
    padding numpy adds for the sign; any other difference still fails.
    """

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        if super().check_output(want, got, optionflags):
            return True
        unsigned_want, unsigned_got = unsign_zeros(want), unsign_zeros(got)
        if (unsigned_want, unsigned_got) == (want, got):
            return False
        return super().check_output(unsigned_want, unsigned_got, optionflags)


class DoctestBlock:
    """The ``>>>`` examples of one fence, run as one test."""

    def __init__(self, examples: list[doctest.Example], line: int) -> None:
        self.examples = examples
        self.line = line  # page line of the first line after the fence
        self.source = "".join(example.source for example in examples)


class BlockRunner(doctest.DocTestRunner):
    """A doctest runner whose failures name the page line of the example."""

    def _failure_header(
        self, test: doctest.DocTest, example: doctest.Example
    ) -> str:
        return f"{test.filename}, line {test.lineno + example.lineno}:\n"


class PythonExamplesParser(PythonCodeBlockParser):
    """One test per fence: a script, or all the ``>>>`` examples of a block.

    Sybil's stock parser makes a test of each ``>>>`` line. pytest's fixed cost
    per test (about half a millisecond here) then outweighs most examples, and
    a page's 100 prompts cost more to report than to run. A block is the unit a
    reader copies; a failure still names the example and its page line, and the
    examples after it still run, as doctest does.
    """

    codeblock_parser_class = AnyPythonFenceParser

    def __init__(self, doctest_optionflags: int = 0) -> None:
        super().__init__(doctest_optionflags=doctest_optionflags)
        self.runner = BlockRunner(
            optionflags=doctest_optionflags, checker=PortableOutputChecker()
        )

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in self.codeblock_parser(document):
            source = region.parsed
            if source.startswith(">>>"):
                prompts = self.doctest_parser(source, document.path)
                examples = [prompt.parsed for prompt in prompts]
                line = document.text.count("\n", 0, region.start) + 2
                region.parsed = DoctestBlock(examples, line)
                region.evaluator = self.run_block
            yield region

    def run_block(self, example: Example) -> str:
        __tracebackhide__ = True
        block, namespace = example.parsed, example.namespace
        output: list[str] = []
        added_name = "__name__" not in namespace
        if added_name:
            namespace["__name__"] = "__test__"
        try:
            # sybil's DocTest shares the page's namespace (doctest's copies it)
            test = DocTest(
                block.examples,
                namespace,
                example.path,
                example.path,
                block.line,
                None,
            )
            self.runner.run(test, clear_globs=False, out=output.append)
        finally:
            if added_name:
                del namespace["__name__"]
        return "".join(output)


def _setup(namespace: dict) -> None:
    # numpy 2 prints scalars as np.float64(0.25); the pages show plain numbers.
    # The home page ("How the pages work") shows readers this same call.
    namespace["_saved_printoptions"] = np.get_printoptions()
    np.set_printoptions(legacy="1.25", precision=8, suppress=True)


def _teardown(namespace: dict) -> None:
    np.set_printoptions(**namespace["_saved_printoptions"])


def make_sybil() -> Sybil:
    examples = PythonExamplesParser(
        doctest_optionflags=NUMBER
        | doctest.ELLIPSIS
        | doctest.NORMALIZE_WHITESPACE
    )
    return Sybil(
        parsers=[
            examples,
            SkipParser(),
            ClearNamespaceParser(),
        ],
        patterns=["*.md"],
        setup=_setup,
        teardown=_teardown,
    )


pytest_collect_file = make_sybil().pytest()


# Figure scripts are run by the build hook and by tests/test_figures.py, not
# collected here.
collect_ignore_glob = ["**/figures/*.py"]
