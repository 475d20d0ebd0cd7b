"""Recovery when the only copy of a partition is data the client scattered
(``client.scatter``: no graph to compute it from) and its worker hangs rather than dies:
the hung worker is left out of the ranks, but Dask still fetches its data from it, so the
fit goes on without it and ends with the local model (``gbm.dask.recovery``; a worker
that died with such data fails the fit at once: ``tests/test_dask_recovery.py``).

The hang is a callback that waits on a Dask ``Event`` on one worker after round 1: it
lasts until the test sets the event, after the fit, whatever the machine's load."""
import numpy as np
import pytest

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

from distributed import Event, wait  # noqa: E402

import gbm  # noqa: E402
import gbm.dask  # noqa: E402
from gbm.callback import TrainingCallback  # noqa: E402
from gbm.dask.spmd import alive_workers  # noqa: E402
from tests.support.dask_cases import PARAMS, client, regression_data  # noqa: E402,F401

_HANG_LIMIT_S = 120.0  # a hang the test never released ends by itself


class _HangUntilReleased(TrainingCallback):
    """On the worker ``address``, after round 1: waits for event ``name`` (alive, but
    not answering its peers)."""

    def __init__(self, address, name):
        self.address, self.name = address, name

    def after_iteration(self, booster, epoch, evals_log):
        from distributed import get_worker

        if epoch == 1 and get_worker().address == self.address:
            Event(self.name).wait(_HANG_LIMIT_S)
        return False


def _scattered(client, X, y, holders):
    """``X`` and ``y`` as dask arrays of two row halves, each half scattered to one
    worker of ``holders`` (its only copy); and the scattered futures, by holder."""
    half = X.shape[0] // 2
    parts, futures = [], {}
    for rows, worker in ((slice(0, half), holders[0]), (slice(half, None), holders[1])):
        futures[worker] = [client.scatter(v[rows], workers=[worker]) for v in (X, y)]
        parts.append([da.from_delayed(f, shape=v[rows].shape, dtype=v.dtype)
                      for f, v in zip(futures[worker], (X, y))])
    wait([f for pair in futures.values() for f in pair])
    return [da.concatenate([pair[i] for pair in parts]) for i in (0, 1)], futures


def test_a_hung_worker_holding_scattered_data_is_left_behind(client):
    client.wait_for_workers(2, timeout=120)
    workers = sorted(alive_workers(client))
    hung = workers[1]
    X, y = regression_data(7)
    local = gbm.train(PARAMS, X, y, 5)
    (dX, dy), futures = _scattered(client, X, y, workers)
    for worker, pair in futures.items():  # one copy each, on its holder
        assert all(list(where) == [worker] for where in client.who_has(pair).values())
    # the workers load their kernels in their first fit: not within the short timeout
    gbm.dask.train(client, PARAMS, dX, dy, 1, balance=False)
    stats, release = {}, Event("release-hung-rank")
    try:
        model = gbm.dask.train(client, PARAMS, dX, dy, 5, balance=False,
                               callbacks=[_HangUntilReleased(hung, release.name)],
                               collective_timeout=2.0, transport="dask", _stats=stats)
    finally:
        release.set()
    assert model.to_json() == local.to_json()
    (record,) = stats["recoveries"]
    assert record["workers"] == [hung] and "timed out after 2 s" in record["reason"]
    assert record["workers_after"] == [workers[0]]
