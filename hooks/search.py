"""What Material's search plugin reads: the page's content, without our interface,
and with code blocks as plain text (the same index, a fifth of the time).

The search plugin parses every page's HTML with Python's ``html.parser`` to
build ``search/search_index.json``. This hook makes a version of the content
for indexing, has the plugin's own ``SearchIndex`` parse that (``entries_of``;
in a worker process on a clean build), and hands the plugin the entries; the
plugin reads an empty stand-in meanwhile, and the rendered page is untouched.
What the indexed version changes:

* **Interface text and answers are left out.** Every element that carries
  ``data-search-exclude`` (Material's own marker) is removed with everything
  inside it: the reading-time line and the notes panel (``hooks/reader.py``),
  the skill checks' buttons, input labels, feedback lines and hidden answer
  explanations (``hooks/quiz.py``), the progress tables and the practice
  placeholder. Material honors the attribute itself, but matches the end of
  the excluded element by tag name only, so a ``<div>`` inside an excluded
  ``<div>`` would end the exclusion early; removing the element here does not
  depend on that. ``tests/test_site.py`` checks the built index.
* **Code blocks become plain text** (``<pre><code>`` kept, tags dropped,
  entities preserved). Most of the tags on our pages are the highlighter's
  token ``<span>``s, which the plugin walks one by one only to keep their
  text. ``tests/test_site.py`` rebuilds the index from the original HTML and
  checks that this part changes nothing. ``hooks/reader.py`` measures reading
  time on the same plain text.
* **Math becomes readable text.** arithmatex leaves TeX source in the page for
  KaTeX to typeset in the browser, and a search result would show it raw
  (``\\(\\mathbf h\\in\\mathbb R^{d}\\)``). The indexed copy reads ``h ∈ ℝ^d``:
  common symbols become their characters, styling commands keep their
  argument, braces and delimiters go (``tex_text``). Fractions and roots keep
  their structure in a linear form: ``\\frac{T_{train}}{T_{target}}`` reads
  ``T_train/T_target`` and ``\\sqrt{d_k}`` reads ``√(d_k)`` (a bar or a root
  sign that vanished read as different math).
  Operators, set symbols and accents keep a character of their own (``\\ln``
  reads ``ln``, ``\\cup`` ``∪``, ``\\tilde A`` ``Ã``); a command is dropped only
  if it styles, sizes or spaces (``STYLE``), and ``tests/test_site.py`` fails
  on any command a page uses that is neither.
* **Skill checks are indexed question by question, references not at all**
  (``question_entries``): each question is an entry "Skill check, question N"
  holding its stem, and a page's footnotes (its reference list) are left out.
* **Headings name their abbreviation.** A heading whose words spell out a term
  the course also writes as an abbreviation (``SEARCH_ALIASES``: "Rotary
  Position Embeddings", "Grouped-query attention") is indexed with it
  appended, "7. Rotary Position Embeddings (RoPE)", so a search for "RoPE"
  finds the section named after it (the result titles show the same). The
  order of results is then settled in the browser
  (``docs/javascripts/lazy-search.js``): a section or page whose title names
  the term comes first.

The entries a page adds to the index are kept between builds
(``buildcache.memo("search")``), keyed by all they are made from: the page's
content, address, title, table of contents and ``search``/``tags``/``title``
metadata, and this hook's code (the plugin's version is the memo's own key).
On a hit the plugin is handed the stored entries and nothing parses the page
again (parsing was a third of a warm build).
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import buildcache
import pool
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

_SWAPPED: dict[int, str] = {}  # id(page) -> its content, while the plugin reads a stand-in
SOURCE = Path(__file__).read_bytes()


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


MATH = re.compile(r'(<(span|div) class="arithmatex">)(.*?)(</\2>)', re.S)
SYMBOLS = {
    "in": "∈",
    "notin": "∉",
    **{f: f for f in ("max", "min", "arg", "log", "exp", "cos", "sin", "diag", "softmax")},
    "top": "ᵀ",
    "cdot": "·",
    "times": "×",
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "ne": "≠",
    "neq": "≠",
    "approx": "≈",
    "sum": "Σ",
    "prod": "Π",
    "infty": "∞",
    "to": "→",
    "mapsto": "↦",
    "pm": "±",
    "sqrt": "√",
    "ldots": "…",
    "dots": "…",
    "cdots": "…",
    "lVert": "‖",
    "rVert": "‖",
    "|": "‖",
    "langle": "⟨",
    "rangle": "⟩",
    "odot": "⊙",
    "otimes": "⊗",
    "propto": "∝",
    "nabla": "∇",
    "partial": "∂",
    "ell": "ℓ",
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "varepsilon": "ε",
    "eta": "η",
    "theta": "θ",
    "lambda": "λ",
    "mu": "μ",
    "pi": "π",
    "rho": "ρ",
    "sigma": "σ",
    "tau": "τ",
    "phi": "φ",
    "omega": "ω",
    "Delta": "Δ",
    "Sigma": "Σ",
    "Theta": "Θ",
    # issue #54: each of these was dropped, which changed the formula
    # (-Σ A ln A read -Σ A A, and a set union vanished)
    **{f: f for f in ("ln", "lim", "tanh", "det", "sup", "inf")},
    "bmod": "mod",
    "kappa": "κ",
    "nu": "ν",
    "xi": "ξ",
    "psi": "ψ",
    "Lambda": "Λ",
    "Phi": "Φ",
    "Pi": "Π",
    "Psi": "Ψ",
    "Gamma": "Γ",
    "Omega": "Ω",
    "cup": "∪",
    "cap": "∩",
    "bigcup": "⋃",
    "bigcap": "⋂",
    "setminus": "∖",
    "subset": "⊂",
    "subseteq": "⊆",
    "ni": "∋",
    "varnothing": "∅",
    "emptyset": "∅",
    "forall": "∀",
    "exists": "∃",
    "neg": "¬",
    "land": "∧",
    "lor": "∨",
    "oplus": "⊕",
    "bigoplus": "⨁",
    "circ": "∘",
    "star": "⋆",
    "sim": "∼",
    "gg": "≫",
    "ll": "≪",
    "equiv": "≡",
    "mid": "|",
    "Vert": "‖",
    "lvert": "|",
    "rvert": "|",
    "lceil": "⌈",
    "rceil": "⌉",
    "lfloor": "⌊",
    "rfloor": "⌋",
    "leftarrow": "←",
    "gets": "←",
    "rightarrow": "→",
    "leftrightarrow": "↔",
    "longrightarrow": "⟶",
    "Rightarrow": "⇒",
    "Longrightarrow": "⟹",
    "Longleftrightarrow": "⟺",
    "iff": "⟺",
    "implies": "⟹",
}
# Commands that only style, size or space what follows: dropped, their argument
# kept (\mathbf{h} reads h). tests/test_search.py checks that every command the
# pages' formulas use is a symbol, one of these, or handled in tex_text.
STYLE = {
    *("mathbf", "mathrm", "mathcal", "mathtt", "mathit", "mathsf", "boldsymbol", "bm"),
    *("text", "textit", "textbf", "textrm", "operatorname", "displaystyle", "textstyle"),
    *("left", "right", "big", "bigl", "bigr", "Big", "Bigl", "Bigr", "bigg", "Bigg"),
    *("quad", "qquad", "underbrace", "overbrace", "limits", "nolimits"),
}
# Accents: the argument with a combining mark on each character, so \tilde{A}
# reads Ã (A alone read as another matrix) and \hat y reads ŷ.
ACCENTS = {
    "hat": "\u0302",
    "widehat": "\u0302",
    "tilde": "\u0303",
    "widetilde": "\u0303",
    "bar": "\u0304",
    "overline": "\u0305",
    "dot": "\u0307",
    "ddot": "\u0308",
    "vec": "\u20d7",
}
# The commands tex_text reads with their arguments: fractions, roots, binomials,
# labelled arrows, environments, blackboard letters.
STRUCTURE = {"frac", "dfrac", "tfrac", "sqrt", "binom", "xrightarrow", "begin", "end", "mathbb"}
BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "E": "𝔼"}
TEX_COMMAND = re.compile(r"\\(mathbb)\s*\{?([A-Z])\}?|\\([A-Za-z]+|[|,;:! ])")


def _group(tex: str, i: int) -> tuple[str, int]:
    """The argument of a TeX command that starts at ``tex[i]`` (spaces skipped):
    a braced group without its braces, a command, or one character; and the
    index after it."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex):
        return "", i
    if tex[i] == "{":
        depth = 0
        for j in range(i, len(tex)):
            if tex[j] == "{" and tex[j - 1 : j] != "\\":
                depth += 1
            elif tex[j] == "}" and tex[j - 1 : j] != "\\":
                depth -= 1
                if depth == 0:
                    return tex[i + 1 : j], j + 1
        return tex[i + 1 :], len(tex)  # unbalanced: take the rest
    command = re.match(r"\\[A-Za-z]+", tex[i:])
    if command:
        return command[0], i + len(command[0])
    return tex[i], i + 1


