"""``gbm.dask.heap.kept_heap``: in the environment Dask gives its workers
(``MALLOC_TRIM_THRESHOLD_=65536``), large arrays freed and allocated again inside it reuse
the heap instead of being faulted in afresh; outside it (and after it) the environment's
thresholds hold. Run in a child process: the thresholds are process-wide."""
import os
import subprocess
import sys
import textwrap

import pytest

from gbm.dask import heap as dask_heap

pytestmark = pytest.mark.skipif(dask_heap._glibc() is None, reason="needs glibc")

CHILD = textwrap.dedent("""
    import resource
    import numpy as np
    from gbm.dask.heap import applies, kept_heap

    def faults(n=40):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(n):
            a = np.ones(1 << 17)  # 1 MiB (NumPy asks for huge pages from 4 MiB)
            del a
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    outside = faults()
    with kept_heap():
        faults(2)  # the first one grows the heap
        inside = faults()
    after = faults()
    print(applies(), outside, inside, after)
""")


def _child(env):
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                         text=True, timeout=120, check=True)
    applies, *counts = out.stdout.split()
    return applies == "True", [int(c) for c in counts]


def test_large_arrays_reuse_the_heap_inside_and_the_worker_settings_hold_after():
    env = dict(os.environ, MALLOC_TRIM_THRESHOLD_="65536")
    applies, (outside, inside, after) = _child(env)
    assert applies
    pages = 40 * (1 << 20) // 4096  # every page of every array, when each is a fresh mmap
    assert outside > pages // 2, outside
    assert inside < pages // 20, inside
    assert after > pages // 2, after  # the environment's thresholds are back


def test_without_dask_settings_it_changes_nothing():
    env = {k: v for k, v in os.environ.items() if k not in dask_heap._FIXING_VARS}
    applies, (outside, inside, after) = _child(env)
    assert not applies
    pages = 40 * (1 << 20) // 4096
    # glibc's sliding threshold already keeps freed arrays of this size in the heap
    assert outside < pages // 20 and inside < pages // 20 and after < pages // 20
