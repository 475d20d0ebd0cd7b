"""The CUDA tests run under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, in their
own pytest process: ``python -m tests.run_all``) or on a real GPU (``GBM_TEST_GPU=1``);
the top-level ``tests/conftest.py`` leaves this folder out of other runs. Kernels get
NumPy arrays under the simulator and CuPy arrays on a GPU (``device_arrays.py``)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: shared helpers


def pytest_configure(config):
    # splitmix64 (ranking pairs) wraps modulo 2**64 by design; under the simulator its
    # uint64 arithmetic runs on NumPy scalars, which warn about it
    config.addinivalue_line("filterwarnings",
                            "ignore:overflow encountered in scalar:RuntimeWarning")
