"""The lock files: the default install carries what serving and testing need, no more.

``requirements.lock`` is what ``make install`` (and so ``make serve``, ``make
test`` and CI) installs. A tool that one target alone uses lives in its own
dependency group, hash-locked in ``requirements-<group>.lock`` and installed by
that target (issue #32: cosmic-ray, uv and pre-commit were 28 packages and 29%
of the default lock).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
GROUPS = PYPROJECT["dependency-groups"]
TOOL_GROUPS = {"mutation": "cosmic-ray", "uv": "uv", "pre-commit": "pre-commit"}
PIN = re.compile(
    r"^([A-Za-z0-9_.-]+)==(\S+) \\\n((?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)", re.M
)


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def pins(lock: str) -> dict[str, str]:
    """Package -> version of every hashed pin in ``lock``."""
    text = (ROOT / lock).read_text(encoding="utf-8")
    found = {_name(name): version for name, version, _ in PIN.findall(text)}
    assert len(found) == len(re.findall(r"^[A-Za-z0-9]", text, re.M))  # every pin is hashed
    return found


def test_the_default_install_carries_no_tool_that_one_target_alone_uses():
    default = pins("requirements.lock")
    assert not set(TOOL_GROUPS.values()) & set(default)
    # what cosmic-ray alone brought in (the bulk of the 28 packages)
    assert not {"aiohttp", "sqlalchemy", "gitpython", "toml", "virtualenv"} & set(default)


@pytest.mark.parametrize(("group", "tool"), sorted(TOOL_GROUPS.items()))
def test_each_tool_has_its_hash_locked_group_installed_by_its_target(group, tool):
    assert tool in {_name(r) for r in GROUPS[group]}
    locked = pins(f"requirements-{group}.lock")
    assert tool in locked
    default = pins("requirements.lock")
    shared = {name for name in locked if name in default}
    assert {n: locked[n] for n in shared} == {n: default[n] for n in shared}  # one version each
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"$(VENV)/.{group}-stamp: requirements-{group}.lock" in makefile
    assert f"$(LOCKED_INSTALL) requirements-{group}.lock" in makefile


def test_what_the_build_and_the_hooks_use_directly_is_declared():
    """Not left to whatever happens to require it today: the next ``make lock`` could drop
    it. setuptools is the build backend of ``make install`` and ``make dist``;
    latexcodec and soupsieve are imported by hooks/bibliography.py and hooks/notebook.py."""
    declared = {
        _name(r) for extra in PYPROJECT["project"]["optional-dependencies"].values() for r in extra
    }
    assert {"setuptools", "latexcodec", "soupsieve", "properdocs"} <= declared
    assert PYPROJECT["build-system"]["build-backend"] == "setuptools.build_meta"
    for name in ("setuptools", "latexcodec", "soupsieve", "properdocs"):
        assert name in pins("requirements.lock")


def test_make_reference_installs_what_requirements_lock_does_not_pin(load):
    """`make reference` installs the reference lock's own pins (tools/lock_own.py) with
    --no-deps beside `make install`: every package the two locks share is left to
    requirements.lock; a shared package pinned differently, or a pin the script cannot
    read, stops the install."""
    lock_own = load("tools/lock_own.py")
    reference = (ROOT / "requirements-reference.lock").read_text(encoding="utf-8")
    default = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    own = lock_own.own(reference, default)
    assert {_name(n) for n, _, _ in PIN.findall(own)} == set(
        pins("requirements-reference.lock")
    ) - set(pins("requirements.lock"))
    assert {"torch", "transformers"} <= {_name(n) for n, _, _ in PIN.findall(own)}
    assert len(PIN.findall(own)) == len(re.findall(r"^[A-Za-z0-9]", own, re.M))  # hashed, whole
    numpy = re.search(r"^numpy==\S+", default, re.M)[0]  # pinned by both locks
    with pytest.raises(SystemExit, match="numpy"):
        lock_own.own(reference.replace(numpy, "numpy==0.0.1"), default)
    with pytest.raises(SystemExit, match="hashes"):  # never left out unnoticed
        lock_own.own(reference + "unhashed==1.0\n", default)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "tools/lock_own.py requirements-reference.lock requirements.lock" in makefile
    assert "--no-deps -r $@.partial" in makefile


def test_playwright_is_pinned_to_the_release_that_pairs_with_debians_chromium(load):
    """The browser tests drive /usr/bin/chromium, so Playwright is pinned to the release
    built for that Chromium (pyproject.toml and the lock agree), and the drift workflow says
    when Debian's Chromium moves on: both move together (CONTRIBUTING)."""
    test_extra = PYPROJECT["project"]["optional-dependencies"]["test"]
    pinned = [r for r in test_extra if _name(r) == "playwright"]
    assert len(pinned) == 1 and re.fullmatch(r"playwright==\d+\.\d+\.\d+", pinned[0])
    assert pins("requirements.lock")["playwright"] == pinned[0].split("==")[1]
    workflow = (ROOT / ".github" / "workflows" / "drift.yml").read_text(encoding="utf-8")
    assert "tools/drift.py --browser" in workflow
    drift = load("tools/drift.py")
    if not drift.CHROMIUM.exists():
        pytest.skip(f"{drift.CHROMIUM} not found: the pairing is checked where it is")
    _, line = drift.browser_pairing()  # a mismatch is the drift workflow's to report
    assert line.startswith(f"Playwright {pins('requirements.lock')['playwright']} expects")


def test_the_drift_workflow_runs_the_floor_and_the_newest_python():
    """The lock is compiled for the floor (the Makefile's --python-version); the drift
    workflow installs the newest releases on that floor and on the newest Python, and its
    report opens with the Python it ran (tools/drift.py)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    floors = set(re.findall(r"--python-version (\S+)", makefile))
    assert len(floors) == 1
    floor = floors.pop()
    for lock in ROOT.glob("requirements*.lock"):
        assert f"--python-version {floor} " in lock.read_text(encoding="utf-8").splitlines()[1]
    workflow = (ROOT / ".github" / "workflows" / "drift.yml").read_text(encoding="utf-8")
    minor = ".".join(floor.split(".")[:2])
    assert f"image: python:{minor}-" in workflow  # the floor's series
    assert "image: python:3-" in workflow  # the newest CPython
    assert "Python {platform.python_version()}" in (ROOT / "tools" / "drift.py").read_text()
