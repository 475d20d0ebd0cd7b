"""User-defined objectives and metrics."""
import json

import numpy as np
import pytest
from sklearn.datasets import make_classification

import gbm
from gbm.kernels import elementary

X, y = make_classification(3000, 8, random_state=0)
w = np.random.default_rng(0).uniform(0.5, 2, 3000)


def _trees(booster):
    return json.loads(booster.to_json())["trees"]


def squared_error(margin, label, weight):
    return (margin - label) * weight, weight


# The built-in objectives use gbm's own exp (kernels/elementary.py: the same bits on every
# backend, where NumPy's differs between CPUs); a custom objective gives the same model
# when it computes the same numbers, so this one calls it too.
_exp = np.vectorize(elementary.cpu.exp, otypes=[np.float64])


def logistic(margin, label, weight):
    p = 1 / (1 + _exp(-margin))
    return (p - label) * weight, np.maximum(p * (1 - p), 1e-16) * weight


@pytest.mark.parametrize("objective, fn", [("reg:squarederror", squared_error),
                                           ("binary:logistic", logistic)])
def test_custom_objective_equal_to_builtin_gives_the_same_model(objective, fn):
    params = {"objective": objective, "max_depth": 4}
    builtin = gbm.train(params, X, y, 8, sample_weight=w)
    custom = gbm.train(params, X, y, 8, sample_weight=w, obj=fn)
    assert _trees(custom) == _trees(builtin)


def test_custom_metric_is_recorded_and_drives_early_stopping():
    def brier(label, pred, weight):
        return "brier", float(np.average((pred - label) ** 2, weights=weight))

    b = gbm.train({"objective": "binary:logistic", "learning_rate": 0.5}, X[:2000], y[:2000], 200,
                  evals=[(X[2000:], y[2000:], "valid")], custom_metric=brier,
                  early_stopping_rounds=5)
    scores = b.evals_result["valid"]["brier"]
    assert "logloss" in b.evals_result["valid"]
    assert b.best_iteration == int(np.argmin(scores)) and len(scores) == b.best_iteration + 6
    p = b.predict(X[2000:], iteration_range=(0, 3))
    assert scores[2] == pytest.approx(np.mean((p - y[2000:]) ** 2))


@pytest.mark.parametrize("fn, message", [
    (lambda m, yy, ww: (m[:10], m), r"gradient has shape \(10,\)"),
    (lambda m, yy, ww: (m, m * np.nan), "hessian holds NaN"),
])
def test_bad_custom_objective_output(fn, message):
    with pytest.raises(ValueError, match=message):
        gbm.train({}, X, y, 2, obj=fn)
