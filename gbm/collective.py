"""Collectives: how ranks that hold different rows of one data set agree.

Training runs the same code on every rank (SPMD, as XGBoost and LightGBM do): each rank
holds some rows, and wherever the model depends on all rows (category sets, the binning
sample, gradient maxima, histograms, base scores, leaf quantiles, metrics, stop
decisions) the ranks exchange through a collective. Locally there is one rank and every
call is a no-op (``LOCAL``); the Dask backend supplies a real one. Every rank makes the
same calls in the same order, whatever its thread count or row count (an empty rank
included), so the exchanges line up.

* ``allreduce(array, op)``: element-wise ``"sum"`` (integer arrays only: an integer sum
  does not depend on the order of the ranks; float sums that feed the model go through
  ``gbm.numerics.exact``), ``"max"`` or ``"min"``; every rank gets the result.
* ``allgather(value)``: the list of every rank's value, in rank order.
* ``broadcast(value, root=0)``: rank ``root``'s value on every rank.

``ThreadGroup`` runs several ranks as threads of one process: the test that training
split over 2 or 3 ranks gives the local model, before any cluster exists.
"""
import threading

import numpy as np

_OPS = ("sum", "max", "min")
_REDUCE = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def check_op(array, op):
    if op not in _OPS:
        raise ValueError(f"op must be one of {list(_OPS)}, got {op!r}")
    if op == "sum" and array.dtype.kind not in "iub":
        raise TypeError(f"allreduce 'sum' takes integer arrays (an order-free sum), got "
                        f"{array.dtype}; sum floats with gbm.numerics.exact")


def reduce_parts(parts, op):
    """The element-wise reduction (``op``: "sum", "max" or "min") of the ranks' arrays
    ``parts``, a new array (integer sums: the order of the ranks does not matter)."""
    out = np.array(parts[0], copy=True)
    for part in parts[1:]:
        _REDUCE[op](out, part, out=out)
    return out


class LocalCollective:
    """One rank: every exchange returns the rank's own value."""

    rank = 0
    world_size = 1

    def allreduce(self, array, op="sum"):
        array = np.asarray(array)
        check_op(array, op)
        return array

    def allgather(self, value):
        return [value]

    def broadcast(self, value, root=0):
        return value


LOCAL = LocalCollective()


class CollectiveError(RuntimeError):
    """Another rank failed or the exchange timed out: training cannot go on."""


class ThreadGroup:
    """``world_size`` ranks as threads of this process, meeting at a barrier.

    ``run(fn)`` calls ``fn(collective)`` in one thread per rank and returns their results
    in rank order; if any rank raises, the others are released (``CollectiveError``) and
    the first exception is raised again.
    """

    def __init__(self, world_size, timeout=120.0):
        if world_size < 1:
            raise ValueError(f"world_size must be >= 1, got {world_size}")
        self.world_size = world_size
        self.timeout = timeout
        self._barrier = threading.Barrier(world_size)
        self._slots = [None] * world_size

    def exchange(self, rank, value):
        """Every rank's ``value``, in rank order, once all ranks have given theirs."""
        self._slots[rank] = value
        self._wait()
        values = list(self._slots)
        self._wait()  # nobody overwrites a slot before everyone has read them all
        return values

    def _wait(self):
        try:
            self._barrier.wait(self.timeout)
        except threading.BrokenBarrierError:
            raise CollectiveError("another rank failed or the exchange timed out") from None

    def run(self, fn):
        results = [None] * self.world_size
        errors = [None] * self.world_size

        def target(rank):
            try:
                results[rank] = fn(ThreadCollective(self, rank))
            except BaseException as err:  # noqa: BLE001 - re-raised below
                errors[rank] = err
                self._barrier.abort()

        threads = [threading.Thread(target=target, args=(r,)) for r in range(self.world_size)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        first = next((e for e in errors if e is not None and not isinstance(e, CollectiveError)),
                     next((e for e in errors if e is not None), None))
        if first is not None:
            raise first
        return results


class ThreadCollective:
    """One rank of a ``ThreadGroup``."""

    def __init__(self, group, rank):
        self.group, self.rank, self.world_size = group, rank, group.world_size

    def allreduce(self, array, op="sum"):
        array = np.asarray(array)
        check_op(array, op)
        return reduce_parts(self.group.exchange(self.rank, array.copy()), op)

    def allgather(self, value):
        return self.group.exchange(self.rank, value)

    def broadcast(self, value, root=0):
        return self.group.exchange(self.rank, value)[root]
