"""Post-process the notebook pages that mkdocs-jupyter renders (``*.ipynb``).

mkdocs-jupyter (0.26) inlines JupyterLab's whole stylesheet into the page
(about 590 KB, of which the page uses a few percent), a script that imports
mermaid from cdnjs when a page has diagrams, a MathJax configuration for a
MathJax this site never loads, and the figures as full-color PNGs whose alt
text is "No description has been provided for this image". Its options
(``theme``, ``no_prompt``, ``include_requirejs``, ``custom_mathjax_url``, ...)
change none of that, so this hook does it:

* math: ``$...$`` and ``$$...$$`` in Markdown cells become the arithmatex
  markup the Markdown pages have, so ``docs/javascripts/katex-init.js``
  typesets it with the site's KaTeX (it was shown as raw TeX);
* figures: every image a code cell outputs takes its alt text from that
  cell's metadata, ``"alt": "..."`` (a list for a cell with several images).
  An image without one fails the build, as a Markdown figure without alt text
  does (``hooks/figures.py``). An opaque PNG is re-encoded with a 256-color
  palette (adaptive, no dithering: plots have few colors, the difference is
  at most 15/255 per channel and about 1 on average) when that is smaller,
  typically a quarter of the size; then stored as lossless WebP (the same
  pixels, a fifth smaller again) when that is smaller still;
* scripts: the mermaid loader, the MathJax configuration and the empty
  ``<script src="">`` go; a notebook page must not name another host in a
  script, so any other script that does fails the build;
* CSS: the inlined stylesheets are cut down to the rules whose selectors match
  an element of the built page, then to the custom properties those rules
  use (see ``prune_css``).

Caches (``hooks/buildcache.py``, all skipped under ``MFL_CACHE=off``): the
pruned stylesheet, by the hash of the page it was pruned for; the re-encoded
figures, by the hash of each drawn PNG; and mkdocs-jupyter's executed
notebooks, in one directory per version of the kernel source, of the
installed packages and of ``hooks/pool.py``, which converts them, with
``hooks/warmkernel.py``, which starts their kernels (``on_config``).

The colors of code cells and prompts are set in ``docs/stylesheets/extra.css``
(the site's code palette, for contrast in both schemes).
"""

from __future__ import annotations

import base64
import functools
import io
import json
import logging
import re
import shutil
import tempfile
from concurrent.futures import Future
from pathlib import Path

import buildcache
import pool
import soupsieve
import tinycss2
from bs4 import BeautifulSoup
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

log = logging.getLogger("mkdocs.hooks.notebook")
HOOK_SOURCE = Path(__file__).read_bytes()  # part of every cache key: its output depends on it
# pool.py converts the notebooks (html_exporter), in kernels that warmkernel.py starts
POOL_SOURCE = b"".join(
    (Path(pool.__file__).parent / name).read_bytes() for name in ("pool.py", "warmkernel.py")
)


# ---------------------------------------------------------------------------
# math

MARKDOWN_CELL = re.compile(
    r'(<div class="[^"]*\bjp-RenderedMarkdown\b[^"]*"[^>]*>)(.*?)(</div>)', re.S
)
TAG_OR_TEXT = re.compile(r"(<[^>]+>)|([^<]+)")
DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE = re.compile(r"(?<![\\$])\$(?!\s)([^$]+?)(?<![\s\\])\$(?!\$)")


def wrap_math(html: str) -> str:
    """Arithmatex markup for ``$...$`` / ``$$...$$`` in rendered Markdown cells.

    Text inside ``<code>`` and ``<pre>`` is left alone. nbconvert keeps the TeX
    as written (HTML-escaped), which is what arithmatex emits too.
    """

    def cell(match: re.Match) -> str:
        out, skip = [], 0
        for tag, text in TAG_OR_TEXT.findall(match[2]):
            if tag:
                name = re.match(r"</?\s*(\w+)", tag)
                if name and name[1].lower() in ("code", "pre"):
                    skip += -1 if tag.startswith("</") else 1
                out.append(tag)
            elif skip:
                out.append(text)
            else:
                text = DISPLAY.sub(lambda m: f'<span class="arithmatex">\\[{m[1]}\\]</span>', text)
                text = INLINE.sub(lambda m: f'<span class="arithmatex">\\({m[1]}\\)</span>', text)
                out.append(text)
        return match[1] + "".join(out) + match[3]

    return MARKDOWN_CELL.sub(cell, html)


