"""survival:cox and survival:aft against oracles outside gbm: Cox's gradients against a
written-out double loop and a hand case, the starting margins, metrics and trained models
against xgboost (exact bins: features with few distinct values), model files both ways."""
import math

import numpy as np
import pytest

import gbm
from gbm.metrics import get_metric
from gbm.objectives import get_objective
from gbm.params import validate_params

xgb = pytest.importorskip("xgboost")

DISTRIBUTIONS = ("normal", "logistic", "extreme")


def survival_data(n, seed, ties=False):
    """Features with 6 values each (exact bins), times log-linear in two of them, censored
    by an independent exponential time: (X, signed Cox labels, AFT intervals (n, 2))."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, 4)).astype(np.float32)
    t = np.exp(0.35 * X[:, 0] - 0.25 * X[:, 1] + 0.1 * X[:, 2] * (X[:, 3] > 2)
               + rng.normal(scale=0.6, size=n))
    c = rng.exponential(4.0, n)
    event = t <= c
    observed = np.where(event, t, c)
    if ties:
        observed = np.ceil(observed * 2) / 2  # half-unit times: many ties
    observed = observed.astype(np.float32).astype(np.float64)  # what xgboost stores
    return (X, np.where(event, observed, -observed),
            np.column_stack([observed, np.where(event, observed, np.inf)]))


def _cox_by_definition(m, y):
    """(g, h) of XGBoost's Cox loss, one row at a time: row i sums over the events j
    sorted at or before it (by |y|, ties by index) of e_i / R_j and e_i^2 / R_j^2, R_j the
    sum of e over the rows with |y| >= |y_j|."""
    n = len(m)
    e = [math.exp(v) for v in m]
    key = [(abs(y[i]), i) for i in range(n)]
    risk = [math.fsum(e[k] for k in range(n) if abs(y[k]) >= abs(y[j])) for j in range(n)]
    g, h = np.empty(n), np.empty(n)
    for i in range(n):
        before = [j for j in range(n) if y[j] > 0 and key[j] <= key[i]]
        r = math.fsum(1.0 / risk[j] for j in before)
        s = math.fsum(1.0 / risk[j] ** 2 for j in before)
        g[i] = e[i] * r - (1.0 if y[i] > 0 else 0.0)
        h[i] = e[i] * r - e[i] ** 2 * s
    return g, h


def test_cox_gradients_by_hand():
    # times 1, 2, 3, all events, margins 0: R = 3, 2, 1
    g, h = get_objective(validate_params({"objective": "survival:cox"})).gradients(
        np.zeros((3, 1)), np.array([2.0, 1.0, 3.0]), np.ones(3))
    np.testing.assert_allclose(g[:, 0], [-1 / 6, -2 / 3, 5 / 6], rtol=1e-15)
    np.testing.assert_allclose(h[:, 0], [17 / 36, 2 / 9, 17 / 36], rtol=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_cox_gradients_by_definition(seed):
    rng = np.random.default_rng(seed)
    n = 60
    y = rng.integers(1, 12, n).astype(np.float64) * np.where(rng.random(n) < 0.4, -1, 1)
    m = rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, n)
    g, h = get_objective(validate_params({"objective": "survival:cox"})).gradients(
        m[:, None], y, w)
    expected_g, expected_h = _cox_by_definition(m, y)
    np.testing.assert_allclose(g[:, 0], expected_g * w, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(h[:, 0], expected_h * w, rtol=1e-12, atol=1e-13)


def test_cox_gradients_at_large_margins_are_finite():
    objective = get_objective(validate_params({"objective": "survival:cox"}))
    y = np.array([1.0, -2.0, 3.0, 4.0])
    m = np.array([800.0, 805.0, 790.0, 799.0])
    g, h = objective.gradients(m[:, None], y, np.ones(4))
    shifted = objective.gradients(m[:, None] - 800.0, y, np.ones(4))
    np.testing.assert_allclose(g, shifted[0], rtol=1e-14)  # only differences matter
    np.testing.assert_allclose(h, shifted[1], rtol=1e-14)
    assert np.isfinite(g).all() and np.isfinite(h).all()
    with pytest.raises(FloatingPointError, match="survival:cox: the margins span"):
        objective.gradients(np.array([[0.0], [-800.0]]), np.array([1.0, 2.0]), np.ones(2))


@pytest.mark.parametrize("weighted", [False, True])
def test_starting_margins_equal_xgboosts(weighted):
    X, signed, intervals = survival_data(400, 1, ties=True)
    w = np.random.default_rng(2).uniform(0.5, 2.0, 400) if weighted else None
    theirs = xgb.train({"objective": "survival:cox"}, xgb.DMatrix(X, signed, weight=w), 1)
    ours = gbm.train({"objective": "survival:cox"}, X, signed, 1, sample_weight=w)
    base = float(_xgb_base_score(theirs))
    assert math.exp(ours.base_margin[0]) == pytest.approx(base, rel=1e-6)
    aft = gbm.train({"objective": "survival:aft"}, X, intervals, 1)
    assert math.exp(aft.base_margin[0]) == pytest.approx(0.5, rel=1e-15)  # XGBoost's 0.5


def _xgb_base_score(booster):
    import json

    config = json.loads(booster.save_config())
    return json.loads(config["learner"]["learner_model_param"]["base_score"])[0]


def _xgb_aft_dmatrix(X, intervals, **kwargs):
    d = xgb.DMatrix(X, **kwargs)
    d.set_float_info("label_lower_bound", intervals[:, 0])
    d.set_float_info("label_upper_bound", intervals[:, 1])
    return d


def test_cox_nloglik_equals_xgboosts():
    X, signed, _ = survival_data(500, 3, ties=True)
    margin = np.random.default_rng(4).normal(size=500).astype(np.float32)
    d = xgb.DMatrix(X, signed, base_margin=margin)
    theirs = float(xgb.train({"objective": "survival:cox"}, d, 0).eval(d).split(":")[1])
    ours = get_metric("cox-nloglik")(signed, margin.astype(np.float64), None)
    assert ours == pytest.approx(theirs, rel=1e-6)


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_aft_metrics_equal_xgboosts(distribution):
    """The same margins in both (xgboost: a base margin and one round of learning rate 0),
    weighted rows of every censoring kind, eval_metric given (see docs: xgboost's default
    metric and Booster.eval ignore aft_loss_distribution_scale)."""
    rng = np.random.default_rng(5)
    X, _, intervals = survival_data(600, 6)
    intervals[::7, 0] = 0.0  # left-censored rows
    intervals[3::7, 1] = intervals[3::7, 0] * 2.5  # interval-censored ones
    margin = rng.normal(scale=1.5, size=600).astype(np.float32)
    w = rng.uniform(0.5, 2.0, 600).astype(np.float32)
    params = {"objective": "survival:aft", "aft_loss_distribution": distribution,
              "aft_loss_distribution_scale": 0.8,
              "eval_metric": ["aft-nloglik", "interval-regression-accuracy"]}
    d = _xgb_aft_dmatrix(X, intervals, base_margin=margin, weight=w)
    result = {}
    xgb.train(dict(params, learning_rate=0.0), d, 1, evals=[(d, "d")], evals_result=result,
              verbose_eval=False)
    p = validate_params(params)
    for name in params["eval_metric"]:
        ours = get_metric(name, p)(intervals, margin.astype(np.float64), w.astype(np.float64))
        assert ours == pytest.approx(result["d"][name][0], rel=1e-6), name


def _parity(params, train, test, rounds=30):
    """(gbm's, xgboost's) last test metric, both trained with ``params``."""
    (X, y), (X_test, y_test) = train, test
    name = params["eval_metric"]
    ours = gbm.train(params, X, y, rounds, evals=[(X_test, y_test, "test")])
    if params["objective"] == "survival:cox":
        d, d_test = xgb.DMatrix(X, y), xgb.DMatrix(X_test, y_test)
    else:
        d, d_test = _xgb_aft_dmatrix(X, y), _xgb_aft_dmatrix(X_test, y_test)
    result = {}
    xgb.train(dict(params, tree_method="hist"), d, rounds, evals=[(d_test, "test")],
              evals_result=result, verbose_eval=False)
    return ours.evals_result["test"][name][-1], result["test"][name][-1]


BASE = {"max_depth": 3, "learning_rate": 0.1, "max_bin": 256}


@pytest.mark.parametrize("ties", [False, True])
def test_cox_training_matches_xgboost(ties):
    X, signed, _ = survival_data(3000, 7, ties)
    params = dict(BASE, objective="survival:cox", eval_metric="cox-nloglik")
    ours, theirs = _parity(params, (X[:2000], signed[:2000]), (X[2000:], signed[2000:]))
    assert ours == pytest.approx(theirs, rel=0.005)


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_aft_training_matches_xgboost(distribution):
    X, _, intervals = survival_data(3000, 8)
    intervals[::9, 0] = 0.0
    params = dict(BASE, objective="survival:aft", aft_loss_distribution=distribution,
                  aft_loss_distribution_scale=1.1, eval_metric="aft-nloglik")
    ours, theirs = _parity(params, (X[:2000], intervals[:2000]), (X[2000:], intervals[2000:]))
    assert ours == pytest.approx(theirs, rel=0.005)


@pytest.mark.parametrize("params", [
    {"objective": "survival:cox"},
    {"objective": "survival:aft", "aft_loss_distribution": "logistic",
     "aft_loss_distribution_scale": 0.6},
], ids=["cox", "aft"])
def test_model_files_both_ways(params, tmp_path):
    X, signed, intervals = survival_data(500, 9)
    cox = params["objective"] == "survival:cox"
    y = signed if cox else intervals
    ours = gbm.train(dict(params, max_depth=3), X, y, 5)
    path = tmp_path / "exported.json"
    ours.save_model(path, format="xgboost")
    exported = xgb.Booster(model_file=str(path))
    np.testing.assert_allclose(exported.predict(xgb.DMatrix(X)), ours.predict(X), rtol=2e-6)
    d = xgb.DMatrix(X, signed) if cox else _xgb_aft_dmatrix(X, intervals)
    theirs = xgb.train(dict(params, max_depth=3), d, 5)
    imported = gbm.Booster.from_xgboost(theirs)
    np.testing.assert_allclose(imported.predict(X), theirs.predict(xgb.DMatrix(X)), rtol=2e-6)
    for key, value in params.items():
        assert imported.params[key] == pytest.approx(value) if isinstance(value, float) \
            else imported.params[key] == value
    ours.save_model(tmp_path / "gbm.json")
    loaded = gbm.Booster.load_model(tmp_path / "gbm.json")
    assert loaded.params == ours.params
    np.testing.assert_array_equal(loaded.predict(X), ours.predict(X))
