"""A fit that loses workers goes on without them and ends with the model, best round and
eval scores of an uninterrupted fit (``gbm.dask.recovery``, ``max_recoveries``).

Workers die by SIGKILLing themselves at a chosen point (a callback, a custom objective,
or a patched function on that worker only), so every kill happens where the test says,
whatever the load; the nanny of the ``LocalCluster`` starts a replacement on a new
address. One 2-worker cluster for the module; each test waits for its 2 workers first.
The reference is local ``gbm.train`` (the Dask model is the local one, byte for byte:
``tests/test_dask.py``), and one test compares with an uninterrupted Dask fit as well.
"""
import os
import signal
import sys
import time

import numpy as np
import pytest

pytest.importorskip("distributed")
dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import cloudpickle  # noqa: E402  (a dependency of distributed)
from distributed import Client, LocalCluster, wait  # noqa: E402

import gbm  # noqa: E402
import gbm.dask  # noqa: E402
from gbm.dask.spmd import alive_workers  # noqa: E402
from gbm.callback import TrainingCallback  # noqa: E402
from gbm.collective import CollectiveError  # noqa: E402
from gbm.sklearn import GBMClassifier  # noqa: E402

PARAMS = {"max_depth": 3, "max_bin": 32, "bin_sample_size": 1000, "learning_rate": 0.5}
CHUNKS = (700, 0, 1100, 600)


@pytest.fixture(scope="module")
def client():
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/
    # a killed worker's replacement imports gbm before it joins: on a loaded machine that
    # can take longer than the 15 s after which a LocalCluster gives up on it for good
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "600s"}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


@pytest.fixture
def workers(client):
    """The cluster's 2 workers (a killed one's replacement included), in rank order; the
    test leaves the cluster whole again (a killed worker's replacement has joined)."""
    client.wait_for_workers(2, timeout=120)
    yield sorted(alive_workers(client))
    client.wait_for_workers(2, timeout=120)


def _data(seed=0, n=2400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)).astype(np.float32)
    X[rng.uniform(size=X.shape) < 0.03] = np.nan
    return X, np.nan_to_num(X[:, 0]) + np.sin(np.nan_to_num(X[:, 1])) + rng.normal(size=n)


def _dask(*arrays, chunks=CHUNKS):
    return [da.from_array(a, chunks=(chunks,) + a.shape[1:]) for a in arrays]


def _die():
    os.kill(os.getpid(), signal.SIGKILL)


def _here():
    from distributed import get_worker

    return get_worker().address


class _KillAt(TrainingCallback):
    """SIGKILLs the worker ``address`` at round ``epoch``: before the round starts (the
    other ranks are in its first exchange) or after it (once its scores are made)."""

    def __init__(self, address, epoch, before=True):
        self.address, self.epoch, self.before = address, epoch, before

    def before_iteration(self, booster, epoch, evals_log):
        if self.before and epoch == self.epoch and _here() == self.address:
            _die()
        return False

    def after_iteration(self, booster, epoch, evals_log):
        if not self.before and epoch == self.epoch and _here() == self.address:
            _die()
        return False


def _check_record(record, worker, round_):
    assert record["workers"] == [worker]
    assert record["round"] == round_
    assert worker not in record["workers_after"]
    assert record["seconds_lost"] >= record["work_lost_s"] >= 0.0
    assert record["restart_s"] is not None and record["restart_s"] >= 0.0


def test_a_worker_lost_in_a_round_with_eval_sets_and_early_stopping(client, workers, caplog):
    X, y = _data()
    Xv, yv = _data(1, n=600)
    local = gbm.train(PARAMS, X, y, 60, evals=[(Xv, yv, "v")], early_stopping_rounds=3)
    assert local.num_boosted_rounds < 60  # it stops early: the count must survive the loss
    dX, dy = _dask(X, y)
    kw = dict(evals=[tuple(_dask(Xv, yv, chunks=(300, 300))) + ("v",)],
              early_stopping_rounds=3)
    uninterrupted = gbm.dask.train(client, PARAMS, dX, dy, 60, **kw)
    stats = {}
    with caplog.at_level("WARNING", logger="gbm.dask"):
        model = gbm.dask.train(client, PARAMS, dX, dy, 60, callbacks=[_KillAt(workers[1], 4)],
                               _stats=stats, **kw)
    for reference in (local, uninterrupted):
        assert model.to_json() == reference.to_json()
        assert model.best_iteration == reference.best_iteration
        assert model.best_score == reference.best_score
        assert model.evals_result == reference.evals_result
    (record,) = stats["recoveries"]
    _check_record(record, workers[1], 4)
    assert record["ranks"] == [1]
    (logged,) = [r.getMessage() for r in caplog.records if r.name == "gbm.dask"]
    assert f"lost worker(s) {workers[1]} (rank(s) [1]) in round 4" in logged
    assert "going on from round 4 on " in logged and "s of work thrown away" in logged