# ---------------------------------------------------------------------------
# figures

# nbconvert's templates write a cell's id before its class; match either order
CELL_START = re.compile(r'<div\b(?=[^>]*\sclass="jp-Cell\b)[^>]*\sid="cell-id=(?P<id>[^"]+)"')
IMG = re.compile(r"<img\b[^>]*>")
PNG_SRC = re.compile(r'src="data:(?P<uri>image/png;base64,(?P<data>[A-Za-z0-9+/=]+))"')


def alt_texts(notebook: Path) -> dict[str, list[str]]:
    """Cell id -> the alt texts in that cell's metadata."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    found = {}
    for cell in cells:
        alt = cell.get("metadata", {}).get("alt")
        if alt:
            found[cell["id"]] = [alt] if isinstance(alt, str) else list(alt)
    return found


def smaller_png(data: bytes) -> bytes:
    """The PNG with a 256-color palette if it is opaque and that is smaller."""
    from PIL import Image  # only on a cache miss: a tenth of a second to import

    image = Image.open(io.BytesIO(data))
    if image.mode not in ("RGB", "RGBA", "P", "L"):
        return data
    rgba = image.convert("RGBA")
    if rgba.getchannel("A").getextrema() != (255, 255):
        return data  # transparency: keep as drawn
    palette = rgba.convert("RGB").quantize(
        256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE
    )
    out = io.BytesIO()
    palette.save(out, "PNG", optimize=True)
    return out.getvalue() if out.tell() < len(data) else data


def smaller_image(data: bytes) -> tuple[str, bytes]:
    """(MIME type, bytes) of the smallest of: the PNG as drawn, its palette PNG,
    and that palette PNG's pixels as lossless WebP (Chromium, Firefox and Safari
    show it; the notebook page has a first-visit weight budget)."""
    from PIL import Image

    png = smaller_png(data)
    image = Image.open(io.BytesIO(png))
    if image.mode != "P":  # kept as drawn
        return "image/png", png
    out = io.BytesIO()
    image.convert("RGB").save(out, "WEBP", lossless=True, method=6)
    return ("image/webp", out.getvalue()) if out.tell() < len(png) else ("image/png", png)


def _data_uri(data_b64: str) -> str:
    mime, small = smaller_image(base64.b64decode(data_b64))
    return f"{mime};base64,{base64.b64encode(small).decode()}"


# A notebook figure is a raster image in the page (a data: URI); on a phone it
# is squeezed to the column, its labels about 5 px tall. As a lesson figure does
# (hooks/reader.py), it opens full size on a tap: each one is also written
# beside the page, figure-<n>.<ext>, and the image links to that file (a link to
# a data: URI would not open: browsers block them as a page). Issue #54.
DATA_SRC = re.compile(r'src="data:image/(?P<ext>png|webp);base64,(?P<data>[A-Za-z0-9+/=]+)"')


def open_full_size(tag: str, figures: list[tuple[str, bytes]]) -> str:
    """``tag`` wrapped in a link to its image as a file, which ``figures`` collects."""
    data = DATA_SRC.search(tag)
    if not data:
        return tag
    name = f"figure-{len(figures) + 1}.{data['ext']}"
    figures.append((name, base64.b64decode(data["data"])))
    return (
        f'<a class="mfl-figure-open mfl-notebook-figure" href="{name}" '
        f'title="Open the figure full size">{tag}</a>'
    )


_FIGURE_FILES: dict[str, list[tuple[str, bytes]]] = {}  # page src_uri -> its figures' files


def fix_figures(html: str, notebook: Path, files: list | None = None) -> str:
    alts = alt_texts(notebook)
    starts = [(m.start(), m["id"]) for m in CELL_START.finditer(html)]
    used: dict[str, int] = {}
    missing = []

    def cell_of(pos: int) -> str | None:
        owner = None
        for start, cell_id in starts:
            if start > pos:
                break
            owner = cell_id
        return owner

    def image(match: re.Match) -> str:
        tag = match[0]
        cell_id = cell_of(match.start())
        n = used[cell_id] = used.get(cell_id, -1) + 1
        texts = alts.get(cell_id, [])
        if n >= len(texts):
            missing.append(cell_id)
            return tag
        alt = texts[n].replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
        tag = re.sub(r'\salt="[^"]*"', "", tag).replace("<img", f'<img alt="{alt}"', 1)
        png = PNG_SRC.search(tag)
        if png:
            uri = buildcache.memo("notebook-figures").get(
                buildcache.digest([png["data"], HOOK_SOURCE]), lambda: _data_uri(png["data"])
            )
            tag = tag[: png.start("uri")] + uri + tag[png.end("uri") :]
        return open_full_size(tag, figures)

    figures: list[tuple[str, bytes]] = []
    html = IMG.sub(image, html)
    if files is not None:
        files.extend(figures)
    if missing:
        raise PluginError(
            f"{notebook.name}: images without alt text in cells {sorted(set(map(str, missing)))}; "
            'add "alt": "..." to the metadata of each of those cells'
        )
    return html


# ---------------------------------------------------------------------------
# scripts

SCRIPT = re.compile(r"<script\b[^>]*>.*?</script>", re.S)


def drop_scripts(html: str, where: str) -> str:
    def keep(match: re.Match) -> str:
        script = match[0]
        opening = script[: script.index(">") + 1]
        if (
            'type="text/x-mathjax-config"' in opening
            or re.search(r'\ssrc=""', opening)
            or ("mermaid" in script and "import(" in script)
        ):
            return ""
        if re.search(r"""(?:src=|import\(|import\s)["']?(?:https?:)?//""", script):
            raise PluginError(f"{where}: a notebook script loads from another host: {opening}")
        return script

    return SCRIPT.sub(keep, html)


# ---------------------------------------------------------------------------
# CSS

# Pseudo-classes and -elements that depend on state or generate content: a
# selector is matched against the static page with them removed.
DYNAMIC = re.compile(
    r"::?(?:-(?:webkit|moz|ms)-[\w-]+|before|after|first-line|first-letter|placeholder|selection"
    r"|marker|backdrop|hover|focus|focus-visible|focus-within|active|visited|link|any-link|target"
    r"|checked|disabled|enabled|indeterminate|invalid|valid|required|optional|read-only|read-write"
    r"|placeholder-shown|autofill|fullscreen|defined|popover-open|modal|open)(?![\w-])(?:\([^()]*\))?"
)
# Attributes and classes that Material's JavaScript changes after load
# (palette, scroll state, js/no-js).
RUNTIME = re.compile(r"\[data-md-[\w-]+(?:[~|^$*]?=[^\]]*)?\]|\.(?:no-)?js(?![\w-])")
CLASS = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")
ATTRIBUTE = re.compile(r"\[[^\]]*\]")
ATTRIBUTE_NAME = re.compile(r"\[\s*([\w-]+)")
TAG_NAME = re.compile(r"[a-zA-Z][\w-]*")
VAR_USE = re.compile(r"var\(\s*(--[\w-]+)")


def _split_selectors(prelude) -> list[str]:
    parts, current = [], []
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            parts.append(tinycss2.serialize(current).strip())
            current = []
        else:
            current.append(token)
    parts.append(tinycss2.serialize(current).strip())
    return [p for p in parts if p]


# The highlighter's token spans (``<span class="n">x</span>``, leaves inside
# ``<pre>``) are four fifths of a notebook page's 14,000 elements, and parsing
# them was most of each page's pruning. A rule cannot tell the hundredth ``n``
# span of a block from the first, so the matcher sees, in each ``<pre>``, the
# first span of each class and the last span; the others become their text.
# ``tests/test_notebook_hook.py`` checks that every selector of the inlined
# stylesheet gets the same verdict on a built notebook page either way.
PRE = re.compile(r"(<pre\b[^>]*>)(.*?)(</pre>)", re.S)
LEAF_SPAN = re.compile(r'<span class="([^"<>]+)">([^<]*)</span>')


def fewer_token_spans(html: str) -> str:
    """``html`` with each ``<pre>``'s repeated leaf spans replaced by their text."""

    def in_pre(match: re.Match) -> str:
        spans = list(LEAF_SPAN.finditer(match[2]))
        keep = {spans[-1].start()} if spans else set()
        classes: set[str] = set()
        for span in spans:
            if span[1] not in classes:
                classes.add(span[1])
                keep.add(span.start())
        body = LEAF_SPAN.sub(lambda s: s[0] if s.start() in keep else s[2], match[2])
        return match[1] + body + match[3]

    return PRE.sub(in_pre, html)


class _Matcher:
    def __init__(self, page_html: str) -> None:
        self.soup = BeautifulSoup(fewer_token_spans(page_html), "html.parser")
        self.by_class: dict[str, list] = {}
        self.by_tag: dict[str, list] = {}
        self.attributes: set[str] = set()
        for el in self.soup.find_all(True):
            self.by_tag.setdefault(el.name, []).append(el)
            self.attributes.update(el.attrs)
            for c in el.get("class", []):
                self.by_class.setdefault(c, []).append(el)
        self.cache: dict[str, bool] = {}

    def matches(self, selector: str) -> bool:
        if selector not in self.cache:
            self.cache[selector] = self._matches(selector)
        return self.cache[selector]

    def _matches(self, selector: str) -> bool:
        static = RUNTIME.sub("", DYNAMIC.sub("", selector))
        if re.search(r"\(\s*\)", static):  # e.g. :not(:hover): cannot tell, keep
            return True
        static = re.sub(r"([>+~]\s*)$", r"\1*", static.strip()) or "*"
        required = re.sub(r":[\w-]+\((?:[^()]|\([^()]*\))*\)", "", static)  # not :not(.x) etc.
        if any(a.lower() not in self.attributes for a in ATTRIBUTE_NAME.findall(required)):
            return False
        plain = ATTRIBUTE.sub("", required)  # an attribute's value may hold a dot
        if any(c not in self.by_class for c in CLASS.findall(plain)):
            return False
        try:
            compiled = soupsieve.compile(static)
        except Exception:  # a selector soupsieve does not know: keep the rule
            return True
        # Try only the elements that carry the rarest class of the last compound
        # (the subject), or else its tag name; a full-tree search is slow on a
        # notebook page (15,000 elements).
        last = re.split(r"[\s>+~]+", plain)[-1]
        subject = CLASS.findall(last)
        tag = TAG_NAME.match(last)
        if subject:
            candidates = self.by_class[min(subject, key=lambda c: len(self.by_class[c]))]
        elif tag and "|" not in last:  # not a namespaced ns|tag
            candidates = self.by_tag.get(tag[0].lower(), [])
        else:
            return compiled.select_one(self.soup) is not None
        return any(compiled.match(el) for el in candidates)


def _prune_rules(rules, matcher: _Matcher) -> list:
    kept = []
    for rule in rules:
        if rule.type == "qualified-rule":
            selectors = [s for s in _split_selectors(rule.prelude) if matcher.matches(s)]
            if selectors:
                kept.append(("rule", ",".join(selectors), rule.content))
        elif rule.type == "at-rule":
            keyword = rule.lower_at_keyword
            if keyword in ("media", "supports", "layer", "container") and rule.content:
                inner = _prune_rules(
                    tinycss2.parse_rule_list(
                        rule.content, skip_comments=True, skip_whitespace=True
                    ),
                    matcher,
                )
                if inner:
                    head = f"@{rule.at_keyword} {tinycss2.serialize(rule.prelude).strip()}"
                    kept.append(("block", head, inner))
            elif keyword == "charset":
                continue
            else:  # keyframes, font-face, page, ...: kept whole, pruned below if unused
                kept.append(("raw", None, rule))
    return kept


def _declarations(content) -> list:
    return [
        d
        for d in tinycss2.parse_blocks_contents(content, skip_comments=True, skip_whitespace=True)
        if d.type in ("declaration", "qualified-rule", "at-rule")
    ]


def _render(kept, used_vars: set[str] | None) -> str:
    out = []
    for kind, head, body in kept:
        if kind == "raw":
            out.append(body.serialize())
        elif kind == "block":
            inner = _render(body, used_vars)
            if inner:
                out.append(f"{head}{{{inner}}}")
        else:
            decls = [
                d.serialize()
                for d in _declarations(body)
                if used_vars is None
                or d.type != "declaration"
                or not d.name.startswith("--")
                or d.name in used_vars
            ]
            if decls:
                out.append(f"{head}{{{';'.join(decls)}}}")
    return "".join(out)


def _used_vars(kept) -> set[str]:
    """Custom properties read by a kept rule, directly or through other properties."""
    defined: dict[str, list[str]] = {}
    used: set[str] = set()

    def walk(items):
        for kind, _, body in items:
            if kind == "raw":
                used.update(VAR_USE.findall(body.serialize()))
            elif kind == "block":
                walk(body)
            else:
                for d in _declarations(body):
                    text = tinycss2.serialize(d.value) if d.type == "declaration" else d.serialize()
                    refs = VAR_USE.findall(text)
                    if d.type == "declaration" and d.name.startswith("--"):
                        defined.setdefault(d.name, []).extend(refs)
                    else:
                        used.update(refs)

    walk(kept)
    todo = list(used)
    while todo:
        for ref in defined.get(todo.pop(), []):
            if ref not in used:
                used.add(ref)
                todo.append(ref)
    return used


@functools.lru_cache(maxsize=1)
def _parsed(css: str) -> list:
    """The stylesheet's rules: parsed once for all notebook pages, whose
    inlined stylesheet is the same (a second of each page's pruning)."""
    return tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)


