"""Every lesson page as a Jupyter notebook, ``<page>.ipynb`` beside the page.

For each Markdown page of a lesson (a folder of ``docs/`` other than
``reference/``) that has a Python example, the build adds
``<lesson>/<page>.ipynb`` to the site through the files collection
(``on_files``; nothing is written into ``docs/``, which would make
``mkdocs serve`` rebuild forever), and the page gets a "Download as notebook"
link under its title, which hooks/reader.py adds to its reading aids (kept out
of the search index with them).

The notebook is the page, top to bottom:

* **First cell**: ``%pip install -q math-for-llms==<version>``, the kernel
  this page was built and tested with (the distribution name from
  ``pyproject.toml``, the version from ``llmmath.__version__``), and any other
  package the examples import (``EXTRA_PACKAGES``; an import the hook does not
  know fails the build, so a download never stops at ``ModuleNotFoundError``).
* The title, where the page lives, and a setup cell that shows values as the
  page does: every expression line prints, as in a doctest, and numpy prints
  ``0.25`` rather than ``np.float64(0.25)`` (the pages' print options).
* **Prose** as Markdown cells, split at headings. Links to other pages point
  at the site: a link to another page or heading, an API reference
  (``[`lm.dot`][llmmath.similarity.dot]``) and a citation (``[@key]``, shown
  as author and year, linked to the References page) become absolute URLs
  under ``site_url``. A link to a heading of the same page stays in the
  notebook (``#anchor``; each heading carries the page's id for it,
  ``<a id="...">``), so it works offline.
* **Figures are embedded**, as cell attachments (``attachment:name.svg``,
  the SVG the site shows; ``on_env``, once the figures are drawn), so the
  notebook shows them offline and before the site is deployed.
* **Each Python example** as one code cell. Doctest prompts (``>>>``, ``...``)
  go; each expected output stays as a comment under its statement
  (``# 6.0``). A statement whose expected output is an exception runs inside
  ``try``/``except``, which prints it, so "Run all" goes through.
* **Admonitions** (``!!!``) and **collapsed blocks** (``???``: the exercises'
  solutions) keep their title as a bold line and their body, code included;
  their prose is quoted (``>``). Cells of a solution carry the tag
  ``solution``.
* **The skill check**: each question with its options; the answer and the
  explanation in a ``<details>`` element.
* Sybil's markers: code after ``<!-- skip: next "reason" -->`` (or between
  ``skip: start`` and ``skip: end``) stays as a fenced block that does not
  run, with the reason; an ``invisible-code-block`` becomes a code cell (the
  examples after it need it).

The citation labels (author and year from ``references.bib``; pybtex takes a
tenth of a second) and the notebooks (a third of a second) are kept between
builds in ``buildcache.memo("page-notebooks")``, keyed by all they depend on
(``on_files``). A notebook whose making logged a warning is not kept, so that
the next build warns again (``--strict`` fails on it).

``tests/test_page_notebooks.py`` parses every page with ``page_items`` below
(the build's own code path), checks that each example sybil collects is a
code cell, that every link resolves in the built site, and executes every
built notebook in a clean venv with the kernel installed from its wheel.
"""

from __future__ import annotations

import ast
import doctest
import json
import logging
import posixpath
import re
import sys
import textwrap
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import buildcache
from bibliography import citation_labels  # hooks/bibliography.py: author-year labels
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.utils.meta import get_data
from quiz import parse_quizzes  # hooks/quiz.py: the same parser as the build's skill checks
from reader import NOT_LESSONS  # hooks/reader.py, which also links each page to its notebook

log = logging.getLogger("mkdocs.hooks.page_notebooks")

ROOT = Path(__file__).resolve().parent.parent
BIB = ROOT / "references.bib"
PYTHON_TAGS = frozenset({"python", "py", "python3", "pycon"})  # as docs/conftest.py
# Packages the examples may import besides the standard library, numpy and the
# kernel, with the distribution that provides each (installed by the first cell).
EXTRA_PACKAGES = {"pytest": "pytest"}
KERNEL_IMPORTS = {"llmmath", "numpy"}

