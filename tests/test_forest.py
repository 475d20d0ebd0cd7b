"""Random forests: num_parallel_tree, rounds vs trees, GBMRFRegressor / GBMRFClassifier."""
import json

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_friedman1
from sklearn.metrics import mean_squared_error, roc_auc_score
from sklearn.utils.estimator_checks import (check_sample_weight_equivalence_on_dense_data,
                                            parametrize_with_checks)

import gbm
from gbm import Booster, GBMRFClassifier, GBMRFRegressor, GBMRegressor

X_MULTI, Y_MULTI = make_classification(1500, 8, n_informative=5, n_classes=3, random_state=0)
X_REG, Y_REG = make_friedman1(1500, 8, noise=0.5, random_state=0)
RF = {"learning_rate": 1.0, "subsample": 0.8, "colsample_bynode": 0.8, "reg_lambda": 1e-5,
      "max_depth": 4}
BOOSTED = {"objective": "multi:softprob", "num_class": 3, "max_depth": 3, "subsample": 0.7,
           "colsample_bynode": 0.7, "num_parallel_tree": 3}
# Row sampling: a row given weight 2 and a row repeated twice draw different samples, as in
# scikit-learn's own RandomForestRegressor (its checks expect the same failure).
_WEIGHT_CHECKS = ("check_sample_weight_equivalence_on_dense_data",
                  "check_sample_weight_equivalence_on_sparse_data")


def _expected_failures(estimator):
    if isinstance(estimator, (GBMRFRegressor, GBMRFClassifier)):
        return {name: "subsample=0.8 draws repeated rows independently" for name in _WEIGHT_CHECKS}
    return {}


@parametrize_with_checks([GBMRFRegressor(n_estimators=10), GBMRFClassifier(n_estimators=10),
                          GBMRegressor(n_estimators=5, num_parallel_tree=2)],
                         expected_failed_checks=_expected_failures, xfail_strict=True)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_weights_equal_repeats_without_row_sampling():
    # the expected failures above come from row sampling only
    check_sample_weight_equivalence_on_dense_data(
        "GBMRFRegressor", GBMRFRegressor(n_estimators=10, subsample=1.0))


# -- parity with xgboost -------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1])
def test_regressor_rmse_matches_xgboost(seed):
    xgb = pytest.importorskip("xgboost")
    X, y = make_friedman1(4000, 10, noise=1.0, random_state=seed)
    ours = GBMRFRegressor(n_estimators=50).fit(X[:3000], y[:3000])
    theirs = xgb.XGBRFRegressor(n_estimators=50, tree_method="hist").fit(X[:3000], y[:3000])
    a = mean_squared_error(y[3000:], ours.predict(X[3000:])) ** 0.5
    b = mean_squared_error(y[3000:], theirs.predict(X[3000:])) ** 0.5
    assert abs(a - b) / b < 0.01, (a, b)


@pytest.mark.parametrize("seed", [0, 1])
def test_classifier_auc_matches_xgboost(seed):
    xgb = pytest.importorskip("xgboost")
    X, y = make_classification(4000, 12, n_informative=6, random_state=seed)
    ours = GBMRFClassifier(n_estimators=50).fit(X[:3000], y[:3000])
    theirs = xgb.XGBRFClassifier(n_estimators=50, tree_method="hist").fit(X[:3000], y[:3000])
    a = roc_auc_score(y[3000:], ours.predict_proba(X[3000:])[:, 1])
    b = roc_auc_score(y[3000:], theirs.predict_proba(X[3000:])[:, 1])
    assert abs(a - b) / b < 0.01, (a, b)


def test_defaults_are_xgboosts_random_forest_defaults():
    xgb = pytest.importorskip("xgboost")
    for ours, theirs in ((GBMRFRegressor(), xgb.XGBRFRegressor()),
                         (GBMRFClassifier(), xgb.XGBRFClassifier())):
        mine = ours.get_params()
        for name in ("learning_rate", "subsample", "colsample_bynode", "reg_lambda"):
            assert mine[name] == theirs.get_params()[name], name
        assert mine["n_estimators"] == 100 and "num_parallel_tree" not in mine


