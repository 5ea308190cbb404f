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
  const SCROLLERS = ".katex-display, .jupyter-wrapper .highlight-ipynb";
  const MARK = "data-mfl-scroll";

  function update() {
    for (const el of document.querySelectorAll(SCROLLERS)) {
      const overflow = getComputedStyle(el).overflowX;
      const scrolls =
        (overflow === "auto" || overflow === "scroll") && el.scrollWidth > el.clientWidth;
      if (scrolls && !el.hasAttribute("tabindex")) {
        el.setAttribute("tabindex", "0");
        el.setAttribute(MARK, "");
      } else if (!scrolls && el.hasAttribute(MARK)) {
        el.removeAttribute("tabindex");
        el.removeAttribute(MARK);
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