INFO_TAG = re.compile(r"^\s*\{?\s*\.?([\w+-]+)")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*?)[ \t]*$")
BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)(?P<marker>!!!|\?\?\?\+?|===)[ \t]*(?P<kind>[\w-]*)"
    r'[ \t]*(?:"(?P<title>[^"]*)")?[ \t]*$'
)
HEADING = re.compile(r"^(?P<level>#{1,6})[ \t]+(?P<text>.+?)[ \t]*#*[ \t]*$")
COMMENT_START = re.compile(r"^[ \t]*<!--")
SKIP = re.compile(r"^skip:\s*(?P<action>next|start|end)\b\s*(?P<reason>.*)$", re.S)
INVISIBLE = re.compile(r"^invisible-code-block:\s*(?P<tag>[\w+-]+)\s*\n(?P<code>.*)$", re.S)
# Spans where a bracket is not a link: inline code and math.
PROTECTED = re.compile(
    r"(?P<code>(?P<ticks>`+).+?(?P=ticks))"
    r"|(?P<display>\$\$.+?\$\$)"
    r"|(?P<inline>(?<![\\$])\$(?=\S)[^$]*?(?<=[^\s\\])\$)",
    re.S,
)
LINK = re.compile(
    r"(?P<bang>!?)\[(?P<text>[^\]\n]*)\]\((?P<dest>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)"
)
AUTOREF = re.compile(r"\[(?P<text>[^\]\n]+)\]\[(?P<ident>llmmath(?:\.\w+)*)\]")
CITATION = re.compile(r"\[(?P<keys>@[\w:.-]+(?:\s*;\s*@[\w:.-]+)*)\]")
ATTRS = re.compile(r"(?<=\))\{[^}\n]*\}")  # attr_list after an image or link
HOOK_SOURCE = Path(__file__).read_bytes()
# The hook and the hooks it imports: a notebook's cache key (``on_files``).
SOURCES = [
    HOOK_SOURCE,
    *(
        Path(__file__).with_name(n).read_bytes()
        for n in ("quiz.py", "reader.py", "bibliography.py")
    ),
]


@dataclass
class Item:
    """One piece of a page: Markdown text, or a code example."""

    kind: str  # "markdown" | "code" | "skipped"
    text: str
    depth: int = 0  # how many admonitions it sits in (Markdown is quoted that deep)
    tags: list[str] = field(default_factory=list)
    reason: str = ""  # why a skipped example does not run


# ---------------------------------------------------------------------------
# The page, split into Markdown and code


def fence_tag(info: str) -> str:
    match = INFO_TAG.match(info)
    return match.group(1).lower() if match else ""


def _closing(lines: list[str], start: int, fence: str) -> int:
    """Index of the line that closes the fence opened at ``start`` (or ``len(lines)``)."""
    for i in range(start + 1, len(lines)):
        m = FENCE.match(lines[i])
        if m and m["fence"][0] == fence[0] and len(m["fence"]) >= len(fence) and not m["info"]:
            return i
    return len(lines)


def _dedent(lines: list[str], width: int) -> list[str]:
    return [line[width:] if line[:width].strip() == "" else line.lstrip() for line in lines]


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """The end (exclusive) of an admonition's body: lines indented past ``indent``."""
    end = start + 1
    i = start + 1
    while i < len(lines):
        line = lines[i]
        if line.strip():
            if len(line) - len(line.lstrip()) <= indent:
                break
            end = i + 1
        i += 1
    return end


def page_items(markdown: str, where: str = "<page>") -> tuple[str, list[Item]]:
    """The page's title (its ``# H1``) and its content as ``Item``s, in order.

    The one parser of the hook: the build and the tests both call it.
    """
    markdown, _ = get_data(markdown)  # front matter, if any, is not content
    items: list[Item] = []
    state = {"skip_next": None, "skipping": None, "title": ""}
    _parse(markdown.split("\n"), 0, [], items, state, where)
    # Merge neighboring Markdown of the same depth.
    merged: list[Item] = []
    for item in items:
        if (
            merged
            and item.kind == "markdown"
            and merged[-1].kind == "markdown"
            and merged[-1].depth == item.depth
            and merged[-1].tags == item.tags
            and not HEADING.match(item.text.split("\n", 1)[0])
        ):
            merged[-1].text += "\n" + item.text
        else:
            merged.append(item)
    for item in merged:
        if item.kind == "markdown":
            item.text = re.sub(r"\n(?:[ \t]*\n)+", "\n\n", item.text).strip("\n")
    return state["title"], [i for i in merged if i.kind != "markdown" or i.text.strip()]


