"""The whole test suite, one command: ``python -m tests.run_all [pytest options]``.

Two pytest processes, because Numba's CUDA simulator is chosen when Numba is imported:

1. ``pytest tests`` (``tests/cuda`` is left out unless ``GBM_TEST_GPU=1``: see
   ``tests/conftest.py``);
2. ``NUMBA_ENABLE_CUDASIM=1 pytest tests/cuda``: the CUDA kernels and ``device="cuda"``
   training under the simulator.

Options are passed to both. The exit status is the first failure's; a run that collects
no test (pytest's status 5) is a failure, not a pass.

A test that runs past ``pytest.ini``'s timeout is taken as hung: pytest-timeout prints
every thread's stack and ends that process. The simulator's process is then run once
more, saying so (its Python threads once stalled a CI run for its whole 90 minutes and
could not be made to stall again here); a second timeout, or any other failure, fails.
"""
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


# pytest-timeout's banner before the stacks (thread method), its failure (signal method)
TIMEOUT_MARKS = ("+ Timeout +", "from pytest-timeout")


def _pytest(paths, extra, env=None):
    """pytest's exit status (5, no test collected, as 1) and whether a test timed out."""
    command = [sys.executable, "-m", "pytest", *extra, *paths]
    print("+", " ".join(command), flush=True)
    process = subprocess.Popen(command, cwd=TESTS.parent, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, bufsize=1)
    timed_out = False
    for line in process.stdout:
        timed_out = timed_out or any(mark in line for mark in TIMEOUT_MARKS)
        sys.stdout.write(line)
        sys.stdout.flush()
    status = process.wait()
    if status == 5:
        print(f"run_all: pytest collected no tests in {' '.join(paths)}; that is a failure",
              file=sys.stderr)
        return 1, timed_out
    return status, timed_out


def main(argv):
    extra = argv or ["-q"]
    first, _ = _pytest(["tests"], extra)
    simulator = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    second, timed_out = _pytest(["tests/cuda"], extra, simulator)
    if second and timed_out:
        print("run_all: a simulator test timed out (stacks above); running tests/cuda once "
              "more", file=sys.stderr, flush=True)
        second, _ = _pytest(["tests/cuda"], extra, simulator)
    return first or second


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