FRACTION_OR_ROOT = re.compile(
    r"\\(?:[dt]?frac|binom|xrightarrow|"
    + "|".join(sorted(ACCENTS))
    + r")(?![A-Za-z])|\\sqrt(?![A-Za-z])\s*(?:\[([^\]]*)\])?"
)
# One token: x, 2, T_train, d^2, √(d_k), f(x); not a+b, not ∂ L.
SIMPLE = re.compile(r"(?:[\w.^ᵀ′√]|\([^()]*\))+")


def _linear(tex: str) -> str:
    """``\\frac{a}{b}`` as ``a/b`` and ``\\sqrt{x}`` as ``√x``, in searchable
    text (``tex_text``), with parentheses where the argument is more than one
    token (a fraction's) or more than one character (a root's):
    ``(a + b)/2``, ``T_train/T_target``, ``1/√(d_k)``."""
    out, pos = [], 0
    while m := FRACTION_OR_ROOT.search(tex, pos):
        out.append(tex[pos : m.start()])
        name = m[0][1:].split("[")[0].strip()
        if name in ACCENTS:
            arg, pos = _group(tex, m.end())
            # "{}" ends a command before it (\cdots\tilde A read as \cdotsA), then goes
            out.append(
                "{}" + "".join(c + ACCENTS[name] if c.isalnum() else c for c in tex_text(arg))
            )
        elif name == "binom":
            top, after = _group(tex, m.end())
            bottom, pos = _group(tex, after)
            out.append(f" C({tex_text(top)}, {tex_text(bottom)}) ")
        elif name == "xrightarrow":
            label, pos = _group(tex, m.end())
            out.append(f" →({tex_text(label)}) ")
        elif m[0].startswith("\\sqrt"):
            arg, pos = _group(tex, m.end())
            arg = tex_text(arg)
            index = f"^{tex_text(m[1])}" if m[1] else ""  # \sqrt[3]{x}: ^3√x
            simple = len(arg) == 1 or arg.isdigit()
            out.append(f"{index}√{arg if simple else f'({arg})'}")
        else:
            top, after = _group(tex, m.end())
            bottom, pos = _group(tex, after)
            parts = [tex_text(top), tex_text(bottom)]
            a, b = (x if SIMPLE.fullmatch(x) else f"({x})" for x in parts)
            out.append(f" {a}/{b} ")
    out.append(tex[pos:])
    return "".join(out)


