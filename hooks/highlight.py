"""Pygments' set-up for a code block, done once per kind of block, not per block.

A build highlights about 2,300 code blocks (the lessons' examples, the
figures' sources, the API reference's signatures), each through
pymdownx.highlight, which for every block asks Pygments for a new lexer by
name and makes a new ``HtmlFormatter``. The formatter's ``__init__`` rebuilds
its style's tables (``_create_stylesheet``: a CSS class and a style string for
each of the style's token types), and the lookup instantiates the lexer
again. Both depend only on what they are given: the tables on the formatter's
class, its style and CSS class prefix; the lexer on its name and options.
Redoing them was an eighth of the highlighting time (the lessons' 1,851 Python
blocks: 2.31 s of CPU, 2.04 s with this hook).

So ``cache_pygments_setup`` (run when the build starts) keeps them:

- **the style tables**, by formatter class, style and class prefix. Each new
  formatter gets its own copies of the two dicts, so nothing it might do to
  them reaches another.
- **the lexer**, by name and options, for pymdownx.highlight's lookup only.
  A lexer keeps no state between texts (its token generator's state is
  local), and pymdownx reads only its name and aliases.

Pygments is the version the lock pins (2.21); ``tests/test_highlight_hook.py``
highlights every code block of the lessons with and without the caches and
compares the HTML, so a Pygments or pymdownx upgrade that changes either
method fails there, not in a reader's page. Written here because neither
library offers a cache of its own for this.
"""

from __future__ import annotations

import functools

from pygments.formatters.html import HtmlFormatter

_OWN_CREATE_STYLESHEET = HtmlFormatter._create_stylesheet
# (formatter class, style, class prefix) -> (ttype2class, class2style)
_TABLES: dict[tuple, tuple[dict, dict]] = {}


def _tables(formatter: HtmlFormatter) -> tuple[dict, dict]:
    key = (type(formatter), formatter.style, formatter.classprefix)
    tables = _TABLES.get(key)
    if tables is None:
        _OWN_CREATE_STYLESHEET(formatter)
        tables = _TABLES[key] = (formatter.ttype2class, formatter.class2style)
    return tables


def _create_stylesheet(self: HtmlFormatter) -> None:
    ttype2class, class2style = _tables(self)
    self.ttype2class = dict(ttype2class)
    self.class2style = dict(class2style)


def cache_pygments_setup() -> None:
    """Keep Pygments' style tables and pymdownx.highlight's lexers (see above)."""
    import pymdownx.highlight

    HtmlFormatter._create_stylesheet = _create_stylesheet
    lookup = pymdownx.highlight.get_lexer_by_name
    if not hasattr(lookup, "cache_info"):
        pymdownx.highlight.get_lexer_by_name = _cached_lexer(lookup)


def _cached_lexer(lookup):
    @functools.cache
    def by_options(name: str, options: tuple):
        return lookup(name, **dict(options))

    @functools.wraps(lookup)
    def get_lexer_by_name(name: str, **options):
        return by_options(name, tuple(sorted(options.items())))

    get_lexer_by_name.cache_info = by_options.cache_info
    return get_lexer_by_name


def on_startup(command, dirty):
    cache_pygments_setup()
