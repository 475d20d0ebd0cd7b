"""The whole test suite, one command: ``python -m tests.run_all [pytest options]``.

Two pytest processes, because Numba's CUDA simulator is chosen when Numba is imported:

1. ``pytest tests`` (``tests/cuda`` is left out unless ``GBM_TEST_GPU=1``: see
   ``tests/conftest.py``);
2. ``NUMBA_ENABLE_CUDASIM=1 pytest tests/cuda``: the CUDA kernels and ``device="cuda"``
   training under the simulator.

Options are passed to both. The exit status is the first failure's; a run that collects
no test (pytest's status 5) is a failure, not a pass.
"""
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _pytest(paths, extra, env=None):
    command = [sys.executable, "-m", "pytest", *extra, *paths]
    print("+", " ".join(command), flush=True)
    status = subprocess.call(command, cwd=TESTS.parent, env=env)
    if status == 5:
        print(f"run_all: pytest collected no tests in {' '.join(paths)}; that is a failure",
              file=sys.stderr)
        return 1
    return status


def main(argv):
    extra = argv or ["-q"]
    first = _pytest(["tests"], extra)
    simulator = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    second = _pytest(["tests/cuda"], extra, simulator)
    return first or second


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