def prune_css(css: str, page_html: str, matcher: _Matcher | None = None) -> str:
    """The rules of ``css`` that apply to ``page_html``, minified.

    A rule stays when one of its selectors matches an element of the page,
    matched with state (``:hover``, ``::before``, Material's palette and
    scroll attributes, ...) set aside so that a rule for a later state stays.
    ``@media``/``@supports`` blocks are pruned inside; other at-rules stay.
    Then a custom property declaration stays only if a kept rule reads it,
    directly or through another property. A selector that needs a class or an
    attribute the page does not have is dropped; one the matcher cannot parse
    otherwise keeps its rule.
    """
    matcher = matcher or _Matcher(page_html)
    rules = _parsed(css)
    kept = _prune_rules(rules, matcher)
    keyframes_used = set(re.findall(r"animation(?:-name)?\s*:\s*([^;}]+)", _render(kept, None)))
    names = {w for value in keyframes_used for w in re.findall(r"[\w-]+", value)}
    kept = [
        (kind, head, body)
        for kind, head, body in kept
        if kind != "raw"
        or not body.lower_at_keyword.endswith("keyframes")
        or tinycss2.serialize(body.prelude).strip() in names
    ]
    return _render(kept, _used_vars(kept))


STYLE = re.compile(r"<style\b[^>]*>(.*?)</style>", re.S)


