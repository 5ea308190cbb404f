"""hooks/search.py indexes a page in a worker when the build's workers are running:
the entries must be those the search plugin makes from the page itself."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace

import pytest
from material.plugins.search.plugin import SearchIndex
from properdocs.structure.toc import get_toc

CONTENT = (
    '<h1 id="overview">Overview</h1><p>What the lesson covers, with <code>x</code>.</p>'
    '<h2 id="rotary-position-embeddings">7. Rotary Position Embeddings</h2>'
    "<p>Pairs turn by <strong>angles</strong>.</p>"
    '<h3 id="deep">A nested heading</h3><p>Its text.</p>'
    '<h2 id="no-toc">A heading the table of contents leaves out</h2><p>More.</p>'
    '<div class="highlight"><pre><span></span><code><span class="n">x</span> = 1</code></pre></div>'
    "<p>Hidden <span data-search-exclude>interface</span> text.</p>"
)
TOC_TOKENS = [
    {
        "level": 1,
        "id": "overview",
        "name": "Overview",
        "children": [
            {
                "level": 2,
                "id": "rotary-position-embeddings",
                "name": "7. Rotary Position Embeddings",
                "children": [
                    {"level": 3, "id": "deep", "name": "A nested heading", "children": []}
                ],
            }
        ],
    }
]


def page(meta: dict) -> SimpleNamespace:
    return SimpleNamespace(
        content=CONTENT,
        toc=get_toc(TOC_TOKENS),
        url="positional-encodings/rope/",
        title="Rotary",
        meta=meta,
        file=SimpleNamespace(src_uri="positional-encodings/rope.md"),
    )


def plugin_entries(search, p) -> list[dict]:
    """What the plugin makes of the page in this process (the hook's other path)."""
    index = SearchIndex()
    index.add_entry_from_context(
        SimpleNamespace(
            content=search.search_text(p.content), toc=p.toc, url=p.url, title=p.title, meta=p.meta
        )
    )
    return index.entries


@pytest.mark.parametrize(
    "meta",
    [{}, {"title": "From front matter", "tags": ["rope", 3], "search": {"boost": 2}, "other": 1}],
)
def test_a_page_indexed_from_what_is_sent_to_a_worker_gives_the_plugins_entries(load, meta):
    search = load("hooks/search.py")
    p = page(meta)
    made = search.entries_of(*search._indexed(p))
    assert made == plugin_entries(search, p)
    # the nested heading found its place in the table of contents; the abbreviation was added
    assert [e["location"] for e in made][-2:] == [
        "positional-encodings/rope/#deep",
        "positional-encodings/rope/#no-toc",
    ]
    assert any(e["title"] == "7. Rotary Position Embeddings (RoPE)" for e in made)
    assert not any("interface" in e["text"] for e in made)


def test_an_excluded_page_sends_nothing_back(load):
    search = load("hooks/search.py")
    assert search.entries_of(*search._indexed(page({"search": {"exclude": True}}))) == []


def test_a_spawned_worker_indexes_the_page(load):
    """The real round trip: the page's data pickled to a spawned worker (``hooks/pool.py``)."""
    search = load("hooks/search.py")
    p = page({"tags": ["rope"]})
    try:
        made = search.pool.submit(search.pool.search_entries, *search._indexed(p)).result()
    finally:
        search.pool.shutdown()
    assert made == plugin_entries(search, p)


def test_the_workers_entries_take_their_pages_places_in_the_index(load, monkeypatch):
    search = load("hooks/search.py")
    kept: dict[str, str] = {}
    monkeypatch.setattr(
        search.buildcache, "memo", lambda name: SimpleNamespace(put=kept.__setitem__)
    )

    def done(entries):
        job = Future()
        job.set_result(entries)
        return job

    a, b, c = {"location": "a/"}, {"location": "b/"}, {"location": "c/"}
    p = page({})
    sent = search._indexed(p)
    not_started = Future()  # still in the pool's queue: taken back and indexed here
    entries = [
        a,
        search._Indexing("b.md", done([b, b]), "key-b", ()),
        c,
        search._Indexing("d.md", done([]), None, ()),
        search._Indexing("rope.md", not_started, "key-rope", sent),
    ]
    by_page: dict = {}
    here = plugin_entries(search, p)
    assert search._collected(entries, by_page) == [a, b, b, c, *here]
    assert not_started.cancelled()
    assert by_page == {"b.md": [b, b], "d.md": [], "rope.md": here}
    assert kept["key-b"] == '[{"location": "b/"}, {"location": "b/"}]'
    assert kept["key-rope"] == search.json.dumps(here, default=str)

    failed = Future()
    failed.set_exception(ValueError("parser"))
    with pytest.raises(search.PluginError, match=r"e\.md: indexing the page for search failed"):
        search._collected([search._Indexing("e.md", failed, None, ())], {})
    with pytest.raises(search.PluginError, match=r"f\.md: indexing the page for search failed"):
        search._collected([search._Indexing("f.md", Future(), None, ("no toc",))], {})
