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

# A pin with its hashes: `name==version \` (or `name==version ; marker \`, in a lock
# compiled for every platform and Python) and one `--hash=sha256:...` line each.
# Groups: name, version, marker (or ""). tests/test_locks.py reads the locks with it too.
PIN = re.compile(
    r"^([A-Za-z0-9_.-]+)==([^\s;]+)(?: ; ([^\n\\]+))? \\\n"
    r"(?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+",
    re.M,
)


def pins(text: str) -> dict[str, list[tuple[str, str]]]:
    """Normalised name -> [(the pin's text, its version), ...]: more than one where the
    lock pins a package per Python version; every pin must carry its hashes."""
    found: dict[str, list[tuple[str, str]]] = {}
    count = 0
    for match in PIN.finditer(text):
        name, version, _ = match.groups()
        found.setdefault(name.lower().replace("_", "-"), []).append((match[0], version))
        count += 1
    if count != len(re.findall(r"^[A-Za-z0-9]", text, re.M)):
        raise SystemExit("a pin without its hashes (or in another form) in the lock")
    return found


def own(lock: str, other: str) -> str:
    mine, theirs = pins(lock), pins(other)
    differ = {
        n: ([v for _, v in pinned], [v for _, v in theirs[n]])
        for n, pinned in mine.items()
        if n in theirs and {v for _, v in pinned} - {v for _, v in theirs[n]}
    }
    if differ:
        raise SystemExit(f"pinned differently (this lock, the other): {differ}")
    return "".join(
        text for name, pinned in mine.items() if name not in theirs for text, _ in pinned
    )


if __name__ == "__main__":
    lock, other = (Path(arg).read_text(encoding="utf-8") for arg in sys.argv[1:3])
    sys.stdout.write(own(lock, other))
