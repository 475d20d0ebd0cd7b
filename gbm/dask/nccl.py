"""NCCL between the GPUs of a Dask training, through CuPy (``cupy.cuda.nccl``).

When every rank of a ``device="cuda"`` training runs on a GPU of its own (dask-cuda: one
worker per GPU), its device arrays (the int64 histograms of each level, any other CuPy
array handed to ``allreduce``) are all-reduced GPU to GPU by NCCL instead of through host
memory. Integer sums are exact, so the result does not depend on NCCL's order of
reduction: the model file is the one the host path and local training write. Everything
else stays on the Dask collective (``gbm.dask.collective``): allgather and broadcast of
Python objects, and all-reduces of host arrays (row counts, the gradients' maxima, stop
decisions).

The ranks choose together, once, before training (``device_collective``): each gives
the identity of its GPU (host name and UUID, or PCI bus id), gathered over Dask. NCCL is
used when every rank has CuPy with NCCL and a GPU, and no two ranks share one; otherwise
(CuPy's NCCL missing on a rank, two workers on one GPU, a single rank) the host-memory
path stays, and the reason is in the rank's stats. Rank 0 makes the NCCL unique id and
broadcasts it over Dask; every rank then joins the communicator.

Failing fast, as the host path does: an NCCL call is waited on by polling its completion
event, the Dask collective's abort notices (a lost worker, a failed rank) and
``collective_timeout``; on any of them the communicator is aborted (``ncclCommAbort``
frees a rank blocked on a dead peer) and ``CollectiveError`` raised. Joining the
communicator runs in a helper thread watched the same way.

Status: written and tested against a stand-in NCCL module and fake device arrays
(``tests/test_dask_nccl.py``); not yet run on GPUs.
"""
import socket
import threading
import time

from ..collective import CollectiveError, check_op
from ..data.inputs import is_device_array

_SPIN_S = 1e-3  # poll an NCCL call's event without sleeping this long (NVLink: ~10 us calls)
_POLL_S = 1e-4  # then sleep this long between polls
# NumPy dtype -> the name of its NCCL type in cupy.cuda.nccl; bool goes as uint8
_NCCL_TYPES = {"int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32",
               "uint32": "NCCL_UINT32", "int64": "NCCL_INT64", "uint64": "NCCL_UINT64",
               "float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32",
               "float64": "NCCL_FLOAT64"}
_NCCL_OPS = {"sum": "NCCL_SUM", "max": "NCCL_MAX", "min": "NCCL_MIN"}


def nccl_module():
    """CuPy's NCCL module, or None when CuPy or its NCCL library is missing here."""
    try:
        from cupy.cuda import nccl
    except Exception:  # noqa: BLE001 - no CuPy, or a CuPy that cannot load: no NCCL
        return None
    return nccl if getattr(nccl, "available", False) else None


def device_identity():
    """``(host name, GPU id)`` of this process's current CuPy device (its UUID, else its
    PCI bus id), or None when NCCL cannot run here (no CuPy's NCCL, no usable GPU)."""
    if nccl_module() is None:
        return None
    try:
        import cupy

        device = cupy.cuda.Device()
        uuid = cupy.cuda.runtime.getDeviceProperties(device.id).get("uuid")
        gpu = bytes(uuid).hex() if uuid else device.pci_bus_id
    except Exception:  # noqa: BLE001 - no device, or a driver error: the host path
        return None
    return socket.gethostname(), str(gpu)


def choose(identities):
    """``("nccl" or "host", reason)`` from the ranks' ``device_identity()`` values."""
    n = len(identities)
    if n < 2:
        return "host", "one rank: nothing to exchange"
    missing = [r for r, ident in enumerate(identities) if ident is None]
    if missing:
        return "host", (f"rank(s) {missing} have no GPU with CuPy's NCCL; histograms are "
                        "all-reduced over host memory")
    first = {}
    for rank, ident in enumerate(identities):
        if tuple(ident) in first:
            return "host", (f"ranks {first[tuple(ident)]} and {rank} share GPU {ident[1]} "
                            f"on {ident[0]}; histograms are all-reduced over host memory")
        first[tuple(ident)] = rank
    return "nccl", f"each of the {n} ranks has a GPU of its own: NCCL between them"


def device_collective(collective, timeout=None):
    """``(collective for training, path, reason)``: ``collective`` itself (``"host"``) or
    an ``NcclCollective`` over it (``"nccl"``). Every rank calls it at the same point."""
    path, reason = choose(collective.allgather(device_identity()))
    if path == "host":
        return collective, path, reason
    import cupy

    nccl = nccl_module()
    uid = nccl.get_unique_id() if collective.rank == 0 else None
    uid = collective.broadcast(uid, root=0)
    timeout = float(getattr(collective, "timeout", 300.0) if timeout is None else timeout)
    comm = _join(nccl, collective, uid, timeout)
    return NcclCollective(collective, comm, nccl, cupy, timeout), path, reason