def tex_text(tex: str) -> str:
    """TeX source as searchable text: ``\\lVert\\mathbf u\\rVert^{2}`` reads ``‖u‖^2``."""
    tex = re.sub(r"(?<!\\)\\ ", " ", tex)  # a control space: a space (strip() would halve it)
    tex = re.sub(r"^\s*\\[(\[]|\\[)\]]\s*$", "", tex.strip())
    tex = _linear(tex)
    tex = re.sub(r"\^\s*\{?\\top\}?", "ᵀ", tex)  # u^\top: uᵀ
    tex = re.sub(r"\\(?:begin|end)\{\w+\*?\}|\\\\(?:\[[^\]]*\])?|&", " ", tex)  # layout
    tex = tex.replace("\\{", "\x01").replace("\\}", "\x02")  # a literal brace survives

    def command(m: re.Match) -> str:
        if m[1]:  # \mathbb R
            return BLACKBOARD.get(m[2], m[2])
        symbol = SYMBOLS.get(m[3])
        if symbol is None:  # \mathbf, \left, \operatorname: dropped; \, and \; a space
            return "" if m[3].isalpha() else " "
        return symbol if len(symbol) == 1 and symbol.isalpha() else f" {symbol} "

    text = TEX_COMMAND.sub(command, tex).replace("{", "").replace("}", "")
    text = text.replace("\x01", "{").replace("\x02", "}")
    # NFC: an accent on a letter that has a composed form becomes it (A + ~ is Ã)
    return unicodedata.normalize("NFC", re.sub(r"\s+", " ", text).strip())


