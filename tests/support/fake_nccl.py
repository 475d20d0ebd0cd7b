"""A stand-in for ``cupy.cuda.nccl`` (and the bits of ``cupy.cuda`` an NCCL call uses),
for machines without GPUs: the ranks are threads of this process, and a communicator's
``allReduce`` reads each rank's "device" memory through the pointer it is given (the
fake GPU's memory is the host's: ``tests/support/fake_gpu.py``), reduces in rank order and writes
the result through the output pointer, as NCCL would on the GPUs.

``install(monkeypatch)`` puts it where ``gbm.dask.nccl`` looks; ``calls`` lists the
all-reduces run (dtype, op, count), ``communicators`` the communicators made.
"""
import ctypes
import threading
import types

import numpy as np

_TYPES = {1: np.int8, 2: np.uint8, 3: np.int32, 4: np.uint32, 5: np.int64, 6: np.uint64,
          7: np.float16, 8: np.float32, 9: np.float64}
_OPS = {0: np.add, 1: np.maximum, 2: np.minimum}


class _Group:
    """The ranks of one unique id: a barrier and a slot per rank."""

    def __init__(self, n):
        self.barrier = threading.Barrier(n, timeout=60)
        self.slots = [None] * n


class FakeNccl(types.ModuleType):
    def __init__(self):
        super().__init__("fake_nccl")
        self.available = True
        for name, code in zip(["NCCL_INT8", "NCCL_UINT8", "NCCL_INT32", "NCCL_UINT32",
                               "NCCL_INT64", "NCCL_UINT64", "NCCL_FLOAT16", "NCCL_FLOAT32",
                               "NCCL_FLOAT64"], range(1, 10)):
            setattr(self, name, code)
        self.NCCL_SUM, self.NCCL_MAX, self.NCCL_MIN = 0, 1, 2
        self.calls, self.communicators = [], []
        self._groups, self._lock, self._next = {}, threading.Lock(), 0
        module = self

        class NcclCommunicator:
            def __init__(self, ndev, commId, rank):
                with module._lock:
                    group = module._groups.setdefault(commId, _Group(ndev))
                    module.communicators.append(self)
                self.group, self.rank, self.state = group, rank, "open"
                group.barrier.wait()  # NCCL's init returns once every rank has joined

            def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):
                dtype = np.dtype(_TYPES[datatype])
                mine = np.frombuffer((ctypes.c_char * (count * dtype.itemsize)).from_address(
                    sendbuf), dtype=dtype).copy()
                g = self.group
                g.slots[self.rank] = mine
                g.barrier.wait()
                out = g.slots[0].copy()
                for part in g.slots[1:]:
                    _OPS[op](out, part, out=out)
                g.barrier.wait()
                target = np.frombuffer((ctypes.c_char * (count * dtype.itemsize)).from_address(
                    recvbuf), dtype=dtype)
                target[:] = out
                if self.rank == 0:
                    module.calls.append((dtype.name, op, count))

            def abort(self):
                self.state = "aborted"
                self.group.barrier.abort()

            def destroy(self):
                self.state = "destroyed"

            def check_async_error(self):
                pass

        self.NcclCommunicator = NcclCommunicator

    def get_unique_id(self):
        with self._lock:
            self._next += 1
            return (self._next,) + (0,) * 127  # CuPy's: a tuple of 128 ints


class _Stream:
    ptr = 0


class _Event:
    """Done at once: the fake's all-reduce has completed when ``allReduce`` returns."""

    def __init__(self, disable_timing=False):
        self.done = False

    def record(self, stream=None):
        self.done = True


def install(monkeypatch, identity):
    """``gbm.dask.nccl`` sees this NCCL and the fake CuPy's streams; ``identity()`` is
    each rank's ``device_identity`` (e.g. per thread). Returns the fake module."""
    from tests.support import fake_gpu

    import gbm.dask.nccl

    nccl = FakeNccl()
    cuda = types.SimpleNamespace(get_current_stream=lambda: _Stream(), Event=_Event)
    monkeypatch.setattr(fake_gpu.fake_cupy, "cuda", cuda, raising=False)
    monkeypatch.setattr(gbm.dask.nccl, "nccl_module", lambda: nccl)
    monkeypatch.setattr(gbm.dask.nccl, "device_identity", identity)
    return nccl
