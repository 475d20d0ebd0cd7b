"""NCCL between GPU ranks (``gbm.dask.nccl``): when it is chosen, what goes through it,
that training over it gives the local model, and that a stop or a timeout frees a rank.

No GPU is needed: ``fake_gpu`` stands in for CuPy and ``fake_nccl`` for CuPy's NCCL (the
ranks are threads of ``gbm.collective.ThreadGroup``; the fake all-reduce reads and writes
the fake device memory through the pointers NCCL would get). This tests gbm's choice and
plumbing, not NCCL itself: the path has not run on GPUs.
"""
import threading

import numpy as np
import pytest

from tests.support import fake_gpu
from tests.support import fake_nccl
from tests.support.fake_gpu import FakeDeviceArray, device

import gbm
from gbm.dask import nccl as dask_nccl
from gbm.callback import TrainingCallback
from gbm.collective import CollectiveError, ThreadGroup

PARAMS = {"max_depth": 3, "max_bin": 32, "bin_sample_size": 500, "learning_rate": 0.3}


@pytest.fixture
def rank_of_thread():
    return threading.local()


@pytest.fixture
def nccl(monkeypatch, rank_of_thread):
    """Fake GPU and NCCL; each thread's rank has its own GPU."""
    fake_gpu.install(monkeypatch)
    return fake_nccl.install(monkeypatch, lambda: ("node-a", f"GPU-{rank_of_thread.rank}"))


def test_nccl_only_when_every_rank_has_a_gpu_of_its_own():
    a, b, c = ("node-a", "GPU-0"), ("node-a", "GPU-1"), ("node-b", "GPU-0")
    assert dask_nccl.choose([a, b, c])[0] == "nccl"  # the same PCI id on another host
    path, reason = dask_nccl.choose([a, b, a])
    assert path == "host" and "ranks 0 and 2 share GPU GPU-0 on node-a" in reason
    path, reason = dask_nccl.choose([a, None, c])
    assert path == "host" and "rank(s) [1] have no GPU with CuPy's NCCL" in reason
    assert dask_nccl.choose([a])[0] == "host"


