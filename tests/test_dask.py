"""Training on a Dask cluster gives the local model, byte for byte, and fails fast.

One ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`` for the module
(worker processes are spawned: Numba's TBB layer is safe there); a test that needs 3
workers scales it up and back. The data are continuous with more rows than the binning
sample (``bin_sample_size``), so bin edges come from the hash-chosen sample.
"""
import math
import os
import signal
import threading
import time

import numpy as np
import pytest

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

from distributed import wait  # noqa: E402

import gbm  # noqa: E402
import gbm.dask  # noqa: E402
from gbm.dask.spmd import alive_workers  # noqa: E402
from gbm.callback import TrainingCallback  # noqa: E402
from gbm.collective import CollectiveError  # noqa: E402
from gbm.sklearn import GBMClassifier, GBMRanker, GBMRegressor  # noqa: E402
from tests.support.dask_cases import (N_ROWS, PARAMS, as_dask, client,  # noqa: E402,F401
                                     first_workers, regression_data, three_workers)


def test_same_model_on_one_two_and_three_workers(client):
    X, y = regression_data()
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=N_ROWS)
    local = gbm.train(PARAMS, X, y, 4, sample_weight=w).to_json()
    dX, dy, dw = as_dask(X, y, w)
    for n in (1, 2):
        model = gbm.dask.train(client, PARAMS, dX, dy, 4, sample_weight=dw,
                               workers=first_workers(client, n))
        assert model.to_json() == local, f"{n} workers"
    with three_workers(client):
        dX, dy, dw = as_dask(X, y, w, chunks=(300, 900, 200, 1000))
        model = gbm.dask.train(client, PARAMS, dX, dy, 4, sample_weight=dw)
        assert len(alive_workers(client)) == 3
        assert model.to_json() == local, "3 workers"


def test_a_worker_without_rows(client):
    X, y = regression_data(2)
    local = gbm.train(PARAMS, X, y, 3).to_json()
    a = first_workers(client, 1)
    dX, dy = (client.persist(v, workers=a) for v in as_dask(X, y))
    wait([dX, dy])
    assert {tuple(v) for v in client.who_has(dX).values()} == {tuple(a)}  # all on one worker
    model = gbm.dask.train(client, PARAMS, dX, dy, 3, balance=False)  # both are ranks
    assert model.to_json() == local


def test_blocks_stay_where_they_are_unless_unbalanced():
    from gbm.dask.data import assign_blocks, make_blocks

    lengths = [100, 100, 100, 100]
    keys = ["p0", "p1", "p2", "p3"]
    on_a = {k: ("a",) for k in keys}
    blocks = make_blocks(lengths)
    assert assign_blocks(blocks, keys, on_a, lengths, ["a", "b"], balance=False) == [0, 0, 0, 0]
    assert assign_blocks(blocks, keys, on_a, lengths, ["a", "b"]) == [0, 0, 1, 1]
    spread = {"p0": ("b",), "p1": ("a",), "p2": ("b",), "p3": ("a",)}
    assert assign_blocks(blocks, keys, spread, lengths, ["a", "b"]) == [1, 0, 1, 0]
    # a query group spanning partitions 1 and 2 keeps them together
    blocks = make_blocks(lengths, group=[100, 150, 50, 100])
    assert [b for b, _ in blocks] == [[0], [1, 2], [3]]
    assert [g for _, g in blocks] == [(0, 1), (1, 3), (3, 4)]
    summaries = [(100, 0, 1, 1), (100, 1, 2, 1), (0, None, None, 0), (100, 3, 3, 0)]
    blocks = make_blocks(lengths[:3] + [100], qid_summaries=summaries)
    assert [b for b, _ in blocks] == [[0, 1, 2], [3]]
    assert [g for _, g in blocks] == [(0, 3), (3, 4)]


def _labels(kind, y):
    if kind == "classes":
        return np.digitize(y, [-1.0, 1.0]).astype(float)
    if kind == "counts":
        return np.floor(np.exp(np.clip(y, -3, 3) / 2))
    if kind == "binary":
        return (y > 0).astype(float)
    if kind == "positive":
        return np.exp(np.clip(y, -3, 3) / 3)
    if kind == "two targets":
        return np.column_stack([y, np.sin(y)])
    return y