def _inlined_css(output: str) -> str:
    """The page's ``<style>`` blocks, joined."""
    return "\n".join(m[1] for m in STYLE.finditer(output))


def pruned_styles(output: str) -> str:
    """The pruned stylesheet for the page ``output``: its ``<style>`` blocks' rules
    that match the page (``prune_css``). Runs in a worker (``hooks/pool.py``)."""
    css = _inlined_css(output)
    return prune_css(css, STYLE.sub("", output)) if css else ""


def with_styles(output: str, css: str) -> str:
    """``output`` with its ``<style>`` blocks replaced by one block holding ``css``."""
    first = STYLE.search(output)
    if first is None:
        return output
    rest = STYLE.sub("", output[first.end() :])
    return output[: first.start()] + f"<style>{css}</style>" + rest


# Pruning reads the whole written page, so it can only start once the page is
# rendered, near the end of the build: about two seconds of one core for each
# notebook page, with the other core idle. So the page is written as it is,
# and its pruning runs in a worker process (``hooks/pool.py``) while the
# remaining pages render; ``on_post_build`` puts the pruned stylesheet into the
# written page. Later hooks' ``on_post_page`` (reader.py) leave ``<style>``
# alone, so the page is the same as if it had been pruned in place. The pruned
# stylesheet is cached by the hash of the page and of this hook
# (``buildcache``, which adds the installed packages); a warm build finds it
# and prunes in place. One entry per configuration: the offline copy's page
# differs (its links).
# (written page, its src_uri, cache slug, cache key, inlined CSS bytes, worker's stylesheet)
_PRUNING: list[tuple[Path, str, str, str, int, Future]] = []


