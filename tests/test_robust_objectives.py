"""Absolute error, quantile and pseudo-Huber objectives: gradients, XGBoost's quantile
rules, leaf refresh, parity with xgboost, bad parameters."""
import json

import numpy as np
import pytest

import gbm
from gbm.objectives.adaptive import quantile, refresh_leaves
from gbm.metrics import get_metric
from gbm.objectives import get_objective
from gbm.params import validate_params

xgb = pytest.importorskip("xgboost")


def _fd(loss, m, y, eps=1e-5, eps2=1e-3):
    """Central differences: the first derivative, and the second (with a wider step,
    against cancellation)."""
    d1 = (loss(m + eps, y) - loss(m - eps, y)) / (2 * eps)
    d2 = (loss(m + eps2, y) - 2 * loss(m, y) + loss(m - eps2, y)) / eps2**2
    return d1, d2


@pytest.mark.parametrize("slope", [1.0, 2.5])
def test_pseudo_huber_gradients_match_finite_differences(slope):
    rng = np.random.default_rng(0)
    m, y, w = rng.normal(0, 3, 300), rng.normal(0, 3, 300), rng.uniform(0.5, 2, 300)
    objective = get_objective(validate_params({"objective": "reg:pseudohubererror",
                                               "huber_slope": slope}))
    grad, hess = objective.gradients(m[:, None], y, w)
    d1, d2 = _fd(lambda mm, yy: slope**2 * (np.sqrt(1 + ((mm - yy) / slope) ** 2) - 1), m, y)
    np.testing.assert_allclose(grad[:, 0], w * d1, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hess[:, 0], w * d2, rtol=1e-3, atol=1e-6)


@pytest.mark.parametrize("objective, alphas", [("reg:quantileerror", [0.1, 0.5, 0.9]),
                                               ("reg:absoluteerror", [0.5])])
def test_quantile_gradients_match_finite_differences(objective, alphas):
    rng = np.random.default_rng(1)
    y = rng.normal(size=400)
    m = np.repeat((y + np.where(rng.random(400) < 0.5, -1, 1) * rng.uniform(0.1, 2, 400))[:, None],
                  len(alphas), axis=1)  # never at the kink m == y
    w = rng.uniform(0.5, 2, 400)
    params = validate_params({"objective": objective, "quantile_alpha": alphas})
    grad, hess = get_objective(params).gradients(m, y, w)
    for k, a in enumerate(alphas):
        def pinball(mm, yy):
            d = yy - mm
            return np.where(d >= 0, a * d, (a - 1) * d)

        d1, _ = _fd(pinball, m[:, k], y)
        scale = 2.0 if objective == "reg:absoluteerror" else 1.0  # |d| = 2 * pinball at 0.5
        np.testing.assert_allclose(grad[:, k], scale * w * d1, rtol=1e-6, atol=1e-8)
        np.testing.assert_array_equal(hess[:, k], w)  # XGBoost's constant hessian


def test_quantile_follows_xgboost_definitions():
    rng = np.random.default_rng(2)
    v = rng.normal(size=101)
    for a in (0.005, 0.1, 0.37, 0.5, 0.9, 0.995):  # unweighted: NIST interpolation
        assert quantile(v, a) == pytest.approx(np.quantile(v, a, method="weibull"))
    w = rng.uniform(0.1, 3, 101)
    order = np.argsort(v)
    cdf = np.cumsum(w[order])
    for a in (0.1, 0.5, 0.9):  # weighted: first value whose cumulative weight reaches a * total
        assert quantile(v, a, w) == v[order][np.argmax(cdf >= a * cdf[-1])]
    assert np.isnan(quantile(v[:0], 0.5))
    assert quantile(v[:1], 0.3) == v[0]


@pytest.mark.parametrize("params, weighted", [
    ({"objective": "reg:absoluteerror"}, False),
    ({"objective": "reg:quantileerror", "quantile_alpha": [0.2, 0.7]}, False),
    ({"objective": "reg:quantileerror", "quantile_alpha": 0.8}, True),
    ({"objective": "reg:pseudohubererror", "huber_slope": 1.5}, True),
])
def test_base_score_equals_xgboost(params, weighted):
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(500, 2)), rng.standard_t(3, 500)
    w = rng.uniform(0.5, 2, 500) if weighted else None
    ours = gbm.train(params, X, y, 0, sample_weight=w)
    theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X, y, weight=w), 1)
    base = json.loads(theirs.save_config())["learner"]["learner_model_param"]["base_score"]
    np.testing.assert_allclose(ours.base_margin, np.atleast_1d(json.loads(base)), rtol=1e-5)


def test_leaves_are_residual_quantiles_like_xgboost():
    # Integer features: exact bins on both sides, so both libraries split alike.
    rng = np.random.default_rng(4)
    X = rng.integers(0, 5, size=(2000, 3)).astype(float)
    y = 3 * X[:, 0] + rng.standard_t(2, 2000)
    params = {"objective": "reg:quantileerror", "quantile_alpha": 0.7, "max_depth": 2,
              "learning_rate": 0.5}
    ours = gbm.train(params, X, y, 1)
    theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X, y), 1)
    leaf = ours.predict(X, pred_leaf=True)[:, 0]
    tree = ours.trees[0]
    for node in np.unique(leaf):  # each leaf: 0.5 * the 0.7-quantile of y - base
        expected = 0.5 * np.quantile(y[leaf == node] - ours.base_margin[0], 0.7, method="weibull")
        assert tree.value[node] == pytest.approx(expected)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X)), rtol=1e-5, atol=1e-5)


