"""Print the pins of one hash-locked requirements file that another does not pin.

    python tools/lock_own.py requirements-reference.lock requirements.lock

`make reference` installs what this prints (with ``--no-deps``) beside
``make install``'s pip: the reference lock is compiled within requirements.lock
(``make lock``, ``-c``), so a package both pin has the same version and hashes
in each, and one pip alone must install it. pip has no option to leave out the
packages of another file, hence this script. It fails if a shared pin differs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# A pin with its hashes: `name==version \` and one `--hash=sha256:...` line each.
PIN = re.compile(
    r"^([A-Za-z0-9_.-]+)==(\S+) \\\n((?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)", re.M
)


def pins(text: str) -> dict[str, tuple[str, str]]:
    """Normalised name -> (the pin's text, its version); every pin must carry its hashes."""
    found = {}
    for match in PIN.finditer(text):
        name, version, _ = match.groups()
        found[name.lower().replace("_", "-")] = (match[0], version)
    if len(found) != len(re.findall(r"^[A-Za-z0-9]", text, re.M)):
        raise SystemExit("a pin without its hashes (or in another form) in the lock")
    return found


def own(lock: str, other: str) -> str:
    mine, theirs = pins(lock), pins(other)
    differ = {
        n: (v, theirs[n][1]) for n, (_, v) in mine.items() if n in theirs and theirs[n][1] != v
    }
    if differ:
        raise SystemExit(f"pinned differently (this lock, the other): {differ}")
    return "".join(text for name, (text, _) in mine.items() if name not in theirs)


if __name__ == "__main__":
    lock, other = (Path(arg).read_text(encoding="utf-8") for arg in sys.argv[1:3])
    sys.stdout.write(own(lock, other))
