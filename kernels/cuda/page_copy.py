"""Host -> device copies of an external-memory matrix's pages behind the device's compute
(``gbm/bins/paged.py``, ``PagedBins`` on ``device="cuda"``): double buffering.

Two slots, used by pages in turn (page ``i`` in slot ``i % 2``); each slot holds a pinned
host staging buffer and a device buffer per layout of the bins (row-major,
feature-major), each the size of the largest page, allocated once per fit and reused by
every page of every pass. For page ``i``, in the reader thread (which has just mapped the
page's file)::

    host waits   copied[s]    the slot's last host -> device copy is done: its staging
                              buffer may be written
    host copies  page -> staging[s]
    copy stream waits  released[s]   the kernels of the slot's last page are done: its
                                     device buffer may be written (no host wait)
    copy stream  staging[s] -> device[s]   (asynchronous: pinned memory, its own stream)
    copy stream records  copied[s]

and in the thread running the kernels::

    compute stream waits  copied[s]    (no host wait) then page i's kernels are launched
    after them, compute stream records  released[s]

so page ``i + 1``'s copy runs on the copy stream while page ``i``'s kernels run on the
compute stream. On a GPU: CuPy (pinned memory from ``cupy.cuda.alloc_pinned_memory``, a
non-blocking stream, so the copies do not wait for the legacy default stream the kernels
run on, and ``cupy.cuda.Event``s). Under Numba's CUDA simulator: its stream, event,
pinned-array and ``to_device(..., to=)`` API, which run at once (the order above is still
the order of the calls). The order is checked with a recording backend in
``tests/cuda/test_cuda_page_copy.py``; it has not run on a GPU.
"""
import numpy as np

from ._device import SIMULATOR


class PageCopies:
    """The double buffer of one fit's pages (the module docstring says the order).

    backend : ``CupyCopies``, ``SimulatorCopies`` (``page_copies()``) or a stand-in with
    the same methods; largest : int, cells of the largest page; dtype : the bins' dtype
    """

    def __init__(self, backend, largest, dtype):
        self.backend, self.largest, self.dtype = backend, max(1, int(largest)), dtype
        self.stream = backend.stream()
        self.copied = [backend.event(), backend.event()]
        self.released = [backend.event(), backend.event()]
        self._staging = [[None, None], [None, None]]  # [slot][layout], made on first use
        self._device = [[None, None], [None, None]]

    def buffers(self, slot, layout):
        """``(staging, device)`` 1-d buffers of ``largest`` cells of a slot and layout."""
        if self._device[slot][layout] is None:
            self._staging[slot][layout] = self.backend.host_buffer(self.largest, self.dtype)
            self._device[slot][layout] = self.backend.device_buffer(self.largest, self.dtype)
        return self._staging[slot][layout], self._device[slot][layout]

    def stage(self, slot, views):
        """Start the copy of a page's mapped bins into ``slot`` (the reader thread's part).

        views : (bins (n_rows, n_features) or None, bins_by_feature (n_features, n_rows)
        or None), C-contiguous host arrays; returns the device views of the same shapes
        (valid once ``before_use(slot)`` has been called, until ``after_use(slot)``)
        """
        b = self.backend
        with b.on_device():
            b.synchronize(self.copied[slot])  # the staging buffers' last copy is done
            wanted = [(layout, v) for layout, v in enumerate(views) if v is not None]
            for layout, view in wanted:
                staging, _ = self.buffers(slot, layout)
                np.copyto(staging[:view.size], view.reshape(-1))
            b.wait(self.stream, self.released[slot])  # the device buffers' kernels are done
            out = [None, None]
            for layout, view in wanted:
                staging, device = self.buffers(slot, layout)
                b.copy(device, staging, view.size, self.stream)
                out[layout] = b.view(device, view.size, view.shape)
            b.record(self.copied[slot], self.stream)
        return out

    def before_use(self, slot):
        """The compute stream waits for the slot's copies (kernels launched after this)."""
        self.backend.wait(self.backend.compute_stream(), self.copied[slot])

    def settle(self):
        """The host waits for every copy started (a pass left early leaves the next page's
        copy running: its buffers must not be let go, or reused by CuPy's pool, before)."""
        for event in self.copied:
            self.backend.synchronize(event)

    def after_use(self, slot):
        """The slot's kernels are launched: its buffers are free once they are done."""
        self.backend.record(self.released[slot], self.backend.compute_stream())


class CupyCopies:
    """``PageCopies``' backend on a GPU (CuPy). The compute stream is the one Numba's
    launches without a stream run on (Numba's default stream: the legacy stream 0, or the
    per-thread one under ``NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM``), not CuPy's current
    stream, which a caller's ``with cupy.cuda.Stream():`` would make another one whose
    events say nothing of the page kernels; the copy stream is non-blocking, so its
    copies overlap the default stream's kernels."""

    def __init__(self):
        import cupy
        from numba import cuda

        self.cupy = cupy
        self.device_id = cupy.cuda.Device().id
        # a Numba stream's int is its handle (the default stream's: 0)
        self._compute = cupy.cuda.ExternalStream(int(cuda.default_stream()))

    def on_device(self):
        """The fit's device current in the calling thread (the reader thread's default
        is device 0)."""
        return self.cupy.cuda.Device(self.device_id)

    def stream(self):
        return self.cupy.cuda.Stream(non_blocking=True)

    def compute_stream(self):
        return self._compute

    def event(self):
        return self.cupy.cuda.Event(disable_timing=True)

    def host_buffer(self, n, dtype):
        """Pinned (page-locked) host memory: an asynchronous copy needs it."""
        dtype = np.dtype(dtype)
        memory = self.cupy.cuda.alloc_pinned_memory(n * dtype.itemsize)
        return np.frombuffer(memory, dtype, n)

    def device_buffer(self, n, dtype):
        return self.cupy.empty(n, dtype)

    def copy(self, device, staging, n, stream):
        device[:n].set(staging[:n], stream=stream)  # cudaMemcpyAsync on ``stream``

    def view(self, device, n, shape):
        return device[:n].reshape(shape)

    def record(self, event, stream):
        event.record(stream)

    def wait(self, stream, event):
        stream.wait_event(event)

    def synchronize(self, event):
        event.synchronize()


class SimulatorCopies:
    """``PageCopies``' backend under Numba's CUDA simulator, through the simulator's CUDA
    API (its streams and events exist and do nothing: every call is done when it
    returns). The kernels take the NumPy arrays the simulator's device arrays wrap."""

    def __init__(self):
        from numba import cuda

        self.cuda = cuda

    def on_device(self):
        return _Nothing()

    def stream(self):
        return self.cuda.stream()

    def compute_stream(self):
        return self.cuda.default_stream()

    def event(self):
        return self.cuda.event()

    def host_buffer(self, n, dtype):
        return self.cuda.pinned_array(n, dtype)

    def device_buffer(self, n, dtype):
        return self.cuda.device_array(n, dtype)

    def copy(self, device, staging, n, stream):
        self.cuda.to_device(staging[:n], stream=stream, to=device[:n])

    def view(self, device, n, shape):
        return device._ary[:n].reshape(shape)  # the simulator's device memory: NumPy

    def record(self, event, stream):
        event.record(stream)

    def wait(self, stream, event):
        event.wait(stream)

    def synchronize(self, event):
        event.synchronize()


def page_copies():
    """The backend of this process: the simulator's or CuPy's."""
    return SimulatorCopies() if SIMULATOR else CupyCopies()


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

