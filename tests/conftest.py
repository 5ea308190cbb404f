"""Shared fixtures for tests that read the built site (``site/``)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import sysconfig
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


# The cross-checks against the reference implementations skip when those are not installed
# (`make test` does not install them). The skip says how to run them; with
# MFL_REQUIRE_REFERENCE=1 (set by .ci/run, after `make reference`) a skipped
# cross-check fails instead, so CI never passes without running them.
REFERENCE_MODULES = (
    "torch",
    "transformers",
    # the tokenizer libraries (Tokenization Math), and what Language Model Probability uses
    "tokenizers",
    "regex",
    "sentencepiece",
    "tiktoken",
    "google.protobuf",
    "tokenization_scorer",
    "scipy",
)
REFERENCE_HINT = "run `make reference` to install the reference implementations"

# `make test-portability` runs the kernel's tests under other numeric set-ups of numpy and
# OpenBLAS. The cross-checks compute their side with the reference's own libraries, and
# importing torch costs each worker seconds, so there (MFL_SKIP_REFERENCE=1) they skip as
# if not installed; `make test` runs them.
SKIP_REFERENCE = bool(os.environ.get("MFL_SKIP_REFERENCE"))
if SKIP_REFERENCE:
    for _name in REFERENCE_MODULES:
        sys.modules.setdefault(_name, None)  # importing it now raises ModuleNotFoundError


# pytest-xdist hands tests to its workers in the order they were collected, so a
# long test collected late leaves the other worker idle while it runs alone at
# the end. The longest go first: the sample pages in Chromium (loads and axe,
# each palette), then the other browser tests, then the slow ones, then the rest.
LONGEST = ("test_pages_typeset_load_figures_and_pass_axe_in_either_palette",)


def pytest_collection_modifyitems(items):
    def rank(item) -> int:
        if getattr(item, "originalname", None) in LONGEST:
            return 0
        if item.get_closest_marker("browser"):
            return 1
        return 2 if item.get_closest_marker("slow") else 3

    items.sort(key=rank)  # stable: each group keeps its collection order


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or not isinstance(report.longrepr, tuple):
        return
    path, line, reason = report.longrepr
    if not any(f"could not import '{m}" in reason for m in REFERENCE_MODULES):
        return
    if SKIP_REFERENCE:
        report.longrepr = (path, line, "reference cross-check: MFL_SKIP_REFERENCE is set")
    elif os.environ.get("MFL_REQUIRE_REFERENCE"):
        report.outcome = "failed"
        report.longrepr = f"reference cross-check skipped under MFL_REQUIRE_REFERENCE: {reason}"
    else:
        report.longrepr = (path, line, f"{reason} ({REFERENCE_HINT})")


def load_file(relative: str):
    """Import a hook, bench or tools script by its path from the project root (once per session)."""
    name = "mfl_" + relative.replace("/", "_").removesuffix(".py")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / relative)
        module = sys.modules[name] = importlib.util.module_from_spec(spec)  # dataclasses need it
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright, with the loopback-only flags of
    tools/screenshot.py. Skips locally without /usr/bin/chromium; fails in CI."""
    shot = load_file("tools/screenshot.py")
    if not shot.CHROMIUM.exists():
        message = f"{shot.CHROMIUM} not found (apt-get install chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = shot.launch(p)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def load():
    """``load("hooks/search.py")``: the module, as ``load_file`` imports it."""
    return load_file


@pytest.fixture(scope="session")
def site_dir() -> Path:
    """The built site; `make test` builds it first. In CI a missing build is an error.

    ``MFL_SITE=/tmp/site-x`` points the tests at another build (several people
    building one checkout each into their own folder)."""
    site = Path(os.environ.get("MFL_SITE") or SITE)
    if not (site / "index.html").exists():
        if os.environ.get("CI"):
            pytest.fail("site/ is not built; `make test` runs `properdocs build --strict` first")
        pytest.skip("site/ is not built: run `make build` (or `make test`, which builds first)")
    return site


# The kernel as a package (tests/test_package.py, tests/test_page_notebooks.py).
# Its own distribution and the editable install of this checkout never enter a
# clean venv: that is what makes the venv prove the *wheel* works.
OWN_ENTRIES = re.compile(r"^(llmmath|math_for_llms|__editable__)|\.(pth|egg-link)$|^__pycache__$")


@pytest.fixture(scope="session")
def kernel_dist(tmp_path_factory) -> tuple[Path, Path]:
    """The kernel's (sdist, wheel): built by tools/dist.py, or taken from $MFL_DIST.

    The release workflow sets MFL_DIST=dist, so the files it is about to publish
    are the ones tested; otherwise they are built here (about a second, offline).
    """
    given = os.environ.get("MFL_DIST")
    if given:
        (sdist,) = Path(given).glob("*.tar.gz")
        (wheel,) = Path(given).glob("*.whl")
        return sdist.resolve(), wheel.resolve()
    return load_file("tools/dist.py").build(tmp_path_factory.mktemp("dist"))


def clean_venv(path: Path, keep=lambda name: not OWN_ENTRIES.search(name)) -> Path:
    """A venv at ``path`` without pip and without the kernel; returns its python.

    It sees the entries of this environment's site-packages for which
    ``keep(name)`` holds (default: everything but the kernel itself), through
    one folder of symlinks on its path: numpy, and for a Jupyter kernel
    ipykernel and pip, come from the wheels ``make install`` installed, so
    this works offline. The venv's own site-packages stays empty until the
    kernel's wheel is installed there.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    deps = path / "deps"
    deps.mkdir()
    here = Path(sysconfig.get_paths()["purelib"])
    for entry in sorted(here.iterdir()):
        if keep(entry.name):
            (deps / entry.name).symlink_to(entry)
    python = path / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "_mfl_deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    return python


def clean_environ(**extra: str) -> dict[str, str]:
    """os.environ without pip's settings or a PYTHONPATH, plus ``extra``.

    ``PIP_CONFIG_FILE`` is the null device, so no pip.conf of this machine
    (extra indexes, find-links, constraints) reaches an install in a clean venv.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PIP_") and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    }
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


@pytest.fixture(scope="session")
def venv_tools():
    """``clean_venv`` and ``clean_environ`` for the tests that install the wheel."""
    return clean_venv, clean_environ


def _llama_config(head_dim, rope_parameters, max_position_embeddings=4096):
    transformers = pytest.importorskip("transformers")
    return transformers.LlamaConfig(
        hidden_size=4 * head_dim,
        num_attention_heads=4,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=rope_parameters,
    )


def _hf_rope_init(rope_type):
    pytest.importorskip("torch")
    return pytest.importorskip("transformers.modeling_rope_utils").ROPE_INIT_FUNCTIONS[rope_type]


@pytest.fixture(scope="session")
def llama_config():
    """``llama_config(head_dim, rope_parameters, max_position_embeddings=4096)``: a LlamaConfig."""
    return _llama_config


@pytest.fixture(scope="session")
def hf_rope_init():
    """``hf_rope_init(rope_type)``: transformers' rope initialization function of that type."""
    return _hf_rope_init
