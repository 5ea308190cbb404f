"""What Material's search plugin reads: the page's content, without our interface,
and with code blocks as plain text (the same index, a fifth of the time).

The search plugin parses every page's HTML with Python's ``html.parser`` to
build ``search/search_index.json``. Just before it reads a page, this hook
swaps in a version of the content made for indexing; just after, it puts the
page back, so the rendered page is untouched. Two changes:

* **Interface text and answers are left out.** Every element that carries
  ``data-search-exclude`` (Material's own marker) is removed with everything
  inside it: the reading-time line and the notes panel (``hooks/reader.py``),
  the skill checks' buttons, input labels, feedback lines and hidden answer
  explanations (``hooks/quiz.py``), the progress tables and the practice
  placeholder. Material honours the attribute itself, but matches the end of
  the excluded element by tag name only, so a ``<div>`` inside an excluded
  ``<div>`` would end the exclusion early; removing the element here does not
  depend on that. ``tests/test_site.py`` checks the built index.
* **Code blocks become plain text** (``<pre><code>`` kept, tags dropped,
  entities preserved). Most of the tags on our pages are the highlighter's
  token ``<span>``s, which the plugin walks one by one only to keep their
  text. ``tests/test_site.py`` rebuilds the index from the original HTML and
  checks that this part changes nothing. ``hooks/reader.py`` measures reading
  time on the same plain text.
"""

from __future__ import annotations

import html
import re

from mkdocs.exceptions import PluginError
from mkdocs.plugins import CombinedEvent, event_priority

PRE = re.compile(r"(<pre\b[^>]*>)(.*?)(</pre>)", re.S)
CODE = re.compile(r"<code\b[^>]*>(.*?)</code>", re.S)
TAG = re.compile(r"<[^>]+>")
EXCLUDED = re.compile(
    r"<(?P<tag>[a-zA-Z][\w-]*)\b[^>]*?\sdata-search-exclude(?:=\"[^\"]*\")?[\s/>]"
)
# HTML's void elements (no closing tag); hooks/reader.py reads them from here.
VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}

_SWAPPED: dict[int, tuple[str, str]] = {}  # id(page) -> (original content, plain version)


def _plain_block(match: re.Match) -> str:
    code = CODE.search(match[2])
    text = html.escape(html.unescape(TAG.sub("", code[1] if code else match[2])), quote=False)
    return match[1] + (f"<code>{text}</code>" if code else text) + match[3]


def plain_code(content: str) -> str:
    """``content`` with every ``<pre>`` block reduced to its text."""
    return PRE.sub(_plain_block, content)


def drop_excluded(content: str) -> str:
    """``content`` without the elements marked ``data-search-exclude`` (nesting counted)."""
    out, pos = [], 0
    while match := EXCLUDED.search(content, pos):
        out.append(content[pos : match.start()])
        tag = match["tag"].lower()
        end = content.index(">", match.end() - 1) + 1
        if tag not in VOID and not content[:end].endswith("/>"):
            depth = 1
            for t in re.compile(rf"<(/?){tag}\b[^>]*>", re.I).finditer(content, end):
                depth += -1 if t[1] else 1
                if depth == 0:
                    end = t.end()
                    break
            else:
                raise PluginError(f"<{tag} ... data-search-exclude> is never closed")
        pos = end
    out.append(content[pos:])
    return "".join(out)


def search_text(content: str) -> str:
    """What the search plugin indexes of ``content`` (see the module docstring)."""
    return plain_code(drop_excluded(content))


@event_priority(100)  # before the search plugin (priority 0) reads page.content
def _swap_in_plain_code(context, page, config, nav):
    if page.content:
        plain = search_text(page.content)
        _SWAPPED[id(page)] = (page.content, plain)
        page.content = plain
    return context


@event_priority(-100)  # after every other on_page_context, before the template renders
def _restore_page(context, page, config, nav):
    if id(page) in _SWAPPED:
        original, plain = _SWAPPED.pop(id(page))
        if page.content != plain:  # a plugin added later edits content here: fail loudly
            raise PluginError(
                f"{page.file.src_uri}: page.content changed during on_page_context; "
                "hooks/search.py would undo that change"
            )
        page.content = original
    return context


on_page_context = CombinedEvent(_swap_in_plain_code, _restore_page)
