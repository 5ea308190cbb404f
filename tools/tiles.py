"""Screenshot a built page top to bottom as viewport-sized tiles, for reading it as a reader does.

    .venv/bin/python tools/tiles.py embedding-space-math/intuition/ [--scheme dark] [--open-details]

Writes ``tools/out/tiles/<page>-<scheme>-NN.png`` (1280x900 by default, each
tile overlapping the last by 100 px) from the site built in ``site/``, served
on 127.0.0.1 with the loopback-only Chromium of ``tools/screenshot.py``.
``--open-details`` expands every collapsed block (solutions, figure code)
first. Page reviews read every tile in the light palette and the figures,
formulas and tables again in the dark one.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from screenshot import SITE, launch, open_page, serve

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page", help="site-relative path, e.g. embedding-space-math/intuition/")
    parser.add_argument("--scheme", choices=["light", "dark"], default="light")
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--out", type=Path, default=ROOT / "tools" / "out" / "tiles")
    parser.add_argument("--open-details", action="store_true")
    parser.add_argument("--size", default="1280x900", help="viewport WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    slug = re.sub(r"\W+", "-", args.page).strip("-") or "home"
    args.out.mkdir(parents=True, exist_ok=True)

    from playwright.sync_api import sync_playwright

    with serve(args.site) as base, sync_playwright() as p:
        browser = launch(p)
        context, page = open_page(browser, base, args.page, args.scheme, width, height)
        if args.open_details:
            page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        total = page.evaluate("() => document.documentElement.scrollHeight")
        n = 0
        for n, y in enumerate(range(0, total, height - 100)):
            page.evaluate(f"() => window.scrollTo(0, {y})")
            page.wait_for_timeout(150)
            out = args.out / f"{slug}-{args.scheme}-{n:02d}.png"
            page.screenshot(path=str(out))
            print(out)
        context.close()
        browser.close()
    print(f"{n + 1} tiles, page height {total}px")
    return 0


if __name__ == "__main__":
    sys.exit(main())
