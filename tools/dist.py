"""Build the kernel's sdist and wheel (``make dist``, the release workflow, the tests).

``python tools/dist.py [OUT]`` writes ``<name>-<version>.tar.gz`` and
``<name>-<version>-py3-none-any.whl`` into ``OUT`` (default ``dist/``) and
prints their paths. What ``python -m build --no-isolation`` does, without
adding ``build`` to the lock:

1. the packaging inputs (``INPUTS`` and ``src/``) are copied to a temporary
   directory, so nothing is written into the work tree (``src/*.egg-info``,
   ``build/``) while other commands may be reading it;
2. the sdist is built there by setuptools' PEP 517 backend;
3. the wheel is built from the *unpacked sdist*, so a file the sdist lacks
   fails here rather than for someone who installs from it.

setuptools comes from the environment (``requirements.lock`` pins it): no
network, no build isolation. The release workflow publishes exactly these two
files; ``tests/test_package.py`` installs the wheel in a clean venv.

``python tools/dist.py --check-release vX.Y.Z`` (the release workflow, before
it builds) fails unless the tag names ``llmmath.__version__`` and CHANGELOG.md
and CITATION.cff are ready for that release: a changelog section dated
``YYYY-MM-DD``, and the citation's version and date equal to it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Everything the build reads besides src/ (pyproject names the readme and the
# license; MANIFEST.in adds the changelog to the sdist).
INPUTS = ("pyproject.toml", "MANIFEST.in", "README.md", "LICENSE", "CHANGELOG.md")
BACKEND = (
    "import sys; from setuptools import build_meta as backend; "
    "print(getattr(backend, sys.argv[1])(sys.argv[2]))"
)


def version(root: Path = ROOT) -> str:
    """``llmmath.__version__``, read from the source (the one place it is written)."""
    source = (root / "src" / "llmmath" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', source, re.M)
    if not match:
        raise SystemExit('src/llmmath/__init__.py: no `__version__ = "..."` line')
    return match[1]


def release_problems(tag: str | None = None, root: Path = ROOT) -> list[str]:
    """What stops ``version()`` from being released (under ``tag``, if given).

    Without a tag (the tests): the changelog has a section for the version and
    CITATION.cff names it. With one (the release workflow): also the tag is
    ``v<version>``, the section is dated, and CITATION.cff carries that date.
    """
    v = version(root)
    problems = []
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    section = re.search(rf"^## \[{re.escape(v)}\] - (?P<date>\S+)", changelog, re.M)
    if not section:
        problems.append(f"CHANGELOG.md has no `## [{v}] - <date>` section")
    citation = (root / "CITATION.cff").read_text(encoding="utf-8")
    cited = re.search(r"^version: *\"?([^\s\"]+)", citation, re.M)
    if not cited or cited[1] != v:
        problems.append(f"CITATION.cff: version is {cited[1] if cited else None}, not {v}")
    if tag is not None:
        if tag != f"v{v}":
            problems.append(f"the tag {tag} does not name version {v} (expected v{v})")
        date = section["date"] if section else ""
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
            problems.append(f"CHANGELOG.md: date the [{v}] section (`## [{v}] - YYYY-MM-DD`)")
        released = re.search(r"^date-released: *\"?([\d-]+)", citation, re.M)
        if not released or released[1] != date:
            problems.append(f"CITATION.cff: date-released must be the changelog's date {date}")
    return problems


def _backend(hook: str, cwd: Path, out: Path) -> Path:
    """Run a PEP 517 hook of setuptools in ``cwd``; return the file it wrote in ``out``."""
    done = subprocess.run(
        [sys.executable, "-c", BACKEND, hook, str(out)],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return out / done.stdout.strip().splitlines()[-1]


def build(out: Path, root: Path = ROOT) -> tuple[Path, Path]:
    """Build the sdist, then the wheel from it, into ``out``; return both paths."""
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        shutil.copytree(
            root / "src",
            tree / "src",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
        )
        for name in INPUTS:
            shutil.copy2(root / name, tree / name)
        sdist = _backend("build_sdist", tree, out)
        with tarfile.open(sdist) as archive:
            archive.extractall(Path(tmp) / "unpacked", filter="data")
        (unpacked,) = (Path(tmp) / "unpacked").iterdir()
        wheel = _backend("build_wheel", unpacked, out)
    return sdist, wheel


def main() -> None:
    if sys.argv[1:2] == ["--check-release"]:
        problems = release_problems(sys.argv[2])
        if problems:
            raise SystemExit("not ready to release:\n  " + "\n  ".join(problems))
        print(f"ready to release {version()}")
        return
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist"
    for path in build(out):
        print(path)


if __name__ == "__main__":
    main()
