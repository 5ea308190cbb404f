"""Shared fixtures for tests that read the built site (``site/``)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

# pyproject.toml switches off the auto-loaded hypothesis plugin so that
# `pytest docs` starts fast; the kernel's property tests get it back here
# (unless it is already loaded, e.g. under `-o addopts=`).
pytest_plugins = [] if "_hypothesis_pytestplugin" in sys.modules else ["_hypothesis_pytestplugin"]

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"

# MkDocs runs each hook with hooks/ on sys.path, so hooks import their shared
# pieces by name (buildcache, search); tests that load a hook need the same.
sys.path.insert(0, str(ROOT / "hooks"))


# The cross-checks against PyTorch and transformers skip when those are not installed
# (`make test` does not install them). The skip says how to run them; with
# MFL_REQUIRE_REFERENCE=1 (set by .ci/run, after `make reference`) a skipped
# cross-check fails instead, so CI never passes without running them.
REFERENCE_MODULES = ("torch", "transformers")
REFERENCE_HINT = "run `make reference` to install the reference implementations"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or not isinstance(report.longrepr, tuple):
        return
    path, line, reason = report.longrepr
    if not any(f"could not import '{m}" in reason for m in REFERENCE_MODULES):
        return
    if os.environ.get("MFL_REQUIRE_REFERENCE"):
        report.outcome = "failed"
        report.longrepr = f"reference cross-check skipped under MFL_REQUIRE_REFERENCE: {reason}"
    else:
        report.longrepr = (path, line, f"{reason} ({REFERENCE_HINT})")


def load_file(relative: str):
    """Import a hook or bench script by its path from the project root (once per session)."""
    name = "mfl_" + relative.replace("/", "_").removesuffix(".py")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / relative)
        module = sys.modules[name] = importlib.util.module_from_spec(spec)  # dataclasses need it
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def load():
    """``load("hooks/search.py")``: the module, as ``load_file`` imports it."""
    return load_file


@pytest.fixture(scope="session")
def site_dir() -> Path:
    """The built site; `make test` builds it first. In CI a missing build is an error."""
    if not (SITE / "index.html").exists():
        if os.environ.get("CI"):
            pytest.fail("site/ is not built; `make test` runs `mkdocs build --strict` first")
        pytest.skip("site/ is not built: run `make build` (or `make test`, which builds first)")
    return SITE
