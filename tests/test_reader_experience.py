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
