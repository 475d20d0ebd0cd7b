"""The free intercept and the certificate (``gbm/linear/intercept.py``): at a penalty that
keeps no coefficient, every estimator with a free intercept finds the intercept's optimum
(the weighted mean, log-odds or log class frequencies) and its duality gap bounds the
true distance to the optimum; a wrong intercept never certifies itself.

Closed forms from ``tests/support/linear_optima.py``. scikit-learn's solutions: Lasso and
ElasticNet (coordinate descent, exact at the all-zero solution); for LogisticRegression
its lbfgs fit with the columns zeroed, the same optimum since the penalty keeps every
coefficient at 0 (its saga stops within one to five epochs at C this small, 4e-6 to 1.5%
above the optimum: only an upper bound).
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as sk_lm
from scipy.special import log_softmax
from sklearn.datasets import make_classification, make_regression
from tests.support import linear_optima as optima

from gbm import linear
from gbm.collective import LOCAL
from gbm.kernels.linear_math import LOGISTIC, MULTINOMIAL, SQUARED
from gbm.linear import intercept, working_set
from gbm.linear.design import Design
from gbm.linear.newton import NewtonSolver, _Terms
from gbm.linear.problem import Problem
from gbm.runtime.backend import get_backend

N = 200
ROUNDING = 1e-12  # relative: what the objectives' sums may lose


def _weights(weighted, n=N):
    return np.random.default_rng(0).uniform(0.2, 2.0, n) if weighted else np.ones(n)


def _regression(targets=1, sparse=False, n=N):
    X, y = make_regression(n, 6, n_informative=4, noise=5.0, n_targets=targets, random_state=0)
    y = y + 30.0  # a mean far from 0: an intercept left at 0 costs much
    return (sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0)) if sparse else X), y


def _classification(n_classes, n=N):
    # unbalanced: an intercept left at 0 is far from the log-odds
    weights = [0.75] if n_classes == 2 else [0.55, 0.3]
    return make_classification(n, 6, n_informative=4, n_classes=n_classes, weights=weights,
                               random_state=0)


def _squares_objective(X, y, w, alpha, ratio):
    def objective(coef, bias):
        r = np.reshape(y, (y.shape[0], -1)) - X @ np.atleast_2d(coef).T - bias
        return (w @ (r * r).sum(axis=1) / (2 * w.sum()) + alpha * ratio * np.abs(coef).sum()
                + alpha * (1 - ratio) / 2 * np.sum(coef ** 2))
    return objective


def _logistic_objective(X, y, w, C, ratio):
    def objective(coef, bias):
        Z = X @ np.atleast_2d(coef).T + bias
        if Z.shape[1] == 1:
            loss = np.logaddexp(0.0, -np.where(y == 1, 1.0, -1.0) * Z[:, 0])
        else:
            loss = -log_softmax(Z, axis=1)[np.arange(y.shape[0]), y]
        return (C * w @ loss + ratio * np.abs(coef).sum()
                + (1 - ratio) / 2 * np.sum(coef ** 2))
    return objective


def _certified(ours, optimum):
    """The fit's objective is the optimum, and its gap bounds the distance and is small."""
    assert ours.objective_ == pytest.approx(optimum, rel=ROUNDING)
    assert ours.duality_gap_ >= ours.objective_ - optimum - ROUNDING * optimum
    assert ours.duality_gap_ <= ours.tol * ours.objective_


LEAST_SQUARES = {  # name: (l1_ratio, targets, sparse)
    "lasso": (1.0, 1, False),
    "lasso-sparse": (1.0, 1, True),
    "lasso-2-targets": (1.0, 2, False),
    "enet": (0.4, 1, False),
    "enet-sparse-2-targets": (0.4, 2, True),
}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("factor", [1.5, 100.0])
@pytest.mark.parametrize("name", list(LEAST_SQUARES))
def test_least_squares_above_alpha_max_fit_the_weighted_mean(name, factor, weighted):
    ratio, targets, sparse = LEAST_SQUARES[name]
    X, y = _regression(targets, sparse)
    w = _weights(weighted)
    alpha = factor * optima.least_squares_alpha_max(X, y, w) / ratio
    ours = (linear.Lasso(alpha=alpha, tol=1e-8) if ratio == 1.0
            else linear.ElasticNet(alpha=alpha, l1_ratio=ratio, tol=1e-8))
    ours.fit(X, y, sample_weight=w if weighted else None)
    sk = sk_lm.ElasticNet(alpha=alpha, l1_ratio=ratio, tol=1e-12).fit(X, y, sample_weight=w)
    mean, optimum = optima.least_squares_null(y, w)
    assert not np.any(ours.coef_) and not np.any(sk.coef_)
    np.testing.assert_allclose(ours.intercept_, mean, rtol=ROUNDING)
    objective = _squares_objective(X, y, w, alpha, ratio)
    assert objective(ours.coef_, ours.intercept_) == pytest.approx(
        objective(sk.coef_, sk.intercept_), rel=ROUNDING)
    _certified(ours, optimum)


