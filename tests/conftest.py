"""Which test folders run in this process: ``tests/cuda`` needs Numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1``, set before Numba is imported, so it runs in a pytest process
of its own: ``python -m tests.run_all`` runs both) or a real GPU (``GBM_TEST_GPU=1``, as
``bench/gpu_check.sh`` sets)."""
import os


def _cuda_tests_here():
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or os.environ.get("GBM_TEST_GPU") == "1"


collect_ignore_glob = [] if _cuda_tests_here() else ["cuda/*"]
