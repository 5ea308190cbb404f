"""Worker processes for the slow parts of a cold build: figures, notebooks, pruning,
search indexing.

A build renders its pages one after another in one process. Drawing the
figures (``hooks/figures.py``, about ten seconds of matplotlib) and executing
the theory notebooks (``hooks/notebook.py``, a Jupyter kernel each, forked
from the worker's warm template: ``hooks/warmkernel.py``) depend on
no page, so the hooks hand them to a pool of worker processes as soon as they
know what is missing from the build cache, and collect the results where they
are first needed. Pruning a notebook page's stylesheet (``hooks/notebook.py``)
needs the rendered page, so it goes to the pool as each such page is written,
and is collected at the end of the build; so does indexing each page for
search (``hooks/search.py``). A clean build starts the workers
as it begins (``start_early``); a warm build finds everything cached and
starts none.

Under ``properdocs serve`` the workers are spawned: the server runs threads,
and a fork copies their locks; and a worker must run the hooks as they are
now, which a long-running server may not have loaded. So what they run must
be importable by name: the functions below, with this folder put on the
worker's ``sys.path`` by ``site.addsitedir`` (``WORKER_START``, which also
tunes the garbage collector: ``tune_gc``). ``properdocs build`` is one short
process with no thread but its own when it starts (``hooks/caches.py``'s
``on_startup``): there the workers are forked (``fork_workers``), and start
with the modules the build has loaded, mkdocs-jupyter's converter among them,
instead of importing them again each (about a second of CPU, for the same
site). An error in a worker is raised again in the build where its result is
collected. ``shutdown`` ends the pool at the end of a build
(``hooks/caches.py``).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import io
import logging
import multiprocessing
import os
import re
import runpy
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
_EXECUTOR: ProcessPoolExecutor | None = None

# matplotlib settings for every figure: deterministic SVG (fixed hash salt,
# text as paths) on a white background.
FIGURE_STYLE = {
    "svg.hashsalt": "math-for-llms",
    "svg.fonttype": "path",
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "font.size": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


_START_METHOD = ["spawn"]  # or "fork", for `properdocs build` (see above)


def fork_workers(fork: bool) -> None:
    """Fork this build's workers (``True``) or spawn them (see the module docstring)."""
    _START_METHOD[0] = "fork" if fork else "spawn"


def submit(fn, *args: Any) -> Future:
    """Run ``fn(*args)`` in a worker process; the pool starts on first use."""
    global _EXECUTOR
    if _EXECUTOR is None:
        _EXECUTOR = ProcessPoolExecutor(
            max_workers=os.cpu_count() or 1,
            mp_context=multiprocessing.get_context(_START_METHOD[0]),
            initializer=exec,
            initargs=(WORKER_START, {}),
        )
    return _EXECUTOR.submit(fn, *args)


# A build allocates millions of short-lived objects (Markdown trees, matplotlib
# artists) and makes few reference cycles, yet Python's collector, at its
# default threshold of 700 allocations, took up to a tenth of a process's CPU
# time (measured with gc.callbacks on a clean build: 2.3 s of the main
# process's 22 s). So the
# objects that exist once the build has started (modules, configuration) are
# set aside for good (``gc.freeze``), and the young generation is collected
# every 100,000 allocations. Cycles are still collected; no output changes.
GC_THRESHOLD = (100_000, 10, 10)


def tune_gc() -> None:
    """The collector settings above, for this process from now on."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


# A spawned worker that is told to stop returns its last message, and then
# Python tears down every module it loaded (matplotlib, nbconvert, Jinja): about
# 0.8 s, during which the build waits for it (``shutdown``), at the very end of a
# clean build. Nothing is left to do by then (multiprocessing has flushed the
# result queue before the interpreter exits), so the worker flushes its streams
# and logs and leaves at once, as a forked child would (``os._exit``). The
# handler is registered first, so it runs last of the exit handlers.


def _leave() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(0)


def exit_without_teardown() -> None:
    """Make this process skip module teardown when it exits (see above)."""
    atexit.register(_leave)


# What each worker runs first. It is source, not a function of this module:
# MkDocs puts this folder on the path only while it loads the hooks, so a
# worker can import this module only after it has added the folder itself.
WORKER_START = (
    f"import site; site.addsitedir({str(HERE)!r}); import pool; "
    "pool.exit_without_teardown(); pool.tune_gc()"
)


def start_early() -> None:
    """Start the workers now, each loading mkdocs-jupyter's converter (about a
    second), which the first jobs, the notebooks, import, and starting its
    kernel template (``hooks/warmkernel.py``). Called
    when a build that will execute every notebook and draw every figure starts
    (``hooks/caches.py``): the workers load while the build sets up and
    collects its files, with the second core otherwise idle."""
    for _ in range(os.cpu_count() or 1):
        submit(_preload)


def _preload() -> None:
    import mkdocs_jupyter.convert  # noqa: F401
    import warmkernel

    warmkernel.warm_up()  # the theory notebooks' kernels are forked from it


def running() -> bool:
    """Whether this build has started its workers."""
    return _EXECUTOR is not None


def shutdown() -> None:
    """End the pool, canceling work nobody collected (a failed build)."""
    global _EXECUTOR
    if _EXECUTOR is not None:
        _EXECUTOR.shutdown(wait=True, cancel_futures=True)
        _EXECUTOR = None


def render_figure(script: str) -> bytes:
    """Run a figure script and return its matplotlib figure ``fig`` as SVG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context(FIGURE_STYLE), one_text_to_path(), font_tables_read_once():
        namespace = runpy.run_path(script, run_name="__figure__")
        fig = namespace.get("fig")
        if fig is None:
            raise ValueError(
                f"{script}: a figure script must define a matplotlib figure named `fig`"
            )
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
        plt.close("all")
    return _number_clip_ids(buf.getvalue())


