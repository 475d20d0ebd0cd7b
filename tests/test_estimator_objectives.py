"""The estimators' ``objective`` argument and the objectives' own parameters."""
import json

import numpy as np
import pytest

import gbm

rng = np.random.default_rng(0)
X = rng.normal(size=(600, 4))
y = np.exp(0.5 * X[:, 0]) + rng.gamma(1.0, 0.3, 600)


@pytest.mark.parametrize("objective, extra", [
    ("reg:absoluteerror", {}),
    ("reg:quantileerror", {"quantile_alpha": 0.8}),
    ("reg:pseudohubererror", {"huber_slope": 2.0}),
    ("count:poisson", {}),
    ("reg:gamma", {}),
    ("reg:tweedie", {"tweedie_variance_power": 1.2}),
])
def test_regressor_trains_the_objective_train_trains(objective, extra):
    model = gbm.GBMRegressor(objective=objective, n_estimators=5, max_depth=3, **extra).fit(X, y)
    booster = gbm.train(dict({"objective": objective, "max_depth": 3}, **extra), X, y, 5)
    assert model.get_booster().params["objective"] == objective
    assert json.loads(model.get_booster().to_json())["trees"] == json.loads(booster.to_json())["trees"]
    np.testing.assert_array_equal(model.predict(X), booster.predict(X))


def test_regressor_predicts_one_column_per_quantile_level():
    model = gbm.GBMRegressor(objective="reg:quantileerror", quantile_alpha=[0.1, 0.9],
                             n_estimators=20, max_depth=3).fit(X, y)
    pred = model.predict(X)
    assert pred.shape == (600, 2)
    assert np.mean(pred[:, 0] < pred[:, 1]) > 0.9


def test_classifier_objectives():
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])
    model = gbm.GBMClassifier(objective="binary:logistic", n_estimators=3).fit(X, y3)
    assert model.get_booster().params["objective"] == "multi:softprob"  # as XGBoost switches
    assert model.predict_proba(X).shape == (600, 3)
    y2 = (X[:, 0] > 0).astype(int)
    model = gbm.GBMClassifier(objective="multi:softmax", n_estimators=3).fit(X, y2)
    assert model.get_booster().params["num_class"] == 2
    assert model.predict_proba(X).shape == (600, 2)


@pytest.mark.parametrize("estimator, objective", [
    (gbm.GBMRegressor, "binary:logistic"),
    (gbm.GBMRegressor, "rank:ndcg"),
    (gbm.GBMClassifier, "reg:squarederror"),
    (gbm.GBMRegressor, "reg:nonsense"),
])
def test_objective_of_another_kind_is_rejected(estimator, objective):
    with pytest.raises(ValueError, match=f"objective must be one of .* got '{objective}'"):
        estimator(objective=objective, n_estimators=2).fit(X, (y > 1).astype(int))


def test_objective_parameters_are_validated():
    with pytest.raises(ValueError, match="quantile_alpha must be < 1"):
        gbm.GBMRegressor(objective="reg:quantileerror", quantile_alpha=1.5).fit(X, y)
    with pytest.raises(ValueError, match=r"huber_slope must be >= 1\.17549"):
        gbm.GBMRegressor(objective="reg:pseudohubererror", huber_slope=0).fit(X, y)