def test_rank_0s_worker_lost_in_a_dart_fit(client, workers):
    X, y = _data(2)
    Xv, yv = _data(3, n=600)
    params = dict(PARAMS, booster="dart", rate_drop=0.3, subsample=0.8, learning_rate=0.3)
    local = gbm.train(params, X, y, 8, evals=[(Xv, yv, "v")])
    stats = {}
    model = gbm.dask.train(client, params, *_dask(X, y), 8,
                           evals=[tuple(_dask(Xv, yv, chunks=(600,))) + ("v",)],
                           callbacks=[_KillAt(workers[0], 5, before=False)], _stats=stats)
    assert model.to_json() == local.to_json()  # tree weights included
    assert model.evals_result == local.evals_result
    (record,) = stats["recoveries"]
    _check_record(record, workers[0], 6)  # its round 5 was complete on the other rank
    assert record["ranks"] == [0]


class _KillingObjective:
    """Squared error that SIGKILLs the worker ``address`` in round ``epoch``'s
    gradients: the other rank is growing that round's trees when it notices."""

    def __init__(self, address, epoch):
        self.address, self.epoch, self.calls = address, epoch, 0

    def __call__(self, margin, y, w):
        if self.calls == self.epoch and _here() == self.address:
            _die()
        self.calls += 1
        return margin - y, np.ones_like(margin)


def _kill_when_binning():
    """On one worker: the next fit's binning SIGKILLs it (its replacement is a fresh
    process, without this patch)."""
    import gbm.training.prepare as prepare

    def _bin(*args, **kwargs):
        _die()

    prepare._bin = _bin
    return True


def test_a_worker_lost_while_binning(client, workers):
    X, y = _data(5)
    Xv, yv = _data(6, n=600)
    local = gbm.train(PARAMS, X, y, 4, evals=[(Xv, yv, "v")])
    assert client.run(_kill_when_binning, workers=[workers[1]]) == {workers[1]: True}
    stats = {}
    model = gbm.dask.train(client, PARAMS, *_dask(X, y), 4,
                           evals=[tuple(_dask(Xv, yv, chunks=(250, 350))) + ("v",)],
                           _stats=stats)
    assert model.to_json() == local.to_json()
    assert model.evals_result == local.evals_result
    (record,) = stats["recoveries"]
    _check_record(record, workers[1], 0)


def test_base_margins_of_the_data_and_an_eval_set_survive_a_loss(client, workers):
    X, y = _data(18)
    Xv, yv = _data(19, n=600)
    y, yv = (np.floor(np.exp(np.clip(v, -3, 3) / 2)) for v in (y, yv))
    offset, offset_v = (np.log1p(np.abs(np.nan_to_num(v[:, 3]))) for v in (X, Xv))
    params = dict(PARAMS, objective="count:poisson")
    local = gbm.train(params, X, y, 6, base_margin=offset,
                      evals=[{"X": Xv, "y": yv, "name": "v", "base_margin": offset_v}])
    dX, dy, doffset = _dask(X, y, offset)
    dXv, dyv, doffset_v = _dask(Xv, yv, offset_v, chunks=(250, 350))
    stats = {}
    model = gbm.dask.train(client, params, dX, dy, 6, base_margin=doffset, _stats=stats,
                           evals=[{"X": dXv, "y": dyv, "name": "v", "base_margin": doffset_v}],
                           callbacks=[_KillAt(workers[1], 3)])
    assert model.to_json() == local.to_json()
    assert model.evals_result == local.evals_result
    _check_record(stats["recoveries"][0], workers[1], 3)