def plain_math(content: str) -> str:
    """``content`` with each formula's TeX turned into ``tex_text``."""

    def plain(m: re.Match) -> str:
        text = html.escape(tex_text(html.unescape(m[3])), quote=False)
        return f"{m[1]}{text}{m[4]}"

    return MATH.sub(plain, content)


# Abbreviations the course uses, with the words a heading spells them out in
# (compared without case, hyphens or a plural "s"). Only headings are changed.
SEARCH_ALIASES = {
    "RoPE": ["rotary position embedding", "rotary positional embedding"],
    "ALiBi": ["attention with linear biases"],
    "GQA": ["grouped query attention"],
    "MQA": ["multi query attention"],
    "MHA": ["multi head attention"],
    "MLA": ["multi head latent attention"],
    "SDPA": ["scaled dot product attention"],
    "PCA": ["principal component analysis"],
    "SGNS": ["skip gram with negative sampling"],
    "RAG": ["retrieval augmented generation"],
}
HEADING = re.compile(
    r"(<h([1-6])\b[^>]*>)(.*?)(<a class=\"headerlink\"[^>]*>.*?</a>)?(</h\2>)", re.S
)


def _words(text: str) -> str:
    """Lower-case words without hyphens or a plural s: "Multi-Head Attentions" -> "multi head attention"."""
    words = re.findall(r"[^\W_]+", text.lower())
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)


def heading_aliases(text: str) -> list[str]:
    """The abbreviations a heading's text spells out and does not already show."""
    words = f" {_words(text)} "
    shown = set(re.findall(r"[^\W_]+", text.lower()))
    return [
        abbreviation
        for abbreviation, spelled in SEARCH_ALIASES.items()
        if abbreviation.lower() not in shown and any(f" {_words(s)} " in words for s in spelled)
    ]


def name_abbreviations(content: str) -> str:
    """``content`` with " (RoPE)" after each heading that spells out "Rotary Position Embeddings"."""

    def heading(m: re.Match) -> str:
        found = heading_aliases(html.unescape(TAG.sub("", m[3])))
        extra = f" ({', '.join(found)})" if found else ""
        return f"{m[1]}{m[3]}{extra}{m[4] or ''}{m[5]}"

    return HEADING.sub(heading, content)


# A skill check was indexed as one entry: every question's stem run together
# with its choices, then the page's whole reference list (the footnotes follow
# the skill check), 3,866 characters for one page (issue #54). Each question is
# now an entry of its own, titled "Skill check, question N" and linked to the
# question (``#q-<id>``), whose text is its stem alone: the choices are not
# indexed (nor are the answers and explanations, marked data-search-exclude by
# hooks/quiz.py). The references are left out of the index: the References
# page holds them all.
QUESTION = re.compile(
    r'<form\b(?=[^>]*\bclass="mfl-quiz-q")[^>]*\bid="(?P<id>q-[^"]+)"[^>]*>(?P<body>.*?)</form>',
    re.S,
)
LEGEND = re.compile(r"<legend\b[^>]*>(?P<stem>.*?)</legend>", re.S)
QUESTION_NUMBER = re.compile(
    r'<span class="mfl-quiz-n"[^>]*>\s*Question (?P<n>\d+) of \d+\.\s*</span>\s*'
)
FOOTNOTES = '<div class="footnote">'