def _parse(
    lines: list[str], depth: int, tags: list[str], items: list[Item], state: dict, where: str
) -> None:
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            end = _closing(lines, i, fence["fence"])
            body = _dedent(lines[i + 1 : end], len(fence["indent"]))
            tag = fence_tag(fence["info"])
            if tag in PYTHON_TAGS:
                code = "\n".join(body).strip("\n")
                reason = state["skip_next"] or state["skipping"]
                state["skip_next"] = None
                if reason is not None:
                    items.append(Item("skipped", code, depth, list(tags), reason))
                else:
                    items.append(Item("code", code, depth, list(tags)))
            elif tag == "quiz" and depth == 0:
                items.append(Item("markdown", render_quiz("\n".join(lines[i : end + 1]), where)))
            else:
                items.append(Item("markdown", "\n".join(lines[i : end + 1]), depth, list(tags)))
            i = end + 1
            continue
        if COMMENT_START.match(line):
            end = i
            while "-->" not in lines[end] and end + 1 < len(lines):
                end += 1
            comment = "\n".join(lines[i : end + 1])
            _comment(comment.strip()[4:].rsplit("-->", 1)[0].strip(), depth, tags, items, state)
            i = end + 1
            continue
        block = BLOCK.match(line)
        if block:
            indent = len(block["indent"])
            end = _block_end(lines, i, indent)
            body = _dedent(lines[i + 1 : end], indent + 4)
            kind = block["kind"]
            title = block["title"] if block["title"] is not None else kind.replace("-", " ").title()
            inner = list(tags)
            if block["marker"].startswith("???") and "solution" in title.lower():
                inner.append("solution")
            if title:
                items.append(Item("markdown", f"**{title}**\n", depth + 1, inner))
            _parse(body, depth + 1, inner, items, state, where)
            i = end
            continue
        heading = HEADING.match(line) if depth == 0 else None
        if heading and len(heading["level"]) == 1 and not state["title"]:
            state["title"] = heading["text"]
        else:
            items.append(Item("markdown", line, depth, list(tags)))
        i += 1


def _comment(text: str, depth: int, tags: list[str], items: list[Item], state: dict) -> None:
    skip = SKIP.match(text)
    if skip:
        reason = skip["reason"].strip().strip("\"'") or "not run by the tests"
        if skip["action"] == "next":
            state["skip_next"] = reason
        elif skip["action"] == "start":
            state["skipping"] = reason
        else:
            state["skipping"] = None
        return
    invisible = INVISIBLE.match(text)
    if invisible and invisible["tag"].lower() in PYTHON_TAGS:
        code = "# Set-up code that the page runs without showing it.\n" + textwrap.dedent(
            invisible["code"]
        ).strip("\n")
        items.append(Item("code", code, depth, list(tags)))
    # Other comments (clear-namespace, reading-time, notes to authors) are not content.


# ---------------------------------------------------------------------------
# Code cells


def code_cell_source(code: str) -> str:
    """A page example as notebook code: prompts gone, expected output as comments."""
    if not code.startswith(">>>"):  # sybil's rule: a doctest starts with a prompt
        return code
    out: list[str] = []
    for example in doctest.DocTestParser().get_examples(code):
        source = example.source.rstrip("\n")
        if example.exc_msg is not None:
            want_lines = example.want.rstrip("\n").split("\n")
            raised = want_lines[-1] if want_lines else example.exc_msg.strip()
            name = raised.split(":", 1)[0].strip()
            caught = name if name.isidentifier() and _is_builtin_exception(name) else "Exception"
            out += [
                "try:",
                textwrap.indent(source, "    "),
                f"except {caught} as err:  # the page expects this error",
                '    print(f"{type(err).__name__}: {err}")',
                f"# {raised}",
            ]
            continue
        out.append(source)
        if example.want:
            out += [f"# {w}".rstrip() for w in example.want.rstrip("\n").split("\n")]
    return "\n".join(out)