def _prune_entry(output: str, where: str) -> tuple[str, str]:
    key = buildcache.digest([output, HOOK_SOURCE])
    name = f"{buildcache.CONFIG}-{where}" if buildcache.CONFIG else where
    return re.sub(r"\W+", "-", name), key


# ---------------------------------------------------------------------------


def on_config(config):
    # mkdocs-jupyter caches an executed notebook by the notebook's bytes and its
    # own options, not by the code the notebook imports: after a kernel change a
    # warm build would show the old kernel's outputs (or an old numpy's). One
    # cache directory per version of the kernel, of the installed packages and
    # of hooks/pool.py (which converts) makes any change re-execute; older
    # directories are removed. (And of hooks/warmkernel.py, which starts the
    # kernels: they must run a notebook as a new kernel would.)
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None or not plugin.config["cache"]:
        return config
    if not buildcache.enabled():  # a clean build: execute afresh, keep nothing
        _CLEAN_CACHE.append(tempfile.mkdtemp(prefix="mfl-jupyter-"))
        plugin.config["cache_dir"] = _CLEAN_CACHE[-1]
        return config
    base = buildcache.CACHE / "mkdocs-jupyter"
    current = base / buildcache.digest(
        [buildcache.kernel_digest(), buildcache.environment_digest(), POOL_SOURCE]
    )
    if base.is_dir():
        for entry in base.iterdir():
            if entry != current:
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    plugin.config["cache_dir"] = str(current)
    return config


