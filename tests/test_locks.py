"""The lock files: the default install carries what serving and testing need, no more.

``requirements.lock`` is what ``make install`` (and so ``make serve``, ``make
test`` and CI) installs. A tool that one target alone uses lives in its own
dependency group, hash-locked in ``requirements-<group>.lock`` and installed by
that target (issue #32: cosmic-ray, uv and pre-commit were 28 packages and 29%
of the default lock).
"""

from __future__ import annotations

import importlib.util
import platform
import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.markers import Marker, default_environment

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
GROUPS = PYPROJECT["dependency-groups"]
TOOL_GROUPS = {"mutation": "cosmic-ray", "uv": "uv", "pre-commit": "pre-commit"}
_spec = importlib.util.spec_from_file_location("mfl_lock_own", ROOT / "tools" / "lock_own.py")
lock_own = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lock_own)
PIN = lock_own.PIN  # a hashed pin, as `make reference` reads it


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def pins(lock: str, *, python: str = "3.11.7") -> dict[str, str]:
    """Package -> version of every hashed pin in ``lock`` that applies on Linux with
    CPython ``python`` (requirements.lock pins some packages per platform or Python)."""
    text = (ROOT / lock).read_text(encoding="utf-8")
    here = {
        **default_environment(),
        "sys_platform": "linux",
        "platform_system": "Linux",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "python_full_version": python,
        "python_version": ".".join(python.split(".")[:2]),
    }
    found = PIN.findall(text)
    assert len(found) == len(re.findall(r"^[A-Za-z0-9]", text, re.M))  # every pin is hashed
    return {
        _name(name): version
        for name, version, marker in found
        if not marker or Marker(marker).evaluate(here)
    }


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


def test_make_reference_installs_what_requirements_lock_does_not_pin():
    """`make reference` installs the reference lock's own pins (tools/lock_own.py) with
    --no-deps beside `make install`: every package the two locks share is left to
    requirements.lock; a shared package pinned differently, or a pin the script cannot
    read, stops the install."""
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


def test_the_default_lock_installs_on_every_platform_and_every_3_11():
    """requirements.lock is compiled for every platform and Python from the floor up
    (`make lock`: --universal), so that `make install` works on macOS too (ipykernel
    needs appnope there), and pins one package per Python range: pymdown-extensions 13
    needs 3.11.5, so 3.11.0-3.11.4 (Debian 12's python3 is 3.11.2) keep 12.3. Nothing
    else differs between the two (CONTRIBUTING, "The Python floor and the browser");
    `make test-floor` builds the site on the older branch."""
    text = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    assert "--universal --fork-strategy fewest" in text.splitlines()[1]
    assert re.search(r"^appnope==\S+ ; sys_platform == 'darwin' \\$", text, re.M)
    older, newer = pins("requirements.lock", python="3.11.2"), pins("requirements.lock")
    assert older["pymdown-extensions"] == "12.3"
    assert int(newer["pymdown-extensions"].split(".")[0]) >= 13
    assert sorted(n for n in newer if older.get(n) != newer[n]) == ["pymdown-extensions"]
    declared = PYPROJECT["project"]["optional-dependencies"]["docs"]
    assert "pymdown-extensions>=13.1.2; python_full_version >= '3.11.5'" in declared


def test_the_drift_report_compares_the_pins_that_apply_to_its_python(load, tmp_path, monkeypatch):
    """tools/drift.py reads requirements.lock's markers: of two pins of one package, the
    report compares the installed version with the one for the Python it runs on."""
    drift = load("tools/drift.py")
    lock = tmp_path / "requirements.lock"
    lock.write_text(
        "pymdown-extensions==12.3 ; python_full_version < '3.11.5' \\\n"
        "    --hash=sha256:" + "0" * 64 + "\n"
        "pymdown-extensions==13.1.2 ; python_full_version >= '3.11.5' \\\n"
        "    --hash=sha256:" + "1" * 64 + "\n"
        "appnope==1.0.0 ; sys_platform == 'darwin' \\\n"
        "    --hash=sha256:" + "2" * 64 + "\n"
        "numpy==2.4.6 \\\n"
        "    --hash=sha256:" + "3" * 64 + "\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(drift, "LOCK", lock)
    here = drift.locked()
    newer = sys.version_info >= (3, 11, 5)
    assert here["pymdown-extensions"] == ("13.1.2" if newer else "12.3")
    assert ("appnope" in here) == (platform.system() == "Darwin")
    assert here["numpy"] == "2.4.6"
