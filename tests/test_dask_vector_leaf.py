"""Vector-leaf trees (``multi_strategy="multi_output_tree"``) on a Dask cluster: the model
file of the local fit, byte for byte, on 1, 2 and 3 workers with uneven chunks (one
empty), a worker holding no rows, the projected split search, multi-target regression,
categorical splits and the Dask estimators. Every rank sums the k-channel integer histograms, the root's and
the leaves' sums over the ranks (``gbm.tree.vector_leaf``)."""
import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask.array")

from distributed import wait  # noqa: E402

import gbm  # noqa: E402
import gbm.dask  # noqa: E402
from gbm.dask.spmd import alive_workers  # noqa: E402
from gbm.sklearn import GBMClassifier, GBMRegressor  # noqa: E402
from tests.support.dask_cases import (PARAMS, as_dask, client,  # noqa: E402,F401
                                     first_workers, regression_data, three_workers)

VL = dict(PARAMS, multi_strategy="multi_output_tree")
SOFTPROB = dict(VL, objective="multi:softprob", num_class=4, subsample=0.8,
                colsample_bynode=0.8)


def _classes(seed=0):
    """``X`` (with missing values) and 4 classes from its first columns."""
    X, signal_ = regression_data(seed)
    return X, np.digitize(signal_, [-1.5, 0.0, 1.5]).astype(np.float64)


def _targets(seed=0):
    """``X`` and three regression targets (n, 3)."""
    X, first = regression_data(seed)
    rng = np.random.default_rng(seed + 1)
    return X, np.stack([first, np.nan_to_num(X[:, 3]) * 3, rng.normal(size=first.shape[0])], 1)


def test_same_model_on_one_two_and_three_workers(client):
    X, y = _classes()
    evals_X, evals_y = _classes(5)
    local = gbm.train(SOFTPROB, X, y, 4, evals=[(evals_X, evals_y, "valid")])
    assert len(local.trees) == 4 and local.trees[0].value.shape[1] == 4  # vector leaves
    dX, dy = as_dask(X, y)
    dvX, dvy = as_dask(evals_X, evals_y, chunks=(1000, 1400))
    for n in (1, 2):
        model = gbm.dask.train(client, SOFTPROB, dX, dy, 4, evals=[(dvX, dvy, "valid")],
                               workers=first_workers(client, n))
        assert model.to_json() == local.to_json(), f"{n} workers"
        assert model.evals_result == local.evals_result, f"{n} workers"
    with three_workers(client):
        dX, dy = as_dask(X, y, chunks=(300, 900, 200, 1000))
        model = gbm.dask.train(client, SOFTPROB, dX, dy, 4)
        assert len(alive_workers(client)) == 3
        assert model.to_json() == gbm.train(SOFTPROB, X, y, 4).to_json(), "3 workers"


def test_a_worker_without_rows(client):
    X, y = _targets(2)
    params = dict(VL, max_leaves=6)
    local = gbm.train(params, X, y, 3).to_json()
    a = first_workers(client, 1)
    dX, dy = (client.persist(v, workers=a) for v in as_dask(X, y))
    wait([dX, dy])
    assert {tuple(v) for v in client.who_has(dX).values()} == {tuple(a)}  # all on one worker
    model = gbm.dask.train(client, params, dX, dy, 3, balance=False)  # both are ranks
    assert model.to_json() == local


def test_projected_split_search_and_multi_target_regression(client):
    X, y = _classes(3)
    projected = dict(SOFTPROB, gradient_projection=True, projection_dim=2)
    dX, dy = as_dask(X, y)
    assert gbm.dask.train(client, projected, dX, dy, 3).to_json() == \
        gbm.train(projected, X, y, 3).to_json()
    X, y = _targets(4)
    dX, dy = as_dask(X, y, chunks=(1500, 900))
    assert gbm.dask.train(client, VL, dX, dy, 3).to_json() == gbm.train(VL, X, y, 3).to_json()


def test_monotone_constraints_on_two_workers(client):
    # the per-output bounds come from the global sums: every rank narrows them alike
    X, y = _targets(6)
    params = dict(VL, monotone_constraints={0: 1, 3: -1}, grow_policy="lossguide",
                  max_leaves=8)
    dX, dy = as_dask(X, y)  # uneven chunks, one empty
    local = gbm.train(params, X, y, 3)
    assert sum(t.n_nodes for t in local.trees) > 3 * len(local.trees)
    assert gbm.dask.train(client, params, dX, dy, 3,
                          workers=first_workers(client, 2)).to_json() == local.to_json()
    depthwise = dict(params, grow_policy="depthwise", max_leaves=0)
    assert gbm.dask.train(client, depthwise, dX, dy, 3).to_json() == \
        gbm.train(depthwise, X, y, 3).to_json()


def test_dask_estimators_fit_the_local_estimators_model(client):
    X, y = _classes(6)
    kw = dict(n_estimators=3, max_depth=3, max_bin=32,
              multi_strategy="multi_output_tree")
    est = gbm.dask.DaskGBMClassifier(**kw).fit(*as_dask(X, y))
    local = GBMClassifier(**kw).fit(X, y)
    assert est.get_booster().to_json() == local.get_booster().to_json()
    assert len(est.get_booster().trees) == 3  # one tree a round for the 4 classes
    np.testing.assert_array_equal(est.predict_proba(as_dask(X)[0]).compute(),
                                  local.predict_proba(X))
    X, y = _targets(7)
    est = gbm.dask.DaskGBMRegressor(**kw).fit(*as_dask(X, y))
    local = GBMRegressor(**kw).fit(X, y)
    assert est.get_booster().to_json() == local.get_booster().to_json()


def test_categorical_splits_on_two_workers(client):
    # the sets are chosen from the summed histograms: the local model file
    X, y = _targets(3)
    X = X.copy()
    rng = np.random.default_rng(4)
    X[:, 1] = rng.integers(0, 12, X.shape[0])  # 12 categories: partitions
    y[:, 0] += 2.0 * np.isin(X[:, 1], (1, 4, 6, 9))
    params = dict(VL, max_cat_to_onehot=4)
    local = gbm.train(params, X, y, 3, categorical_features=[1])
    assert any(t.has_categorical for t in local.trees)
    dX, dy = as_dask(X, y)
    model = gbm.dask.train(client, params, dX, dy, 3, categorical_features=[1],
                           workers=first_workers(client, 2))
    assert model.to_json() == local.to_json()


def test_external_memory_ranks_give_the_local_model(client, tmp_path):
    """``external_memory=True``: each worker's rows in page files, the vector-leaf
    histograms summed page by page on each rank and over the ranks
    (``gbm.tree.vector_paged``): the local in-memory model file on 1 and 2 workers, and
    on 3 with uneven chunks."""
    X, y = _classes(2)
    local = gbm.train(SOFTPROB, X, y, 3).to_json()
    dX, dy = as_dask(X, y)
    for n in (1, 2):
        stats = {}
        model = gbm.dask.train(client, SOFTPROB, dX, dy, 3, workers=first_workers(client, n),
                               external_memory=True, cache_dir=str(tmp_path),
                               min_cache_page_bytes=1000, _stats=stats)
        assert model.to_json() == local, f"{n} workers"
        assert all(r["page_passes"] > 4 for r in stats["ranks"] if r["rows"])
    with three_workers(client):
        dX, dy = as_dask(X, y, chunks=(300, 900, 200, 1000))
        model = gbm.dask.train(client, SOFTPROB, dX, dy, 3, external_memory=True)
        assert model.to_json() == local, "3 workers"