def _failure(collective):
    """Why the host collective's training was stopped (a lost worker, a failed rank), or
    None; collectives without abort notices (``ThreadCollective``) never say."""
    failure = getattr(collective, "failure", None)
    return None if failure is None else failure()


def _join(nccl, collective, uid, timeout):
    """This rank's ``NcclCommunicator``; joining blocks until every rank has joined, so
    it runs in a helper thread while this one watches for a stop and the timeout."""
    done, box = threading.Event(), {}

    def join():
        try:
            box["comm"] = nccl.NcclCommunicator(collective.world_size, uid, collective.rank)
        except BaseException as err:  # noqa: BLE001 - raised again below
            box["error"] = err
        done.set()

    threading.Thread(target=join, name="gbm-nccl-join", daemon=True).start()
    deadline = time.monotonic() + timeout
    while not done.wait(0.05):
        reason = _failure(collective)
        if reason is not None:
            raise CollectiveError(reason)
        if time.monotonic() > deadline:
            raise CollectiveError(f"joining the NCCL communicator timed out after {timeout:g} s "
                                  "(a rank did not join; raise collective_timeout if slow)")
    if "error" in box:
        raise RuntimeError(f"rank {collective.rank} could not join the NCCL communicator: "
                           f"{type(box['error']).__name__}: {box['error']}") from box["error"]
    return box["comm"]


def _pointer(array):
    return array.__cuda_array_interface__["data"][0]


class NcclCollective:
    """A rank's collective: device arrays all-reduced by NCCL, the rest by ``host``.

    Parameters
    ----------
    host : the rank's Dask collective (allgather, broadcast, host all-reduces, aborts)
    comm : cupy.cuda.nccl.NcclCommunicator of the ranks, in the same rank order
    nccl, cupy : the modules (stand-ins in tests)
    timeout : float, seconds one NCCL all-reduce may take
    """

    def __init__(self, host, comm, nccl, cupy, timeout):
        self.host, self.comm, self.nccl, self.cupy = host, comm, nccl, cupy
        self.timeout = float(timeout)
        self.rank, self.world_size = host.rank, host.world_size
        self.nccl_calls, self.nccl_seconds = 0, 0.0

    def allreduce(self, array, op="sum"):
        if not is_device_array(array):
            return self.host.allreduce(array, op)
        check_op(array, op)
        cupy, nccl = self.cupy, self.nccl
        start = time.perf_counter()
        src = cupy.ascontiguousarray(array)
        is_bool = src.dtype.kind == "b"
        if is_bool:  # NCCL has no bool: as uint8, where sum is "any" (NumPy's bool sum)
            src, op = src.view(cupy.uint8), {"sum": "max"}.get(op, op)
        if src.dtype.name not in _NCCL_TYPES:
            raise TypeError(f"NCCL all-reduce takes {sorted(_NCCL_TYPES)} or bool, got "
                            f"{src.dtype}")
        out = cupy.empty_like(src)
        stream = cupy.cuda.get_current_stream()
        if src.size:
            self.comm.allReduce(_pointer(src), _pointer(out), src.size,
                                getattr(nccl, _NCCL_TYPES[src.dtype.name]),
                                getattr(nccl, _NCCL_OPS[op]), stream.ptr)
            self._wait(stream)
        self.nccl_calls += 1
        self.nccl_seconds += time.perf_counter() - start
        return out.view(cupy.bool_) if is_bool else out

    def _wait(self, stream):
        """Until the all-reduce queued on ``stream`` is done; a stop of the training or the
        timeout aborts the communicator (which frees the GPU from a dead peer)."""
        event = self.cupy.cuda.Event(disable_timing=True)
        event.record(stream)
        start = time.monotonic()
        while not event.done:
            waited = time.monotonic() - start
            reason = _failure(self.host)
            if reason is None and waited > self.timeout:
                reason = (f"an NCCL all-reduce timed out after {self.timeout:g} s (a worker "
                          "hung or is far slower; raise collective_timeout if it is only slow)")
            if reason is not None:
                self.comm.abort()
                self.comm = None
                raise CollectiveError(reason)
            if waited > _SPIN_S:
                time.sleep(_POLL_S)
        check = getattr(self.comm, "check_async_error", None)
        if check is not None:
            check()

    def allgather(self, value):
        return self.host.allgather(value)

    def broadcast(self, value, root=0):
        return self.host.broadcast(value, root)

    @property
    def n_exchanges(self):
        return getattr(self.host, "n_exchanges", 0) + self.nccl_calls

    @property
    def seconds(self):
        return getattr(self.host, "seconds", 0.0) + self.nccl_seconds

    def close(self, failed=False):
        """Free the communicator: ``destroy`` after a training that ended well, ``abort``
        after a failure (the other ranks may never finish their calls)."""
        comm, self.comm = self.comm, None
        if comm is None:
            return
        if failed:
            comm.abort()
        else:
            comm.destroy()