LOGISTIC_CASES = {  # name: (penalty, l1_ratio, n_classes)
    "binary-l1": ("l1", 1.0, 2),
    "binary-enet": ("elasticnet", 0.4, 2),
    "multinomial-l1": ("l1", 1.0, 3),
    "multinomial-enet": ("elasticnet", 0.4, 3),
}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("factor", [1.5, 100.0])
@pytest.mark.parametrize("name", list(LOGISTIC_CASES))
def test_logistic_below_C_max_fits_the_log_odds(name, factor, weighted):
    penalty, ratio, n_classes = LOGISTIC_CASES[name]
    X, y = _classification(n_classes)
    w = _weights(weighted)
    C = optima.logistic_C_max(X, y, w, ratio) / factor
    ours = linear.LogisticRegression(penalty=penalty, C=C, l1_ratio=ratio, tol=1e-8)
    ours.fit(X, y, sample_weight=w if weighted else None)
    best, optimum = optima.logistic_null(y, w, C)
    assert not np.any(ours.coef_)
    np.testing.assert_allclose(ours.intercept_, best, rtol=1e-9, atol=1e-12)
    objective = _logistic_objective(X, y, w, C, ratio)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # saga's convergence warning
        saga = sk_lm.LogisticRegression(C=C, l1_ratio=ratio, solver="saga", tol=1e-12,
                                        max_iter=10000).fit(X, y, sample_weight=w)
    assert not np.any(saga.coef_)
    assert objective(ours.coef_, ours.intercept_) <= objective(saga.coef_, saga.intercept_)
    null = sk_lm.LogisticRegression(C=C, tol=1e-14, max_iter=10000)
    null.fit(np.zeros_like(X), y, sample_weight=w)  # scikit-learn's intercept-only optimum
    assert objective(ours.coef_, ours.intercept_) == pytest.approx(
        objective(0.0 * ours.coef_, null.intercept_), rel=ROUNDING)
    _certified(ours, optimum)


def test_ridge_at_a_huge_alpha_fits_the_mean():
    # the same early exit: at W = 0 the L2 conjugate's part of the gap is |G|^2 / (4 alpha)
    for n, alpha in ((N, 1e18), (20000, 1e9)):  # a small problem, and one stopped at tol
        X, y = _regression(n=n)
        w = _weights(True, n)
        ours = linear.Ridge(alpha=alpha).fit(X, y, sample_weight=w)
        sk = sk_lm.Ridge(alpha=alpha, solver="cholesky").fit(X, y, sample_weight=w)

        def objective(coef, bias):
            r = y - X @ coef - bias
            return w @ (r * r) + alpha * coef @ coef
        theirs = objective(sk.coef_, sk.intercept_)
        assert ours.intercept_ == pytest.approx(sk.intercept_, rel=1e-6)
        assert objective(ours.coef_, ours.intercept_) <= theirs * (1 + ours.tol)
        assert ours.objective_ - ours.duality_gap_ <= theirs * (1 + ROUNDING)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_logistic_l2_at_a_tiny_C_fits_the_log_odds(n_classes):
    X, y = _classification(n_classes)
    w = _weights(True)
    C = 1e-12
    ours = linear.LogisticRegression(C=C).fit(X, y, sample_weight=w)
    best, null = optima.logistic_null(y, w, C)  # the optimum is at most this
    np.testing.assert_allclose(ours.intercept_, best, rtol=1e-6)
    assert ours.objective_ <= null
    assert ours.objective_ == pytest.approx(null, rel=1e-9)
    assert ours.objective_ - ours.duality_gap_ <= null


# -- the certificate at given coefficients (what the working sets evaluate) -----------------

def _problem(kind, weighted):
    """(Problem, X, optimal intercept coefficient(s) (K,), optimum) at an all-zero solution."""
    w = _weights(weighted)
    if kind == "squared":
        X, y = _regression()
        alpha = 2.0 * optima.least_squares_alpha_max(X, y, w)
        mean, optimum = optima.least_squares_null(y, w)
        problem = Problem(SQUARED, y[:, None].copy(), w / w.sum(), 1, alpha, 0.0)
        return problem, X, np.array([mean]), optimum
    X, y = _classification(2 if kind == "logistic" else 3)
    C = optima.logistic_C_max(X, y, w, 1.0) / 2.0
    best, optimum = optima.logistic_null(y, w, C)
    if kind == "logistic":
        problem = Problem(LOGISTIC, np.where(y == 1, 1.0, -1.0)[:, None], C * w, 1, 1.0, 0.0)
    else:
        problem = Problem(MULTINOMIAL, y[:, None].astype(np.float64), C * w, 3, 1.0, 0.0)
    return problem, X, best, optimum


