"""Let Material's search plugin read code blocks as plain text (same index, a fifth of the time).

The search plugin parses every page's HTML with Python's ``html.parser`` to
build ``search/search_index.json``. Most of the tags on our pages are the
highlighter's token ``<span>``s inside code blocks, which the plugin walks
one by one only to keep their text. Just before it reads a page, this hook
swaps each code block for its plain text (``<pre><code>`` kept, tags dropped,
entities preserved); just after, it puts the page back, so the rendered page
is untouched. ``tests/test_site.py`` rebuilds the index from the original
HTML and checks that it is identical. ``hooks/reader.py`` measures reading
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

_SWAPPED: dict[int, tuple[str, str]] = {}  # id(page) -> (original content, plain version)


def _plain_block(match: re.Match) -> str:
    code = CODE.search(match[2])
    text = html.escape(html.unescape(TAG.sub("", code[1] if code else match[2])), quote=False)
    return match[1] + (f"<code>{text}</code>" if code else text) + match[3]


def plain_code(content: str) -> str:
    """``content`` with every ``<pre>`` block reduced to its text."""
    return PRE.sub(_plain_block, content)


@event_priority(100)  # before the search plugin (priority 0) reads page.content
def _swap_in_plain_code(context, page, config, nav):
    if page.content:
        plain = plain_code(page.content)
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
