"""Root pytest configuration: stable numpy printing for every doctest."""

import numpy as np


def pytest_configure(config):
    # numpy 2 prints scalars as np.float64(0.25); doctests show plain numbers.
    np.set_printoptions(legacy="1.25", precision=8, suppress=True)
