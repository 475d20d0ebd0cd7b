"""Multi-target regression (issue 11, item 5): ``y`` of shape (n, k), one output group
per target (XGBoost's ``multi_strategy="one_output_per_tree"``), every regression
objective, in ``train`` and the regressors."""
import numpy as np
import pytest

import gbm
from gbm.params import REGRESSION


def _data(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    Y = np.column_stack([X[:, 0] + 0.1 * rng.normal(size=n), X[:, 1] - X[:, 2],
                         np.abs(X[:, 3]) + 0.5])
    return X, Y


@pytest.mark.parametrize("objective", REGRESSION)
def test_each_target_is_its_own_model(objective):
    """k targets = k single-target models trained side by side (XGBoost's rule, which
    holds there bit for bit too), for every regression objective."""
    X, Y = _data()
    Y = np.abs(Y) + 0.1  # positive labels: valid for the log-link objectives too
    params = {"objective": objective, "max_depth": 3}
    if objective == "reg:logistic":
        Y = Y / (Y.max() + 0.1)  # in (0, 1)
    if objective == "reg:expectileerror":
        params["expectile_alpha"] = 0.7  # one level: several levels are several outputs
    booster = gbm.train(params, X, Y, 3)
    pred = booster.predict(X)
    assert pred.shape == Y.shape and booster.predict(X, output_margin=True).shape == Y.shape
    separate = np.column_stack([gbm.train(params, X, Y[:, j], 3).predict(X) for j in range(3)])
    np.testing.assert_array_equal(pred, separate)


@pytest.mark.filterwarnings("ignore:A column-vector y was passed")  # y (n, 1), on purpose
def test_scores_files_and_estimator_match_xgboost():
    xgb = pytest.importorskip("xgboost")
    X, Y = _data(400)
    result = {}
    booster = gbm.train({"max_depth": 3}, X, Y, 10, evals=[(X, Y, "train")],
                        evals_result=result)
    pred = booster.predict(X)
    # rmse over every (row, target) entry, as xgboost scores it
    assert result["train"]["rmse"][-1] == pytest.approx(np.sqrt(np.mean((pred - Y) ** 2)))
    theirs = {}
    xgb.train({"max_depth": 3, "multi_strategy": "one_output_per_tree"},
              xgb.DMatrix(X, label=Y), 10, evals=[(xgb.DMatrix(X, label=Y), "train")],
              evals_result=theirs, verbose_eval=False)
    assert result["train"]["rmse"][-1] == pytest.approx(theirs["train"]["rmse"][-1], rel=0.1)
    # the model file keeps the targets
    loaded = gbm.Booster.from_json(booster.to_json())
    np.testing.assert_array_equal(loaded.predict(X), pred)
    assert '"num_target": 3' in booster.to_json()
    # the regressor: same trees, predictions (n, k), R^2 over targets
    est = gbm.GBMRegressor(n_estimators=10, max_depth=3).fit(X, Y)
    np.testing.assert_array_equal(est.predict(X), pred)
    assert est.score(X, Y) > 0.9
    assert gbm.GBMRegressor(n_estimators=2, max_depth=2).fit(X, Y[:, :1]).predict(X).ndim == 1


def test_multi_target_errors():
    X, Y = _data()
    with pytest.raises(ValueError, match="needs a regression objective"):
        gbm.train({"objective": "multi:softprob", "num_class": 2, "num_target": 2}, X,
                  (Y > 0).astype(float)[:, :2], 1)
    # binary:logistic with several label columns is multi-label classification (XGBoost's)
    assert gbm.train({"objective": "binary:logistic"}, X, (Y > 0).astype(float),
                     1).predict(X).shape == Y.shape
    with pytest.raises(ValueError, match="num_target=2 but y has 3 column"):
        gbm.train({"num_target": 2}, X, Y, 1)
    with pytest.raises(ValueError, match=r"target 1 \(y\[:, 1\]\)"):
        gbm.train({"objective": "count:poisson"}, X, np.abs(Y) * [1, -1, 1], 1)
    with pytest.raises(ValueError, match="several quantile_alpha"):
        gbm.train({"objective": "reg:quantileerror", "quantile_alpha": [0.2, 0.8]}, X, Y, 1)
    # GBMClassifier: a 2-D y of 0/1 is multi-label (as XGBClassifier); other values are not
    assert gbm.GBMClassifier(n_estimators=1).fit(X, Y > 0).predict_proba(X).shape == Y.shape
    with pytest.raises(ValueError, match="holds 0 or 1 in every cell"):
        gbm.GBMClassifier().fit(X, np.round(Y))


@pytest.mark.parametrize("objective, metric", [("binary:logitraw", "logloss"),
                                               ("binary:hinge", "error")])
@pytest.mark.parametrize("strategy", ["one_output_per_tree", "multi_output_tree"])
def test_multi_label_logitraw_and_hinge_track_xgboost(objective, metric, strategy):
    """XGBoost 3.2 takes a 2-D 0/1 y for binary:logitraw and binary:hinge too."""
    xgb = pytest.importorskip("xgboost")
    from sklearn.datasets import make_multilabel_classification

    X, Y = make_multilabel_classification(1024, random_state=2026)
    params = {"objective": objective, "multi_strategy": strategy, "eval_metric": metric}
    ours, theirs = {}, {}
    booster = gbm.train(params, X, Y, 8, evals=[(X, Y, "t")], evals_result=ours)
    xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X, label=Y), 8,
              evals=[(xgb.DMatrix(X, label=Y), "t")], evals_result=theirs, verbose_eval=False)
    assert booster.predict(X).shape == Y.shape
    assert ours["t"][metric][0] == pytest.approx(theirs["t"][metric][0], rel=1e-5)
    np.testing.assert_allclose(ours["t"][metric], theirs["t"][metric], rtol=0.05, atol=0.005)