def test_tree_order_is_xgboosts():
    xgb = pytest.importorskip("xgboost")
    theirs = xgb.train(dict(BOOSTED, tree_method="hist"), xgb.DMatrix(X_MULTI, Y_MULTI), 2)
    info = json.loads(theirs.save_raw("json"))["learner"]["gradient_booster"]["model"]
    ours = gbm.train(BOOSTED, X_MULTI, Y_MULTI, 2)
    assert ours.tree_group == info["tree_info"]  # round by round, group by group
    assert ours.iteration_indptr == info["iteration_indptr"] == [0, 9, 18]


# -- what a round is -----------------------------------------------------------------------
def test_one_round_forest_predicts_the_mean_of_its_trees():
    k = 5
    forest = gbm.train(dict(RF, num_parallel_tree=k), X_REG, Y_REG, 1)
    assert len(forest.trees) == k and forest.num_boosted_rounds == 1
    leaves = forest.predict(X_REG, pred_leaf=True)
    values = np.column_stack([t.value[leaves[:, i]] for i, t in enumerate(forest.trees)])
    # each tree holds learning_rate / k of its Newton step: the forest adds their mean
    unscaled = values * k
    np.testing.assert_allclose(forest.predict(X_REG),
                               forest.base_margin[0] + unscaled.mean(axis=1), rtol=1e-12)
    assert len({t.to_dict()["value"].__repr__() for t in forest.trees}) == k  # all differ
    # the first parallel tree is keyed as a lone tree: the same tree, scaled by 1 / k
    lone = gbm.train(dict(RF, num_parallel_tree=1), X_REG, Y_REG, 1).trees[0]
    np.testing.assert_array_equal(forest.trees[0].split_feature, lone.split_feature)
    leaf = lone.left_child < 0
    np.testing.assert_allclose(forest.trees[0].value[leaf] * k, lone.value[leaf], rtol=1e-12)


def test_parallel_trees_share_the_rounds_gradients():
    # without sampling every parallel tree sees the same rows, features and gradients
    b = gbm.train({"num_parallel_tree": 3, "max_depth": 3}, X_REG, Y_REG, 2)
    first, rest = b.trees[0].to_dict(), [t.to_dict() for t in b.trees[1:3]]
    assert all(r == first for r in rest)
    assert b.trees[3].to_dict() != first  # the next round starts from new gradients


def test_boosting_rounds_of_parallel_trees_and_iteration_range():
    b = gbm.train(BOOSTED, X_MULTI, Y_MULTI, 4)
    assert b.num_boosted_rounds == 4 and len(b.trees) == 4 * 3 * 3
    assert b.tree_group[:9] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    leaves = b.predict(X_MULTI, pred_leaf=True)
    assert leaves.shape == (X_MULTI.shape[0], 36)
    by_hand = np.tile(b.base_margin, (X_MULTI.shape[0], 1))
    for t in range(9, 27):  # rounds 1 and 2
        by_hand[:, b.tree_group[t]] += b.trees[t].value[leaves[:, t]]
    margin = b.predict(X_MULTI, output_margin=True, iteration_range=(1, 3))
    np.testing.assert_allclose(margin, by_hand, rtol=1e-12, atol=1e-12)
    assert b.predict(X_MULTI, pred_leaf=True, iteration_range=(1, 3)).shape[1] == 18
    with pytest.raises(ValueError, match="outside the model's rounds"):
        b.predict(X_MULTI, iteration_range=(0, 5))


