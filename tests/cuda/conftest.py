"""The CUDA tests run under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, in their
own pytest process: ``python -m tests.run_all``) or on a real GPU; the top-level
``tests/conftest.py`` leaves this folder out of other runs. Kernels get NumPy arrays
under the simulator and CuPy arrays on a GPU (``device_array``)."""
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import config

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: shared helpers

SIMULATOR = bool(config.ENABLE_CUDASIM)


def device_array(array):
    """``array`` where the CUDA kernels read it: NumPy under the simulator, CuPy on a GPU."""
    if SIMULATOR:
        return np.array(array)
    import cupy

    return cupy.asarray(array)


def host(array):
    return array.get() if hasattr(array, "get") else np.asarray(array)


@pytest.fixture
def on_device():
    return device_array


def pytest_configure(config):
    # splitmix64 (ranking pairs) wraps modulo 2**64 by design; under the simulator its
    # uint64 arithmetic runs on NumPy scalars, which warn about it
    config.addinivalue_line("filterwarnings",
                            "ignore:overflow encountered in scalar:RuntimeWarning")