def _is_builtin_exception(name: str) -> bool:
    import builtins

    obj = getattr(builtins, name, None)
    return isinstance(obj, type) and issubclass(obj, BaseException)


def imported_modules(code: str) -> set[str]:
    """Top-level module names that ``code`` (a page example) imports."""
    if "import" not in code:  # most examples: no need to parse them
        return set()
    try:
        tree = ast.parse(code_cell_source(code))
    except SyntaxError:  # the page's own tests report it
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def install_line(distribution: str, version: str, codes: list[str], where: str) -> str:
    """``%pip install`` of the kernel and the other packages the examples import."""
    extra = []
    for module in sorted(set().union(*map(imported_modules, codes)) if codes else set()):
        if module in KERNEL_IMPORTS or module in sys.stdlib_module_names:
            continue
        if module not in EXTRA_PACKAGES:
            raise PluginError(
                f"{where}: an example imports `{module}`, which the page's notebook would not "
                "install; add it to EXTRA_PACKAGES in hooks/page_notebooks.py"
            )
        extra.append(EXTRA_PACKAGES[module])
    return " ".join(["%pip install -q", f"{distribution}=={version}", *extra])


SETUP = """\
import numpy as np

# Show values as the page does: every expression line prints its value (as
# in a doctest), and numpy prints 0.25, not numpy 2's np.float64(0.25).
%config InteractiveShell.ast_node_interactivity = "all"
if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
    np.set_printoptions(legacy="1.25")
np.set_printoptions(precision=8, suppress=True)"""


# ---------------------------------------------------------------------------
# Markdown: links to the site, citations, the skill check


@dataclass
class Site:
    """What links need: the site's address, its files, and the citation labels."""

    url: str  # site_url, ending in "/"
    files: Files
    citations: dict[str, str]

    def page_url(self, src_uri: str) -> str | None:
        """The file's address on the live site, which has directory URLs: also in the
        offline copy (mkdocs.offline.yml), whose own links end in .html."""
        file = self.files.src_uris.get(src_uri)
        if file is None:
            return None
        return self.url + File(file.src_uri, file.src_dir, file.dest_dir, True).url


def rewrite_links(text: str, src_uri: str, site: Site, where: str) -> str:
    """``text`` (Markdown) with every relative link, API reference and citation made absolute."""
    kept: list[str] = []

    def protect(m: re.Match) -> str:
        kept.append(m.group(0))
        return f"\x00{len(kept) - 1}\x00"

    text = PROTECTED.sub(protect, text)
    here = site.page_url(src_uri) or site.url

    def link(m: re.Match) -> str:
        dest = m["dest"]
        parts = urlsplit(dest)
        if parts.scheme or parts.netloc or dest.startswith("mailto:"):
            return m.group(0)
        if not parts.path and parts.fragment:
            return f"{m['bang']}[{m['text']}](#{parts.fragment}{m['title'] or ''})"
        if not parts.path:
            url: str | None = here
        else:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(src_uri), parts.path))
            url = site.page_url(target)
        if url is None:
            log.warning("%s: the notebook's link %s names no file of the site", where, dest)
            return m.group(0)
        if parts.fragment:
            url += "#" + parts.fragment
        return f"{m['bang']}[{m['text']}]({url}{m['title'] or ''})"

    def autoref(m: re.Match) -> str:
        parts = m["ident"].split(".")
        url = site.page_url(f"reference/{parts[1]}.md") if len(parts) > 1 else None
        if url is None:
            log.warning("%s: no API page for %s", where, m["ident"])
            return m.group(0)
        return f"[{m['text']}]({url}#{m['ident']})"

    def citation(m: re.Match) -> str:
        keys = [k.strip().lstrip("@") for k in m["keys"].split(";")]
        references = site.page_url("references.md")
        marks = []
        for key in keys:
            if key not in site.citations:
                raise PluginError(f"{where}: citation key `{key}` is not in references.bib")
            marks.append(f"[{site.citations[key]}]({references}#ref-{key})")
        return "(" + "; ".join(marks) + ")"

    text = ATTRS.sub("", text)
    text = LINK.sub(link, text)
    text = AUTOREF.sub(autoref, text)
    text = CITATION.sub(citation, text)
    return re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m[1])], text)


