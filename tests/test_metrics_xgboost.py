"""Pointwise metrics added for XGBoost's surface (``rmsle``, ``mape``), each equal to
xgboost's on the same predictions, with their domains refused by name."""
import numpy as np
import pytest

import gbm
from gbm.metrics import get_metric

xgb = pytest.importorskip("xgboost")


def _xgb_metric(name, y, pred, weight=None):
    """XGBoost's value of ``name`` on fixed predictions (base_margin, no trees)."""
    d = xgb.DMatrix(np.zeros((len(y), 1), np.float32), y, base_margin=pred, weight=weight)
    booster = xgb.train({"objective": "reg:squarederror", "eval_metric": name}, d, 0)
    return float(booster.eval(d).split(":")[-1])


@pytest.mark.parametrize("name", ["rmsle", "mape"])
@pytest.mark.parametrize("weighted", [False, True])
def test_equals_xgboost_on_the_same_predictions(name, weighted):
    rng = np.random.default_rng(3)
    n = 500
    y = rng.gamma(2.0, 2.0, n).astype(np.float32).astype(np.float64)
    y[:20] = -rng.uniform(0.1, 0.9, 20).astype(np.float32)  # negative labels, still > -1
    pred = (y + rng.normal(scale=0.5, size=n)).clip(-0.95).astype(np.float32).astype(np.float64)
    weight = rng.uniform(0.2, 3.0, n) if weighted else None
    ours = get_metric(name)(y, pred, weight)
    assert ours == pytest.approx(_xgb_metric(name, y, pred, weight), rel=1e-6)


def test_hand_values():
    y, pred = np.array([0.0, 1.0, 3.0]), np.array([np.e - 1.0, 1.0, 3.0])
    assert get_metric("rmsle")(y, pred, None) == pytest.approx(np.sqrt(1 / 3))
    y, pred, w = np.array([2.0, -4.0, 1.0]), np.array([1.0, -5.0, 1.0]), np.array([1.0, 2.0, 1.0])
    assert get_metric("mape")(y, pred, w) == pytest.approx((0.5 + 2 * 0.25) / 4)


@pytest.mark.parametrize("name, y, pred, message", [
    ("rmsle", [0.0, -1.0], [0.0, 0.0], r"y\[1\] = -1.0"),
    ("rmsle", [0.0, 1.0], [0.0, -2.0], r"prediction\[1\] = -2.0"),
    ("rmsle", [np.nan, 1.0], [0.0, 0.0], r"y\[0\] = nan"),
    ("mape", [1.0, 0.0], [1.0, 1.0], r"divides by the label: y\[1\] = 0"),
])
def test_outside_the_domain_names_the_row(name, y, pred, message):
    """XGBoost gives NaN (rmsle) or inf (mape); a metric that drives early stopping must not."""
    with pytest.raises(ValueError, match=message):
        get_metric(name)(np.array(y), np.array(pred), None)


def test_early_stopping_on_rmsle_picks_xgboost_s_best_round():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 8, size=(3000, 4)).astype(np.float32)  # exact bins in both
    y = np.expm1(0.3 * X[:, 0] - 0.2 * X[:, 1] + rng.normal(scale=0.4, size=3000)).clip(-0.9)
    params = {"max_depth": 3, "learning_rate": 0.3, "eval_metric": "rmsle",
              "objective": "reg:squarederror", "base_score": 1.0}
    ours = gbm.train(params, X[:2000], y[:2000], 200, evals=[(X[2000:], y[2000:], "v")],
                     early_stopping_rounds=5)
    theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X[:2000], y[:2000]), 200,
                       evals=[(xgb.DMatrix(X[2000:], y[2000:]), "v")],
                       early_stopping_rounds=5, verbose_eval=False)
    assert ours.best_iteration == theirs.best_iteration < 199
    assert ours.best_score == pytest.approx(theirs.best_score, rel=1e-4)


@pytest.mark.parametrize("weighted", [False, True])
def test_logloss_at_and_beyond_0_and_1_equals_xgboost(weighted):
    """Predictions of exactly 0 and 1 and outside [0, 1] (binary:logitraw's margins, a
    user's objective): each log's argument is floored at 1e-16, nothing is capped."""
    rng = np.random.default_rng(8)
    n = 400
    y = (rng.random(n) < 0.5).astype(np.float64)
    pred = np.concatenate([[0.0, 1.0, 0.0, 1.0, -0.5, 2.5, -3.0, 1.5],
                           rng.normal(0.5, 1.5, n - 8)]).astype(np.float32).astype(np.float64)
    y[:8] = [0, 0, 1, 1, 0, 0, 1, 1]
    weight = rng.uniform(0.2, 3.0, n) if weighted else None
    ours = get_metric("logloss")(y, pred, weight)
    # a positive row's prediction above 1 scores below 0 in both
    assert get_metric("logloss")(np.array([1.0]), np.array([2.5]), None) < 0
    assert ours == pytest.approx(_xgb_metric("logloss", y, pred, weight), rel=1e-6)


def test_mlogloss_of_a_zero_probability_equals_xgboost():
    y = np.array([0.0, 1.0, 2.0, 1.0])
    prob = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.2, 0.3, 0.5], [0.1, 0.9, 0.0]])
    d = xgb.DMatrix(np.zeros((4, 1), np.float32), y)
    margin = np.log(np.maximum(prob, 1e-300))  # softmax gives prob back (0 stays ~0)
    d.set_base_margin(margin.astype(np.float32).reshape(-1))
    booster = xgb.train({"objective": "multi:softprob", "num_class": 3,
                         "eval_metric": "mlogloss"}, d, 0)
    theirs = float(booster.eval(d).split(":")[-1])
    ours = get_metric("mlogloss")(y, booster.predict(d).astype(np.float64), None)
    assert ours == pytest.approx(theirs, rel=1e-6)
