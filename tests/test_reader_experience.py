"""Unit checks for the reader-experience fixes of issue #29 that need no browser
(the browser side is in tests/test_browser.py)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        (r"\(\frac{T_{\text{train}}}{T_{\text{target}}}\)", "T_train/T_target"),
        (r"\(\frac{1}{\sqrt{d_k}}\)", "1/√(d_k)"),
        (r"\[\mathrm{softmax}\Big(\frac{QK^\top}{\sqrt{d_k}}\Big)V\]", "softmax( QKᵀ/√(d_k) )V"),
        (r"\(\frac{a+b}{2}\)", "(a+b)/2"),
        (r"\(\tfrac12\)", "1/2"),
        (r"\(\sqrt{2}\)", "√2"),
        (r"\(\sqrt[3]{x}\)", "^3√x"),
        (r"\(\frac{\partial L}{\partial x}\)", "(∂ L)/(∂ x)"),
    ],
)
def test_fractions_and_roots_keep_their_bar_in_search_text(load, tex, text):
    assert load("hooks/search.py").tex_text(tex) == text


@pytest.mark.parametrize(
    ("heading", "aliases"),
    [
        ("7. Rotary Position Embeddings", ["RoPE"]),
        ("6.4 Rotary positional embeddings", ["RoPE"]),
        ("7.2 Grouped-query attention", ["GQA"]),
        ("5. Multi-Head Attention", ["MHA"]),
        ("7.3 Multi-head latent attention", ["MLA"]),  # not MHA: the words are not adjacent
        ("6. ALiBi: Attention with Linear Biases", []),  # already named
        ("8. RoPE Scaling for Long Context", []),
    ],
)
def test_headings_are_indexed_with_the_abbreviation_they_spell_out(load, heading, aliases):
    search = load("hooks/search.py")
    assert search.heading_aliases(heading) == aliases
    html = f'<h2 id="x">{heading}<a class="headerlink" href="#x">¶</a></h2>'
    named = search.name_abbreviations(html)
    suffix = f" ({', '.join(aliases)})" if aliases else ""
    assert named == f'<h2 id="x">{heading}{suffix}<a class="headerlink" href="#x">¶</a></h2>'


def test_the_theory_notebook_link_opens_the_section(site_dir):
    """Each numbered section page links its lesson's theory notebook at the
    notebook heading of the same section, and that anchor exists."""
    import re

    checked = 0
    for page in sorted(site_dir.glob("*/*/index.html")):
        html = page.read_text(encoding="utf-8")
        link = re.search(r'class="mfl-meta-notebook"><a href="([^"]+)"', html)
        title = re.search(r"<h1[^>]*>(\d+)\. ", html)
        if not link or not title:
            continue
        target, _, anchor = link[1].partition("#")
        assert anchor.startswith(title[1]), (page, link[1])
        notebook = (page.parent / target / "index.html").resolve()
        assert f'id="{anchor}"' in notebook.read_text(encoding="utf-8"), (page, link[1])
        checked += 1
    assert checked >= 20


def test_page_notebooks_embed_their_figures(site_dir):
    """No figure of a downloaded page notebook is a link to the site: each is an
    attachment (SVG) of its cell, so it shows offline."""
    import json
    import re

    embedded = 0
    for notebook in sorted(site_dir.glob("*/*.ipynb")):
        if notebook.name == "theory.ipynb":
            continue
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            source = "".join(cell["source"])
            assert not re.search(r"!\[[^\]]*\]\(https?://", source), (notebook, source[:200])
            for name in re.findall(r"\]\(attachment:([^)]+)\)", source):
                svg = cell["attachments"][name]["image/svg+xml"]
                assert svg.lstrip().startswith(("<?xml", "<svg")), (notebook, name)
                embedded += 1
    assert embedded >= 10