def question_entries(content: str) -> str:
    """Each skill-check question as a heading and its stem (see above)."""

    def question(m: re.Match) -> str:
        legend = LEGEND.search(m["body"])
        stem = legend["stem"] if legend else ""
        number = QUESTION_NUMBER.search(stem)
        stem = QUESTION_NUMBER.sub("", stem, count=1).strip()
        title = f"Skill check, question {number['n']}" if number else "Skill check question"
        return f'<h3 id="{m["id"]}">{title}</h3>\n<p>{stem}</p>'

    return QUESTION.sub(question, content)


def search_text(content: str) -> str:
    """What the search plugin indexes of ``content`` (see the module docstring)."""
    content = question_entries(content.replace(FOOTNOTES, FOOTNOTES[:-1] + " data-search-exclude>"))
    return name_abbreviations(plain_math(plain_code(drop_excluded(content))))


def _toc_key(items) -> list:
    return [[i.id, i.url, _toc_key(i.children)] for i in items]


def _index_key(page) -> str:
    meta = {name: page.meta.get(name) for name in ("search", "tags", "title")}
    return buildcache.digest(
        [
            SOURCE,
            page.content,
            page.url,
            str(page.title),
            json.dumps(meta, sort_keys=True, default=str),
            json.dumps(_toc_key(page.toc)),
        ]
    )


# id(page) -> its index entries, read from the memo, or an ``_Indexing`` that
# makes them (set just before the plugin indexes the page).
_READY: dict[int, list | _Indexing] = {}
_CACHING: list[bool] = [False]  # whether on_config wrapped this build's index


def _search_plugin(config):
    plugin = config.plugins.get("material/search") or config.plugins.get("search")
    return plugin if plugin is not None and hasattr(plugin, "search_index") else None


@event_priority(-50)  # after the search plugin's on_config has made its index
def on_config(config):
    _READY.clear()
    plugin = _search_plugin(config)
    if plugin is None or not plugin.config.enabled:
        _CACHING[0] = False
        return config
    _CACHING[0] = buildcache.enabled()
    index = plugin.search_index
    add_entry = index.add_entry_from_context
    # Each page's entries, for a dirty rebuild that does not index the pages
    # it skips (hooks/caches.py, on_post_build below).
    by_page = buildcache.session("search")

    def add_entry_from_context(page):
        ready = _READY.pop(id(page), None)
        if isinstance(ready, _Indexing) and ready.job is None:  # no worker: index it now
            ready = ready.made(by_page)
        if isinstance(ready, _Indexing):  # a worker is indexing it: resolved in on_post_build
            index.entries.append(ready)
            return
        start = len(index.entries)
        if ready is None:  # an empty page: the plugin's own way
            add_entry(page)
        else:
            index.entries.extend(ready)
        by_page[page.file.src_uri] = index.entries[start:]

    index.add_entry_from_context = add_entry_from_context
    return config


# Before the search plugin writes the index, before hooks/caches.py ends the
# pool, and before hooks/notebook.py waits for its pruning: the pages no worker
# has started are indexed here meanwhile.
@event_priority(20)
def on_post_build(config):
    """The entries the workers made, in their pages' places; and in a dirty build,
    the index of every page, in page order, as a full build makes it.

    Material's search plugin keeps the previous build's index in a dirty
    session and replaces the entries of the one page a rebuild indexed; that
    duplicates entries when a rebuild indexes more than one page, and moves
    the page's entries to the end. The index is made here instead.
    """
    plugin = _search_plugin(config)
    if plugin is None or not plugin.config.enabled:
        return
    by_page = buildcache.session("search")
    if any(isinstance(entry, _Indexing) for entry in plugin.search_index.entries):
        plugin.search_index.entries = _collected(plugin.search_index.entries, by_page)
    if not buildcache.DIRTY:
        return
    plugin.search_index.entries = [
        entry for file in _FILES[0].documentation_pages() for entry in by_page.get(file.src_uri, [])
    ]
    plugin.search_index_prev = None