def test_early_stopping_counts_rounds():
    params = dict(BOOSTED, learning_rate=1.0, max_depth=6)
    b = gbm.train(params, X_MULTI[:600], Y_MULTI[:600], 40, early_stopping_rounds=3,
                  evals=[(X_MULTI[1000:], Y_MULTI[1000:], "test")])
    rounds = b.num_boosted_rounds
    assert rounds < 40 and rounds == b.best_iteration + 4
    assert len(b.evals_result["test"]["mlogloss"]) == rounds
    assert b.best_score == min(b.evals_result["test"]["mlogloss"])
    model = GBMRegressor(n_estimators=40, num_parallel_tree=2, learning_rate=0.9, max_depth=6,
                         subsample=0.7, early_stopping_rounds=2)
    model.fit(X_REG[:1000], Y_REG[:1000], eval_set=[(X_REG[1000:], Y_REG[1000:])])
    booster = model.get_booster()
    assert booster.num_boosted_rounds == model.best_iteration + 3
    best = booster.predict(X_REG[1000:], iteration_range=(0, model.best_iteration + 1))
    np.testing.assert_array_equal(model.predict(X_REG[1000:]), best)


def test_evaluation_adds_every_parallel_tree():
    b = gbm.train(BOOSTED, X_MULTI[:1000], Y_MULTI[:1000], 3,
                  evals=[(X_MULTI[1000:], Y_MULTI[1000:], "test")])
    from gbm.metrics import get_metric

    for r in range(3):
        pred = b.predict(X_MULTI[1000:], iteration_range=(0, r + 1))
        expected = get_metric("mlogloss")(Y_MULTI[1000:], pred, None)
        assert b.evals_result["test"]["mlogloss"][r] == pytest.approx(expected, rel=1e-9)


def test_dumps_list_every_tree():
    b = gbm.train(dict(BOOSTED, max_depth=2), X_MULTI, Y_MULTI, 2)
    assert len(b.get_dump()) == len(b.get_dump(dump_format="json")) == 18
    pytest.importorskip("pandas")
    df = b.trees_to_dataframe()
    assert sorted(df["Tree"].unique()) == list(range(18))


# -- determinism, files, continued training ------------------------------------------------
def test_thread_count_does_not_change_the_forest():
    models = [gbm.train(dict(BOOSTED, n_jobs=n), X_MULTI, Y_MULTI, 2).to_json()
              for n in (1, 2)]
    assert models[0] == models[1]
    fits = [GBMRFClassifier(n_estimators=8, n_jobs=n).fit(X_MULTI, Y_MULTI) for n in (1, 2)]
    assert fits[0].get_booster().to_json() == \
        fits[1].get_booster().to_json()


@pytest.fixture(scope="module")
def three_rounds():
    return gbm.train(BOOSTED, X_MULTI, Y_MULTI, 3)


def test_save_load_round_trip(three_rounds, tmp_path):
    b = three_rounds
    b.save_model(tmp_path / "forest.json")
    loaded = Booster.load_model(tmp_path / "forest.json")
    assert loaded.to_json() == b.to_json()
    assert loaded.num_boosted_rounds == 3 and loaded.iteration_indptr == [0, 9, 18, 27]
    for rounds in ((0, 0), (1, 2)):
        np.testing.assert_array_equal(loaded.predict(X_MULTI, iteration_range=rounds),
                                      b.predict(X_MULTI, iteration_range=rounds))


def test_version_1_files_still_load():
    b = gbm.train({"objective": "multi:softprob", "num_class": 3, "max_depth": 2},
                  X_MULTI, Y_MULTI, 2)
    d = json.loads(b.to_json())
    d["version"] = 1
    del d["iteration_indptr"], d["params"]["num_parallel_tree"]
    old = Booster.from_json(json.dumps(d))
    assert old.num_boosted_rounds == 2 and old.iteration_indptr == [0, 3, 6]
    np.testing.assert_array_equal(old.predict(X_MULTI, iteration_range=(1, 2)),
                                  b.predict(X_MULTI, iteration_range=(1, 2)))


@pytest.mark.parametrize("indptr", [[0, 9, 27], [0, 10, 18, 27], [0, 9, 18], [1, 9, 18, 27],
                                    [0, 18, 9, 27], "0,9", [0, 9.0, 18, 27]])
