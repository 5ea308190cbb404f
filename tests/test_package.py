"""The kernel as a package: what the sdist and the wheel hold, and the wheel in a clean venv.

The files are the ones ``tools/dist.py`` builds (``make dist``; the release
workflow publishes them), or those in ``$MFL_DIST``. The install runs offline:
the clean venv takes numpy from this environment (see ``clean_venv`` in
``conftest.py``) and nothing else, so an import of anything the wheel does not
declare, or a module the wheel lacks, fails here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import llmmath

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
NAME = PYPROJECT["project"]["name"]
MODULES = sorted(p.name for p in (ROOT / "src" / "llmmath").glob("*.py"))


def test_the_version_is_written_in_one_place():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "llmmath.__version__"}


def test_changelog_and_citation_follow_the_version(load):
    # Dated sections and the tag are checked by the release workflow itself.
    assert load("tools/dist.py").release_problems() == []


def test_release_check_catches_an_unprepared_release(load, tmp_path):
    dist = load("tools/dist.py")
    (tmp_path / "src" / "llmmath").mkdir(parents=True)
    (tmp_path / "src" / "llmmath" / "__init__.py").write_text('__version__ = "9.1.0"\n')
    (tmp_path / "CHANGELOG.md").write_text("## [9.1.0] - Unreleased\n")
    (tmp_path / "CITATION.cff").write_text('version: 9.1.0\ndate-released: "2026-01-02"\n')
    assert dist.release_problems(root=tmp_path) == []
    problems = dist.release_problems("v9.0.0", root=tmp_path)
    assert any("does not name version 9.1.0" in p for p in problems)
    assert any("date the [9.1.0] section" in p for p in problems)
    (tmp_path / "CHANGELOG.md").write_text("## [9.1.0] - 2026-01-02\n")
    assert dist.release_problems("v9.1.0", root=tmp_path) == []


def test_sdist_holds_the_sources_and_the_changelog(kernel_dist):
    sdist, _ = kernel_dist
    assert sdist.name == f"{NAME.replace('-', '_')}-{llmmath.__version__}.tar.gz"
    with tarfile.open(sdist) as archive:
        top = sdist.name.removesuffix(".tar.gz")
        names = {n.removeprefix(top + "/") for n in archive.getnames()}
    expected = {"pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md"}
    expected |= {f"src/llmmath/{m}" for m in MODULES}
    assert expected <= names, sorted(expected - names)
    assert not [n for n in names if n.startswith(("tests/", "docs/", "hooks/", "bench/", "tools/"))]


def test_wheel_holds_the_package_and_its_metadata(kernel_dist):
    _, wheel = kernel_dist
    assert wheel.name == f"{NAME.replace('-', '_')}-{llmmath.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"{NAME.replace('-', '_')}-{llmmath.__version__}.dist-info"
        metadata = Parser().parsestr(archive.read(f"{info}/METADATA").decode())
    assert {f"llmmath/{m}" for m in MODULES} <= names
    assert {n.split("/")[0] for n in names} == {"llmmath", info}  # nothing else installed
    assert f"{info}/licenses/LICENSE" in names
    assert metadata["Name"] == NAME
    assert metadata["Version"] == llmmath.__version__
    assert metadata["License-Expression"] == "MIT"
    assert metadata["Requires-Python"] == ">=3.11"
    required = [r for r in metadata.get_all("Requires-Dist") if "extra ==" not in r]
    assert required == ["numpy>=1.26"]


CHECK = """
import importlib, importlib.metadata, json, sys
import llmmath
report = {"file": llmmath.__file__, "version": llmmath.__version__,
          "installed": importlib.metadata.version(sys.argv[1]), "missing": []}
for name in llmmath.__all__:
    obj = getattr(llmmath, name, None)
    home = importlib.import_module(getattr(obj, "__module__", "") or "llmmath")
    if not callable(obj) or getattr(home, name, None) is not obj:
        report["missing"].append(name)
print(json.dumps(report))
"""


@pytest.mark.slow  # a venv, an install and an import: about 4 s
def test_the_wheel_installs_in_a_clean_venv_and_imports_every_public_name(
    kernel_dist, venv_tools, tmp_path
):
    clean_venv, clean_environ = venv_tools
    python = clean_venv(tmp_path / "venv", keep=lambda name: name.startswith("numpy"))
    env = clean_environ()
    run = {"cwd": tmp_path, "env": env, "capture_output": True, "text": True}
    before = subprocess.run([str(python), "-I", "-c", "import llmmath"], **run)
    assert before.returncode != 0, "the clean venv must not see this checkout's llmmath"

    _, wheel = kernel_dist
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    install += ["--no-index", "--find-links", str(wheel.parent), f"{NAME}=={llmmath.__version__}"]
    done = subprocess.run(install, **run)
    assert done.returncode == 0, done.stderr  # numpy>=1.26 is met by the venv's numpy

    check = subprocess.run([str(python), "-I", "-c", CHECK, NAME], **run)
    assert check.returncode == 0, check.stderr
    report = json.loads(check.stdout)
    assert Path(report["file"]).is_relative_to(tmp_path / "venv" / "lib"), report["file"]
    assert report["version"] == report["installed"] == llmmath.__version__
    assert report["missing"] == [], "public names missing from the installed wheel"
    assert len(llmmath.__all__) > 70
