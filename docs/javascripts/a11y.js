// Keyboard access to content that scrolls sideways (WCAG 2.1.1): a display
// formula or a notebook code cell wider than the column becomes focusable
// (tabindex="0"), so it can be scrolled with the arrow keys, as Material
// already does for its own code blocks. Only what overflows gets a tab stop,
// and it loses it again when it fits (resize, fonts loaded).
//
// Material's document$ fires on first load and after each instant
// navigation; katex-init.js subscribes before this file, so the formulas are
// typeset by the time this runs.
(() => {
  // Material's table wrapper (.md-typeset__scrollwrap) too: a table wider than
  // a phone (one that is no card, reader.css) also gets .mfl-scrolls, which
  // shows a line saying it scrolls, and a name for screen readers.
  const SCROLLERS = ".katex-display, .jupyter-wrapper .highlight-ipynb, .md-typeset__scrollwrap";
  const MARK = "data-mfl-scroll";

  function update() {
    for (const el of document.querySelectorAll(SCROLLERS)) {
      const overflow = getComputedStyle(el).overflowX;
      const scrolls =
        (overflow === "auto" || overflow === "scroll") && el.scrollWidth > el.clientWidth + 1;
      const table = el.classList.contains("md-typeset__scrollwrap");
      if (scrolls && !el.hasAttribute("tabindex")) {
        el.setAttribute("tabindex", "0");
        el.setAttribute(MARK, "");
        if (table) {
          el.classList.add("mfl-scrolls");
          el.setAttribute("role", "region");
          el.setAttribute("aria-label", "Table, scrolls sideways");
        }
      } else if (!scrolls && el.hasAttribute(MARK)) {
        el.removeAttribute("tabindex");
        el.removeAttribute(MARK);
        if (table) {
          el.classList.remove("mfl-scrolls");
          el.removeAttribute("role");
          el.removeAttribute("aria-label");
        }
      }
    }
  }

  let timer;
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(update, 150);
  };
  document$.subscribe(update);
  addEventListener("resize", later);
  if (document.fonts) {
    document.fonts.ready.then(update);
    document.fonts.addEventListener("loadingdone", later);
  }
})();

// Keyboard fixes for two of Material's controls (issue #29):
// - Chromium makes every scrolling box a tab stop; Material's search results
//   box (.md-search__scrollwrap) is one even while search is closed and it is
//   0 px tall, so one Tab after the search box landed on nothing visible.
//   reader.css hides it while search is closed (then it is no tab stop, and
//   no scrolling region without a keyboard route for axe); open, it shows the
//   results and may take the focus to scroll them.
// - The palette toggle is a <label> Material answers on Enter only; a toggle
//   is expected to answer Space too (WAI-ARIA button pattern).
(() => {
  document.addEventListener("keydown", (event) => {
    const label = event.target instanceof Element && event.target.closest("label[for^='__palette']");
    if (label && (event.key === " " || event.key === "Spacebar")) {
      event.preventDefault();
      label.click();
    }
  });
})();
