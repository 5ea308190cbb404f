"""hooks/notebook.py: CSS pruning, math markup, figure alt text and PNG palettes, scripts."""

from __future__ import annotations

import base64
import importlib.util
import io
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("mfl_notebook_hook", ROOT / "hooks" / "notebook.py")
nbhook = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nbhook)

PAGE = """<html><body data-md-color-scheme="default"><div class="jupyter-wrapper">
<div class="jp-Cell"><pre class="x">code</pre><span class="notice" hidden>Copied!</span></div>
</div></body></html>"""


def test_prune_css_keeps_what_the_page_can_use_and_drops_the_rest():
    css = """
    @charset "UTF-8";
    .jupyter-wrapper { --used: red; --via: var(--used); --unused: blue; --also-unused: 1px }
    .jp-Cell pre { color: var(--via) }
    .jp-Cell:hover pre::before { content: "x" }
    [data-md-color-scheme=slate] .jupyter-wrapper { --used: pink }
    .jp-Cell:not(.jp-mod-active) .notice { opacity: .5 }
    .lm-DockPanel, .jp-Cell { margin: 0 }
    .bp3-drawer { display: none }
    body[data-format=mobile] .jp-Cell { flex: none }
    @media print { .jp-Cell { break-inside: avoid } .bp3-x { color: red } }
    @media screen { .nothing-here { color: red } }
    @keyframes spin { to { transform: rotate(1turn) } }
    @keyframes used-spin { to { opacity: 0 } }
    .jp-Cell .notice { animation: used-spin 1s }
    """
    out = nbhook.prune_css(css, PAGE)
    assert ".jp-Cell pre{color: var(--via) }" in out
    assert ".jp-Cell:hover pre::before" in out  # state and generated content kept
    assert "[data-md-color-scheme=slate] .jupyter-wrapper" in out  # palette set at runtime
    assert ":not(.jp-mod-active)" in out  # a class the page lacks, inside :not()
    assert ".jp-Cell{margin: 0 }" in out and "lm-DockPanel" not in out  # selector list trimmed
    assert "bp3-drawer" not in out and "data-format=mobile" not in out
    assert "@media print{.jp-Cell{break-inside: avoid }}" in out and "bp3-x" not in out
    assert "nothing-here" not in out and "@media screen" not in out
    assert "used-spin" in out and "keyframes spin" not in out
    assert "--used: red" in out and "--via: var(--used)" in out  # read, directly or through --via
    assert "--unused" not in out and "--also-unused" not in out
    assert "@charset" not in out


def test_a_pages_style_blocks_become_one_pruned_block_in_place():
    page = (
        "<head><style>a{}</style><meta x><style>b{}</style></head><body><style>c{}</style></body>"
    )
    assert nbhook.pruned_styles("<p>no styles</p>") == ""
    out = nbhook.with_styles(page, "a{color:red}")
    assert out == "<head><style>a{color:red}</style><meta x></head><body></body>"
    assert nbhook.with_styles("<p>no styles</p>", "a{}") == "<p>no styles</p>"


def test_prune_css_keeps_rules_it_cannot_judge():
    out = nbhook.prune_css(".jp-Cell:unknown-pseudo(1){color:red}", PAGE)
    assert ".jp-Cell:unknown-pseudo(1)" in out


def test_prune_css_matches_by_tag_and_attribute_like_a_full_search():
    page = (
        '<html><body><div class="jupyter-wrapper"><table><tr><td>1</td></tr></table>'
        '<a href="x.pdf" title="a b">pdf</a><p><small>s</small></p></div></body></html>'
    )
    css = """
    .jupyter-wrapper table td { padding: 0 }
    .jupyter-wrapper *+table { margin: 0 }
    .jupyter-wrapper dl dt { font-weight: bold }
    .jupyter-wrapper p small { color: red }
    .jupyter-wrapper a[href$=".pdf"] { color: blue }
    a[title="a b"] { color: green }
    .jupyter-wrapper [data-jp-theme-scrollbars=true] ::-webkit-scrollbar-track:horizontal { x: 1 }
    .jupyter-wrapper select { border: 0 }
    :root { color: black }
    """
    out = nbhook.prune_css(css, page)
    kept = [
        ".jupyter-wrapper table td",
        ".jupyter-wrapper p small",
        '[href$=".pdf"]',
        '"a b"',
        ":root",
    ]
    assert all(k in out for k in kept), out
    # *+table needs a sibling before the table; the page has none
    for gone in ("*+table", "dl dt", "data-jp-theme-scrollbars", "select"):
        assert gone not in out, gone
    # the same verdicts as soupsieve's search of the whole page
    matcher = nbhook._Matcher(page)
    for selector in (".jupyter-wrapper p small", ".jupyter-wrapper *+table", "td", "dt"):
        full = nbhook.soupsieve.select_one(selector, matcher.soup) is not None
        assert matcher.matches(selector) is full, selector


