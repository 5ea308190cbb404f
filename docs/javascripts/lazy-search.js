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
