"""A collective over the ranks' own TCP mesh (``gbm.cluster.sockets``).

``Exchanging`` holds what every such collective does with its exchanges: ``allreduce``
(host memory; a GPU rank's CuPy array is copied to the host and back), ``allgather`` and
``broadcast``, each one numbered exchange that every rank makes in the same order, over
the mesh when the ranks have one. ``gbm.dask.collective.DaskCollective`` adds Dask's
comms where there is no mesh; ``MeshCollective`` is the collective of ``gbm.spark`` and
``gbm.ray``, whose ranks build the mesh through the engine's own small all-gather (Spark's
``BarrierTaskContext.allGather``, a Ray actor) and then exchange only over it.
"""
import time

import numpy as np

from ..collective import CollectiveError, check_op, reduce_parts
from ..data.inputs import is_device_array, to_host
from . import sockets


class Exchanging:
    """``allreduce`` / ``allgather`` / ``broadcast`` over numbered exchanges. A subclass
    sets ``rank``, ``world_size``, ``timeout``, ``_socks`` (the mesh, or None) and
    ``_seq = n_exchanges = 0``, ``seconds = 0.0``, and defines ``failure()`` (why the
    training was stopped, or None) and ``_without_mesh(seq, value, senders, others)``.
    ``_grace``: how long a closed peer's reason is waited for (``failure()``)."""

    _grace = 1.0

    def allreduce(self, array, op="sum"):
        """Over host memory: a GPU rank's array (CuPy) is copied to the host, reduced
        there and returned as a CuPy array."""
        on_device = is_device_array(array)
        host = np.asarray(to_host(array))
        if self._socks is None:  # sent later than this call returns: the caller may overwrite it
            host = np.array(host, copy=True)
        check_op(host, op)
        out = reduce_parts(self._exchange(host, range(self.world_size)), op)
        if on_device:
            import cupy

            return cupy.asarray(out)
        return out

    def allgather(self, value):
        return self._exchange(value, range(self.world_size))

    def broadcast(self, value, root=0):
        return self._exchange(value, [root])[0]

    def _exchange(self, value, senders):
        """The values of the ranks ``senders`` (in that order): each sender sends its own to
        every other rank. Every rank makes the same calls in the same order."""
        seq, self._seq = self._seq, self._seq + 1
        if self.world_size == 1:
            return [value]
        start = time.perf_counter()
        senders = list(senders)
        others = [s for s in senders if s != self.rank]
        if self._socks is not None:
            targets = [r for r in range(self.world_size) if r != self.rank] \
                if self.rank in senders else []
            got = sockets.exchange(self._socks, seq, value, targets, others, self.timeout,
                                   self.failure, self._grace)
        else:
            got = self._without_mesh(seq, value, senders, others)
        got[self.rank] = value
        self.n_exchanges += 1
        self.seconds += time.perf_counter() - start
        return [got[s] for s in senders]


class MeshCollective(Exchanging):
    """One rank of a training whose ranks exchange over their own TCP mesh.

    Parameters
    ----------
    rank, world_size : int
    host : str, the address this rank listens on (reachable from the other ranks)
    gather : callable, ``gather(str) -> list of str``, every rank's string in rank order
        over the engine's own channel (used three times, to build the mesh)
    timeout : float, seconds one exchange waits for the other ranks (a hung rank)

    Raises ``CollectiveError`` when the ranks could not all connect to each other.
    """

    transport = "tcp"
    _grace = 0.0  # no channel beside the mesh: a closed connection is all a peer says

    def __init__(self, rank, world_size, host, gather, timeout):
        self.rank, self.world_size, self.timeout = int(rank), int(world_size), float(timeout)
        self._seq = self.n_exchanges = 0
        self.seconds = 0.0
        self._socks = {}
        if self.world_size > 1:
            self._socks = sockets.mesh(self.rank, self.world_size, host,
                                       lambda value: _gather_objects(gather, value))
            if self._socks is None:
                raise CollectiveError(
                    f"the {self.world_size} ranks could not all connect to each other over "
                    f"TCP (rank {self.rank} listens on {host}); the hosts of the workers must "
                    "reach each other on ephemeral ports")

    def failure(self):
        return None  # a peer's failure shows as its closed connection

    def _without_mesh(self, seq, value, senders, others):  # pragma: no cover - always a mesh
        raise CollectiveError("no connections to the other ranks")

    def close(self):
        sockets.close_all(self._socks)
        self._socks = {}


def _gather_objects(gather, value):
    """``gather`` of a small Python value, as text (the engines' all-gathers carry
    strings)."""
    import base64
    import pickle

    text = base64.b64encode(pickle.dumps(value)).decode("ascii")
    return [pickle.loads(base64.b64decode(t)) for t in gather(text)]