def render_quiz(fence: str, where: str) -> str:
    """A skill-check fence as Markdown: questions, options, answers folded."""
    out = []
    number = 0
    for block in parse_quizzes(fence, where):
        for q in block.questions:
            number += 1
            out += [f"**{number}.** {q.question}", ""]
            if q.type == "choice":
                letters = "abcdefghijklmnopqrstuvwxyz"
                out += [f"- ({letters[i]}) {option}" for i, option in enumerate(q.options)]
                answer = f"({letters[q.answer]}) {q.options[q.answer]}"
            else:
                answer = f"{q.answer:g} (within {q.tolerance:g})"
            out += [
                "",
                "<details><summary>Answer</summary>",
                "",
                f"**{answer}.** {q.explain}",
                "",
                "</details>",
                "",
            ]
    return "\n".join(out).rstrip("\n")


# ---------------------------------------------------------------------------
# The notebook


def _quoted(text: str, depth: int) -> str:
    if depth == 0:
        return text
    prefix = "> " * depth
    return "\n".join((prefix + line).rstrip() for line in text.split("\n"))


def build_notebook(
    markdown: str,
    src_uri: str,
    site: Site,
    *,
    distribution: str,
    version: str,
    site_name: str = "Math for LLMs",
    license: str = "",
) -> str | None:
    """The notebook for one page, as ``.ipynb`` text; ``None`` for a page without examples."""
    title, items = page_items(markdown, src_uri)
    codes = [i.text for i in items if i.kind == "code"]
    if not codes:
        return None
    cells = [
        _cell(
            "code",
            "# The course's kernel (import llmmath), the version this page was tested with.\n"
            + install_line(distribution, version, codes, src_uri),
        )
    ]
    page = site.page_url(src_uri) or site.url
    about = (
        f"# {title or posixpath.basename(src_uri)}\n\n"
        f"*A page of [{site_name}]({site.url}) as a notebook: [read it on the site]({page}), "
        "where the formulas, figures and the skill check are interactive. Run the cells in "
        "order; each example shows the output the page's tests check as a comment.*"
    )
    if license:
        about += f" *{license}.*"
    cells += [_cell("markdown", anchored(about)), _cell("code", SETUP)]
    for item in items:
        if item.kind == "code":
            cells.append(_cell("code", code_cell_source(item.text), item.tags))
        elif item.kind == "skipped":
            text = f"*Not run here ({item.reason}):*\n\n```python\n{item.text}\n```"
            cells.append(_cell("markdown", _quoted(text, item.depth), item.tags))
        else:
            text = anchored(rewrite_links(item.text, src_uri, site, src_uri))
            cells.append(_cell("markdown", _quoted(text, item.depth), item.tags))
    for number, cell in enumerate(cells):
        cell["id"] = f"cell-{number}"  # stable: two builds give the same bytes
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    # nbformat's own layout (nbformat.writes), without validating each cell as
    # it is made (two thirds of the time); the tests validate every notebook.
    return json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def anchored(text: str) -> str:
    """Each heading line with ``<a id="...">``, the id the page gives that heading
    (Markdown's toc slug), so a ``#...`` link to it works inside the notebook."""
    from markdown.extensions.toc import slugify

    def heading(m: re.Match) -> str:
        words = re.sub(r"[`*_]|\$[^$]*\$", lambda x: "" if x[0] in "`*_" else x[0][1:-1], m["text"])
        return f'{m[0]} <a id="{slugify(words, "-")}"></a>'

    out, fence = [], None
    for line in text.split("\n"):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened["fence"]
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None:
            line = re.sub(r"^#{1,6}[ \t]+(?P<text>.+?)[ \t]*$", heading, line)
        out.append(line)
    return "\n".join(out)


