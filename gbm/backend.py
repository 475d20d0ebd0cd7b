"""The one dispatch point from run settings (``device``, ``n_jobs``) to what training and
prediction run on: ``Backend(xp, kernels, collective)``.

Run settings are not part of a model: the model file is the same whatever the hardware
and thread count, and a model trained anywhere predicts anywhere.
"""
import contextlib

import numpy as np

from .collective import LOCAL
from .threads import PARALLEL_MIN_WORK, numba_threads, resolve_n_threads


class Backend:
    """What the grower, booster, objectives, metrics and sampling talk to.

    Attributes
    ----------
    name : "cpu" (or "cuda")
    xp : the array module (NumPy; CuPy on a GPU); arrays are allocated through it
    kernels : the kernels module (``gbm.kernels.cpu``), same names as ``kernels.reference``
    collective : ``gbm.collective`` object; ``LOCAL`` on one machine
    n_threads : int, CPU threads for the kernels
    """

    def __init__(self, name, xp, kernels, collective=LOCAL, n_threads=1):
        self.name, self.xp, self.kernels = name, xp, kernels
        self.collective = collective
        self.n_threads = n_threads
        self._active = None  # the thread count set by the innermost ``threads`` block

    def threads_for(self, work):
        """Threads worth using for ``work`` cells: a parallel region costs a wake-up of
        every worker thread, which on a small input or a busy machine costs more than the
        work. Results do not depend on it: every sum that feeds the model is an integer."""
        return self.n_threads if work >= PARALLEL_MIN_WORK else 1

    def threads(self, work=None):
        """Context: the block's kernels run on ``threads_for(work)`` threads (all when None);
        its value is that count. Nested blocks asking for the count already set cost
        nothing (a kernel call of a tree level is about as cheap as asking Numba)."""
        n = self.n_threads if work is None else self.threads_for(work)
        if n == self._active:
            return contextlib.nullcontext(n)
        return self._switch(n)

    @contextlib.contextmanager
    def _switch(self, n):
        before, self._active = self._active, n
        try:
            with numba_threads(n):
                yield n
        finally:
            self._active = before

    def empty(self, shape, dtype):
        return self.xp.empty(shape, dtype=dtype)

    def zeros(self, shape, dtype):
        return self.xp.zeros(shape, dtype=dtype)

    def asarray(self, array, dtype=None):
        return self.xp.asarray(array, dtype=dtype)


def get_backend(device="cpu", n_jobs=None, collective=LOCAL):
    """The backend for ``device`` ("cpu" or "cuda") with ``n_jobs`` threads."""
    if device == "cpu":
        from .kernels import cpu

        return Backend("cpu", np, cpu, collective, resolve_n_threads(n_jobs))
    if device == "cuda":
        raise ValueError(
            "device='cuda' is not available in this version of gbm: the CUDA kernels have "
            "not landed yet; use device='cpu'"
        )
    raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
