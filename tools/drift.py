"""What the drift workflow reports: the Python it ran, the installed versions that differ
from requirements.lock, and whether Playwright and Debian's Chromium still pair.

``python tools/drift.py`` prints the first two; ``--browser`` prints the pairing and exits
non-zero when the Chromium that Playwright expects and /usr/bin/chromium differ in their
major version (CONTRIBUTING, "The Python floor and the browser": move both together).
"""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
from importlib.metadata import distributions, version
from pathlib import Path

LOCK = Path(__file__).resolve().parent.parent / "requirements.lock"
CHROMIUM = Path("/usr/bin/chromium")


def locked() -> dict[str, str]:
    """Name -> version of the pins that apply here: the lock is compiled for every platform
    and Python, and a pin with a marker (``; python_full_version < '3.11.5'``) applies only
    where the marker holds."""
    from packaging.markers import Marker

    pins = re.findall(r"^([A-Za-z0-9_.-]+)==([^\s\\;]+)(?: ; ([^\n\\]+))?", LOCK.read_text(), re.M)
    return {
        name.lower().replace("_", "-"): version
        for name, version, marker in pins
        if not marker or Marker(marker.strip()).evaluate()
    }


def expected_chromium() -> str:
    """The Chromium build the installed Playwright was released with (its browsers.json)."""
    import playwright

    browsers = Path(playwright.__file__).parent / "driver" / "package" / "browsers.json"
    found = json.loads(browsers.read_text(encoding="utf-8"))["browsers"]
    return next(b["browserVersion"] for b in found if b["name"] == "chromium")


def installed_chromium(chromium: Path = CHROMIUM) -> str:
    """The version /usr/bin/chromium reports, e.g. 156.0.8078.108."""
    out = subprocess.run([chromium, "--version"], capture_output=True, text=True, check=True)
    return re.search(r"\d+(?:\.\d+)+", out.stdout)[0]


def browser_pairing() -> tuple[bool, str]:
    """Whether Playwright's Chromium and Debian's share a major version, and a line saying so."""
    wanted, have = expected_chromium(), installed_chromium()
    same = wanted.split(".")[0] == have.split(".")[0]
    line = (
        f"Playwright {version('playwright')} expects Chromium {wanted}; "
        f"{CHROMIUM} is {have}: {'paired' if same else 'NOT paired, move both together'}"
    )
    return same, line


def main() -> None:
    if sys.argv[1:] == ["--browser"]:
        same, line = browser_pairing()
        print(line)
        sys.exit(0 if same else 1)
    print(f"Python {platform.python_version()} ({sys.executable})")
    pins = locked()
    installed = {d.metadata["Name"].lower().replace("_", "-"): d.version for d in distributions()}
    moved = sorted(
        (n, pins[n], installed[n]) for n in pins if n in installed and installed[n] != pins[n]
    )
    print(f"{len(moved)} of {len(pins)} locked packages have newer installed releases")
    for name, old, new in moved:
        print(f"  {name:32} {old:>14} -> {new}")


if __name__ == "__main__":
    main()