FAMILIES = {  # params beyond PARAMS, labels
    "reg:absoluteerror": ({"objective": "reg:absoluteerror"}, "real"),
    "reg:quantileerror": ({"objective": "reg:quantileerror", "quantile_alpha": [0.2, 0.7]},
                          "real"),
    "multi:softprob": ({"objective": "multi:softprob", "num_class": 3}, "classes"),
    "count:poisson": ({"objective": "count:poisson"}, "counts"),
    "reg:gamma": ({"objective": "reg:gamma"}, "positive"),
    "binary:logistic": ({"objective": "binary:logistic"}, "binary"),
    "two targets": ({}, "two targets"),
    "dart": ({"booster": "dart", "rate_drop": 0.5, "one_drop": True,
              "sample_type": "weighted", "subsample": 0.8}, "real"),
    "forest, sampled rows and columns": ({"num_parallel_tree": 3, "subsample": 0.7,
                                          "colsample_bynode": 0.6, "colsample_bytree": 0.8,
                                          "learning_rate": 1.0}, "real"),
    "lossguide, constraints": ({"grow_policy": "lossguide", "max_leaves": 6, "max_depth": 0,
                                "monotone_constraints": (1, 0, -1, 0, 0),
                                "interaction_constraints": [[0, 1], [2, 3, 4]]}, "real"),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_objective_families(client, family):
    extra, kind = FAMILIES[family]
    X, y = regression_data(3)
    y = _labels(kind, y)
    params = dict(PARAMS, **extra)
    local = gbm.train(params, X, y, 3).to_json()
    assert gbm.dask.train(client, params, *as_dask(X, y), 3).to_json() == local


def _by_hand(margin, y_, w):  # squared error: each rank's rows
    return margin - y_, np.ones_like(margin)


def _exact_mae(y_, pred, w):  # an exactly rounded sum: the same in any row order
    return "mae", math.fsum(np.abs(y_ - pred).tolist()) / len(y_)


def test_custom_objective_and_metric_drive_early_stopping(client):
    X, y = regression_data(11)
    Xv, yv = regression_data(12, n=600)
    params = dict(PARAMS, learning_rate=1.0)
    kw = dict(obj=_by_hand, custom_metric=_exact_mae, early_stopping_rounds=2)
    local = gbm.train(params, X, y, 30, evals=[(Xv, yv, "v")], **kw)
    model = gbm.dask.train(client, params, *as_dask(X, y), 30,
                           evals=[tuple(as_dask(Xv, yv, chunks=(200, 400))) + ("v",)], **kw)
    assert model.to_json() == local.to_json()
    assert model.evals_result == local.evals_result
    assert local.num_boosted_rounds < 30  # it stopped early


def test_base_margin_of_the_data_and_an_eval_set(client):
    X, y = regression_data(15)
    Xv, yv = regression_data(16, n=600)
    y = np.floor(np.exp(np.clip(y, -3, 3) / 2))
    yv = np.floor(np.exp(np.clip(yv, -3, 3) / 2))
    offset = np.log1p(np.abs(np.nan_to_num(X[:, 3])))  # log exposures
    offset_v = np.log1p(np.abs(np.nan_to_num(Xv[:, 3])))
    params = dict(PARAMS, objective="count:poisson")
    local = gbm.train(params, X, y, 3, base_margin=offset,
                      evals=[{"X": Xv, "y": yv, "name": "v", "base_margin": offset_v}])
    dX, dy, doffset = as_dask(X, y, offset)
    dXv, dyv, doffset_v = as_dask(Xv, yv, offset_v, chunks=(600,))
    model = gbm.dask.train(client, params, dX, dy, 3, base_margin=doffset,
                           evals=[{"X": dXv, "y": dyv, "name": "v", "base_margin": doffset_v}])
    assert model.to_json() == local.to_json()
    assert model.evals_result == local.evals_result
    with pytest.raises(TypeError, match="base_margin must be a dask array"):
        gbm.dask.train(client, params, dX, dy, 3, base_margin=offset)


def test_estimators_take_base_margins_of_the_data_and_the_eval_sets(client):
    X, y = regression_data(17)
    Xv, yv = regression_data(18, n=600)
    y, yv = (y > 0.5).astype(int), (yv > 0.5).astype(int)
    offset = np.nan_to_num(X[:, 3]) / 2
    offset_v = np.nan_to_num(Xv[:, 3]) / 2
    kw = dict(n_estimators=4, max_depth=3, max_bin=32, eval_metric="logloss")
    local = GBMClassifier(**kw).fit(X, y, base_margin=offset, eval_set=[(Xv, yv)],
                                    base_margin_eval_set=[offset_v])
    plain = GBMClassifier(**kw).fit(X, y, eval_set=[(Xv, yv)])
    assert local.get_booster().to_json() != plain.get_booster().to_json()  # margins used
    dX, dy, doffset = as_dask(X, y, offset)
    dXv, dyv, doffset_v = as_dask(Xv, yv, offset_v, chunks=(250, 350))
    est = gbm.dask.DaskGBMClassifier(**kw).fit(dX, dy, base_margin=doffset,
                                              eval_set=[(dXv, dyv)],
                                              base_margin_eval_set=[doffset_v])
    assert est.get_booster().to_json() == local.get_booster().to_json()
    assert est.evals_result() == local.evals_result()
    np.testing.assert_array_equal(est.to_local().predict_proba(Xv, base_margin=offset_v),
                                  local.predict_proba(Xv, base_margin=offset_v))


def test_ranker_eval_sets_with_their_query_ids(client):
    X, y = regression_data(19)
    Xv, yv = regression_data(20, n=600)
    rel, rel_v = np.clip(np.round(y), 0, 4), np.clip(np.round(yv), 0, 4)
    qid, qid_v = np.repeat(np.arange(120), 20), np.repeat(np.arange(30), 20)
    kw = dict(n_estimators=3, max_depth=3, max_bin=32, eval_metric="ndcg@5")
    local = GBMRanker(**kw).fit(X, rel, qid=qid, eval_set=[(Xv, rel_v)], eval_qid=[qid_v])
    dX, drel, dqid = as_dask(X, rel, qid, chunks=(1200, 1200))
    dXv, drel_v, dqid_v = as_dask(Xv, rel_v, qid_v, chunks=(300, 300))
    est = gbm.dask.DaskGBMRanker(**kw).fit(dX, drel, qid=dqid, eval_set=[(dXv, drel_v)],
                                          eval_qid=[dqid_v])
    assert est.get_booster().to_json() == local.get_booster().to_json()
    assert est.evals_result() == local.evals_result()


def _first_row_error(y_, pred, w):  # depends on which row comes first
    return "first", float(abs(y_[0] - pred[0]))


def test_a_custom_metric_sees_the_eval_rows_in_their_global_order(client):
    X, y = regression_data(13)
    Xv, yv = regression_data(14, n=600)
    local = gbm.train(PARAMS, X, y, 2, evals=[(Xv, yv, "v")], custom_metric=_first_row_error)
    a, b = first_workers(client, 2)
    dXv, dyv = as_dask(Xv, yv, chunks=(200, 400))
    # the first partition on rank 1, the second on rank 0
    parts = [client.persist(v.partitions[i], workers=[w]) for v in (dXv, dyv)
             for i, w in ((0, b), (1, a))]
    wait(parts)
    dXv, dyv = da.concatenate(parts[:2]), da.concatenate(parts[2:])
    model = gbm.dask.train(client, PARAMS, *as_dask(X, y), 2, evals=[(dXv, dyv, "v")],
                           custom_metric=_first_row_error, balance=False)
    assert model.evals_result == local.evals_result


def test_classifier_eval_set_early_stopping_and_predict(client):
    X, y = regression_data(4)
    y = (y > 0.5).astype(int)
    Xv, yv = regression_data(5, n=900)
    yv = (yv > 0.5).astype(int)
    kw = dict(n_estimators=40, max_depth=3, max_bin=32, learning_rate=0.5,
              early_stopping_rounds=3, eval_metric="logloss")
    local = GBMClassifier(**kw).fit(X, y, eval_set=[(Xv, yv)])
    dX, dy = as_dask(X, y)
    dXv, dyv = as_dask(Xv, yv, chunks=(400, 500))
    est = gbm.dask.DaskGBMClassifier(**kw).fit(dX, dy, eval_set=[(dXv, dyv)])
    assert est.get_booster().to_json() == local.get_booster().to_json()
    assert est.best_iteration == local.best_iteration < 39  # it stopped early
    assert est.evals_result() == local.evals_result()
    proba = est.predict_proba(dXv)
    assert isinstance(proba, da.Array)  # lazy
    np.testing.assert_array_equal(proba.compute(), local.predict_proba(Xv))
    np.testing.assert_array_equal(est.predict(dXv).compute(), local.predict(Xv))
    np.testing.assert_array_equal(est.to_local().predict_proba(Xv), local.predict_proba(Xv))


def test_regressor_on_a_dataframe_with_a_category_column(client):
    X, y = regression_data(6)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    df["c"] = pd.Categorical(np.random.default_rng(6).choice(["a", "b", "c", "d"], N_ROWS))
    y = y + (df["c"] == "b").to_numpy() * 2.0
    local = GBMRegressor(n_estimators=4, max_depth=3, max_bin=32).fit(df, y)
    ddf = dd.from_pandas(df, npartitions=3)
    dy = dd.from_pandas(pd.Series(y), npartitions=3)
    est = gbm.dask.DaskGBMRegressor(n_estimators=4, max_depth=3, max_bin=32,
                                    client=client).fit(ddf, dy)
    assert est.get_booster().to_json() == local.get_booster().to_json()
    pred = est.predict(ddf)
    np.testing.assert_array_equal(pred.compute().to_numpy(), local.predict(df))
    assert list(est.feature_names_in_) == list(df.columns)


def test_ranker_keeps_query_groups_whole(client):
    X, y = regression_data(7)
    rng = np.random.default_rng(7)
    sizes = rng.integers(5, 40, size=200)
    sizes = sizes[np.cumsum(sizes) <= N_ROWS]
    sizes[-1] += N_ROWS - sizes.sum()
    qid = np.repeat(np.arange(len(sizes)), sizes)
    rel = np.clip(np.round(y), 0, 4)
    dX, drel, dqid = as_dask(X, rel, qid, chunks=(703, 998, 699))  # groups span partitions
    for objective in ("rank:ndcg", "rank:pairwise"):
        kw = dict(n_estimators=3, max_depth=3, max_bin=32, objective=objective)
        local = GBMRanker(**kw).fit(X, rel, qid=qid)
        est = gbm.dask.DaskGBMRanker(**kw).fit(dX, drel, qid=dqid)
        assert est.get_booster().to_json() == local.get_booster().to_json(), objective


def test_nan_label_in_one_partition_gives_the_local_error(client):
    X, y = regression_data(8)
    y[1500] = np.nan
    with pytest.raises(ValueError) as local:
        gbm.train(PARAMS, X, y, 2)
    with pytest.raises(ValueError) as remote:
        gbm.dask.train(client, PARAMS, *as_dask(X, y), 2)
    assert str(remote.value) == str(local.value)
    assert "row 1500" in str(remote.value)


@pytest.mark.parametrize("n_estimators", [0, True, 2.0])
def test_n_estimators_is_checked_as_the_local_fit_checks_it(n_estimators):
    X, y = regression_data(9)
    dX, dy = as_dask(X, y)
    for cls, local in ((gbm.dask.DaskGBMRegressor, GBMRegressor),
                       (gbm.dask.DaskGBMClassifier, GBMClassifier)):
        with pytest.raises(ValueError) as expected:
            local(n_estimators=n_estimators).fit(X, y > 0)
        with pytest.raises(ValueError) as remote:  # before the cluster is asked anything
            cls(n_estimators=n_estimators).fit(dX, dy > 0)
        assert str(remote.value) == str(expected.value)
        assert "n_estimators must be an integer >= 1" in str(remote.value)


class _FailAt(TrainingCallback):
    def __init__(self, epoch):
        self.epoch = epoch

    def after_iteration(self, booster, epoch, evals_log):
        if epoch == self.epoch:
            raise RuntimeError(f"simulated crash after round {epoch}")
        return False


def test_checkpoint_resume_gives_the_uninterrupted_model(client, tmp_path):
    X, y = regression_data(9)
    dX, dy = as_dask(X, y)
    uninterrupted = gbm.dask.train(client, PARAMS, dX, dy, 6).to_json()
    with pytest.raises(RuntimeError, match="simulated crash after round 2"):
        gbm.dask.train(client, PARAMS, dX, dy, 6, checkpoint_dir=str(tmp_path),
                       callbacks=[_FailAt(2)])
    saved = gbm.dask.checkpoint.read(tmp_path).booster
    assert 1 <= saved.num_boosted_rounds < 6
    resumed = gbm.dask.train(client, PARAMS, dX, dy, 6, checkpoint_dir=str(tmp_path))
    assert resumed.to_json() == uninterrupted


def test_both_transports_give_the_local_model(client):
    X, y = regression_data(3)
    local = gbm.train(PARAMS, X, y, 3).to_json()
    dX, dy = as_dask(X, y)
    for transport, used in (("auto", "tcp"), ("dask", "dask")):
        stats = {}
        model = gbm.dask.train(client, PARAMS, dX, dy, 3, transport=transport, _stats=stats)
        assert model.to_json() == local, transport
        assert [r["transport"] for r in stats["ranks"]] == [used, used]
    with pytest.raises(ValueError, match="transport must be 'auto' or 'dask', got 'ucx'"):
        gbm.dask.train(client, PARAMS, dX, dy, 3, transport="ucx")


class _HangOn(TrainingCallback):
    """Sleeps on one worker after round 1 (a rank that hangs without dying)."""

    def __init__(self, address, seconds):
        self.address, self.seconds = address, seconds

    def after_iteration(self, booster, epoch, evals_log):
        from distributed import get_worker

        if epoch == 1 and get_worker().address == self.address:
            time.sleep(self.seconds)
        return False


@pytest.mark.parametrize("transport", ["auto", "dask"])
def test_a_hung_worker_fails_after_the_collective_timeout(client, transport):
    X, y = regression_data(11)
    dX, dy = as_dask(X, y)
    hung = first_workers(client, 2)[1]
    start = time.monotonic()
    with pytest.raises(CollectiveError, match=r"timed out after 1.5 s waiting for rank\(s\) \[1\]"):
        gbm.dask.train(client, PARAMS, dX, dy, 5, callbacks=[_HangOn(hung, 6.0)],
                       collective_timeout=1.5, transport=transport, max_recoveries=0)
    assert time.monotonic() - start < 1.5 + 30  # the timeout, a grace of 3 s, start-up
    time.sleep(6.0)  # the hung rank wakes, finds the training gone and ends
    model = gbm.dask.train(client, PARAMS, dX, dy, 2, transport=transport)
    assert model.to_json() == gbm.train(PARAMS, X, y, 2).to_json()  # the workers are free


def test_a_killed_worker_fails_within_seconds(client):
    # last in the module: the nanny restarts the killed worker on a new address
    X, y = regression_data(10)
    dX, dy = as_dask(X, y)
    pids = client.run(os.getpid)
    victim = pids[first_workers(client, 2)[1]]
    timer = threading.Timer(4.0, os.kill, (victim, signal.SIGKILL))
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(CollectiveError,
                           match="left the cluster|could not send|closed its connection"):
            gbm.dask.train(client, dict(PARAMS, max_depth=4), dX, dy, 100_000, max_recoveries=0)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - start
    assert 4.0 <= elapsed < 4.0 + 20, elapsed  # killed mid-training, noticed in seconds


class _KillAt(TrainingCallback):
    """SIGKILLs its own worker process after round ``epoch`` on one worker."""

    def __init__(self, address, epoch):
        self.address, self.epoch = address, epoch

    def after_iteration(self, booster, epoch, evals_log):
        from distributed import get_worker

        if epoch == self.epoch and get_worker().address == self.address:
            os.kill(os.getpid(), signal.SIGKILL)
        return False


def test_a_fit_killed_with_its_worker_resumes_to_the_uninterrupted_model(client, tmp_path):
    # after test_a_killed_worker_fails_within_seconds: the nanny restarts killed workers
    client.wait_for_workers(2, timeout=120)
    X, y = regression_data(12)
    uninterrupted = gbm.train(PARAMS, X, y, 8).to_json()  # the Dask model is the local one
    dX, dy = as_dask(X, y)
    victim = first_workers(client, 2)[1]
    with pytest.raises(CollectiveError):
        gbm.dask.train(client, PARAMS, dX, dy, 8, checkpoint_dir=str(tmp_path),
                       callbacks=[_KillAt(victim, 4)], max_recoveries=0)
    assert gbm.dask.checkpoint.read(tmp_path).booster.num_boosted_rounds in (4, 5)
    client.wait_for_workers(2, timeout=120)
    deadline = time.monotonic() + 60  # the killed one is replaced on a new address
    while victim in alive_workers(client) and time.monotonic() < deadline:
        time.sleep(0.2)
    resumed = gbm.dask.train(client, PARAMS, dX, dy, 8, checkpoint_dir=str(tmp_path))
    assert resumed.to_json() == uninterrupted


@pytest.mark.parametrize("threads", [{"nthread": 1}, {"n_jobs": 1}, {"nthread": None}])
def test_thread_count_under_xgboost_s_name_or_ours(client, threads):
    """XGBoost's ``nthread`` (as ``xgboost.dask.train`` takes it) was refused as 'n_jobs given
    twice': the rank set n_jobs without looking at its aliases."""
    X, y = regression_data()
    local = gbm.train(PARAMS, X, y, 2).to_json()
    dX, dy = as_dask(X, y)
    assert gbm.dask.train(client, {**PARAMS, **threads}, dX, dy, 2).to_json() == local