def test_bad_iteration_indptr_is_rejected(three_rounds, indptr):
    d = json.loads(three_rounds.to_json())
    d["iteration_indptr"] = indptr
    if indptr == [0, 9, 27]:  # a legal file: two rounds, the second of 2 trees per group
        assert Booster.from_json(json.dumps(d)).num_boosted_rounds == 2
        return
    with pytest.raises(ValueError, match="iteration_indptr must rise from 0"):
        Booster.from_json(json.dumps(d))
    del d["iteration_indptr"]
    with pytest.raises(ValueError, match=r"missing fields \['iteration_indptr'\]"):
        Booster.from_json(json.dumps(d))


def test_continued_training_equals_training_at_once(three_rounds, tmp_path):
    once = gbm.train(BOOSTED, X_MULTI, Y_MULTI, 5)
    three_rounds.save_model(tmp_path / "three.json")
    for init in (three_rounds, tmp_path / "three.json"):
        more = gbm.train(BOOSTED, X_MULTI, Y_MULTI, 2, init_model=init)
        assert more.to_json() == once.to_json()


def test_continuing_with_another_forest_size_counts_rounds():
    boosted = gbm.train({"max_depth": 3}, X_REG, Y_REG, 2)
    forest = gbm.train(dict(RF, num_parallel_tree=4), X_REG, Y_REG, 1, init_model=boosted)
    assert forest.iteration_indptr == [0, 1, 2, 6] and forest.num_boosted_rounds == 3
    np.testing.assert_array_equal(forest.predict(X_REG, iteration_range=(0, 2)),
                                  boosted.predict(X_REG))
    # the estimator's xgb_model: the forest becomes one more round
    first = GBMRFRegressor(n_estimators=6).fit(X_REG, Y_REG)
    second = GBMRFRegressor(n_estimators=4).fit(X_REG, Y_REG, xgb_model=first)
    assert second.get_booster().iteration_indptr == [0, 6, 10]
    assert mean_squared_error(Y_REG, second.predict(X_REG)) < \
        mean_squared_error(Y_REG, first.predict(X_REG))


# -- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize("value, error, message", [
    (0, ValueError, "num_parallel_tree must be >= 1, got 0"),
    (-2, ValueError, "num_parallel_tree must be >= 1, got -2"),
    (1.5, TypeError, "num_parallel_tree must be an integer, got float 1.5"),
    ("three", TypeError, "num_parallel_tree must be an integer, got str 'three'"),
    (True, TypeError, "num_parallel_tree must be an integer, got bool True"),
])
def test_bad_num_parallel_tree_is_rejected(value, error, message):
    with pytest.raises(error, match=message):
        gbm.train({"num_parallel_tree": value}, X_REG, Y_REG, 1)
    with pytest.raises(error, match=message):
        GBMRegressor(n_estimators=2, num_parallel_tree=value).fit(X_REG, Y_REG)


@pytest.mark.parametrize("Estimator", [GBMRFRegressor, GBMRFClassifier])
def test_random_forest_estimators_reject_bad_settings(Estimator):
    y = Y_REG if Estimator is GBMRFRegressor else (Y_REG > Y_REG.mean())
    for n in (0, 2.5, None):
        with pytest.raises(ValueError, match="n_estimators must be an integer >= 1"):
            Estimator(n_estimators=n).fit(X_REG, y)
    with pytest.raises(NotImplementedError, match="early_stopping_rounds and callbacks"):
        Estimator(early_stopping_rounds=3).fit(X_REG, y, eval_set=[(X_REG, y)])
    with pytest.raises(NotImplementedError, match="early_stopping_rounds and callbacks"):
        Estimator(n_estimators=2).fit(X_REG, y, callbacks=[gbm.callback.TrainingCallback()])
    with pytest.raises(TypeError, match="num_parallel_tree"):
        Estimator(num_parallel_tree=3)  # the forest size is n_estimators