def _cell(kind: str, source: str, tags: list[str] | None = None) -> dict:
    cell: dict = {
        "cell_type": kind,
        "id": "",
        "metadata": {"tags": list(tags)} if tags else {},
        "source": source.splitlines(keepends=True),
    }
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def is_lesson_page(src_uri: str) -> bool:
    parts = src_uri.split("/")
    return len(parts) == 2 and parts[0] not in NOT_LESSONS and parts[1].endswith(".md")


def notebook_uri(src_uri: str) -> str:
    return src_uri.removesuffix(".md") + ".ipynb"


def distribution() -> tuple[str, str]:
    """The kernel's distribution name (pyproject.toml) and version (``llmmath.__version__``)."""
    name = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    source = (ROOT / "src" / "llmmath" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', source, re.M)
    if not match:
        raise PluginError('src/llmmath/__init__.py: no `__version__ = "..."` line')
    return name, match[1]


# ---------------------------------------------------------------------------
# MkDocs events


_MADE: list[File] = []  # this build's page notebooks (figures embedded in on_env)
FIGURE_LINK = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<url>[^)\s]+/figures/(?P<name>[\w-]+\.svg))\)")


def embed_figures(notebook_text: str, site_url: str, files: Files, where: str) -> str:
    """The notebook with each figure of the site as a cell attachment (SVG)."""
    notebook = json.loads(notebook_text)
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        source = "".join(cell["source"])
        attachments = {}

        def attach(m: re.Match, attachments: dict = attachments) -> str:
            url = m["url"]
            if not url.startswith(site_url):
                return m.group(0)
            figure = files.get_file_from_path(url[len(site_url) :])  # lesson/figures/x.svg
            if figure is None:
                log.warning("%s: the notebook's figure %s is not in the site", where, url)
                return m.group(0)
            attachments[m["name"]] = {"image/svg+xml": figure.content_string}
            return f"![{m['alt']}](attachment:{m['name']})"

        source = FIGURE_LINK.sub(attach, source)
        if attachments:
            cell["source"] = source.splitlines(keepends=True)
            cell["attachments"] = attachments
    return json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def on_env(env, config, files):
    """Embed the figures (hooks/figures.py has drawn them all by its on_env, which runs first)."""
    site_url = config.get("site_url", "").rstrip("/") + "/"
    embedded = {}
    for file in _MADE:
        text = file.content_string
        # The figures it links to, as this build drew them: with the notebook
        # and the site's address, all that its embedded copy depends on.
        uris = sorted({m["url"][len(site_url) :] for m in FIGURE_LINK.finditer(text)})
        figures = [files.get_file_from_path(uri) for uri in uris]
        if None in figures:  # embed_figures warns, every build
            file.content_string = embed_figures(text, site_url, files, file.src_uri)
            continue
        key = buildcache.digest(
            [
                text,
                site_url,
                *(u.encode() + f.content_bytes for u, f in zip(uris, figures, strict=True)),
            ]
        )
        if key not in _EMBEDDED:
            _EMBEDDED[key] = embed_figures(text, site_url, files, file.src_uri)
        file.content_string = embedded[key] = _EMBEDDED[key]
    _EMBEDDED.clear()
    _EMBEDDED.update(embedded)
    _MADE.clear()
    return env


# key -> a page notebook with its figures embedded: `properdocs serve` keeps
# this module between its builds, and a rebuild need not redo the notebooks of
# the pages that did not change (a JSON round trip each).
_EMBEDDED: dict[str, str] = {}


# Packages the theory notebooks import besides the kernel's (they draw figures).
THEORY_PACKAGES = {**EXTRA_PACKAGES, "matplotlib": "matplotlib"}


