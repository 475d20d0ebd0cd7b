"""Whole-model behaviour: known splits, parity with xgboost, determinism."""
import json

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics import log_loss, mean_squared_error, roc_auc_score

import gbm

xgb = pytest.importorskip("xgboost")

PARITY = dict(n_estimators=100, max_depth=6, learning_rate=0.1, max_bin=256)


def test_known_best_split_is_found():
    # y jumps at x0 = 0.3; x1 is noise. A depth-1 tree must split x0 between 0.29 and 0.3.
    rng = np.random.default_rng(0)
    X = np.column_stack([np.round(rng.uniform(0, 1, 2000), 2), rng.normal(size=2000)])
    y = np.where(X[:, 0] < 0.3, -1.0, 2.0)
    booster = gbm.train({"max_depth": 1, "learning_rate": 1.0, "reg_lambda": 0.0}, X, y, 1)
    tree = booster.trees[0]
    assert tree.split_feature[0] == 0
    # The cut lies halfway between the two training values it separates.
    lower, upper = np.float32(0.29), np.float32(0.3)
    assert tree.threshold[0] == np.float32((np.float64(lower) + np.float64(upper)) / 2)
    # leaves hold the two means exactly (lambda = 0, learning rate 1)
    np.testing.assert_allclose(booster.predict(X), y, atol=1e-9)


def test_missing_values_learn_their_direction():
    # Rows with x missing behave like x > 0: they must go right with them.
    rng = np.random.default_rng(1)
    x = rng.normal(size=4000)
    y = (x > 0).astype(float)
    x[rng.random(4000) < 0.3] = np.nan
    y[np.isnan(x)] = 1.0
    booster = gbm.train({"max_depth": 1, "objective": "binary:logistic"}, x[:, None], y, 1)
    assert booster.trees[0].default_left[0] == 0
    assert booster.predict(np.array([[np.nan]]))[0] > 0.5


def _split_data(X, y, n_train):
    return X[:n_train], X[n_train:], y[:n_train], y[n_train:]


def test_binary_parity_with_xgboost():
    X, y = make_classification(20_000, 20, n_informative=10, random_state=0)
    Xtr, Xte, ytr, yte = _split_data(X, y, 16_000)
    ours = roc_auc_score(yte, gbm.GBMClassifier(**PARITY).fit(Xtr, ytr).predict_proba(Xte)[:, 1])
    theirs = roc_auc_score(yte, xgb.XGBClassifier(**PARITY, tree_method="hist").fit(Xtr, ytr)
                           .predict_proba(Xte)[:, 1])
    assert abs(ours - theirs) / theirs < 0.005, (ours, theirs)


def test_multiclass_parity_with_xgboost():
    X, y = make_classification(20_000, 20, n_informative=10, n_classes=4, random_state=1)
    Xtr, Xte, ytr, yte = _split_data(X, y, 16_000)
    ours = gbm.GBMClassifier(**PARITY).fit(Xtr, ytr)
    theirs = xgb.XGBClassifier(**PARITY, tree_method="hist").fit(Xtr, ytr)
    for metric in (lambda p: roc_auc_score(yte, p, multi_class="ovr"),):
        a, b = metric(ours.predict_proba(Xte)), metric(theirs.predict_proba(Xte))
        assert abs(a - b) / b < 0.005, (a, b)
    a, b = log_loss(yte, ours.predict_proba(Xte)), log_loss(yte, theirs.predict_proba(Xte))
    assert abs(a - b) / b < 0.05, (a, b)  # logloss is far more sensitive; a sanity bound


def test_regression_parity_with_xgboost():
    X, y = make_regression(20_000, 20, n_informative=10, noise=10, random_state=0)
    Xtr, Xte, ytr, yte = _split_data(X, y, 16_000)
    rmse = lambda m: mean_squared_error(yte, m.fit(Xtr, ytr).predict(Xte)) ** 0.5
    ours, theirs = rmse(gbm.GBMRegressor(**PARITY)), rmse(xgb.XGBRegressor(**PARITY, tree_method="hist"))
    assert abs(ours - theirs) / theirs < 0.005, (ours, theirs)


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic"])
def test_root_split_equals_xgboost_on_exact_bins(objective):
    rng = np.random.default_rng(5)
    X = rng.integers(0, 12, size=(3000, 6)).astype(np.float32)  # 12 values: exact bins
    y = X[:, 2] * 0.5 - (X[:, 4] > 6) * 3 + rng.normal(size=3000)
    if objective == "binary:logistic":
        y = (y > np.median(y)).astype(float)
    params = {"objective": objective, "max_depth": 3, "max_bin": 256}
    ours = gbm.train(params, X, y, 1).trees[0]
    model = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X, y), 1)
    root = json.loads(model.get_dump(dump_format="json")[0])
    assert f"f{ours.split_feature[0]}" == root["split"]
    # Same split of the training values: xgboost cuts at the upper value v, gbm halfway
    # between the integers v - 1 and v.
    assert ours.threshold[0] == np.float32(root["split_condition"]) - 0.5


