"""survival:cox and survival:aft on a Dask cluster give the local model, byte for byte:
Cox's risk sets span every worker's rows (gathered through the collective), AFT's interval
labels travel as a y of shape (n, 2) (two columns of one dask array), eval sets included,
through ``gbm.dask.train`` and ``DaskGBMRegressor``."""
import numpy as np
import pytest

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

from distributed import Client, LocalCluster  # noqa: E402

import gbm  # noqa: E402
import gbm.dask  # noqa: E402
from tests.test_survival import survival_data  # noqa: E402

CHUNKS = (300, 0, 500, 400)  # uneven, one empty
PARAMS = {"max_depth": 3, "max_bin": 32, "learning_rate": 0.3}


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def _dask(*arrays):
    return [da.from_array(a, chunks=(CHUNKS,) + a.shape[1:]) for a in arrays]


@pytest.mark.parametrize("params, labels", [
    ({"objective": "survival:cox"}, 1),
    ({"objective": "survival:aft", "aft_loss_distribution": "logistic"}, 2),
], ids=["cox", "aft"])
def test_same_model_as_local(client, params, labels):
    X, signed, intervals = survival_data(1200, 21, ties=True)
    y = signed if labels == 1 else intervals
    params = dict(PARAMS, **params)
    local = gbm.train(params, X, y, 4, evals=[(X, y, "train")])
    dX, dy = _dask(X, y)
    model = gbm.dask.train(client, params, dX, dy, 4, evals=[(dX, dy, "train")])
    assert model.to_json() == local.to_json()
    assert model.evals_result == local.evals_result
    estimator = gbm.dask.DaskGBMRegressor(n_estimators=4, **params).fit(
        dX, dy, eval_set=[(dX, dy)])
    local_estimator = gbm.GBMRegressor(n_estimators=4, **params).fit(X, y, eval_set=[(X, y)])
    assert estimator.get_booster().to_json() == local_estimator.get_booster().to_json()
    assert estimator.evals_result() == local_estimator.evals_result()
    np.testing.assert_array_equal(estimator.predict(dX).compute(), local.predict(X))