def with_install_cell(notebook_text: str, distribution: str, version: str, where: str) -> str:
    """A theory notebook with the page notebooks' first cell: ``%pip install`` of
    the kernel (and of what else it imports), so it runs in Colab as downloaded."""
    notebook = json.loads(notebook_text)
    codes = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    extra = []
    for module in sorted(set().union(*map(imported_modules, codes)) if codes else set()):
        if module in KERNEL_IMPORTS or module in sys.stdlib_module_names:
            continue
        if module not in THEORY_PACKAGES:
            raise PluginError(f"{where}: imports `{module}`; add it to THEORY_PACKAGES")
        extra.append(THEORY_PACKAGES[module])
    line = " ".join(["%pip install -q", f"{distribution}=={version}", *extra])
    cell = _cell(
        "code",
        "# The course's kernel (import llmmath), the version this site was built with.\n" + line,
    )
    if (notebook.get("nbformat"), notebook.get("nbformat_minor", 0)) >= (4, 5):
        cell["id"] = "install-kernel"  # cell ids exist from nbformat 4.5
    else:
        del cell["id"]
    cell["metadata"] = {"tags": ["install"]}
    notebook["cells"].insert(0, cell)
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


@event_priority(-100)  # after mkdocs-jupyter copied each theory.ipynb beside its page
def on_post_build(config) -> None:
    """The downloadable copy of each lesson's theory notebook gets the install cell
    (the source in docs/ runs in the build's own environment and has none)."""
    name, version = distribution()
    site = Path(config["site_dir"])
    # beside the page: <lesson>/theory/theory.ipynb, or <lesson>/theory.ipynb offline
    for copy in sorted({*site.glob("*/theory/theory.ipynb"), *site.glob("*/theory.ipynb")}):
        lesson = copy.relative_to(site).parts[0]
        # From the source, not the copy: a dirty rebuild (`make serve`) that
        # skips the notebook's page leaves the copy this hook already changed.
        text = (Path(config["docs_dir"]) / lesson / copy.name).read_text(encoding="utf-8")

        def made(text=text, copy=copy) -> bytes:
            return with_install_cell(text, name, version, str(copy)).encode("utf-8")

        # Kept between builds: loading and dumping each notebook's JSON took a
        # tenth of a second.
        key = buildcache.digest([text, HOOK_SOURCE, name, version])
        copy.write_bytes(buildcache.cached("theory-notebooks", lesson, key, "ipynb", made))


def on_files(files: Files, config) -> Files:
    _MADE.clear()
    site_url = config.get("site_url")
    if not site_url:
        raise PluginError("mkdocs.yml: the page notebooks link to the site, so set `site_url`")
    labels = json.loads(
        buildcache.memo("page-notebooks").get(
            buildcache.digest([BIB.read_bytes(), HOOK_SOURCE]),
            lambda: json.dumps(citation_labels()),
        )
    )
    site = Site(site_url.rstrip("/") + "/", files, labels)
    name, version = distribution()
    site_name = config.get("site_name") or "Math for LLMs"
    license = config.get("copyright") or ""
    # A notebook depends on its page, the hooks that parse it, where every
    # file is served (links), the citation labels and the kernel's version.
    notebooks = buildcache.memo("page-notebooks")
    shared = buildcache.digest(
        [
            *SOURCES,
            site.url,
            buildcache.site_files(files),
            json.dumps(labels, sort_keys=True),
            name,
            version,
            site_name,
            license,
        ]
    )
    for file in list(files.documentation_pages()):
        if not is_lesson_page(file.src_uri):
            continue
        uri = notebook_uri(file.src_uri)
        if files.get_file_from_path(uri) is not None:
            raise PluginError(f"{uri}: a file of that name would hide {file.src_uri}'s notebook")
        key = buildcache.digest([shared, file.src_uri, file.content_bytes])
        warned = buildcache.WarningCount()
        log.addHandler(warned)
        try:
            content = notebooks.get(
                key,
                lambda file=file: (
                    build_notebook(
                        file.content_string,
                        file.src_uri,
                        site,
                        distribution=name,
                        version=version,
                        site_name=site_name,
                        license=license,
                    )
                    or ""
                ),
            )
        finally:
            log.removeHandler(warned)
        if warned.count:  # the next build must warn again
            notebooks.forget(key)
        if content:
            made = File.generated(config, uri, content=content)
            files.append(made)
            _MADE.append(made)
    return files