# Executing a notebook starts a Jupyter kernel and runs every cell: seconds of
# a cold build that no page waits on until the notebook's own page. So
# ``on_files`` starts each notebook missing from mkdocs-jupyter's cache in a
# worker process (``hooks/pool.py``), before the figures are queued (the
# notebooks take longest, and the first one's page comes early), and
# ``on_pre_page`` stores the result
# where the plugin's render then finds it. The worker calls what the plugin's
# render calls (``nb2html``, with the options it passes, and its table of
# contents), and the entry is written under the plugin's own cache key, so the
# page is the same either way (``tests/test_reproducible.py``).
NB2HTML_OPTIONS = (
    "kernel_name",
    "theme",
    "allow_errors",
    "show_input",
    "no_input",
    "no_prompt",
    "remove_tag_config",
    "highlight_extra_classes",
    "include_requirejs",
    "custom_mathjax_url",
)
_EXECUTING: dict[str, tuple[Path, Future]] = {}  # src_uri -> (cache entry, worker's result)
_CLEAN_CACHE: list[str] = []  # the temporary cache folders of clean builds


@event_priority(10)  # before hooks/figures.py queues the figures
def on_files(files, config):
    _EXECUTING.clear()
    _PRUNING.clear()
    plugin = config.plugins.get("mkdocs-jupyter")
    if plugin is None or not plugin.config["cache"] or plugin.config["execute_ignore"]:
        return files
    from mkdocs_jupyter.plugin import _compute_cache_key, _get_cache_path

    options = {name: plugin.config[name] for name in NB2HTML_OPTIONS}
    options["execute"] = plugin.config["execute"]
    # Before mkdocs-jupyter's own on_files makes the notebooks pages: every
    # included file it would take.
    for file in files:
        if not file.inclusion.is_included() or not plugin.should_include(file):
            continue
        key = _compute_cache_key(file.abs_src_path, plugin.config, options["execute"])
        entry = _get_cache_path(plugin.config["cache_dir"], key)
        # The plugin evicts the entries of the notebooks it did not render this
        # build; a dirty rebuild (hooks/caches.py) renders none it skips, and
        # the next full one would execute them again.
        used = getattr(plugin, "_used_cache_paths", None)  # set in the plugin's on_pre_build
        if isinstance(used, set):
            used.add(entry)
        if not entry.exists():
            job = pool.submit(
                pool.notebook_html, file.abs_src_path, options, plugin.config["toc_depth"]
            )
            _EXECUTING[file.src_uri] = (entry, job)
    return files


