"""Dask checkpoints: a resumed fit ends as an uninterrupted one, early stopping included,
and a checkpoint of another training is refused, never silently resumed.

One ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`` for the module, as
``tests/test_dask.py``; the checks of the file and the fingerprint need no cluster.
"""
import json

import numpy as np
import pytest

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import cloudpickle  # noqa: E402  (a dependency of distributed)
from distributed import Client, LocalCluster  # noqa: E402

import gbm  # noqa: E402
import gbm.dask  # noqa: E402
from gbm.dask import checkpoint as dask_checkpoint  # noqa: E402
from gbm.callback import TrainingCallback  # noqa: E402

PARAMS = {"max_depth": 3, "max_bin": 32, "bin_sample_size": 1000, "learning_rate": 0.5}
CHUNKS = (700, 0, 800, 500)


@pytest.fixture(scope="module")
def client():
    import sys

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def _data(seed=0, n=2000):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)).astype(np.float32)
    return X, X[:, 0] + np.sin(X[:, 1]) + rng.normal(size=n)


def _dask(*arrays, chunks=CHUNKS):
    return [da.from_array(a, chunks=(chunks,) + a.shape[1:]) for a in arrays]


class _FailAt(TrainingCallback):
    def __init__(self, epoch):
        self.epoch = epoch

    def after_iteration(self, booster, epoch, evals_log):
        if epoch == self.epoch:
            raise RuntimeError(f"simulated crash after round {epoch}")
        return False


def test_resume_with_early_stopping_gives_the_uninterrupted_model(client, tmp_path):
    X, y = _data()
    Xv, yv = _data(1, n=600)
    dX, dy = _dask(X, y)
    evals = [tuple(_dask(Xv, yv, chunks=(300, 300))) + ("valid",)]
    kw = dict(evals=evals, early_stopping_rounds=3)
    full = gbm.dask.train(client, PARAMS, dX, dy, 60, **kw)
    rounds, best = full.num_boosted_rounds, full.best_iteration
    assert best + 3 == rounds - 1 < 59  # it stopped early, 3 rounds after its best
    for crash in (best - 1, best + 1):  # before the best round, and after it
        folder = tmp_path / f"crash{crash}"
        with pytest.raises(RuntimeError, match="simulated crash"):
            gbm.dask.train(client, PARAMS, dX, dy, 60, checkpoint_dir=str(folder),
                           callbacks=[_FailAt(crash)], **kw)
        saved = dask_checkpoint.read(folder)
        assert saved.booster.num_boosted_rounds == crash + 1 and not saved.stopped
        resumed = gbm.dask.train(client, PARAMS, dX, dy, 60, checkpoint_dir=str(folder), **kw)
        assert resumed.to_json() == full.to_json(), f"crash after round {crash}"
        assert resumed.best_iteration == best
        assert resumed.evals_result == full.evals_result
    # a checkpoint whose early stopping had stopped trains nothing more, even asked for more
    assert dask_checkpoint.read(folder).stopped
    again = gbm.dask.train(client, PARAMS, dX, dy, 80, checkpoint_dir=str(folder), **kw)
    assert again.to_json() == full.to_json()


def test_resume_through_the_estimator_keeps_its_eval_results(client, tmp_path):
    X, y = _data(2)
    Xv, yv = _data(3, n=600)
    (dX, dy), (dXv, dyv) = _dask(X, y), _dask(Xv, yv, chunks=(600,))
    kw = dict(n_estimators=40, max_depth=3, max_bin=32, learning_rate=0.5,
              early_stopping_rounds=2)
    full = gbm.dask.DaskGBMRegressor(**kw).fit(dX, dy, eval_set=[(dXv, dyv)])
    est = gbm.dask.DaskGBMRegressor(checkpoint_dir=str(tmp_path), **kw)
    with pytest.raises(RuntimeError, match="simulated crash"):
        est.fit(dX, dy, eval_set=[(dXv, dyv)], callbacks=[_FailAt(full.best_iteration + 1)])
    est.fit(dX, dy, eval_set=[(dXv, dyv)])
    assert est.get_booster().to_json() == full.get_booster().to_json()
    assert est.best_iteration == full.best_iteration
    assert est.evals_result() == full.evals_result()