def test_the_matcher_sees_each_token_class_once_per_code_block():
    page = (
        '<pre><span></span><span class="n">x</span> <span class="o">=</span> '
        '<span class="n">y</span><span class="o">+</span><span class="mi">1</span></pre>'
        '<pre><span class="n">z</span><span class="n">w</span></pre><p><span class="n">t</span></p>'
    )
    assert nbhook.fewer_token_spans(page) == (
        '<pre><span></span><span class="n">x</span> <span class="o">=</span> '
        'y+<span class="mi">1</span></pre>'  # first of each class, and the last
        '<pre><span class="n">z</span><span class="n">w</span></pre><p><span class="n">t</span></p>'
    )


def test_fewer_token_spans_change_no_verdict_on_a_built_notebook_page(
    site_dir, tmp_path, monkeypatch
):
    # The stylesheet mkdocs-jupyter inlines, from a notebook it converts here
    # (no kernel), against a page as built: every selector, pruned or not.
    from mkdocs_jupyter.convert import nb2html

    notebook = tmp_path / "empty.ipynb"
    notebook.write_text(
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    css = nbhook._inlined_css(nb2html(str(notebook), no_prompt=True))
    page = (site_dir / "attention-mechanism-math" / "theory" / "index.html").read_text()
    page = nbhook.STYLE.sub("", page)
    selectors = set()

    def collect(rules):
        for rule in rules:
            if rule.type == "qualified-rule":
                selectors.update(nbhook._split_selectors(rule.prelude))
            elif rule.type == "at-rule" and rule.content:
                collect(nbhook.tinycss2.parse_rule_list(rule.content, True, True))

    collect(nbhook._parsed(css))
    fewer = nbhook._Matcher(page)
    monkeypatch.setattr(nbhook, "fewer_token_spans", lambda html: html)
    every = nbhook._Matcher(page)
    assert len(fewer.soup.find_all(True)) < len(every.soup.find_all(True)) / 3
    assert len(selectors) > 3000
    assert [s for s in selectors if fewer.matches(s) != every.matches(s)] == []


def test_math_in_markdown_cells_gets_arithmatex_markup_and_code_is_left_alone():
    html = (
        '<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown jp-MarkdownOutput">'
        "<p>Cosine lies in $[-1,1]$; costs $5 and $6 stay; <code>$x$</code> too.</p>"
        "<p>$$\\sum_i x_i$$</p></div>"
        '<div class="jp-OutputArea-output"><pre>$y$</pre></div>'
    )
    out = nbhook.wrap_math(html)
    assert '<span class="arithmatex">\\([-1,1]\\)</span>' in out
    assert '<span class="arithmatex">\\[\\sum_i x_i\\]</span>' in out
    assert "<code>$x$</code>" in out and "<pre>$y$</pre>" in out
    assert out.count("arithmatex") == 2  # "$5 and $" is not math: a space follows the "$"


def _png(transparent: bool = False) -> bytes:
    """A small matplotlib plot, as the notebook's cells draw them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2), dpi=100)
    for k in range(4):
        ax.plot([i / 10 for i in range(60)], [((i * (k + 1)) % 17) / 17 for i in range(60)])
    out = io.BytesIO()
    fig.savefig(out, format="png", transparent=transparent)
    plt.close(fig)
    return out.getvalue()


def test_notebooks_convert_to_nbconvert_s_own_document_without_its_second_parse(
    tmp_path, monkeypatch
):
    import nbformat
    from mkdocs_jupyter import nbconvert2
    from nbconvert.exporters.html import HTMLExporter

    v4 = nbformat.v4
    png = base64.b64encode(_png()).decode()
    notebook = v4.new_notebook(
        cells=[
            v4.new_markdown_cell("# Title\n\nText with $x$ and <br> a break."),
            v4.new_code_cell(
                "x = 1\nx",
                outputs=[v4.new_output("execute_result", {"text/plain": "1"}, execution_count=1)],
            ),
            v4.new_code_cell(
                "draw()",
                outputs=[
                    v4.new_output("display_data", {"image/png": png, "text/plain": "<Figure>"})
                ],
            ),
            v4.new_code_cell(
                "print('a')", outputs=[v4.new_output("stream", name="stdout", text="a\n")]
            ),
        ],
        metadata={"language_info": {"name": "python", "pygments_lexer": "ipython3"}},
    )
    path = tmp_path / "n.ipynb"
    nbformat.write(notebook, path)
    monkeypatch.setattr(nbconvert2, "HTMLExporter", HTMLExporter)
    theirs = nbconvert2.nb2html(str(path), no_prompt=True)
    monkeypatch.setattr(nbconvert2, "HTMLExporter", nbhook.pool.html_exporter())
    ours = nbconvert2.nb2html(str(path), no_prompt=True)

    def document(html: str) -> str:
        return str(nbhook.BeautifulSoup(html, "html.parser"))

    # the same document, but for nbconvert's placeholder alt text, which the
    # build replaces (an image without alt text in its cell fails the build)
    placeholder = ' alt="No description has been provided for this image"'
    assert placeholder in theirs and placeholder not in ours
    assert document(ours) == document(theirs).replace(placeholder, "")
    assert ours.count('tabindex="0"') == theirs.count('tabindex="0"') >= 6  # 3 inputs, 3 outputs

    # every exporter after the first loads nbconvert's templates compiled
    # (pool._compiled_templates) and writes the same page
    compiled = nbhook.pool._compiled_templates().code
    assert len(compiled) >= 5  # the lab template and those it extends
    kept = dict(compiled)
    assert nbconvert2.nb2html(str(path), no_prompt=True) == ours
    assert compiled == kept


def test_figures_take_their_alt_text_from_cell_metadata_and_shrink(tmp_path, monkeypatch):
    # re-encode for real, not from the figures a local build left in .cache/
    monkeypatch.setenv("MFL_CACHE", "off")
    monkeypatch.setattr(nbhook.buildcache, "_OPEN", {})
    notebook = tmp_path / "n.ipynb"
    notebook.write_text(
        json.dumps({"cells": [{"id": "abc", "metadata": {"alt": "Blue lines on white"}}]}),
        encoding="utf-8",
    )
    data = _png()
    html = (
        '<div class="jp-Cell jp-CodeCell" id="cell-id=abc"><div>'
        f'<img alt="No description has been provided for this image" class="" '
        f'src="data:image/png;base64,{base64.b64encode(data).decode()}"/></div></div>'
    )
    written: list[tuple[str, bytes]] = []
    out = nbhook.fix_figures(html, notebook, written)
    assert 'alt="Blue lines on white"' in out and "No description" not in out
    assert 'src="data:image/webp;base64,' in out
    small = base64.b64decode(out.split("base64,")[1].split('"')[0])
    # it opens full size on a tap, as a lesson figure does: a link to the same image
    # as a file written beside the page (issue #54)
    assert '<a class="mfl-figure-open mfl-notebook-figure" href="figure-1.webp"' in out
    assert written == [("figure-1.webp", small)]
    palette = nbhook.smaller_png(data)
    assert Image.open(io.BytesIO(palette)).mode == "P"
    assert len(small) < len(palette) < len(data) / 2
    # lossless: the WebP holds exactly the palette PNG's pixels
    webp = Image.open(io.BytesIO(small))
    assert webp.format == "WEBP"
    assert webp.convert("RGB").tobytes() == Image.open(io.BytesIO(palette)).convert("RGB").tobytes()
    # an image in a cell without alt text fails the build
    with pytest.raises(PluginError, match="alt"):
        nbhook.fix_figures(html.replace("cell-id=abc", "cell-id=other"), notebook)


def test_cells_and_copies_are_found_whatever_the_order_of_their_attributes(tmp_path):
    # nbconvert writes id="..." before class="..."; BeautifulSoup used to print
    # them the other way round
    notebook = tmp_path / "n.ipynb"
    notebook.write_text(json.dumps({"cells": [{"id": "abc", "metadata": {"alt": "Lines"}}]}))
    image = f'<img src="data:image/png;base64,{base64.b64encode(_png()).decode()}"\nclass=""\n>'
    for cell in (
        '<div id="cell-id=abc" class="jp-Cell jp-CodeCell">',
        '<div class="jp-Cell" id="cell-id=abc">',
    ):
        assert 'alt="Lines"' in nbhook.fix_figures(f"{cell}{image}</div>", notebook)
    for copy in (
        '<div id="c1" class="clipboard-copy-txt">',
        '<div class="clipboard-copy-txt" id="c1">',
    ):
        marked = nbhook.pool.with_attribute(
            copy, "div", "clipboard-copy-txt", "data-search-exclude"
        )
        assert marked.startswith("<div data-search-exclude ") and marked.endswith(copy[4:])
    other = '<div id="c1" class="clipboard-copy-txt-x">'
    assert nbhook.pool.with_attribute(other, "div", "clipboard-copy-txt", "x") == other


def test_transparent_pngs_are_left_as_drawn():
    data = _png(transparent=True)
    assert nbhook.smaller_png(data) == data
    assert nbhook.smaller_image(data) == ("image/png", data)


def test_scripts_that_reach_other_hosts_are_dropped_or_fail_the_build():
    html = (
        '<script type="text/x-mathjax-config">MathJax.Hub.Config({})</script>'
        '<script src=""></script>'
        '<script type="module">const m = (await import("https://cdnjs.cloudflare.com/'
        'ajax/libs/mermaid/11/mermaid.esm.min.mjs")).default;</script>'
        "<script>document.addEventListener('clipboard-copy', () => {})</script>"
    )
    out = nbhook.drop_scripts(html, "x.ipynb")
    assert "mathjax" not in out.lower() and "mermaid" not in out and 'src=""' not in out
    assert "clipboard-copy" in out
    with pytest.raises(PluginError, match="another host"):
        nbhook.drop_scripts('<script src="https://cdn.example/x.js"></script>', "x.ipynb")


def test_the_prefetched_cache_entry_is_the_one_the_plugin_reads(tmp_path, monkeypatch):
    """hooks/notebook.py runs a notebook early and writes the result where mkdocs-jupyter's
    render will look, through the plugin's private ``_compute_cache_key`` and
    ``_get_cache_path``. If a release changes how the plugin keys its cache (0.27 changed
    those functions' signature), the prefetched entry would silently never be read: the
    build would execute every notebook twice. Both sides are driven here with mkdocs.yml's
    options, and must name the same file."""
    import yaml
    from mkdocs.structure.files import File, Files
    from mkdocs_jupyter.plugin import Plugin

    entries = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["plugins"]
    options = next(
        e["mkdocs-jupyter"] for e in entries if isinstance(e, dict) and "mkdocs-jupyter" in e
    )
    plugin = Plugin()
    errors, _ = plugin.load_config({**options, "cache_dir": str(tmp_path / "cache")})
    assert not errors
    site = {"use_directory_urls": True, "site_dir": str(tmp_path / "site")}
    notebook = File("embedding-space-math/theory.ipynb", str(ROOT / "docs"), site["site_dir"], True)
    files = plugin.on_files(Files([notebook]), config=site)
    config = SimpleNamespace(plugins={"mkdocs-jupyter": plugin}, **site)

    submitted = []
    monkeypatch.setattr(nbhook.pool, "submit", lambda *args: submitted.append(args) or "job")
    monkeypatch.setattr(nbhook, "_EXECUTING", {})
    nbhook.on_files(files, config)
    assert len(submitted) == 1  # nothing cached in the empty folder: the hook runs it early
    prefetched, job = nbhook._EXECUTING[notebook.src_uri]

    plugin.on_pre_build(config)
    page = SimpleNamespace(file=files.get_file_from_path(notebook.src_uri), abs_url="/e/theory/")
    plugin.on_pre_page(page, config, files)
    assert plugin._used_cache_paths == {prefetched}


def test_a_notebook_that_raises_fails_the_build(tmp_path, monkeypatch):
    """mkdocs.yml executes every notebook and allows no error; the worker's conversion
    (``pool.notebook_html``, with the options the build passes) raises on a cell that
    raises, and the build turns that into a PluginError at the notebook's page."""
    from concurrent.futures import Future

    import nbformat
    import yaml
    from mkdocs_jupyter.plugin import Plugin

    v4 = nbformat.v4

    entries = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["plugins"]
    options = next(
        e["mkdocs-jupyter"] for e in entries if isinstance(e, dict) and "mkdocs-jupyter" in e
    )
    assert options["execute"] is True and options["allow_errors"] is False
    plugin = Plugin()
    errors, _ = plugin.load_config(options)
    assert not errors
    nb2html = {name: plugin.config[name] for name in nbhook.NB2HTML_OPTIONS}
    nb2html["execute"] = plugin.config["execute"]
    notebook = v4.new_notebook(
        cells=[v4.new_code_cell("x = 1"), v4.new_code_cell("raise ValueError('boom')")],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    path = tmp_path / "raises.ipynb"
    nbformat.write(notebook, path)
    with pytest.raises(Exception, match="boom"):
        nbhook.pool.notebook_html(str(path), nb2html, plugin.config["toc_depth"])
    # as the worker's error reaches the page
    job: Future = Future()
    job.set_exception(ValueError("boom"))
    monkeypatch.setattr(nbhook, "_EXECUTING", {"x/theory.ipynb": (tmp_path / "entry", job)})
    page = SimpleNamespace(file=SimpleNamespace(src_uri="x/theory.ipynb"))
    with pytest.raises(PluginError, match="x/theory.ipynb: executing the notebook failed: boom"):
        nbhook.on_pre_page(page, None, None)
