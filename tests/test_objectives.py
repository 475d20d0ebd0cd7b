"""Objectives: gradients against finite differences of their losses, and parity with
xgboost on the test metric."""
import numpy as np
import pytest

import gbm
from gbm.metrics import get_metric
from gbm.objectives import get_objective
from gbm.params import validate_params

xgb = pytest.importorskip("xgboost")

RHO = 1.3
LOSSES = {  # per-row loss of a margin m and label y, up to terms free of m
    "reg:squarederror": lambda m, y: 0.5 * (m - y) ** 2,
    "count:poisson": lambda m, y: np.exp(m) - y * m,
    "reg:gamma": lambda m, y: y * np.exp(-m) + m,
    "reg:tweedie": lambda m, y: (-y * np.exp((1 - RHO) * m) / (1 - RHO)
                                 + np.exp((2 - RHO) * m) / (2 - RHO)),
    "binary:logistic": lambda m, y: np.logaddexp(0, m) - y * m,
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_match_finite_differences(name):
    rng = np.random.default_rng(0)
    m = rng.normal(0, 1, 200)
    y = rng.uniform(0.1, 3, 200) if name != "binary:logistic" else (rng.random(200) < 0.5) * 1.0
    w = rng.uniform(0.5, 2, 200)
    params = validate_params({"objective": name, "tweedie_variance_power": RHO})
    grad, hess = get_objective(params).gradients(m[:, None], y, w)
    loss, eps = LOSSES[name], 1e-5
    d1 = (loss(m + eps, y) - loss(m - eps, y)) / (2 * eps)
    d2 = (loss(m + eps, y) - 2 * loss(m, y) + loss(m - eps, y)) / eps**2
    np.testing.assert_allclose(grad[:, 0], w * d1, rtol=1e-6, atol=1e-8)
    # count:poisson's hessian is raised by exp(max_delta_step), as in XGBoost
    factor = np.exp(params["max_delta_step"]) if name == "count:poisson" else 1.0
    np.testing.assert_allclose(hess[:, 0], factor * w * d2, rtol=1e-3, atol=1e-6)


def test_softmax_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    m, y, w = rng.normal(size=(50, 3)), rng.integers(0, 3, 50).astype(float), np.ones(50)
    grad, hess = get_objective(validate_params({"objective": "multi:softmax", "num_class": 3})) \
        .gradients(m, y, w)

    def loss(mm):
        return -(mm[np.arange(50), y.astype(int)] - np.log(np.exp(mm).sum(axis=1)))

    for k in range(3):
        step = np.zeros((50, 3))
        step[:, k] = 1e-5
        d1 = (loss(m + step) - loss(m - step)) / 2e-5
        d2 = (loss(m + step) - 2 * loss(m) + loss(m - step)) / 1e-10
        np.testing.assert_allclose(grad[:, k], d1, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(hess[:, k], 2 * d2, rtol=1e-3, atol=1e-6)  # XGBoost's 2p(1-p)


def _count_data(n=12_000):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n, 8))
    mean = np.exp(0.6 * X[:, 0] - 0.4 * X[:, 1] + 0.3 * np.sin(2 * X[:, 2]))
    return X, mean, rng


PARITY = [
    ("count:poisson", lambda mean, rng: rng.poisson(mean).astype(float), {}),
    ("reg:gamma", lambda mean, rng: rng.gamma(2.0, mean / 2.0), {}),
    ("reg:tweedie", lambda mean, rng: rng.poisson(mean) * rng.gamma(2.0, 0.5, mean.size),
     {"tweedie_variance_power": 1.4}),
]


@pytest.mark.parametrize("objective, make_y, extra", PARITY)
def test_parity_with_xgboost(objective, make_y, extra):
    X, mean, rng = _count_data()
    y = make_y(mean, rng)
    params = dict({"objective": objective, "max_depth": 4, "learning_rate": 0.1}, **extra)
    train, test = slice(0, 9_000), slice(9_000, None)
    ours = gbm.train(params, X[train], y[train], 60)
    theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X[train], y[train]), 60)
    metric = get_metric(get_objective(ours.params).default_metric)
    a = metric(y[test], ours.predict(X[test]), np.ones(y[test].size))
    b = metric(y[test], theirs.predict(xgb.DMatrix(X[test])), np.ones(y[test].size))
    assert abs(a - b) / abs(b) < 0.01, (objective, a, b)


def test_softmax_predicts_classes_like_xgboost():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6000, 6))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)
    params = {"objective": "multi:softmax", "num_class": 3, "max_depth": 3}
    ours = gbm.train(params, X[:4000], y[:4000], 30, evals=[(X[4000:], y[4000:], "test")])
    theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X[:4000], y[:4000]), 30)
    pred = ours.predict(X[4000:])
    assert pred.shape == (2000,) and set(np.unique(pred)) <= {0.0, 1.0, 2.0}
    ours_error = np.mean(pred != y[4000:])
    theirs_error = np.mean(theirs.predict(xgb.DMatrix(X[4000:])) != y[4000:])
    assert abs(ours_error - theirs_error) <= 0.01
    assert ours.evals_result["test"]["merror"][-1] == pytest.approx(ours_error)


@pytest.mark.parametrize("objective, y, message", [
    ("count:poisson", [-1.0, 2.0], r"count:poisson needs labels >= 0"),
    ("reg:gamma", [0.0, 2.0], r"reg:gamma needs labels > 0"),
    ("reg:tweedie", [-0.5, 1.0], r"reg:tweedie needs labels >= 0"),
])
def test_label_domains(objective, y, message):
    with pytest.raises(ValueError, match=message):
        gbm.train({"objective": objective}, np.zeros((2, 1)), y, 1)


@pytest.mark.parametrize("params, message", [
    ({"objective": "reg:tweedie", "tweedie_variance_power": 2.0}, "tweedie_variance_power must be < 2"),
    ({"objective": "reg:tweedie", "tweedie_variance_power": 0.9}, "tweedie_variance_power must be >= 1"),
    ({"objective": "multi:softmax"}, "num_class must be >= 2"),
    ({"objective": "count:poisson", "base_score": -1.0}, "base_score must be > 0"),
])
def test_bad_objective_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        gbm.train(params, np.ones((4, 1)), [1.0, 2.0, 3.0, 1.0], 1)


def test_poisson_caps_leaves_at_0_7_unless_told_otherwise():
    assert validate_params({"objective": "count:poisson"})["max_delta_step"] == 0.7
    assert validate_params({"objective": "count:poisson", "max_delta_step": 0})["max_delta_step"] == 0
    assert validate_params({})["max_delta_step"] == 0
