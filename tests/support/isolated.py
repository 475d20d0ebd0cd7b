"""Run a test body in a fresh interpreter: a crash (a segfault, an abort, a hang) then
fails the test that asked, instead of ending the whole test run."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent  # the repository: ``tests`` imports


def run_isolated(script, timeout=120, env=None):
    """Run ``script`` (dedented) with this interpreter, in the repository's folder (so
    ``tests.support`` imports); return its stdout. Fails with the
    exit status and both outputs when it does not exit 0 (an AssertionError inside, a
    signal, ...) and raises ``subprocess.TimeoutExpired`` when it hangs."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)],
                            capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                            env=dict(os.environ, **(env or {})))
    assert result.returncode == 0, (
        f"exit status {result.returncode}\nstdout:\n{result.stdout[-3000:]}\n"
        f"stderr:\n{result.stderr[-3000:]}")
    return result.stdout
