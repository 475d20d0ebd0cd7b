"""Continued training: start from an existing model."""
import json

import numpy as np
import pytest
from sklearn.datasets import make_classification

import gbm

X, y = make_classification(5000, 10, n_informative=6, n_classes=3, random_state=0)
PARAMS = {"objective": "multi:softprob", "num_class": 3, "max_depth": 4, "subsample": 0.8,
          "colsample_bynode": 0.7}


def _trees(booster):
    return json.loads(booster.to_json())["trees"]


def test_ten_then_five_rounds_equal_fifteen(tmp_path):
    once = gbm.train(PARAMS, X, y, 15)
    first = gbm.train(PARAMS, X, y, 10)
    first.save_model(tmp_path / "ten.json")
    for init in (first, tmp_path / "ten.json"):
        continued = gbm.train(PARAMS, X, y, 5, init_model=init)
        assert continued.num_boosted_rounds == 15
        assert _trees(continued) == _trees(once)
        np.testing.assert_array_equal(continued.predict(X), once.predict(X))


def test_estimator_continues_from_a_fitted_estimator():
    binary = (y == 1).astype(int)
    first = gbm.GBMClassifier(n_estimators=4).fit(X, binary)
    more = gbm.GBMClassifier(n_estimators=3).fit(X, binary, xgb_model=first)
    assert more.get_booster().num_boosted_rounds == 7
    assert _trees(more.get_booster())[:4] == _trees(first.get_booster())


def test_eval_sets_start_from_the_continued_model():
    first = gbm.train(PARAMS, X[:4000], y[:4000], 6)
    continued = gbm.train(PARAMS, X[:4000], y[:4000], 2, init_model=first,
                          evals=[(X[4000:], y[4000:], "test")])
    once = gbm.train(PARAMS, X[:4000], y[:4000], 8, evals=[(X[4000:], y[4000:], "test")])
    assert continued.evals_result["test"]["mlogloss"] == once.evals_result["test"]["mlogloss"][-2:]


@pytest.mark.parametrize("init_params, X_used, message", [
    ({"objective": "multi:softprob", "num_class": 3}, X[:, :5], "trained on 10 features but X has 5"),
    ({"objective": "multi:softprob", "num_class": 4}, X, "num_class=4"),
])
def test_mismatched_init_model_is_rejected(init_params, X_used, message):
    init = gbm.train(init_params, X, np.where(y == 2, 3, y) if init_params["num_class"] == 4 else y, 1)
    with pytest.raises(ValueError, match=message):
        gbm.train({"objective": "multi:softprob", "num_class": 3}, X_used, y, 1, init_model=init)
