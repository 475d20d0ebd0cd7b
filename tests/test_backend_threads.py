"""Backend.threads: the block's kernels run on its count, and every block puts back the
count it found, nested or not, on exit by an exception too."""
import numba
import numpy as np
import pytest

from gbm.kernels import cpu as cpu_kernels
from gbm.runtime.backend import Backend
from gbm.runtime.threads import PARALLEL_MIN_WORK

pytestmark = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 Numba threads")


def test_nested_blocks_set_and_restore_the_count():
    backend = Backend("cpu", np, cpu_kernels, n_threads=2)
    start = numba.get_num_threads()
    with backend.threads(1) as one:  # little work: one thread
        assert one == 1 and numba.get_num_threads() == 1
        with backend.threads(PARALLEL_MIN_WORK) as two:
            assert two == 2 and numba.get_num_threads() == 2
            with backend.threads(0) as inner:
                assert inner == 1 and numba.get_num_threads() == 1
            assert numba.get_num_threads() == 2
            with backend.threads() as same:  # the count already set: nothing to do
                assert same == 2 and numba.get_num_threads() == 2
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == start


def test_an_exception_restores_the_count():
    backend = Backend("cpu", np, cpu_kernels, n_threads=2)
    start = numba.get_num_threads()
    with pytest.raises(KeyError):
        with backend.threads():
            with backend.threads(1):
                raise KeyError("x")
    assert numba.get_num_threads() == start
    numba.set_num_threads(1)
    try:  # a caller's own count is put back too
        with backend.threads() as n:
            assert n == 2 and numba.get_num_threads() == 2
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(start)