def test_without_cupy_there_is_no_nccl(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    assert dask_nccl.nccl_module() is None and dask_nccl.device_identity() is None


def _ranks(n, rank_of_thread, fn):
    def body(c):
        rank_of_thread.rank = c.rank
        return fn(c)

    return ThreadGroup(n, timeout=60).run(body)


def test_device_arrays_go_through_nccl_and_the_rest_through_the_host(nccl, rank_of_thread):
    def body(c):
        col, path, _ = dask_nccl.device_collective(c)
        r = c.rank
        hist = device(np.arange(12, dtype=np.int64).reshape(2, 3, 2) * (r + 1))
        out = {"sum": col.allreduce(hist, "sum"),
               "max": col.allreduce(device(np.array([0.5, -1.0]) * (r - 1)), "max"),
               "any": col.allreduce(device(np.array([r == 2, False])), "sum"),
               "min": col.allreduce(device(np.array([7, r], dtype=np.uint8)), "min"),
               "host": col.allreduce(np.array([r], dtype=np.int64), "sum"),
               "gather": col.allgather(r)}
        col.close()
        return path, out

    results = _ranks(3, rank_of_thread, body)
    assert {path for path, _ in results} == {"nccl"}
    for _, out in results:
        for name in ("sum", "max", "any", "min"):
            assert isinstance(out[name], FakeDeviceArray), name  # stays on the device
        np.testing.assert_array_equal(out["sum"].get(),
                                      np.arange(12).reshape(2, 3, 2) * 6)
        np.testing.assert_array_equal(out["max"].get(), [0.5, 1.0])
        assert out["any"].get().tolist() == [True, False]
        assert out["min"].get().tolist() == [7, 0]
        assert isinstance(out["host"], np.ndarray) and out["host"].tolist() == [3]
        assert out["gather"] == [0, 1, 2]
    assert nccl.calls == [("int64", 0, 12), ("float64", 1, 2), ("uint8", 1, 2),
                          ("uint8", 2, 2)]  # bool "sum" is NumPy's: any, as max of uint8
    assert {comm.state for comm in nccl.communicators} == {"destroyed"}


def test_ranks_sharing_a_gpu_keep_the_host_path(nccl, rank_of_thread, monkeypatch):
    monkeypatch.setattr(dask_nccl, "device_identity", lambda: ("node-a", "GPU-0"))
    results = _ranks(2, rank_of_thread, lambda c: dask_nccl.device_collective(c))
    for (col, path, reason), rank in zip(results, range(2)):
        assert path == "host" and "share GPU GPU-0" in reason
        assert not isinstance(col, dask_nccl.NcclCollective)
    assert nccl.communicators == []


@pytest.mark.parametrize("bounds", [(0, 700, 1500), (0, 0, 1500)])  # uneven; a rank empty
def test_training_over_nccl_gives_the_local_model(nccl, rank_of_thread, bounds):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 4)).astype(np.float32)
    X[rng.uniform(size=X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2 + rng.normal(size=1500)
    local = gbm.train(PARAMS, X, y, 3).to_json()

    def body(c):
        col, path, _ = dask_nccl.device_collective(c)
        lo, hi = bounds[c.rank], bounds[c.rank + 1]
        model = gbm.train(dict(PARAMS, device="cuda"), device(X[lo:hi]), y[lo:hi], 3,
                          collective=col, row_ids=np.arange(lo, hi))
        col.close()
        return path, model.to_json()

    results = _ranks(2, rank_of_thread, body)
    assert [path for path, _ in results] == ["nccl", "nccl"]
    assert all(model == local for _, model in results)
    assert nccl.calls and {dtype for dtype, _, _ in nccl.calls} == {"int64"}  # histograms


class _Host:
    """A host collective whose training another rank stopped."""

    rank, world_size = 0, 2

    def __init__(self, reason=None):
        self.reason = reason

    def failure(self):
        return self.reason


class _Comm:
    def __init__(self):
        self.state = "open"

    def allReduce(self, *args):
        pass  # queued; its event never completes: a peer is gone

    def abort(self):
        self.state = "aborted"


def _stuck_cupy():
    event = type("Event", (), {"done": False, "record": lambda self, stream: None})
    cuda = type("cuda", (), {"get_current_stream": staticmethod(fake_nccl._Stream),
                             "Event": staticmethod(lambda disable_timing: event())})
    module = type("cupy", (), dict(vars(fake_gpu.fake_cupy)))
    module.cuda = cuda
    return module


@pytest.mark.parametrize("reason", ["worker tcp://x left the cluster", None])
def test_a_stop_or_a_timeout_aborts_a_waiting_nccl_call(reason):
    comm = _Comm()
    col = dask_nccl.NcclCollective(_Host(reason), comm, fake_nccl.FakeNccl(), _stuck_cupy(),
                                   timeout=0.2)
    with pytest.raises(CollectiveError, match=reason or "NCCL all-reduce timed out after 0.2 s"):
        col.allreduce(device(np.zeros(4, np.int64)))
    assert comm.state == "aborted"
    col.close(failed=True)  # nothing left to free


def test_a_rank_that_cannot_join_says_so(nccl, rank_of_thread, monkeypatch):
    def refuse(n, uid, rank):
        raise OSError("NCCL WARN bootstrap: no socket interface found")

    monkeypatch.setattr(nccl, "NcclCommunicator", refuse)
    with pytest.raises(RuntimeError, match="rank 0 could not join the NCCL communicator: "
                                           "OSError: NCCL WARN bootstrap"):
        _ranks(1, rank_of_thread, lambda c: dask_nccl._join(nccl, c, (1,), 5.0))


class _Gone(BaseException):
    """A rank whose worker is lost (it stops without a word, as a killed process)."""


class _LoseRankAt(TrainingCallback):
    def __init__(self, rank, epoch):
        self.rank, self.epoch = rank, epoch

    def before_iteration(self, booster, epoch, evals_log):
        if epoch == self.epoch and threading.current_thread().gbm_rank == self.rank:
            raise _Gone()
        return False


def _share(X, y, lo, hi):
    """A rank's share as ``gbm.dask.data.plan`` makes it, with the partitions' values."""
    empty = {"X": device(X[:0]), "y": y[:0]}
    return {"X": [device(X[lo:hi])], "y": [y[lo:hi]], "empty": empty, "ranges": [(lo, hi)]}


def test_a_lost_rank_s_survivors_rebuild_the_nccl_communicator(nccl, rank_of_thread,
                                                               monkeypatch):
    """``gbm.dask.training._train_rank`` over NCCL: a rank lost in round 3 stops the
    other, which aborts its communicator and reports the state of round 3; the next
    attempt (another split of the rows) joins a new communicator and ends with the
    local model."""
    import gbm.dask.training as dask_training
    from gbm.cluster.errors import RankStopped

    monkeypatch.setattr(dask_training, "worker_threads", lambda: 1)  # no Dask worker here
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1500, 4)).astype(np.float32)
    y = X[:, 0] - X[:, 1] ** 2 + rng.normal(size=1500)
    local = gbm.train(PARAMS, X, y, 6).to_json()
    spec = dict(params=dict(PARAMS, device="cuda"), num_boost_round=6,
                early_stopping_rounds=None, checkpoint_dir=None, fingerprint=None,
                resume=None, kwargs={"callbacks": [_LoseRankAt(1, 3)]})
    stopped = {}

    def attempt(bounds, spec):
        def body(c):
            rank_of_thread.rank = c.rank
            threading.current_thread().gbm_rank = c.rank
            share = _share(X, y, bounds[c.rank], bounds[c.rank + 1])
            try:
                return dask_training._train_rank(c, share, [], spec)
            except RankStopped as err:
                stopped[c.rank] = err
                return None

        return ThreadGroup(2, timeout=60).run(body)

    with pytest.raises(_Gone):
        attempt((0, 700, 1500), spec)
    state = stopped[0].state
    assert state.rounds == 3 and state.end == 6 and list(stopped) == [0]
    first = list(nccl.communicators)
    assert len(first) == 2 and {comm.state for comm in first} == {"aborted"}
    nccl.calls.clear()
    results = attempt((0, 1100, 1500), dict(spec, resume=state, kwargs={}))
    assert results[0][0].to_json() == local and results[0][1] == results[1][1]
    assert [r[2]["device_allreduce"] for r in results] == ["nccl", "nccl"]
    second = nccl.communicators[2:]
    assert len(second) == 2 and {comm.state for comm in second} == {"destroyed"}
    assert nccl.calls  # the new communicator carried the histograms of rounds 3 to 5
