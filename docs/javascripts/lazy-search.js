// Load the search index when the reader reaches for search, not on every page.
//
// Material asks for search/search_index.json (about 200 KB gzipped, more than
// the rest of a lesson page's scripts) as soon as any page loads. This script
// runs before Material's bundle (overrides/main.html) and holds that one
// request back until the search box is hovered, touched or focused (the "/",
// "s" and "f" shortcuts focus it too), or the search toggle changes, or the
// page was opened from a search result (below). Nothing else about search
// changes: the request, the worker and the results are Material's own. Every
// other request passes through untouched.
//
// The same script also orders the results (mflSearch below): Material's
// search runs in a Web Worker (Lunr), and this script wraps the Worker it
// creates, so each result message can be reordered before Material renders
// it. Lunr scores a title match a thousand times a text match but cannot
// tell a section *named* after the term from one whose title merely contains
// it, and lets an API entry or a page title that matches one of two words
// outrank a section named after both. Here:
//   1. a result group (a page) whose page or section title names every term
//      comes first: lesson pages before the API reference and Notation; a
//      numbered lesson section before the lesson's other pages (exercises,
//      mistakes, theory notebook); then a title that *is* the term ("RoPE" =
//      "7. Rotary Position Embeddings (RoPE)", the abbreviation added by
//      hooks/search.py) before one that contains it ("8. RoPE Scaling"), a
//      page title before a section title, more such sections before fewer;
//      groups that only mention the terms keep Lunr's order after them;
//   2. a query that finds nothing is tried again with each word of four or
//      more letters allowed one edit ("rotory" finds "rotary"), and the
//      result line says so;
//   3. every result link carries the terms it matched (?h=...), so the
//      page highlights them; Material's page-level entry had none when only
//      its sections matched.
// Under file:// the Worker is the iframe-worker shim (hooks/offline.py); it
// is wrapped the same way.
(() => {
  const INDEX = /\/search\/search_index\.json$/;
  const { open, send } = XMLHttpRequest.prototype;
  const held = [];
  let wanted = false;

  const release = () => {
    if (wanted) return;
    wanted = true;
    for (const go of held.splice(0)) go();
  };

  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    this.mflUrl = String(url);
    return open.call(this, method, url, ...rest);
  };
  XMLHttpRequest.prototype.send = function (...args) {
    if (!wanted && INDEX.test(new URL(this.mflUrl, location.href).pathname)) {
      held.push(() => send.apply(this, args));
      return;
    }
    return send.apply(this, args);
  };

  const SEARCH = ".md-search, label[for='__search']";
  for (const type of ["focusin", "pointerover", "pointerdown"]) {
    document.addEventListener(
      type,
      (event) => event.target instanceof Element && event.target.closest(SEARCH) && release(),
      { capture: true, passive: true },
    );
  }
  document.addEventListener("change", (event) => event.target.id === "__search" && release(), {
    capture: true,
  });
  // A link that opens search with a query (?q=...) needs the index at once, and
  // so does arriving from a search result (?h=...): Material marks the terms
  // on the page only once it has the index (search.highlight), and the reader
  // has just used search, so the index is usually in the browser's cache.
  const params = new URLSearchParams(location.search);
  if (params.has("q") || params.has("h")) release();
})();