def test_a_checkpoint_of_another_training_is_refused(client, tmp_path):
    X, y = _data(4)
    dX, dy = _dask(X, y)
    folder = str(tmp_path)
    gbm.dask.train(client, PARAMS, dX, dy, 2, checkpoint_dir=folder)
    before = (tmp_path / gbm.dask.CHECKPOINT_FILE).read_text()
    cases = [
        (dict(PARAMS, max_depth=4), dX, dy, "max_depth=3 in the checkpoint, 4 now"),
        ({**{k: v for k, v in PARAMS.items() if k != "learning_rate"}, "eta": 0.3}, dX, dy,
         "learning_rate=0.5 in the checkpoint, 0.3 now"),  # an alias: the canonical name
        (PARAMS, dX, dy + 1.0, "the labels, weights or query groups"),
        (PARAMS, dX[:1500], dy[:1500], "rows: \\[2000\\] in the checkpoint, \\[1500\\] now"),
        (PARAMS, dX * 2.0, dy, "the bin edges: X differs"),
    ]
    for params, X_, y_, what in cases:
        with pytest.raises(ValueError, match="a checkpoint of another training") as err:
            gbm.dask.train(client, params, X_, y_, 3, checkpoint_dir=folder)
        assert err.match(what)
        assert "delete it to start afresh" in str(err.value)
    with pytest.raises(ValueError, match="holds 2 rounds, more than num_boost_round=1"):
        gbm.dask.train(client, PARAMS, dX, dy, 1, checkpoint_dir=folder)
    assert (tmp_path / gbm.dask.CHECKPOINT_FILE).read_text() == before  # left as it was
    # run settings do not change the model: a checkpoint resumes across them
    more = gbm.dask.train(client, dict(PARAMS, n_jobs=1), dX, dy, 3, checkpoint_dir=folder)
    assert more.to_json() == gbm.train(PARAMS, X, y, 3).to_json()


# -- without a cluster -----------------------------------------------------------------
def test_the_rows_digest_does_not_depend_on_the_partitioning():
    rng = np.random.default_rng(5)
    y = rng.normal(size=(100, 2))
    ids = np.arange(100)
    whole = dask_checkpoint.rows_digest(ids, y)
    split = [dask_checkpoint.rows_digest(ids[lo:hi], y[lo:hi])
             for lo, hi in ((0, 0), (0, 37), (37, 90), (90, 100))]
    assert np.sum(np.array(split, dtype=np.uint64), dtype=np.uint64) == whole
    changed = y.copy()
    changed[50, 1] += 1e-12
    assert dask_checkpoint.rows_digest(ids, changed) != whole
    swapped = y[[1, 0] + list(range(2, 100))]  # the same values on other rows
    assert dask_checkpoint.rows_digest(ids, swapped) != whole
    assert dask_checkpoint.rows_digest(ids, None) == 0
    assert dask_checkpoint.rows_digest(ids, np.array(["a"] * 100, dtype=object)) == 0


def test_a_model_file_or_other_version_is_not_taken_for_a_checkpoint(tmp_path):
    X, y = _data(6, n=300)
    booster = gbm.train(PARAMS, X, y, 2)
    path = tmp_path / gbm.dask.CHECKPOINT_FILE
    booster.save_model(path)
    with pytest.raises(ValueError, match="is not a gbm checkpoint"):
        dask_checkpoint.read(tmp_path)
    text = dask_checkpoint.dumps(booster, {"params": {}}, stopped=False)
    loaded = dask_checkpoint.loads(text, "x")
    assert loaded.booster.to_json() == booster.to_json() and loaded.stopped is False
    d = json.loads(text)
    d["version"] = 99
    with pytest.raises(ValueError, match="version 99 checkpoint"):
        dask_checkpoint.loads(json.dumps(d), "x")
    assert dask_checkpoint.read(tmp_path / "empty") is None
