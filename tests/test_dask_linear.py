"""The linear models on a Dask cluster reach the local optimum within tol, and fail fast.

One ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`` for the module, as
``tests/test_dask.py``. A distributed fit is certified like a local one (its duality gap
is at most ``tol`` times its objective over all rows), so both objectives lie within
``tol`` of the optimum, hence of each other, and neither certificate's lower bound may
exceed the other's objective.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

import cloudpickle  # noqa: E402  (a dependency of distributed)
from distributed import Client, LocalCluster  # noqa: E402

import gbm.dask  # noqa: E402
from gbm import linear  # noqa: E402
from tests.support import linear_optima as optima  # noqa: E402

CHUNKS = (250, 0, 420, 230)  # uneven, one empty


@pytest.fixture(scope="module")
def client():
    import sys

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def _data(kind, sparse=False):
    if kind == "regression":
        X, y = make_regression(900, 8, n_informative=5, noise=3.0, random_state=1)
    else:
        X, y = make_classification(900, 8, n_informative=5, random_state=1,
                                   n_classes=3 if kind == "multiclass" else 2)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    w = np.random.default_rng(2).uniform(0.5, 1.5, size=y.shape[0])
    return X, y, w


def _dask(value, chunks=CHUNKS):
    if sp.issparse(value):  # SciPy CSR chunks
        dense = da.from_array(value.toarray(), chunks=(chunks, -1))
        return dense.map_blocks(sp.csr_matrix, dtype=value.dtype,
                                meta=sp.csr_matrix((0, value.shape[1])))
    return da.from_array(value, chunks=(chunks,) + value.shape[1:])


CASES = {
    "logistic-gram": (gbm.dask.DaskLogisticRegression, dict(C=0.5, tol=1e-9), "classification",
                      False),
    "logistic-l1-sparse": (gbm.dask.DaskLogisticRegression, dict(penalty="l1", C=0.05, tol=1e-8),
                           "classification", True),
    "multinomial": (gbm.dask.DaskLogisticRegression, dict(C=0.5, tol=1e-9), "multiclass", False),
    "ridge": (gbm.dask.DaskRidge, dict(alpha=2.0, tol=1e-10), "regression", False),
    "lasso": (gbm.dask.DaskLasso, dict(alpha=0.5, tol=1e-10), "regression", False),
    "enet-sparse": (gbm.dask.DaskElasticNet, dict(alpha=0.2, tol=1e-10), "regression", True),
    # CoCoA+ over ranks needs many more epochs than one rank: a looser tol keeps it short
    "svc-dual": (gbm.dask.DaskLinearSVC, dict(dual=True, C=0.05, tol=1e-4, max_iter=20000),
                 "classification", False),
    "svc-primal-l1": (gbm.dask.DaskLinearSVC, dict(penalty="l1", dual=False, tol=1e-9),
                      "classification", False),
}


def _same_optimum(remote, local, tol):
    assert remote.duality_gap_ <= tol * remote.objective_
    assert remote.objective_ == pytest.approx(local.objective_, rel=3 * tol + 1e-12)
    assert remote.objective_ - remote.duality_gap_ <= local.objective_ * (1 + 1e-12)
    assert local.objective_ - local.duality_gap_ <= remote.objective_ * (1 + 1e-12)


@pytest.mark.parametrize("case", list(CASES))
def test_distributed_fit_reaches_the_local_optimum(client, case):
    make, params, kind, sparse = CASES[case]
    X, y, w = _data(kind, sparse)
    local = make._local(**params).fit(X, y, sample_weight=w)
    remote = make(**params).fit(_dask(X), _dask(y), sample_weight=_dask(w))
    _same_optimum(remote, local, params["tol"])
    if case == "svc-dual":
        # 1/2 |w|^2 makes the objective 1-strongly convex: |w - w*| <= sqrt(2 gap) for
        # each fit (w includes the intercept's coefficient, intercept_ / intercept_scaling)
        def point(est):
            return np.append(est.coef_.ravel(), est.intercept_)
        bound = np.sqrt(2 * remote.duality_gap_) + np.sqrt(2 * local.duality_gap_)
        assert np.linalg.norm(point(remote) - point(local)) <= bound
    else:
        np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-3, atol=1e-3)
    if kind != "regression":
        np.testing.assert_array_equal(remote.classes_, local.classes_)
    # lazy predictions are the local estimator's on the same coefficients (up to the
    # rounding of a product over a partition instead of all rows)
    lazy = remote.predict(_dask(X)).compute()
    if kind == "regression":
        np.testing.assert_allclose(lazy, remote.to_local().predict(X), rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(lazy, remote.to_local().predict(X))
    if case == "logistic-gram":
        np.testing.assert_allclose(remote.predict_proba(_dask(X)).compute(),
                                   remote.to_local().predict_proba(X))


@pytest.mark.parametrize("kind", ["regression", "multiclass"])
def test_distributed_all_zero_solution_fits_the_intercept(client, kind):
    # a penalty that keeps no coefficient: the intercepts are the weighted mean, or the
    # log class frequencies, and the certificate covers them
    X, y, w = _data(kind)
    if kind == "regression":
        y = y + 40.0
        estimator = gbm.dask.DaskLasso(alpha=2.0 * optima.least_squares_alpha_max(X, y, w),
                                       tol=1e-10)
        intercept, optimum = optima.least_squares_null(y, w)
    else:
        y = np.where(np.arange(y.shape[0]) % 5 == 0, 0, y)  # unequal class frequencies
        C = optima.logistic_C_max(X, y, w, 1.0) / 2.0
        estimator = gbm.dask.DaskLogisticRegression(penalty="l1", C=C, tol=1e-10)
        intercept, optimum = optima.logistic_null(y, w, C)
    remote = estimator.fit(_dask(X), _dask(y), sample_weight=_dask(w))
    assert not np.any(remote.coef_)
    np.testing.assert_allclose(remote.intercept_, intercept, rtol=1e-9, atol=1e-12)
    assert remote.objective_ == pytest.approx(optimum, rel=1e-12)
    assert remote.duality_gap_ >= remote.objective_ - optimum - 1e-12 * optimum
    assert remote.duality_gap_ <= estimator.tol * remote.objective_


def test_a_worker_without_rows_and_a_dataframe(client):
    X, y, w = _data("regression")
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    local = linear.Lasso(alpha=0.3, tol=1e-10).fit(frame, y)
    dX = dd.from_pandas(frame, npartitions=1)  # one partition: the other rank has no rows
    dy = dd.from_pandas(pd.Series(y), npartitions=1)
    remote = gbm.dask.DaskLasso(alpha=0.3, tol=1e-10).fit(dX, dy)
    _same_optimum(remote, local, 1e-10)
    assert list(remote.feature_names_in_) == list(frame.columns)
    predicted = remote.predict(dX)
    assert isinstance(predicted, dd.Series)
    np.testing.assert_allclose(predicted.compute().to_numpy(), local.predict(frame),
                               rtol=1e-6, atol=1e-6)
    # sparse rows on one rank, none on the other (whose empty block is dense): both ranks
    # still take the same solver road
    X, y, w = _data("classification", sparse=True)
    params = dict(C=0.5, tol=1e-9)
    local = linear.LogisticRegression(**params).fit(X, y)
    one = (X.shape[0],)
    remote = gbm.dask.DaskLogisticRegression(**params).fit(_dask(X, one), _dask(y, one))
    _same_optimum(remote, local, 1e-9)


def test_nan_label_in_one_partition_gives_the_local_error(client):
    X, y, _ = _data("classification")
    y = y.astype(np.float64)
    y[700] = np.nan
    with pytest.raises(ValueError) as local:
        linear.LogisticRegression().fit(X, y)
    with pytest.raises(ValueError) as remote:
        gbm.dask.DaskLogisticRegression().fit(_dask(X), _dask(y))
    assert str(remote.value) == str(local.value)


def test_bad_weight_in_one_partition_names_the_global_row(client):
    X, y, w = _data("regression")
    w[600] = -1.0
    with pytest.raises(ValueError) as local:
        linear.Ridge().fit(X, y, sample_weight=w)
    with pytest.raises(ValueError) as remote:
        gbm.dask.DaskRidge().fit(_dask(X), _dask(y), sample_weight=_dask(w))
    assert str(remote.value) == str(local.value)
    assert "row 600" in str(remote.value)


def test_dask_estimators_take_the_local_parameters_and_refuse_local_data():
    est = gbm.dask.DaskLinearSVC(C=2.0, loss="hinge")
    assert est.get_params()["client"] is None
    assert est.to_local().get_params() == linear.LinearSVC(C=2.0, loss="hinge").get_params()
    with pytest.raises(TypeError, match="X must be a dask array"):
        est.fit(np.zeros((3, 2)), np.array([0, 1, 0]))