def test_only_the_trees_rows_count_and_an_empty_leaf_keeps_its_value():
    # the grower's rows are the tree's row sample: rows 3 and 4 were left out
    rows = np.array([0, 1, 2, 5])
    residual = np.array([1.0, 2.0, 3.0, 100.0, 200.0, 5.0])
    out = refresh_leaves(np.array([7.0, 9.0]), rows, np.array([0, 3]), np.array([3, 3]),
                         residual, 0.5, 1.0)
    assert out[0] == 2.0 and out[1] == 9.0  # the second leaf has no sampled row: Newton value


def _data(seed, n=12_000):
    """Features on a grid of 40 values: exact bins in both libraries, so differences come
    from the objectives, not from bin edges."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 40, size=(n, 5)) / 8.0 - 2.5
    y = 2 * X[:, 0] + np.sin(2 * X[:, 1]) + X[:, 2] * X[:, 3] + rng.standard_t(4, n)
    return X, y


PARITY = [
    ("reg:absoluteerror", {}),
    ("reg:quantileerror", {"quantile_alpha": 0.9}),
    ("reg:quantileerror", {"quantile_alpha": [0.1, 0.5, 0.9]}),
    ("reg:pseudohubererror", {"huber_slope": 2.0}),
]


@pytest.mark.parametrize("objective, extra", PARITY)
def test_parity_with_xgboost(objective, extra):
    X, y = _data(5)
    params = dict({"objective": objective, "max_depth": 4, "learning_rate": 0.1}, **extra)
    train, test = slice(0, 9_000), slice(9_000, None)
    ours = gbm.train(params, X[train], y[train], 60)
    theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X[train], y[train]), 60)
    metric = get_metric(get_objective(ours.params).default_metric, ours.params)
    a = metric(y[test], ours.predict(X[test]), None)
    b = metric(y[test], theirs.predict(xgb.DMatrix(X[test])), None)
    assert abs(a - b) / abs(b) < 0.01, (objective, a, b)


@pytest.mark.parametrize("name, params", [
    ("quantile", {"objective": "reg:quantileerror", "quantile_alpha": [0.25, 0.75]}),
    ("mphe", {"objective": "reg:pseudohubererror", "huber_slope": 0.7}),
    ("mae", {"objective": "reg:absoluteerror"}),
])
def test_metrics_equal_xgboost(name, params):
    rng = np.random.default_rng(6)
    X, y, w = rng.normal(size=(800, 3)), rng.normal(size=800), rng.uniform(0.5, 2, 800)
    dtrain = xgb.DMatrix(X, y, weight=w)
    theirs = xgb.train(dict(params, tree_method="hist", eval_metric=name), dtrain, 3)
    reported = float(theirs.eval(dtrain).split(":")[-1])
    ours = get_metric(name, validate_params(params))(y, theirs.predict(dtrain), w)
    assert ours == pytest.approx(reported, rel=1e-5)


def test_multiple_quantiles_give_one_column_each_in_order():
    X, y = _data(7, 6000)
    booster = gbm.train({"objective": "reg:quantileerror", "quantile_alpha": [0.1, 0.5, 0.9],
                         "max_depth": 3}, X, y, 40, evals=[(X, y, "train")])
    pred = booster.predict(X)
    assert pred.shape == (6000, 3)
    for k, a in enumerate((0.1, 0.5, 0.9)):  # each column covers about its share of labels
        assert abs(np.mean(y <= pred[:, k]) - a) < 0.03
    assert "quantile" in booster.evals_result["train"]


@pytest.mark.parametrize("objective", ["reg:absoluteerror", "reg:quantileerror"])
def test_deterministic_and_continuable(objective):
    X, y = _data(8, 5000)
    w = np.random.default_rng(8).uniform(0.5, 2, 5000)
    params = {"objective": objective, "quantile_alpha": 0.3, "subsample": 0.7, "max_depth": 4}
    one = gbm.train(dict(params, n_jobs=1), X, y, 12, sample_weight=w)
    two = gbm.train(dict(params, n_jobs=2), X, y, 12, sample_weight=w)
    trees = json.loads(one.to_json())["trees"]
    assert json.loads(two.to_json())["trees"] == trees
    first = gbm.train(params, X, y, 8, sample_weight=w)
    continued = gbm.train(params, X, y, 4, sample_weight=w, init_model=first)
    assert json.loads(continued.to_json())["trees"] == trees


@pytest.mark.parametrize("params, error, message", [
    ({"quantile_alpha": 0.0}, ValueError, "quantile_alpha must be > 0"),
    ({"quantile_alpha": 1.0}, ValueError, "quantile_alpha must be < 1"),
    ({"quantile_alpha": []}, ValueError, "quantile_alpha must be a number in"),
    ({"quantile_alpha": [0.5, float("nan")]}, ValueError, "quantile_alpha must be finite"),
    ({"quantile_alpha": "half"}, TypeError, "quantile_alpha must be a real number"),
    ({"huber_slope": 0.0}, ValueError, r"huber_slope must be >= 1\.17549"),
    ({"huber_slope": -1.0}, ValueError, r"huber_slope must be >= 1\.17549"),
])
def test_bad_parameters(params, error, message):
    with pytest.raises(error, match=message):
        gbm.train(dict(params, objective="reg:quantileerror"), np.ones((4, 1)), [1.0, 2, 3, 4], 1)