# Every matplotlib renderer makes its own TextToPath (3.11: RendererBase.__init__
# calls ``matplotlib.text.TextToPath()``), and with it its own mathtext parser,
# whose parse cache belongs to that instance. ``savefig(bbox_inches="tight")``
# draws a figure with one renderer to find its box and with a second to write
# it, so every formula on a figure was parsed twice by pyparsing: a tenth of the
# figures' time. The SVG renderer lays text out at a fixed 72 dpi, whatever the
# renderer, so while a figure is drawn here all renderers share matplotlib's own
# module-level instance (``textpath.text_to_path``). The SVG bytes are the same
# (``tests/test_figures.py``).


@contextlib.contextmanager
def one_text_to_path():
    """Within the block, every new renderer uses ``matplotlib.textpath.text_to_path``."""
    import matplotlib.text
    import matplotlib.textpath

    own = matplotlib.text.TextToPath
    matplotlib.text.TextToPath = lambda: matplotlib.textpath.text_to_path
    try:
        yield
    finally:
        matplotlib.text.TextToPath = own


# Every time matplotlib 3.11 lays a text out (``Text._get_layout``, 47,000 times
# in the lessons' 60 figures: each tick label, in each of the passes above), it
# opens the text's font (``font_manager.get_font``) and asks it for two of its
# tables (``FT2Font.get_sfnt_table``, which builds the table anew as a dict),
# only to read the font's ascender, descender and line gap, which never change.
# While a figure is drawn here, text.py's ``get_font`` hands out a stand-in that
# reads each table of each font once per worker: a tenth of the figures' time,
# and the same SVG bytes (``tests/test_figures.py``). The stand-in has that one
# method: a matplotlib that wanted another from this font would fail loudly.


class _FontTables:
    """The part of an ``FT2Font`` that ``Text._get_layout`` uses, each table read once."""

    def __init__(self, paths: tuple[str, ...]) -> None:
        from matplotlib.font_manager import get_font

        self._font = get_font(list(paths))
        self._tables: dict[str, Any] = {}

    def get_sfnt_table(self, name: str):
        if name not in self._tables:
            self._tables[name] = self._font.get_sfnt_table(name)
        return self._tables[name]


_font_tables = functools.cache(_FontTables)


@contextlib.contextmanager
def font_tables_read_once():
    """Within the block, text layout reads each font's tables once (see above)."""
    import matplotlib.text

    own = matplotlib.text.get_font
    matplotlib.text.get_font = lambda paths: _font_tables(tuple(paths))
    try:
        yield
    finally:
        matplotlib.text.get_font = own


# matplotlib names each clip path by a hash of its rectangle's full-precision
# floats. Constrained layout (kiwisolver) can move those floats in the last bit
# from one run to the next, which changes the hash but nothing that is drawn (the
# SVG prints 6 decimals). Numbering the ids in order of appearance keeps a
# figure's bytes the same every build.
CLIP_ID = re.compile(rb'(?<=id=")p[0-9a-f]{10}(?=")|(?<=url\(#)p[0-9a-f]{10}(?=\))')


def _number_clip_ids(svg: bytes) -> bytes:
    ids: dict[bytes, bytes] = {}
    for match in CLIP_ID.finditer(svg):
        ids.setdefault(match.group(), b"clip%d" % len(ids))
    return CLIP_ID.sub(lambda m: ids[m.group()], svg)


def search_entries(*page: Any) -> list[dict]:
    """``hooks/search.py``'s ``entries_of`` a page."""
    import search

    return search.entries_of(*page)