def test_lossguide_respects_max_leaves_and_depthwise_respects_max_depth():
    X, y = make_regression(5000, 10, random_state=2)
    b = gbm.train({"grow_policy": "lossguide", "max_leaves": 7, "max_depth": 0}, X, y, 3)
    assert all(t.n_leaves == 7 for t in b.trees)
    b = gbm.train({"max_depth": 3}, X, y, 3)
    assert all(t.depth() == 3 and t.n_leaves == 8 for t in b.trees)
    b = gbm.train({"max_depth": 4, "max_leaves": 5}, X, y, 3)
    assert all(t.n_leaves == 5 for t in b.trees)


def test_lossguide_splits_best_leaf_first():
    # Same data: the lossguide tree with 2 leaves has the depthwise root split.
    X, y = make_regression(3000, 8, random_state=3)
    lg = gbm.train({"grow_policy": "lossguide", "max_leaves": 2}, X, y, 1).trees[0]
    dw = gbm.train({"max_depth": 1}, X, y, 1).trees[0]
    assert (lg.split_feature[0], lg.split_bin[0]) == (dw.split_feature[0], dw.split_bin[0])


@pytest.mark.parametrize("params", [
    {"objective": "binary:logistic", "max_depth": 6},
    {"objective": "multi:softprob", "num_class": 3, "grow_policy": "lossguide", "max_leaves": 31},
    {"objective": "reg:squarederror", "reg_alpha": 1.0, "max_delta_step": 0.5, "gamma": 0.1},
])
def test_model_is_identical_for_1_and_2_threads_and_repeated_fits(params):
    X, y = make_classification(30_000, 12, n_informative=8, n_classes=3, random_state=4)
    if params["objective"] == "binary:logistic":
        y = (y == 1).astype(float)
    X[::11, 3] = np.nan
    w = np.random.default_rng(0).uniform(0.5, 2, len(y))
    models = []
    for n in (1, 2, 2, 1):
        models.append(gbm.train(dict(params, n_jobs=n), X, y, 8, sample_weight=w).to_json())
        assert "n_jobs" not in json.loads(models[-1])["params"]  # a run setting, not the model
    assert all(m == models[0] for m in models)


def test_eval_sets_track_the_default_metric():
    X, y = make_classification(4000, 8, random_state=6)
    b = gbm.train({"objective": "binary:logistic"}, X[:3000], y[:3000], 5,
                  evals=[(X[3000:], y[3000:], "valid")])
    scores = b.evals_result["valid"]["logloss"]
    assert len(scores) == 5 and scores[-1] < scores[0]
    assert scores[-1] == pytest.approx(log_loss(y[3000:], b.predict(X[3000:])), rel=1e-9)


def test_iteration_range_and_output_margin():
    X, y = make_classification(2000, 5, random_state=7)
    b = gbm.train({"objective": "binary:logistic"}, X, y, 6)
    full = b.predict(X, output_margin=True)
    first = b.predict(X, output_margin=True, iteration_range=(0, 2))
    rest = b.predict(X, output_margin=True, iteration_range=(2, 6))
    np.testing.assert_allclose(first + rest - b.base_margin[0], full, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.predict(X), 1 / (1 + np.exp(-full)), rtol=1e-15)
    with pytest.raises(ValueError, match="iteration_range"):
        b.predict(X, iteration_range=(0, 7))


def test_pred_leaf_partitions_rows_like_xgboost():
    rng = np.random.default_rng(8)
    X = rng.integers(0, 6, size=(3000, 4)).astype(np.float32)  # exact bins: same trees
    y = X[:, 0] * 2 - X[:, 3] + rng.normal(size=3000)
    params = {"max_depth": 3}
    ours = gbm.train(params, X, y, 3).predict(X, pred_leaf=True)
    theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X, y), 3) \
        .predict(xgb.DMatrix(X), pred_leaf=True)
    assert ours.shape == theirs.shape == (3000, 3)
    for t in range(3):  # node numbering differs; the grouping of rows must not
        pairs = set(zip(ours[:, t].tolist(), theirs[:, t].tolist()))
        assert len(pairs) == len(set(ours[:, t])) == len(set(theirs[:, t]))
