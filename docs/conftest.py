"""Run every Python example on every page under docs/ (``pytest docs``).

Fences tagged ``python``, ``py``, ``python3`` or ``pycon`` are collected,
including ones with attributes such as ``python title="x.py"``: sybil's stock
Markdown parser only takes a bare ``python`` tag and silently ignores the
rest, so this file widens it. A block that starts with ``>>>`` is a doctest
(output checked, floats compared to the written precision); any other block
runs as a script and proves its point with ``assert``. The namespace is
shared down a page. ``tests/test_docs_guard.py`` checks that nothing
python-like escapes collection and that every skip gives a reason.
"""

from __future__ import annotations

import doctest
import re
from collections.abc import Iterable

import numpy as np
from sybil import Document, Region, Sybil
from sybil.evaluators.doctest import NUMBER
from sybil.parsers.markdown import ClearNamespaceParser, SkipParser
from sybil.parsers.markdown.codeblock import CodeBlockParser, PythonCodeBlockParser

PYTHON_TAGS = frozenset({"python", "py", "python3", "pycon"})
INFO_TAG = re.compile(r"^\s*\{?\s*\.?([\w+-]+)")


def fence_tag(info: str) -> str:
    """The language tag of a fence's info string: ``python title="a.py"`` -> ``python``."""
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


class PythonExamplesParser(PythonCodeBlockParser):
    codeblock_parser_class = AnyPythonFenceParser


def _setup(namespace: dict) -> None:
    # numpy 2 prints scalars as np.float64(0.25); the pages show plain numbers.
    namespace["_saved_printoptions"] = np.get_printoptions()
    np.set_printoptions(legacy="1.25", precision=8, suppress=True)


def _teardown(namespace: dict) -> None:
    np.set_printoptions(**namespace["_saved_printoptions"])


def make_sybil() -> Sybil:
    return Sybil(
        parsers=[
            PythonExamplesParser(
                doctest_optionflags=NUMBER | doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
            ),
            SkipParser(),
            ClearNamespaceParser(),
        ],
        patterns=["*.md"],
        setup=_setup,
        teardown=_teardown,
    )


pytest_collect_file = make_sybil().pytest()

# Figure scripts are run by the build hook and by tests/test_figures.py, not collected here.
collect_ignore_glob = ["**/figures/*.py"]
