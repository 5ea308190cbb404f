"""hooks/warmkernel.py: kernels forked from a warm template behave as new kernels."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
import warmkernel
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbclient import NotebookClient

pytestmark = pytest.mark.skipif(not warmkernel.available(), reason="forked kernels need Linux")

# What a theory notebook does, and what a kernel's start decides: its folder,
# its path, matplotlib's backend and settings, a figure, a stream, a result.
CELLS = [
    "import os, sys\nimport numpy as np\nimport matplotlib\nimport matplotlib.pyplot as plt\n"
    "import llmmath as lm",
    "print(np.arange(4) / 3)",
    "{'folder': os.path.basename(os.getcwd()), 'cwd on path': '' in sys.path,\n"
    " 'backend': matplotlib.get_backend(), 'MPLBACKEND': os.environ.get('MPLBACKEND'),\n"
    " 'dpi': plt.rcParams['figure.dpi'], 'pyplot first': 'matplotlib.pyplot' in sys.modules}",
    "fig, ax = plt.subplots(figsize=(2, 1.5))\nax.plot([0, 1, 2], [0, 1, 0]);",
    "lm.softmax(np.array([0.0, 1.0, 2.0]))",
]


def _run(cells: list[str], folder, *, warm: bool) -> list:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    manager = warmkernel.WarmKernelManager if warm else AsyncKernelManager
    # IPC sockets in a folder of the test's own, not TCP ports that two
    # pytest-xdist workers could both pick (as tests/test_notebooks.py)
    sockets = Path(tempfile.mkdtemp(prefix="sockets-", dir=folder.parent))
    km = manager(kernel_name="python3", transport="ipc", ip=str(sockets / "k"))
    NotebookClient(nb, km=km, timeout=120, resources={"metadata": {"path": str(folder)}}).execute()
    return [cell.outputs for cell in nb.cells]


def test_a_forked_kernel_gives_a_new_kernels_outputs(tmp_path):
    folder = tmp_path / "lesson"
    folder.mkdir()
    new = _run(CELLS, folder, warm=False)
    forked = _run(CELLS, folder, warm=True)
    assert forked == new
    assert "image/png" in forked[3][0]["data"]  # the inline backend drew the figure
    assert "'folder': 'lesson'" in forked[2][0]["data"]["text/plain"]


def test_the_kernel_is_the_templates_child(tmp_path):
    warmkernel.warm_up()
    template = warmkernel.Template._instance
    (parent, frozen) = _run(
        ["import os\nos.getppid()", "import gc\ngc.get_freeze_count() > 50_000"],
        tmp_path,
        warm=True,
    )
    assert parent[0]["data"]["text/plain"] == str(template.process.pid)
    # what it inherited is set aside from its collector's rounds
    assert frozen[0]["data"]["text/plain"] == "True"


def test_a_forked_kernel_starts_clean(tmp_path, monkeypatch):
    """Nothing one notebook does reaches the next; each fork reseeds numpy's global
    random state (here the template imports numpy.random, which PRELOAD does not)."""
    monkeypatch.setattr(warmkernel, "PRELOAD", (*warmkernel.PRELOAD, "numpy.random"))
    monkeypatch.setattr(warmkernel.Template, "_instance", None)
    first = [
        "import numpy as np, matplotlib.pyplot as plt\nleak = 1\n"
        "plt.rcParams['lines.linewidth'] = 9.0\nprint(np.random.random())"
    ]
    second = [
        "import numpy as np, matplotlib.pyplot as plt\n"
        "print('leak' in globals(), plt.rcParams['lines.linewidth'])\nprint(np.random.random())"
    ]
    try:
        (a,) = _run(first, tmp_path, warm=True)
        (b,) = _run(second, tmp_path, warm=True)
        (c,) = _run(second, tmp_path, warm=True)
    finally:
        warmkernel.Template._instance.close()
    assert b[0]["text"].startswith("False 1.5\n")
    draws = {a[0]["text"], b[0]["text"].split("\n")[1], c[0]["text"].split("\n")[1]}
    assert len(draws) == 3  # not the template's one random state, three times


def test_without_forking_kernels_start_as_jupyter_client_starts_them(tmp_path, monkeypatch):
    monkeypatch.setattr(warmkernel, "available", lambda: False)
    monkeypatch.setattr(warmkernel.Template, "_instance", None)
    (out,) = _run(["import os\nos.getppid() == os.getpid()"], tmp_path, warm=True)
    assert out[0]["data"]["text/plain"] == "False"
    assert warmkernel.Template._instance is None  # no template was started


def _launch(cmd: list[str], cwd) -> object:
    provisioner = warmkernel.ForkingProvisioner(kernel_id="test", kernel_spec=None)
    # jupyter_core's runner, as nbclient's: another test may have left a loop running
    run_sync(provisioner.launch_kernel)(cmd, cwd=str(cwd))
    return provisioner.process


@pytest.mark.parametrize("rc", [False, True], ids=["plain folder", "folder with matplotlibrc"])
def test_only_this_pythons_launcher_outside_a_matplotlibrc_folder_is_forked(tmp_path, rc):
    if rc:
        (tmp_path / "matplotlibrc").write_text("lines.linewidth: 3\n", encoding="utf-8")
    version = [sys.executable, "-m", "ipykernel_launcher", "--version"]
    process = _launch(version, tmp_path)
    assert isinstance(process, subprocess.Popen) == rc
    assert process.wait(timeout=60) == 0 and process.poll() == 0
    other = _launch([sys.executable, "-c", "pass"], tmp_path)
    assert isinstance(other, subprocess.Popen)
    other.wait(timeout=60)


def _watch_a_short_kernel(tmp_path) -> None:
    process = _launch([sys.executable, "-m", "ipykernel_launcher", "--version"], tmp_path)
    assert isinstance(process, warmkernel.ForkedKernel)
    assert process.wait(timeout=60) == 0
    assert process.poll() == 0
    process.kill()  # ended: a signal goes nowhere, and raises nothing


def test_a_forked_kernel_is_watched_until_it_ends(tmp_path):
    _watch_a_short_kernel(tmp_path)


def test_the_builds_notebook_converter_forks_its_kernels():
    """hooks/pool.py's exporter hands mkdocs-jupyter's execution the warm manager."""
    import pool
    from nbconvert.preprocessors import ExecutePreprocessor
    from traitlets.config import Config

    exporter = pool.html_exporter()(config=Config({"ExecutePreprocessor": {"enabled": True}}))
    preprocessor = ExecutePreprocessor(config=exporter.config)
    assert preprocessor.kernel_manager_class is warmkernel.WarmKernelManager


def test_a_forked_kernel_is_watched_past_select_s_limit(tmp_path):
    """A test process with PyTorch loaded has descriptors past 1024 (select's limit)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1100:
        pytest.skip(f"this process may open only {hard} files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1100), hard))
    held = []
    try:
        while not held or held[-1] < 1030:
            held.append(os.open(os.devnull, os.O_RDONLY))
        _watch_a_short_kernel(tmp_path)
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
