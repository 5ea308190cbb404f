"""Print the installed versions that differ from requirements.lock (used by the drift workflow)."""

from __future__ import annotations

import re
from importlib.metadata import distributions
from pathlib import Path

LOCK = Path(__file__).resolve().parent.parent / "requirements.lock"


def locked() -> dict[str, str]:
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==([^\s\\;]+)", LOCK.read_text(), re.M)
    return {name.lower().replace("_", "-"): version for name, version in pins}


def main() -> None:
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