# Indexing in the workers. A clean build renders every page and then, in its
# last seconds, gives each one to the search plugin, which parsed it with
# Python's html.parser: a second and a half in which the workers, their figures
# and notebooks done, had only the notebook pages' pruning to do. So the hook
# makes each page's entries itself, with the plugin's own SearchIndex on a
# stand-in page (``entries_of``), and hands the plugin the entries. When the
# workers are running (hooks/pool.py), that happens there
# (``pool.search_entries``) while this process renders the next pages: the
# plugin is handed a placeholder (``_Indexing``) in the page's place, and the
# entries are put there before it writes the index. When this process has
# rendered the last page and the workers have not yet started on some of the
# pages (they prune the notebook pages too), it takes those back, from the
# last, and indexes them itself while it waits. ``tests/test_search_hook.py``
# checks that the entries are the plugin's own.


@dataclass(frozen=True)
class _Indexing:
    uri: str  # the page's src_uri
    job: Future | None  # a worker's, or None: made in this process
    key: str | None  # where the memo keeps the entries, if it is kept
    page: tuple  # ``_indexed(page)``: what ``entries_of`` reads

    def made(self, by_page: dict, here: bool = False) -> list[dict]:
        """The page's entries, kept in the memo and in ``by_page``."""
        try:
            made = entries_of(*self.page) if here or self.job is None else self.job.result()
        except Exception as exc:
            raise PluginError(f"{self.uri}: indexing the page for search failed: {exc!r}") from exc
        if self.key is not None:
            buildcache.memo("search").put(self.key, json.dumps(made, default=str))
        by_page[self.uri] = made
        return made


def _indexed(page) -> tuple:
    """What ``pool.search_entries`` needs of ``page`` (plain data, to send to a worker)."""
    meta = {name: page.meta[name] for name in ("search", "tags", "title") if name in page.meta}
    return page.content, _toc_key(page.toc), page.url, page.title, meta


def entries_of(content: str, toc: list, url: str, title, meta: dict) -> list[dict]:
    """The search plugin's entries for a page (as ``_indexed`` sends it)."""
    from material.plugins.search.plugin import SearchIndex

    def item(i):
        return SimpleNamespace(id=i[0], url=i[1], children=[item(c) for c in i[2]])

    page = SimpleNamespace(
        content=search_text(content), toc=[item(i) for i in toc], url=url, title=title, meta=meta
    )
    index = SearchIndex()
    index.add_entry_from_context(page)
    return index.entries


def _collected(entries: list, by_page: dict) -> list:
    # the pages no worker has started, taken back from the last: indexed here
    here = {id(e) for e in reversed(entries) if isinstance(e, _Indexing) and e.job.cancel()}
    out = []
    for entry in entries:
        if isinstance(entry, _Indexing):
            out.extend(entry.made(by_page, here=id(entry) in here))
        else:
            out.append(entry)
    return out


_FILES: list = [None]


def on_files(files, config):
    _FILES[0] = files
    return files


@event_priority(100)  # before the search plugin (priority 0) reads page.content
def _swap_in_plain_code(context, page, config, nav):
    if page.content:
        key = _index_key(page) if _CACHING[0] else None
        stored = buildcache.memo("search").find(key) if key is not None else None
        if stored is not None:
            _READY[id(page)] = json.loads(stored)
        else:
            sent = _indexed(page)
            job = pool.submit(pool.search_entries, *sent) if pool.running() else None
            _READY[id(page)] = _Indexing(page.file.src_uri, job, key, sent)
        # The plugin is handed the entries (above); of this stand-in it only
        # strips data-search-* attributes. The page keeps its content (restored below).
        _SWAPPED[id(page)] = page.content
        page.content = ""
    return context


@event_priority(-100)  # after every other on_page_context, before the template renders
def _restore_page(context, page, config, nav):
    if id(page) in _SWAPPED:
        if page.content:  # a plugin added later edits content here: fail loudly
            raise PluginError(
                f"{page.file.src_uri}: page.content changed during on_page_context; "
                "hooks/search.py would undo that change"
            )
        page.content = _SWAPPED.pop(id(page))
    return context


on_page_context = CombinedEvent(_swap_in_plain_code, _restore_page)
