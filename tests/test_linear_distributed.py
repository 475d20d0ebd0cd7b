"""Thread counts and ranks: the same coefficients on 1 or 2 threads, and the same optimum
(within tol) when the rows are split over 2 or 3 ranks of a ThreadGroup collective, the
intercepts of an all-zero solution included (their optimum and certificate over ranks)."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from tests.support import linear_optima as optima

from gbm import linear
from gbm.collective import ThreadGroup


def _classification(n=20000, sparse=False, n_classes=2):
    X, y = make_classification(n, 10, n_informative=6, n_classes=n_classes, random_state=0)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
    return X, y


@pytest.mark.parametrize("make, sparse", [
    (lambda jobs: linear.LogisticRegression(C=0.1, tol=1e-8, n_jobs=jobs), False),
    (lambda jobs: linear.LogisticRegression(C=0.1, tol=1e-8, n_jobs=jobs), True),
    (lambda jobs: linear.LogisticRegression(penalty="l1", C=0.01, tol=1e-8, n_jobs=jobs), True),
    (lambda jobs: linear.Lasso(alpha=0.01, tol=1e-8, n_jobs=jobs), True),
    (lambda jobs: linear.LinearSVC(dual=True, C=0.05, tol=1e-6, n_jobs=jobs), True),
])
def test_one_and_two_threads_give_the_same_coefficients(make, sparse):
    X, y = _classification(sparse=sparse)
    one, two = make(1).fit(X, y), make(2).fit(X, y)
    np.testing.assert_array_equal(one.coef_, two.coef_)
    np.testing.assert_array_equal(one.intercept_, two.intercept_)
    assert one.n_iter_ == two.n_iter_


def _split_fit(estimator, X, y, w, ranks):
    """Fit with the rows dealt over ``ranks`` ranks (uneven shards); one result per rank."""
    bounds = np.linspace(0, X.shape[0], ranks + 1).astype(int)
    bounds[1] = bounds[1] * 2 // 3  # shards of different sizes

    def rank_fit(collective):
        lo, hi = bounds[collective.rank], bounds[collective.rank + 1]
        est = estimator.__class__(**estimator.get_params())
        return est._fit(X[lo:hi], y[lo:hi], w[lo:hi], collective)

    return ThreadGroup(ranks).run(rank_fit)


CASES = {
    "logistic-gram": (linear.LogisticRegression(C=0.5, tol=1e-9), "classification", False),
    "logistic-sparse": (linear.LogisticRegression(C=0.5, tol=1e-9), "classification", True),
    "logistic-l1-sparse": (linear.LogisticRegression(penalty="l1", C=0.05, tol=1e-8),
                           "classification", True),
    "multinomial": (linear.LogisticRegression(C=0.5, tol=1e-9), "multiclass", False),
    "lasso": (linear.Lasso(alpha=0.5, tol=1e-10), "regression", False),
    "enet-sparse": (linear.ElasticNet(alpha=0.2, tol=1e-10), "regression", True),
    "ridge": (linear.Ridge(alpha=2.0, tol=1e-10), "regression", False),
    # CoCoA+ over ranks needs many more epochs than one rank (its local steps are scaled
    # down by the number of ranks): a looser tol keeps the test short
    "svc-dual": (linear.LinearSVC(dual=True, C=0.05, tol=1e-4, max_iter=20000), "classification",
                 False),
    "svc-primal-l1": (linear.LinearSVC(penalty="l1", dual=False, tol=1e-9), "classification",
                      False),
}


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("case", list(CASES))
def test_ranks_reach_the_local_optimum(case, ranks):
    estimator, kind, sparse = CASES[case]
    if kind == "regression":
        X, y = make_regression(900, 8, n_informative=5, noise=3.0, random_state=1)
    else:
        X, y = make_classification(900, 8, n_informative=5, random_state=1,
                                   n_classes=3 if kind == "multiclass" else 2)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    w = np.random.default_rng(2).uniform(0.5, 1.5, size=y.shape[0])
    local = estimator.__class__(**estimator.get_params()).fit(X, y, sample_weight=w)
    fitted = _split_fit(estimator, X, y, w, ranks)
    for est in fitted[1:]:  # every rank holds the same model
        np.testing.assert_array_equal(est.coef_, fitted[0].coef_)
        np.testing.assert_array_equal(est.intercept_, fitted[0].intercept_)
    shared = fitted[0]
    assert shared.duality_gap_ <= estimator.tol * shared.objective_
    # both objectives are certified within tol of the optimum, so of each other
    assert shared.objective_ == pytest.approx(local.objective_, rel=3 * estimator.tol + 1e-12)
    assert shared.objective_ - shared.duality_gap_ <= local.objective_ * (1 + 1e-12)
    assert local.objective_ - local.duality_gap_ <= shared.objective_ * (1 + 1e-12)
    np.testing.assert_allclose(shared.coef_, local.coef_, rtol=1e-3, atol=1e-3)


NULL_CASES = {  # a penalty that keeps no coefficient: only the intercepts are fitted
    "lasso": (lambda X, y, w: linear.Lasso(
        alpha=2.0 * optima.least_squares_alpha_max(X, y, w), tol=1e-10), "regression"),
    "logistic-l1": (lambda X, y, w: linear.LogisticRegression(
        penalty="l1", C=optima.logistic_C_max(X, y, w, 1.0) / 2.0, tol=1e-10), "classification"),
    "multinomial-enet": (lambda X, y, w: linear.LogisticRegression(
        penalty="elasticnet", l1_ratio=0.5, C=optima.logistic_C_max(X, y, w, 0.5) / 2.0,
        tol=1e-10), "multiclass"),
}


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("case", list(NULL_CASES))
def test_ranks_find_the_intercept_of_an_all_zero_solution(case, ranks):
    make, kind = NULL_CASES[case]
    if kind == "regression":
        X, y = make_regression(900, 8, n_informative=5, noise=3.0, random_state=1)
        y = y + 40.0
    else:
        X, y = make_classification(900, 8, n_informative=5, random_state=1,
                                   n_classes=3 if kind == "multiclass" else 2,
                                   weights=[0.7] if kind == "classification" else [0.5, 0.3])
    w = np.random.default_rng(2).uniform(0.5, 1.5, size=y.shape[0])
    estimator = make(X, y, w)
    if kind == "regression":
        intercept, optimum = optima.least_squares_null(y, w)
    else:
        intercept, optimum = optima.logistic_null(y, w, estimator.C)
    for est in _split_fit(estimator, X, y, w, ranks):
        assert not np.any(est.coef_)
        np.testing.assert_allclose(est.intercept_, intercept, rtol=1e-9, atol=1e-12)
        assert est.objective_ == pytest.approx(optimum, rel=1e-12)
        assert est.duality_gap_ >= est.objective_ - optimum - 1e-12 * optimum
        assert est.duality_gap_ <= estimator.tol * est.objective_
