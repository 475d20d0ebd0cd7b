"""Objective parity with scikit-learn: for the same problem, gbm.linear's objective is
within 1e-6 (relative) of scikit-learn's tightly converged one, on dense and sparse data,
with and without intercept and weights; and the reported duality gap is a true bound
(scikit-learn's objective is never below ours minus the gap). The objectives are written
here from scikit-learn's documentation, independently of gbm."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk_lm
import sklearn.svm as sk_svm
from scipy.special import log_softmax
from sklearn.datasets import make_classification, make_regression

from gbm import linear

RTOL = 1e-6


def _data(kind, sparse, n_classes=2, seed=0):
    if kind == "regression":
        X, y = make_regression(300, 8, n_informative=5, noise=5.0, random_state=seed)
        y = y + 20.0
    else:
        X, y = make_classification(300, 8, n_informative=5, n_classes=n_classes,
                                   random_state=seed)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.6, X, 0.0))
    w = np.random.default_rng(seed).uniform(0.2, 2.0, size=y.shape[0])
    return X, y, w


def _dense(X):
    return X.toarray() if sp.issparse(X) else X


def _check(ours, objective, sk_coef, sk_intercept):
    mine = objective(ours.coef_, ours.intercept_)
    theirs = objective(sk_coef, sk_intercept)
    assert mine <= theirs + RTOL * abs(theirs), (mine, theirs)
    assert theirs >= mine - ours.duality_gap_ - 1e-9 * abs(mine), "the gap is not a bound"
    assert ours.objective_ == pytest.approx(mine, rel=1e-9)


def _logistic_objective(X, y, w, C, l1, l2, classes):
    def objective(coef, intercept):
        Z = X @ np.atleast_2d(coef).T + intercept
        if Z.shape[1] == 1:
            sign = np.where(y == classes[1], 1.0, -1.0)
            loss = np.logaddexp(0.0, -sign * Z[:, 0])
        else:
            loss = -log_softmax(Z, axis=1)[np.arange(y.shape[0]), np.searchsorted(classes, y)]
        return C * np.sum(w * loss) + l1 * np.abs(coef).sum() + l2 / 2 * np.sum(coef ** 2)
    return objective


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("penalty", ["l2", "l1", "elasticnet"])
@pytest.mark.parametrize("fit_intercept, weighted", [(True, True), (False, False)])
def test_logistic_regression(sparse, n_classes, penalty, fit_intercept, weighted):
    X, y, w = _data("classification", sparse, n_classes)
    w = w if weighted else np.ones_like(w)
    ratio = {"l2": 0.0, "l1": 1.0, "elasticnet": 0.4}[penalty]
    solver = "lbfgs" if penalty == "l2" else "saga"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = sk_lm.LogisticRegression(C=0.3, l1_ratio=ratio, solver=solver, tol=1e-12,
                                      max_iter=50000, fit_intercept=fit_intercept)
        sk.fit(X, y, sample_weight=w)
    ours = linear.LogisticRegression(penalty=penalty, C=0.3, l1_ratio=ratio, tol=1e-9,
                                     max_iter=500, fit_intercept=fit_intercept)
    ours.fit(X, y, sample_weight=w if weighted else None)
    _check(ours, _logistic_objective(_dense(X), y, w, 0.3, ratio, 1 - ratio, sk.classes_),
           sk.coef_, sk.intercept_)
    np.testing.assert_array_equal(ours.classes_, sk.classes_)
    assert ours.coef_.shape == sk.coef_.shape and ours.intercept_.shape == sk.intercept_.shape
    proba = ours.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba, sk.predict_proba(X), atol=1e-4)


def _squares_objective(X, y, w, kind, alpha, ratio=1.0):
    def objective(coef, intercept):
        r = y - X @ coef - intercept
        if kind == "ridge":
            return np.sum(w * r * r) + alpha * coef @ coef
        return (np.sum(w * r * r) / (2 * w.sum()) + alpha * ratio * np.abs(coef).sum()
                + alpha * (1 - ratio) / 2 * coef @ coef)
    return objective


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("kind", ["ridge", "lasso", "enet"])
@pytest.mark.parametrize("fit_intercept, weighted", [(True, True), (False, False), (True, False)])
def test_least_squares(sparse, kind, fit_intercept, weighted):
    X, y, w = _data("regression", sparse)
    w = w if weighted else np.ones_like(w)
    if kind == "ridge":
        sk = sk_lm.Ridge(alpha=3.0, fit_intercept=fit_intercept, solver="sparse_cg" if sparse
                         else "cholesky", tol=1e-12)
        ours = linear.Ridge(alpha=3.0, fit_intercept=fit_intercept, tol=1e-10)
        objective = _squares_objective(_dense(X), y, w, kind, 3.0)
    else:
        ratio = 1.0 if kind == "lasso" else 0.3
        sk = sk_lm.ElasticNet(alpha=0.5, l1_ratio=ratio, fit_intercept=fit_intercept, tol=1e-12,
                              max_iter=100000)
        ours = (linear.Lasso(alpha=0.5, fit_intercept=fit_intercept, tol=1e-10) if kind == "lasso"
                else linear.ElasticNet(alpha=0.5, l1_ratio=ratio, fit_intercept=fit_intercept,
                                       tol=1e-10))
        objective = _squares_objective(_dense(X), y, w, kind, 0.5, ratio)
    sk.fit(X, y, sample_weight=w)
    ours.fit(X, y, sample_weight=w if weighted else None)
    _check(ours, objective, sk.coef_, sk.intercept_)
    np.testing.assert_allclose(ours.predict(X), sk.predict(X), rtol=1e-5, atol=1e-4)


def test_least_squares_two_targets_are_two_problems():
    X, y, w = _data("regression", False)
    Y = np.column_stack([y, -0.5 * y + 3.0])
    both = linear.Lasso(alpha=0.3, tol=1e-10).fit(X, Y, sample_weight=w)
    for k in range(2):
        one = linear.Lasso(alpha=0.3, tol=1e-10).fit(X, Y[:, k], sample_weight=w)
        np.testing.assert_allclose(both.coef_[k], one.coef_, rtol=1e-6, atol=1e-8)
        assert both.intercept_[k] == pytest.approx(one.intercept_, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("loss, penalty, dual", [("hinge", "l2", True),
                                                 ("squared_hinge", "l2", True),
                                                 ("squared_hinge", "l2", False),
                                                 ("squared_hinge", "l1", False)])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_linear_svc(sparse, n_classes, loss, penalty, dual, fit_intercept):
    if sparse and n_classes == 3 and dual:
        pytest.skip("the dual solver's one-vs-rest is checked on dense data (time)")
    X, y, w = _data("classification", sparse, n_classes, seed=2)
    kwargs = dict(loss=loss, penalty=penalty, dual=dual, C=0.2, fit_intercept=fit_intercept,
                  intercept_scaling=2.0, class_weight={y[0]: 1.5})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = sk_svm.LinearSVC(tol=1e-12, max_iter=50000, **kwargs).fit(X, y, sample_weight=w)
    ours = linear.LinearSVC(tol=1e-7, max_iter=200000, **kwargs).fit(X, y, sample_weight=w)
    Xd, classes = _dense(X), sk.classes_
    weight_of = np.where(y == y[0], 1.5, 1.0)

    def objective(coef, intercept):
        total = 0.0
        for k in range(coef.shape[0]):
            positive = classes[1] if n_classes == 2 else classes[k]
            sign = np.where(y == positive, 1.0, -1.0)
            # liblinear: binary weights both classes, one-vs-rest only the positive one
            cw = weight_of if n_classes == 2 else np.where((y == positive) & (y == y[0]), 1.5, 1.0)
            b = np.atleast_1d(intercept)[k] if fit_intercept else 0.0
            slack = np.maximum(0.0, 1.0 - sign * (Xd @ coef[k] + b))
            loss_value = slack if loss == "hinge" else slack ** 2
            full = np.r_[coef[k], b / 2.0]  # the penalised intercept feature's coefficient
            reg = 0.5 * full @ full if penalty == "l2" else np.abs(full).sum()
            total += 0.2 * np.sum(w * cw * loss_value) + reg
        return total
    _check(ours, objective, sk.coef_, sk.intercept_)


def test_balanced_class_weights_are_scikit_learns():
    from sklearn.utils.class_weight import compute_class_weight

    from gbm.collective import LOCAL
    from gbm.linear.classes import class_weights
    X, y, w = _data("classification", False, 3)
    classes = np.unique(y)
    ours = class_weights("balanced", classes, np.searchsorted(classes, y), w, LOCAL)
    np.testing.assert_allclose(ours, compute_class_weight("balanced", classes=classes, y=y,
                                                          sample_weight=w))
