"""Shared fixtures for tests that read the built site (``site/``)."""

from __future__ import annotations

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


@pytest.fixture(scope="session")
def site_dir() -> Path:
    """The built site; `make test` builds it first. In CI a missing build is an error."""
    if not (SITE / "index.html").exists():
        if os.environ.get("CI"):
            pytest.fail("site/ is not built; `make test` runs `mkdocs build --strict` first")
        pytest.skip("site/ is not built: run `make build` (or `make test`, which builds first)")
    return SITE