def _at_intercept(X, value):
    coef = np.zeros((value.shape[0], X.shape[1] + 1))
    coef[:, -1] = value
    return coef.ravel()


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kind", ["squared", "logistic", "multinomial"])
def test_a_wrong_intercept_has_a_positive_gap(kind, weighted):
    problem, X, best, optimum = _problem(kind, weighted)
    backend = get_backend("cpu", 1, LOCAL)
    solver = NewtonSolver(problem, Design(X, backend), backend, 1e-10, 100)
    first = np.eye(best.size)[0]  # not a common shift: the softmax would not see that
    for wrong in (np.zeros_like(best), best + first, best - 0.5 * (1 + np.arange(best.size))):
        primal, gap, _ = solver.evaluate(_at_intercept(X, wrong))
        assert primal > optimum * (1 + 1e-6)
        assert gap >= primal - optimum - ROUNDING * optimum, (wrong, primal, gap)
    primal, gap, _ = solver.evaluate(_at_intercept(X, best))
    assert primal == pytest.approx(optimum, rel=ROUNDING)
    assert abs(gap) <= ROUNDING * optimum


@pytest.mark.parametrize("kind", ["squared", "logistic", "multinomial"])
def test_working_sets_find_the_intercept_of_an_all_zero_solution(kind):
    problem, X, best, optimum = _problem(kind, True)
    backend = get_backend("cpu", 1, LOCAL)
    host = working_set.host_design(X, backend, "columns")
    budget = (int(working_set.column_bytes(host).sum() // 2)
              + working_set.primal_row_bytes(X.shape[0], problem.n_outputs))
    result = working_set.newton(problem, working_set.HostData(host, backend, budget), 1e-10,
                                100)
    found = result.coef[:, -1]
    if kind == "multinomial":
        found = found - found.mean()
    assert not np.any(result.coef[:, :-1])
    np.testing.assert_allclose(found, best, rtol=1e-9, atol=1e-12)
    assert result.primal == pytest.approx(optimum, rel=ROUNDING)
    assert result.gap >= result.primal - optimum - ROUNDING * optimum


# -- the shift's derivatives and Newton step (gbm/linear/intercept.py) ----------------------

def _shift_loss(loss, z, y, c, t):
    terms = _Terms(*z.shape)
    return terms, terms.evaluate(Problem(loss, y, c, z.shape[1], 0.0, 0.0),
                                 get_backend("cpu", 1, LOCAL), z + t)


@pytest.mark.parametrize("loss, K", [(SQUARED, 2), (LOGISTIC, 1), (MULTINOMIAL, 3)])
def test_shift_derivatives_are_those_of_the_loss_sum(loss, K):
    rng = np.random.default_rng(3)
    z = rng.normal(size=(50, K))
    y = (rng.normal(size=(50, K)) if loss == SQUARED else rng.choice([-1.0, 1.0], (50, 1))
         if loss == LOGISTIC else rng.integers(0, K, (50, 1)).astype(np.float64))
    c = rng.uniform(0.0, 2.0, 50)
    terms, _ = _shift_loss(loss, z, y, c, np.zeros(K))
    grad, hessian = intercept.shift_derivatives(terms, LOCAL)
    eps = 1e-5
    for k in range(K):
        e = eps * np.eye(K)[k]
        up, down = _shift_loss(loss, z, y, c, e), _shift_loss(loss, z, y, c, -e)
        assert grad[k] == pytest.approx((up[1] - down[1]) / (2 * eps), rel=1e-6, abs=1e-8)
        column = (intercept.shift_derivatives(up[0], LOCAL)[0]
                  - intercept.shift_derivatives(down[0], LOCAL)[0]) / (2 * eps)
        np.testing.assert_allclose(hessian[:, k], column, rtol=1e-6, atol=1e-8)
    step = intercept.newton_shift(grad, hessian, loss == MULTINOMIAL)
    np.testing.assert_allclose(hessian @ step, -grad, rtol=1e-9, atol=1e-12)
    if loss == MULTINOMIAL:  # no common shift: the softmax is blind to it
        assert abs(step.sum()) <= 1e-12 * np.abs(step).max()
