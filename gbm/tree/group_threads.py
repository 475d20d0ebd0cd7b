"""A round's output groups (classes of a multiclass model, targets of a multi-target one)
grown at the same time, one tree per CPU thread.

The trees of one round's groups are independent: each reads its own gradients and adds
its leaves to its own margin column. On a small data set a tree level is too little work
for two threads to share well (a parallel region's start costs about as much as the
work), so instead each thread grows whole trees with single-threaded kernels, which
release the GIL. The trees are the same whatever thread grows them, and they are handed
back in group order: the model file does not depend on this.

Used only on the CPU backend, on one rank (a collective expects every rank to make the
same calls in the same order, which concurrent trees would not), and with a Numba
threading layer that accepts kernels launched from several threads at once.
"""
import threading
from concurrent.futures import ThreadPoolExecutor

import numba

from ..runtime.backend import Backend

_THREADSAFE_LAYERS = ("tbb", "omp")


def concurrent_groups(backend, n_groups):
    """Threads to grow ``n_groups`` trees at once with (1: one after the other)."""
    if backend.name != "cpu" or backend.collective.world_size > 1 or n_groups < 2:
        return 1
    if backend.n_threads < 2:
        return 1
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet: the layer gbm chose will load
        layer = numba.config.THREADING_LAYER
    if layer not in _THREADSAFE_LAYERS:
        return 1
    return min(backend.n_threads, n_groups)


class GroupRunner:
    """Runs ``grow(group, backend, buffers)`` for every group of a round, concurrently
    when ``concurrent_groups`` allows; each thread has its own single-threaded backend
    and histogram buffers. Use as a context manager (the threads end with it)."""

    def __init__(self, backend, n_groups, make_buffers):
        self.backend = backend
        self.n_workers = concurrent_groups(backend, n_groups)
        self._make_buffers = make_buffers
        self._local = threading.local()
        self._pool = None
        self._serial_buffers = None
        if self.n_workers > 1:
            self._pool = ThreadPoolExecutor(self.n_workers, thread_name_prefix="gbm-group",
                                            initializer=numba.set_num_threads,
                                            initargs=(1,))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        return False

    def _worker_state(self):
        local = self._local
        if not hasattr(local, "backend"):
            b = self.backend
            local.backend = Backend(b.name, b.xp, b.kernels, b.collective, n_threads=1)
            local.backend.workspace = None if b.workspace is None else {}
            local.buffers = self._make_buffers()
        return local.backend, local.buffers

    def _run(self, grow, group):
        backend, buffers = self._worker_state()
        return grow(group, backend, buffers)

    def buffers(self):
        """The histogram buffers of trees grown on the calling thread."""
        if self._serial_buffers is None:
            self._serial_buffers = self._make_buffers()
        return self._serial_buffers

    def map(self, grow, groups):
        """``[grow(g, backend, buffers) for g in groups]``, in group order."""
        if self._pool is None:
            return [grow(g, self.backend, self.buffers()) for g in groups]
        futures = [self._pool.submit(self._run, grow, g) for g in groups]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            for f in futures:  # let running trees finish before the error goes on
                if not f.cancelled():
                    f.exception()
            raise