def on_pre_page(page, config, files):
    entry, job = _EXECUTING.pop(page.file.src_uri, (None, None))
    if job is not None:
        try:
            result = job.result()
        except Exception as exc:
            raise PluginError(f"{page.file.src_uri}: executing the notebook failed: {exc}") from exc
        entry.parent.mkdir(parents=True, exist_ok=True)
        entry.write_text(json.dumps(result), encoding="utf-8")
    return page


NOTEBOOK_SEARCH_BOOST = 0.5


def is_notebook(page) -> bool:
    return page.file.src_uri.endswith(".ipynb")


def on_page_content(html: str, page, config, files) -> str:
    if not is_notebook(page):
        return html
    # mkdocs-jupyter keeps a hidden copy of each cell's source for its copy
    # button; the search index should hold the code once, not twice.
    html = pool.with_attribute(html, "div", "clipboard-copy-txt", "data-search-exclude")
    # Nor the copy button's "Copied!" notice, nor the "¶" of each heading's
    # anchor link, which ended every section title in the results.
    html = pool.with_attribute(html, "span", "notice", "data-search-exclude")
    html = pool.with_attribute(html, "a", "anchor-link", "data-search-exclude")
    # The lesson page explains what its notebook only demonstrates: on an equal
    # match the page comes first (Material's per-page search boost).
    page.meta.setdefault("search", {}).setdefault("boost", NOTEBOOK_SEARCH_BOOST)
    html = drop_scripts(html, page.file.src_uri)
    figures = _FIGURE_FILES[page.file.src_uri] = []
    html = fix_figures(html, Path(page.file.abs_src_path), figures)
    return wrap_math(html)


def on_post_page(output: str, page, config) -> str:
    if not is_notebook(page):
        return output
    folder = Path(config["site_dir"]) / Path(page.file.dest_uri).parent
    for name, data in _FIGURE_FILES.pop(page.file.src_uri, []):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    if not STYLE.search(output):
        return output
    where = page.file.src_uri
    slug, key = _prune_entry(output, where)
    cached = buildcache.lookup("notebook-css", slug, key, "css")
    if cached is not None:
        return with_styles(output, cached.decode())
    job = pool.submit(pool.pruned_styles, output)
    _PRUNING.append(
        (Path(page.file.abs_dest_path), where, slug, key, len(_inlined_css(output).encode()), job)
    )
    return output


@event_priority(10)  # before hooks/caches.py ends the worker pool
def on_post_build(config):
    while _PRUNING:
        written, where, slug, key, before, job = _PRUNING.pop(0)
        try:
            css = job.result()
        except Exception as exc:
            raise PluginError(f"{where}: pruning its stylesheet failed: {exc!r}") from exc
        buildcache.store("notebook-css", slug, key, "css", css.encode())
        log.info("%s: inlined CSS %d -> %d bytes", where, before, len(css.encode()))
        written.write_text(with_styles(written.read_text(encoding="utf-8"), css), encoding="utf-8")
    while _CLEAN_CACHE:
        shutil.rmtree(_CLEAN_CACHE.pop(), ignore_errors=True)
