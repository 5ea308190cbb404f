"""Screenshot a page of the built site with Debian's Chromium (`make screenshot`).

By default it writes ``site/assets/screenshot.png``: the top of the
"Similarity Geometry" lesson in the light palette, as the README shows it.
Options take other shots, e.g. the dark palette with a skill-check question
answered and the notes panel open::

    .venv/bin/python tools/screenshot.py --scheme dark --answer --notes \\
        --scroll-to '#skill-check' -o /tmp/shots/quiz-dark.png

The site is served from ``site/`` on 127.0.0.1 (a random port) and Chromium
runs with flags that keep every request on loopback. ``tests/test_browser.py``
reuses ``CHROMIUM``, ``FLAGS`` and ``serve`` from here.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
CHROMIUM = Path("/usr/bin/chromium")
# From shared/toolchain-notes.md: without these Chromium calls Google hosts at start.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-breakpad",
    "--metrics-recording-only",
    "--disable-features=AutofillServerCommunication,OptimizationHints,MediaRouter,Translate,"
    "CertificateTransparencyComponentUpdater",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
DEFAULT_PAGE = "embedding-space-math/similarity-geometry/"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site quietly; rewrites sitemap.xml to the address it is served from.

    Material's instant navigation only intercepts links to pages listed in
    sitemap.xml, which names the production ``site_url``; pointing it at this
    server makes the local site navigate as the published one does.
    """

    def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
        pass

    def do_GET(self):
        if self.path.split("?")[0].endswith("/sitemap.xml"):
            path = Path(self.translate_path(self.path))
            if path.is_file():
                text = path.read_text(encoding="utf-8")
                locs = re.findall(r"<loc>(.*?)</loc>", text)
                if locs:
                    text = text.replace(min(locs, key=len), f"http://{self.headers['Host']}/")
                body = text.encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
        super().do_GET()


@contextlib.contextmanager
def serve(directory: Path = SITE) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (any free port); yields the base URL."""
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def launch(playwright):
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)


def take(
    out: Path,
    *,
    browser=None,
    base: str | None = None,
    site: Path = SITE,
    **options,
) -> Path:
    """Write a PNG of a page (options as for ``shoot``); returns ``out``.

    Pass a running Playwright ``browser`` and the ``base`` URL of a server to
    reuse them (the tests do); otherwise both are started here.
    """
    if browser is not None:
        return shoot(browser, base, out, **options)
    from playwright.sync_api import sync_playwright

    with serve(site) as base, sync_playwright() as p:
        browser = launch(p)
        try:
            return shoot(browser, base, out, **options)
        finally:
            browser.close()


def answer_question(form, right: bool) -> str:
    """Answer a skill-check question (a Playwright locator for its form), right or
    wrong on purpose, submit it, and return the value given (the tests use it too)."""
    kind, correct = form.get_attribute("data-type"), form.get_attribute("data-answer")
    if kind == "choice":
        value = correct if right else ("1" if correct == "0" else "0")
        form.locator(f'input[value="{value}"]').check()
    else:
        tolerance = float(form.get_attribute("data-tolerance"))
        value = correct if right else repr(float(correct) + 10 * tolerance + 1)
        form.locator(".mfl-quiz-num input").fill(value)
    form.locator('button[type="submit"]').click()
    return value


def open_page(browser, base: str, page_path: str, scheme: str, width: int, height: int):
    """A new context that may only reach ``base``, showing ``page_path`` with its math typeset.

    Returns ``(context, page)``; the caller closes the context.
    """
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    context.route(
        "**/*",
        lambda route: route.continue_() if route.request.url.startswith(base) else route.abort(),
    )
    page = context.new_page()
    page.goto(base + page_path)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.arithmatex')].every(e => e.querySelector('.katex'))"
    )
    return context, page


def shoot(
    browser,
    base: str,
    out: Path,
    *,
    page_path: str = DEFAULT_PAGE,
    scheme: str = "light",
    answer: bool = False,
    notes: bool = False,
    scroll_to: str | None = None,
    width: int = 1280,
    height: int = 900,
    full_page: bool = False,
) -> Path:
    context, page = open_page(browser, base, page_path, scheme, width, height)
    try:
        if notes:
            page.locator(".mfl-notes > summary").click()
            page.locator("#mfl-note-text").fill(
                "Cosine ignores length; the dot product does not.\n"
                "Check: normalize the table before an L2 index.\n"
                "<img src=x onerror=alert(1)> stays text."
            )
        if answer:
            forms = page.locator("form.mfl-quiz-q")
            for i in range(min(2, forms.count())):  # the first one wrong, to show both outcomes
                answer_question(forms.nth(i), right=i > 0)
        if scroll_to:
            page.evaluate(
                "sel => window.scrollTo(0, document.querySelector(sel).getBoundingClientRect().top + window.scrollY - 70)",
                scroll_to,
            )
        page.wait_for_timeout(500)  # let the notes autosave and the header settle
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out), full_page=full_page)
    finally:
        context.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--out", type=Path, default=SITE / "assets" / "screenshot.png")
    parser.add_argument(
        "--site", type=Path, default=SITE, help="built site to serve (default: site/)"
    )
    parser.add_argument("--page", default=DEFAULT_PAGE, help="site-relative path, e.g. %(default)s")
    parser.add_argument("--scheme", choices=["light", "dark"], default="light")
    parser.add_argument(
        "--answer", action="store_true", help="answer the first two skill-check questions"
    )
    parser.add_argument("--notes", action="store_true", help="open the notes panel and type a note")
    parser.add_argument("--scroll-to", help="CSS selector to scroll to before the shot")
    parser.add_argument("--full-page", action="store_true")
    parser.add_argument("--size", default="1280x900", help="viewport WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").exists():
        print("site/ is not built: run `make build` first", file=sys.stderr)
        return 1
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} not found: `apt-get install chromium`", file=sys.stderr)
        return 1
    width, height = (int(v) for v in args.size.split("x"))
    out = take(
        args.out,
        site=args.site,
        page_path=args.page,
        scheme=args.scheme,
        answer=args.answer,
        notes=args.notes,
        scroll_to=args.scroll_to,
        width=width,
        height=height,
        full_page=args.full_page,
    )
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
