"""The one dispatch point from run settings (``device``, ``n_jobs``) to what training and
prediction run on: ``Backend(xp, kernels, collective)``.

Run settings are not part of a model: the model file is the same whatever the hardware
and thread count, and a model trained anywhere predicts anywhere.
"""
import contextlib
import math

import numba
import numpy as np

from ..collective import LOCAL
from ..data.inputs import to_host
from .threads import PARALLEL_MIN_WORK, resolve_n_threads


class Backend:
    """What the grower, booster, objectives, metrics and sampling talk to.

    Attributes
    ----------
    name : "cpu" or "cuda"
    xp : the array module (NumPy; CuPy on a GPU, NumPy under Numba's CUDA simulator);
        the arrays of the fit (bins, gradients, rows, margins, histograms) are allocated
        through it
    kernels : the kernels module (``gbm.kernels.cpu`` or ``gbm.kernels.cuda``), same
        names as ``kernels.reference``
    collective : ``gbm.collective`` object; ``LOCAL`` on one machine
    n_threads : int, CPU threads for the kernels
    workspace : dict or None
        Arrays kept for reuse by ``buffer`` (training gives its backend one; None: every
        ``buffer`` is new memory)
    """

    def __init__(self, name, xp, kernels, collective=LOCAL, n_threads=1):
        self.name, self.xp, self.kernels = name, xp, kernels
        self.collective = collective
        self.n_threads = n_threads
        self._active = None  # the thread count set by the innermost ``threads`` block
        self.workspace = None

    def buffer(self, name, shape, dtype):
        """A C-contiguous array for ``name`` (contents undefined): with a workspace, the
        start of the same memory each time (grown when too small), so a round's gradients,
        gradient pairs and row lists do not take fresh memory every round (measured: a
        fresh 4.7 MB pair of arrays costs 3 ms in page faults, ten times the writes). The
        caller must be done with the array before asking for ``name`` again."""
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)
        if self.workspace is None:
            return self.xp.empty(shape, dtype=dtype)
        size = math.prod(shape)
        held = self.workspace.get(name)
        if held is None or held.shape[0] < size or held.dtype != np.dtype(dtype):
            held = self.workspace[name] = self.xp.empty(size, dtype=dtype)
        return held[:size].reshape(shape)

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
        return _Switch(self, n)

    def asarray(self, array, dtype=None):
        return self.xp.asarray(array, dtype=dtype)

    def to_host(self, array):
        """A NumPy array of ``array`` (copied from the device when it lives there)."""
        return np.asarray(to_host(array))


def get_backend(device="cpu", n_jobs=None, collective=LOCAL):
    """The backend for ``device`` ("cpu" or "cuda") with ``n_jobs`` threads."""
    if device == "cpu":
        from ..kernels import cpu

        return Backend("cpu", np, cpu, collective, resolve_n_threads(n_jobs))
    if device == "cuda":
        return Backend("cuda", _cuda_array_module(), _cuda_kernels(), collective,
                       resolve_n_threads(n_jobs))
    raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")


# the distribution is detgbm (``gbm`` on the package index is an unrelated project)
_GPU_EXTRA = ("pip install 'detgbm[gpu]', or from a checkout pip install -e '.[gpu]' "
              "(numba-cuda and CuPy for CUDA 12)")


def _simulator():
    from numba import config

    return bool(config.ENABLE_CUDASIM)


def _cuda_array_module():
    """CuPy; NumPy under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    if _simulator():
        return np
    try:
        import cupy
    except ImportError:
        raise RuntimeError(f"device='cuda' needs CuPy, which is not installed: {_GPU_EXTRA}") \
            from None
    return cupy


def _cuda_kernels():
    """``gbm.kernels.cuda``, after checking that numba-cuda and a GPU are there."""
    import importlib.util

    if importlib.util.find_spec("numba_cuda") is None:
        raise RuntimeError(f"device='cuda' needs numba-cuda, which is not installed: {_GPU_EXTRA}")
    if not _simulator():
        from numba import cuda

        if not cuda.is_available():
            raise RuntimeError(
                "device='cuda' found no usable NVIDIA GPU (numba.cuda.is_available() is "
                "False: no GPU, no driver, or CUDA libraries missing). Install the GPU extra "
                f"on a machine with an NVIDIA GPU ({_GPU_EXTRA}), or use device='cpu'")
    from ..kernels import cuda as kernels

    return kernels


def _numba_setter():
    """Numba's own setter, without the public function's checks and thread-pool start-up
    test (0.7 us a call against 2.7 us): bound when the pool starts, so looked up after
    the outermost block's public calls; the counts are the backend's own, in range."""
    return getattr(numba.np.ufunc.parallel, "_set_num_threads", None) or numba.set_num_threads


class _Switch:
    """``Backend.threads``' context for a new count: Numba's count is set on entry and put
    back on exit. Inside another block Numba's count is that block's (the backend set it),
    so only the outermost block asks Numba (measured: 12 us a switch as a generator
    context that asked Numba every time, 2.5 us inside a block this way; a multiclass fit
    of 200 rounds switches about 5,700 times)."""
    __slots__ = ("backend", "n", "before", "numba_before", "setter")

    def __init__(self, backend, n):
        self.backend, self.n = backend, n

    def __enter__(self):
        backend = self.backend
        self.before = backend._active
        if self.before is None:  # the outermost block: the public calls
            self.numba_before, self.setter = numba.get_num_threads(), numba.set_num_threads
        else:
            self.numba_before, self.setter = self.before, _numba_setter()
        if self.numba_before != self.n:
            self.setter(self.n)
        backend._active = self.n
        return self.n

    def __exit__(self, *exc):
        self.backend._active = self.before
        if self.numba_before != self.n:
            self.setter(self.numba_before)
        return False