class _HangAt(TrainingCallback):
    """Sleeps on the worker ``address`` after round 1 (alive, but not answering)."""

    def __init__(self, address, seconds):
        self.address, self.seconds = address, seconds

    def after_iteration(self, booster, epoch, evals_log):
        if epoch == 1 and _here() == self.address:
            time.sleep(self.seconds)  # the hang being simulated, not a synchronisation
        return False


def test_a_hung_worker_is_left_behind(client, workers):
    X, y = _data(7)
    local = gbm.train(PARAMS, X, y, 5)
    # a worker that replaced a killed one loads its kernels in its first fit: not within
    # the short timeout below on a loaded machine
    gbm.dask.train(client, PARAMS, *_dask(X, y), 1)
    stats = {}
    model = gbm.dask.train(client, PARAMS, *_dask(X, y), 5, callbacks=[_HangAt(workers[1], 8.0)],
                           collective_timeout=2.0, transport="dask", _stats=stats)
    assert model.to_json() == local.to_json()
    record = stats["recoveries"][0]
    assert record["workers"] == [workers[1]] and "timed out after 2 s" in record["reason"]
    # the hung worker stays out of this fit (it holds data the others fetch from it)
    assert all(workers[1] not in r["workers_after"] for r in stats["recoveries"])


def test_more_losses_than_max_recoveries_fail(client, workers):
    X, y = _data(8)
    with pytest.raises(CollectiveError, match="after 1 recoveries: max_recoveries=1"):
        gbm.dask.train(client, PARAMS, *_dask(X, y), 8, max_recoveries=1,
                       callbacks=[_KillAt(workers[1], 2), _KillAt(workers[0], 4)])


def test_max_recoveries_0_fails_at_the_first_loss(client, workers):
    X, y = _data(9)
    with pytest.raises(CollectiveError, match="left the cluster|closed its connection"):
        gbm.dask.train(client, PARAMS, *_dask(X, y), 8, max_recoveries=0,
                       callbacks=[_KillAt(workers[1], 2)])


@pytest.mark.parametrize("how", ["scattered", "restricted"])
def test_data_that_cannot_be_had_again_fails_at_once(client, workers, how):
    X, y = _data(10)
    victim = workers[1]
    halves = [(X[:1200], y[:1200], workers[0]), (X[1200:], y[1200:], victim)]
    if how == "scattered":  # no graph: Dask cannot compute it again
        parts = [[da.from_delayed(client.scatter(v, workers=[w]), shape=v.shape, dtype=v.dtype)
                  for v in (a, b)] for a, b, w in halves]
        why = "no graph to compute it from"
    else:  # a graph, but only the victim may compute it
        parts = [[client.persist(da.from_array(v), workers=[w]) for v in (a, b)]
                 for a, b, w in halves]
        why = "only on workers that are gone"
    wait([v for pair in parts for v in pair])
    dX, dy = (da.concatenate([pair[i] for pair in parts]) for i in (0, 1))
    with pytest.raises(CollectiveError, match="cannot be had again") as err:
        gbm.dask.train(client, PARAMS, dX, dy, 6, callbacks=[_KillAt(victim, 2)], balance=False)
    assert why in str(err.value)
    assert "partition 1 of X (rows 1200 to 2399)" in str(err.value)


@pytest.mark.parametrize("bad", [-1, True, 1.5, "2", None])
def test_max_recoveries_is_checked(bad):
    X, y = _data(11, n=100)
    dX, dy = _dask(X, y, chunks=(100,))
    message = f"max_recoveries must be an integer >= 0 .*got {bad!r}"
    with pytest.raises(ValueError, match=message):  # before the cluster is asked anything
        gbm.dask.train(None, PARAMS, dX, dy, 2, max_recoveries=bad)
    with pytest.raises(ValueError, match=message):
        gbm.dask.DaskGBMRegressor(n_estimators=2, max_recoveries=bad).fit(dX, dy)
    with pytest.raises(ValueError, match=message):
        gbm.dask.DaskRidge(max_recoveries=bad).fit(dX, dy)


