"""Root pytest configuration: stable numpy printing for every doctest, and how
pytest-xdist (-n auto, pyproject's addopts) shares the tests out among its workers."""

from pathlib import Path

import numpy as np
import pytest

# Each test goes to whichever worker is free, except two kinds that must run in
# one worker, in order: a page's examples (docs/**/*.md), which share one
# namespace, and the tests of a module listed here: tests/test_reproducible.py
# (both compare against one clean build) and tests/test_page_notebooks.py (the
# notebooks share one clean venv with the wheel installed, about ten seconds
# to set up, which a second worker would set up again). Not xdist's own
# `--dist loadgroup`: with pytest 9 it groups nothing (pytest-xdist 3.8 sets
# item._nodeid, which pytest 9 no longer reads), and the pages' examples ran
# apart and failed.
ONE_WORKER = {"tests/test_reproducible.py", "tests/test_page_notebooks.py"}


def pytest_configure(config):
    # numpy 2 prints scalars as np.float64(0.25); doctests show plain numbers.
    np.set_printoptions(legacy="1.25", precision=8, suppress=True)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: none without it
def pytest_xdist_auto_num_workers(config):
    """No workers for a run of one file (`pytest docs/<lesson>/<page>.md`): starting
    them, each importing numpy and collecting the file again, costs more than the
    file's examples take. A folder or several files: None, so xdist's own count, a
    worker per core (`pytest docs` on two cores: about 7.5 s against 10.5 s in one)."""
    paths = {arg.split("::", 1)[0] for arg in config.args}
    if len(paths) == 1 and Path(config.invocation_params.dir, *paths).is_file():
        return 0
    return None


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: none without it
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByPage(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path.endswith(".md") or path in ONE_WORKER else nodeid

    return ByPage(config, log)