const mflSearch = (() => {
  // Material's worker messages (integrations/search/worker/message).
  const QUERY = 2;
  const RESULT = 3;

  const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" };
  const plain = (html) =>
    String(html || "")
      .replace(/<[^>]*>/g, "")
      .replace(/&(amp|lt|gt|quot|#39);/g, (_, e) => ENTITIES[e]);
  const stem = (w) => (w.length > 3 && w.endsWith("s") ? w.slice(0, -1) : w);
  const words = (text) => (plain(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) || []);
  const STOP = new Set(["the", "a", "an", "of", "and", "in", "for", "to", "with", "on"]);
  const phrase = (text) => words(text).filter((w) => !STOP.has(w)).map(stem).join(" ");

  // The query's terms as Lunr sees them (Material splits at spaces and hyphens).
  function terms(query) {
    return words(query.replace(/[~^]\d*/g, " ")).filter((t) => !STOP.has(t));
  }

  // The names a title gives its topic: "6. ALiBi: Attention with Linear
  // Biases" names "ALiBi" and "Attention with Linear Biases"; "8.3 Tiled
  // attention (FlashAttention)" names both; numbering and "(**)" go.
  function names(title) {
    const core = plain(title)
      .replace(/^\s*(?:(?:exercise|mistake)\s+)?\d+(?:\.\d+)*[.:]?\s+/i, "")
      .replace(/\(\W*\)/g, "");
    const out = [core.replace(/\([^)]*\)/g, "")];
    for (const m of core.matchAll(/\(([^)]*)\)/g)) out.push(...m[1].split(","));
    for (const part of core.replace(/\([^)]*\)/g, "").split(":")) out.push(part);
    return out.map(phrase).filter(Boolean);
  }

  // 2: the title is the term; 1: it contains every term (as a word or the
  // start of one: Lunr matches "mask" in "masks"); 0: not every term.
  function naming(title, ts) {
    if (!ts.length) return 0;
    const ws = words(title);
    const all = ts.every((t) => ws.some((w) => w.startsWith(t) || stem(w) === stem(t)));
    if (!all) return 0;
    const wanted = ts.map(stem).join(" ");
    return names(title).includes(wanted) ? 2 : 1;
  }

  function kind(location) {
    const path = location.split("#")[0].replace(/^\.?\//, "");
    const parts = path.split("/").filter(Boolean);
    const lesson = parts.length > 1 && parts[0] !== "reference";
    const page = parts[1] || "";
    return { lesson, notebook: lesson && /^theory(\.html)?$/.test(page) };
  }

  const marked = (item) =>
    [...`${item.title || ""} ${item.text || ""}`.matchAll(/<mark[^>]*>([^<]*)<\/mark>/g)].map((m) =>
      m[1].toLowerCase(),
    );

  // Reorder one result (an array of groups, each [article?, ...sections]).
  function order(items, query, fuzzy) {
    const ts = terms(query);
    const ranked = items.map((group, index) => {
      let level = 0; // 4 page title is the term, 3 a section's is, 2 page title contains, 1 a section's
      let named = 0;
      for (const item of group) {
        const n = naming(item.title, ts);
        const article = !item.location.includes("#");
        const l = n === 2 ? (article ? 4 : 3) : n === 1 ? (article ? 2 : 1) : 0;
        item.mflLevel = l;
        if (l) named++;
        level = Math.max(level, l);
      }
      const k = kind(group[0].location);
      const numbered = k.lesson && !k.notebook && group.some(
        (item) => !item.location.includes("#") && /^\s*\d+\.\s/.test(plain(item.title)),
      );
      const key = [level > 0 ? 1 : 0, level > 0 && k.lesson ? 1 : 0, level > 0 ? (numbered ? 2 : 1) : 0, level, named];
      return { group, index, key };
    });
    ranked.sort((a, b) => {
      for (let i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return b.key[i] - a.key[i];
      return a.index - b.index;
    });
    return ranked.map(({ group }) => {
      // sections named after the term first; they stay above Material's "more" fold
      const top = Math.max(...group.map((item) => item.score));
      const sorted = group
        .map((item, i) => [item, i])
        .sort(([a, i], [b, j]) => (b.mflLevel > 0) - (a.mflLevel > 0) || i - j)
        .map(([item]) => item);
      for (const item of sorted) if (item.mflLevel > 0) item.score = top;
      // the terms each link highlights on its page (?h=)
      const found = new Set();
      for (const item of sorted) {
        if (fuzzy) {
          item.terms = Object.fromEntries(marked(item).map((w) => [w, true]));
        }
        for (const [t, hit] of Object.entries(item.terms || {})) if (hit) found.add(t);
      }
      for (const item of sorted) {
        if (!Object.values(item.terms || {}).some(Boolean)) {
          item.terms = Object.fromEntries([...found].map((t) => [t, true]));
        }
        delete item.mflLevel;
      }
      return sorted;
    });
  }

  // "rotory" -> "rotory~1": Lunr's one-edit match (Material appends no "*" to it).
  function fuzzyQuery(query) {
    const ts = query.trim().split(/\s+/).filter((t) => /^[\p{L}\p{N}]{4,}$/u.test(t));
    return ts.length ? ts.map((t) => `${t}~1`).join(" ") : null;
  }

  function wrap(worker) {
    let query = "";
    let fuzzy = null; // the fuzzy query sent for `query`, if any
    const post = worker.postMessage.bind(worker);
    worker.postMessage = (message, ...rest) => {
      if (message && message.type === QUERY) {
        query = String(message.data || "");
        fuzzy = null;
      }
      return post(message, ...rest);
    };
    const listen = worker.addEventListener.bind(worker);
    worker.addEventListener = (type, listener, ...rest) => {
      if (type !== "message" || typeof listener !== "function") return listen(type, listener, ...rest);
      return listen(
        type,
        (event) => {
          const message = event.data;
          if (!message || message.type !== RESULT || !message.data || !Array.isArray(message.data.items)) {
            return listener(event);
          }
          const data = message.data;
          if (!data.items.length && fuzzy === null && query.trim()) {
            fuzzy = fuzzyQuery(query) || "";
            if (fuzzy) {
              post({ type: QUERY, data: fuzzy });
              return undefined; // the answer to the fuzzy query comes next
            }
          }
          const near = Boolean(fuzzy) && data.items.length > 0;
          let items = data.items;
          try {
            items = order(data.items, query, near);
          } catch (e) {
            /* Material's own order */
          }
          listener({ data: { ...message, data: { ...data, items } }, target: worker });
          if (near) {
            const meta = document.querySelector(".md-search-result__meta");
            if (meta) {
              meta.textContent =
                `No exact match for “${query.trim()}”; ` +
                `${items.length} near ${items.length === 1 ? "match" : "matches"}`;
            }
          }
          return undefined;
        },
        ...rest,
      );
    };
    return worker;
  }

  const Base = window.Worker;
  if (typeof Base === "function") {
    const Wrapped = function (url, options) {
      const worker = new Base(url, options);
      return /search/.test(String(url)) ? wrap(worker) : worker;
    };
    Wrapped.prototype = Base.prototype;
    window.Worker = Wrapped;
  }
  return { order, terms, naming, fuzzyQuery };
})();
if (typeof module !== "undefined") module.exports = mflSearch; // for node-based checks