def test_the_estimator_recovers_with_early_stopping(client, workers):
    X, y = _data(12)
    Xv, yv = _data(13, n=900)
    y, yv = (y > 0.5).astype(int), (yv > 0.5).astype(int)
    kw = dict(n_estimators=40, max_depth=3, max_bin=32, learning_rate=0.5,
              early_stopping_rounds=3, eval_metric="logloss")
    local = GBMClassifier(**kw).fit(X, y, eval_set=[(Xv, yv)])
    est = gbm.dask.DaskGBMClassifier(**kw)
    assert est.get_params()["max_recoveries"] == 3  # the default, as gbm.dask.train's
    est.fit(*_dask(X, y), eval_set=[tuple(_dask(Xv, yv, chunks=(400, 500)))],
            callbacks=[_KillAt(workers[0], 3)])
    assert est.get_booster().to_json() == local.get_booster().to_json()
    assert est.best_iteration == local.best_iteration
    assert est.evals_result() == local.evals_result()
    assert len(est.recoveries_) == 1 and est.recoveries_[0]["workers"] == [workers[0]]
    assert not hasattr(est.to_local(), "recoveries_")


def _kill_at_exchange(n):
    """On one worker: its next linear fit's rank SIGKILLs it at its ``n``-th exchange."""
    import gbm.dask.linear as linear

    fit_rank = linear._fit_rank

    class Dying:
        def __init__(self, collective):
            self.collective, self.count = collective, 0
            self.rank, self.world_size = collective.rank, collective.world_size

        def _tick(self):
            self.count += 1
            if self.count == n:
                _die()

        def allreduce(self, array, op="sum"):
            self._tick()
            return self.collective.allreduce(array, op)

        def allgather(self, value):
            self._tick()
            return self.collective.allgather(value)

        def broadcast(self, value, root=0):
            self._tick()
            return self.collective.broadcast(value, root)

    linear._fit_rank = lambda collective, *args: fit_rank(Dying(collective), *args)
    return True


def test_a_linear_model_fits_again_on_the_workers_left(client, workers):
    rng = np.random.default_rng(14)
    X = rng.normal(size=(2000, 6))
    y = (X @ rng.normal(size=6) + rng.normal(size=2000) > 0).astype(float)
    dX, dy = da.from_array(X, chunks=(500, 6)), da.from_array(y, chunks=500)
    uninterrupted = gbm.dask.DaskLogisticRegression(C=1.0, tol=1e-8).fit(dX, dy)
    assert uninterrupted.recoveries_ == []
    assert client.run(_kill_at_exchange, 6, workers=[workers[1]]) == {workers[1]: True}
    est = gbm.dask.DaskLogisticRegression(C=1.0, tol=1e-8).fit(dX, dy)
    assert len(est.recoveries_) == 1 and est.recoveries_[0]["workers"] == [workers[1]]
    assert est.duality_gap_ <= 1e-8 * est.objective_  # certified, as every fit
    np.testing.assert_allclose(est.coef_, uninterrupted.coef_, rtol=1e-4, atol=1e-6)


class _NotAgain(TrainingCallback):
    """Raises if a worker other than ``address`` trains a round before ``first`` (the
    fit started again from scratch, not from the checkpoint)."""

    def __init__(self, address, first):
        self.address, self.first = address, first

    def before_iteration(self, booster, epoch, evals_log):
        if epoch < self.first and _here() != self.address:
            raise RuntimeError(f"round {epoch} trained again")
        return False


def test_a_fit_that_lost_every_rank_goes_on_from_checkpoint_dir(client, workers, tmp_path):
    X, y = _data(17)
    local = gbm.train(PARAMS, X, y, 8).to_json()
    a = workers[0]  # the one rank; another worker goes on from its checkpoint of round 4
    stats = {}
    model = gbm.dask.train(client, PARAMS, *_dask(X, y), 8, workers=[a],
                           checkpoint_dir=str(tmp_path), _stats=stats,
                           callbacks=[_KillAt(a, 4, before=False), _NotAgain(a, 5)])
    assert model.to_json() == local
    (record,) = stats["recoveries"]
    assert record["workers"] == [a] and len(record["workers_after"]) == 1
    assert a not in record["workers_after"]  # the other worker, or a's replacement
    assert record["round"] == 0  # no survivor held a state: the file did