def pruned_styles(output: str) -> str:
    """``hooks/notebook.py``'s ``pruned_styles`` for a rendered notebook page."""
    # Loaded from its file, not imported as `notebook`: that is also the name of
    # Jupyter's notebook package, which site-packages (first on the path) may hold.
    import importlib.util
    import sys

    if "mfl_notebook_hook" not in sys.modules:
        spec = importlib.util.spec_from_file_location("mfl_notebook_hook", HERE / "notebook.py")
        module = sys.modules["mfl_notebook_hook"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules["mfl_notebook_hook"].pruned_styles(output)


def notebook_html(path: str, options: dict[str, Any], toc_depth: int) -> dict[str, Any]:
    """What mkdocs-jupyter's page render stores in its cache for the notebook at
    ``path``, converted by ``html_exporter()``."""
    from mkdocs_jupyter import convert, nbconvert2
    from mkdocs_jupyter.plugin import _get_nb_toc_tokens

    nbconvert2.HTMLExporter = html_exporter()  # the class its nb2html instantiates
    content = convert.nb2html(path, **options)
    toc_tokens, title = _get_nb_toc_tokens(path, toc_depth)
    return {"content": content, "toc_tokens": toc_tokens, "title": title}


# nbconvert's HTMLExporter (7.17) ends by parsing the page it has just written
# with BeautifulSoup and printing it again, to give each image without alt text
# a placeholder one and each input and output area tabindex="0": one to two
# seconds a notebook, more than the rest of its conversion. This build gives
# every image its own alt text (``hooks/notebook.py``; an image without one
# fails the build), so only the tabindex is left to add (``with_attribute``).
# ``tests/test_notebook_hook.py`` checks that the document is nbconvert's own.
FOCUSABLE = ("jp-Cell-inputWrapper", "jp-OutputArea-output")


def with_attribute(html: str, tag: str, css_class: str, attribute: str) -> str:
    """``attribute`` added to each ``tag`` element whose classes include ``css_class``,
    wherever its ``class`` stands among its attributes."""
    holds = rf'(?=[^>]*\sclass="(?:[^"]*\s)?{re.escape(css_class)}[\s"])'
    return re.sub(rf"<{tag}\b{holds}", f"<{tag} {attribute}", html)


# Each notebook gets a new exporter, and with it a new Jinja environment that
# compiled nbconvert's templates again: a quarter of a notebook's conversion,
# once its kernel is done. Jinja's own bytecode cache, kept in this process's
# memory, lets every exporter after the first load them compiled (the cache
# checks each template's source by its checksum, so an edited template compiles).
# Only this exporter class uses it, and all its environments have the same
# settings (extensions, async), which is what compiled templates depend on.
@functools.cache
def _compiled_templates():
    import jinja2

    class InMemoryBytecodeCache(jinja2.BytecodeCache):
        def __init__(self) -> None:
            self.code: dict[str, bytes] = {}

        def load_bytecode(self, bucket) -> None:
            if bucket.key in self.code:
                bucket.bytecode_from_string(self.code[bucket.key])

        def dump_bytecode(self, bucket) -> None:
            self.code[bucket.key] = bucket.bytecode_to_string()

    return InMemoryBytecodeCache()


@functools.cache
def html_exporter() -> type:
    """nbconvert's ``HTMLExporter``, without its final parse (see ``FOCUSABLE``)."""
    import warmkernel
    from nbconvert.exporters.html import Highlight2HTML, HTMLExporter, WidgetsDataTypeFilter
    from nbconvert.exporters.templateexporter import TemplateExporter

    class FocusableHTMLExporter(HTMLExporter):
        def __init__(self, config=None, **kw):
            if config is not None:  # kernels forked from a warm process (hooks/warmkernel.py)
                execute = config.setdefault("ExecutePreprocessor", {})  # a dict or a Config
                execute["kernel_manager_class"] = warmkernel.WarmKernelManager
            super().__init__(config=config, **kw)

        def _create_environment(self):
            environment = super()._create_environment()
            environment.bytecode_cache = _compiled_templates()
            return environment

        def from_notebook_node(self, nb, resources=None, **kw):
            # HTMLExporter.from_notebook_node up to its BeautifulSoup pass
            langinfo = nb.metadata.get("language_info", {})
            lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
            highlight_code = self.filters.get(
                "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)
            )
            resources = self._init_resources(resources)
            filter_data_type = WidgetsDataTypeFilter(
                notebook_metadata=self._nb_metadata, parent=self, resources=resources
            )
            self.register_filter("highlight_code", highlight_code)
            self.register_filter("filter_data_type", filter_data_type)
            html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
            for css_class in FOCUSABLE:
                html = with_attribute(html, "div", css_class, 'tabindex="0"')
            return html, resources

    return FocusableHTMLExporter