def test_two_workers_lost_one_after_the_other_with_a_spare(client, workers):
    # last of the cluster tests: it adds a third worker, the spare, to the module's cluster
    X, y = _data(4)
    local = gbm.train(PARAMS, X, y, 8, obj=_KillingObjective(None, -1))
    client.cluster.scale(3)
    client.wait_for_workers(3, timeout=120)
    a, b = workers  # the fit's 2 ranks; the spare joins at the first loss
    stats = {}
    model = gbm.dask.train(client, PARAMS, *_dask(X, y), 8, workers=[a, b],
                           obj=_KillingObjective(b, 2), callbacks=[_KillAt(a, 5)],
                           _stats=stats)
    assert model.to_json() == local.to_json()
    first, second = stats["recoveries"]
    _check_record(first, b, 2)
    assert len(first["workers_after"]) == 2  # a and the spare (or b's replacement)
    _check_record(second, a, 5)  # the spare's rank held round 5 when a was lost


# -- without a cluster -----------------------------------------------------------------
class _StopAfterScores(TrainingCallback):
    """Raises CollectiveError in round ``epoch`` after its trees and scores exist (as a
    lost peer would, in the exchange after them)."""

    def __init__(self, epoch):
        self.epoch = epoch

    def after_iteration(self, booster, epoch, evals_log):
        if epoch == self.epoch:
            raise CollectiveError("a peer was lost")
        return False


@pytest.mark.parametrize("params", [PARAMS, dict(PARAMS, booster="dart", rate_drop=0.5)])
def test_a_stopped_rank_keeps_its_last_completed_round(params):
    from gbm.cluster.progress import Progress

    X, y = _data(15, n=800)
    Xv, yv = _data(16, n=300)
    kw = dict(evals=[(Xv, yv, "v")], early_stopping_rounds=50)
    progress = Progress(50)
    before = time.time()
    with pytest.raises(CollectiveError):  # round 4 trained and scored, then stopped
        gbm.train(params, X, y, 10, callbacks=[_StopAfterScores(4), progress], **kw)
    state, times = progress.state(), progress.times()
    assert times["partial_s"] >= 0.0 and times["first_round_at"] >= before
    four = gbm.train(params, X, y, 4, **kw)
    assert state.rounds == 4 and state.end == 10 and not state.stopped
    assert state.booster.to_json() == four.to_json()  # DART: round 4 rescaled weights back
    assert state.booster.evals_result == four.evals_result
    assert state.booster.best_iteration == four.best_iteration
    assert state.rounds_left() == 6


@pytest.mark.parametrize("params", [{"objective": "count:poisson"},
                                    {"objective": "multi:softprob", "num_class": 3}])
def test_a_fit_continued_with_base_margins_is_the_uninterrupted_one(params):
    """What a recovery relies on with base margins: the margins of the model so far
    start from each row's own base margin (predicted from the base and shifted, they
    differed in the last bits, and so did the trees after them)."""
    X, y = _data(20, n=1500)
    Xv, yv = _data(21, n=400)
    n_groups = params.get("num_class", 1)
    if n_groups == 1:
        y, yv = (np.floor(np.exp(np.clip(v, -3, 3) / 2)) for v in (y, yv))
    else:
        y, yv = (np.digitize(v, [-0.5, 0.5]).astype(float) for v in (y, yv))
    rng = np.random.default_rng(22)
    shape = (lambda n: (n,)) if n_groups == 1 else (lambda n: (n, n_groups))
    offset, offset_v = rng.normal(size=shape(1500)) / 3, rng.normal(size=shape(400)) / 3
    params = dict(PARAMS, **params)

    def fit(rounds, init=None):
        return gbm.train(params, X, y, rounds, base_margin=offset, init_model=init,
                         evals=[{"X": Xv, "y": yv, "name": "v", "base_margin": offset_v}])

    full, first = fit(8), fit(5)
    more = fit(3, init=first)
    assert more.to_json() == full.to_json()
    for metric, scores in full.evals_result["v"].items():
        assert first.evals_result["v"][metric] + more.evals_result["v"][metric] == scores

