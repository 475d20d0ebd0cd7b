"""XGBoost's ways of passing train/cv arguments and parameters: the positional order
after a DMatrix, params as a list of pairs, numbers as text, and XGBoost's parameters gbm
takes (with no effect on the model, or refused with the reason)."""
import numpy as np
import pytest

import gbm
from gbm.io import gbm_json
from gbm.params import validate_params

rng = np.random.default_rng(0)
X = rng.random((300, 5))
y = X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.random(300)
DTRAIN = gbm.DMatrix(X, label=y)


def _file(booster):
    return gbm_json.to_dict(booster)


def test_positional_evals_after_a_dmatrix_are_xgboosts_order():
    result = {}
    by_position = gbm.train({"max_depth": 3}, DTRAIN, 4, [(DTRAIN, "train")], None, None,
                            2, result)
    by_name = gbm.train({"max_depth": 3}, DTRAIN, num_boost_round=4,
                        evals=[(DTRAIN, "train")], early_stopping_rounds=2)
    assert _file(by_position) == _file(by_name)
    assert list(result["train"]["rmse"]) == list(by_name.evals_result["train"]["rmse"])
    assert by_position.num_boosted_rounds == 4


def test_xgboosts_defaults_none_are_taken():
    booster = gbm.train({}, DTRAIN, 2, None, None, None, None, None, True, None, None, None)
    assert booster.num_boosted_rounds == 2
    gbm.cv({}, DTRAIN, 2, nfold=2, callbacks=None, fpreproc=None, verbose_eval=None,
           folds=None, as_pandas=False)


def test_positional_arguments_with_arrays_keep_gbms_order():
    a = gbm.train({}, X, y, 3)
    assert a.num_boosted_rounds == 3
    # a DMatrix then y=None: gbm's order still (the round count third)
    b = gbm.train({}, DTRAIN, None, 3, evals=[(DTRAIN, "t")])
    assert b.num_boosted_rounds == 3 and _file(b) == _file(gbm.train({}, DTRAIN, 3))


def test_positional_and_named_twice_or_too_many_are_refused():
    with pytest.raises(TypeError, match="evals both by position"):
        gbm.train({}, DTRAIN, 2, [(DTRAIN, "t")], evals=[(DTRAIN, "t")])
    with pytest.raises(TypeError, match="at most 12 positional arguments after a DMatrix"):
        gbm.train({}, DTRAIN, 2, *([None] * 10))


def test_cv_takes_xgboosts_positional_order():
    a = gbm.cv({"max_depth": 2}, DTRAIN, 3, 4, as_pandas=False)
    b = gbm.cv({"max_depth": 2}, DTRAIN, num_boost_round=3, nfold=4, as_pandas=False)
    assert a == b and len(a["test-rmse-mean"]) == 3


def test_params_as_pairs_accumulate_eval_metric_and_replace_the_rest():
    pairs = [("max_depth", 2), ("eval_metric", "rmse"), ("max_depth", 3),
             ("eval_metric", ["mae", "mape"])]
    p = validate_params(pairs)
    assert p["max_depth"] == 3 and p["eval_metric"] == ["rmse", "mae", "mape"]
    booster = gbm.train(pairs, DTRAIN, 2, evals=[(DTRAIN, "t")])
    assert list(booster.evals_result["t"]) == ["rmse", "mae", "mape"]
    folds = gbm.cv(pairs, DTRAIN, 2, nfold=2, as_pandas=False)
    assert "test-mae-mean" in folds and "test-mape-mean" in folds
    with pytest.raises(TypeError, match=r"params\[1\] must be a \(name, value\) pair"):
        validate_params([("max_depth", 2), ("eta",)])


def test_numbers_and_flags_as_text():
    as_text = validate_params({"eta": "0.1", "max_depth": "6", "lambda": " 2 ", "one_drop": "True",
                               "booster": "dart", "debug_synchronize": "false"})
    assert (as_text["learning_rate"], as_text["max_depth"], as_text["reg_lambda"]) == (0.1, 6, 2.0)
    assert as_text["one_drop"] is True and as_text["debug_synchronize"] is False
    assert _file(gbm.train({"eta": "0.1", "max_depth": "3"}, DTRAIN, 2)) == _file(
        gbm.train({"eta": 0.1, "max_depth": 3}, DTRAIN, 2))
    with pytest.raises(TypeError, match="max_depth must be an integer, got str '3.5'"):
        validate_params({"max_depth": "3.5"})
    with pytest.raises(TypeError, match="learning_rate must be a real number, got str 'fast'"):
        validate_params({"eta": "fast"})
    with pytest.raises(ValueError, match="must be finite"):
        validate_params({"eta": "nan"})


def test_learning_rate_zero_adds_nothing():
    booster = gbm.train({"eta": 0}, DTRAIN, 3)
    assert np.all(booster.predict(X) == booster.predict(X)[0])
    assert booster.predict(X)[0] == pytest.approx(np.mean(y))


@pytest.mark.parametrize("extra", [
    {"sampling_method": "uniform"},
    {"updater": "grow_quantile_histmaker"},
    {"updater": "grow_quantile_histmaker,prune", "gamma": 0.5},
    {"updater": ["grow_quantile_histmaker", "sync"]},
    {"max_cached_hist_node": 1},
    {"max_cached_hist_node": 2**31},
    {"debug_synchronize": True},
    {"process_type": "default"},
    {"lambdarank_unbiased": False},
])
def test_accepted_xgboost_settings_train_the_same_model_file(extra):
    base = {k: v for k, v in extra.items() if k == "gamma"}
    assert _file(gbm.train(dict(base, **extra), DTRAIN, 3)) == _file(gbm.train(base, DTRAIN, 3))


@pytest.mark.parametrize("params, error, message", [
    ({"sampling_method": "gradient_based"}, ValueError, "'gradient_based' is not implemented"),
    ({"sampling_method": "random"}, ValueError, r"sampling_method must be one of \['uniform'\]"),
    ({"updater": "prune"}, ValueError, "must start with a tree grower"),
    ({"updater": "grow_colmaker"}, ValueError, "XGBoost's exact grower"),
    ({"updater": "grow_histmaker,prune"}, ValueError, "XGBoost's approx grower"),
    ({"updater": "grow_quantile_histmaker,refresh"}, ValueError, "recomputes an existing"),
    ({"updater": "coord_descent"}, ValueError, "gblinear updater"),
    ({"updater": "grow_quantile_histmaker,colour"}, ValueError, "takes 'prune' and 'sync'"),
    ({"updater": "grow_gpu_hist"}, ValueError, "set device='cuda'"),
    ({"updater": 3}, TypeError, "updater must be updater names"),
    ({"process_type": "update"}, ValueError, "process_type='update'"),
    ({"lambdarank_unbiased": True}, ValueError, "lambdarank_unbiased=True is not implemented"),
    ({"max_cached_hist_node": 0}, ValueError, "max_cached_hist_node must be >= 1"),
    ({"eta": -0.1}, ValueError, "learning_rate must be >= 0"),
])
def test_refused_settings_name_the_parameter(params, error, message):
    with pytest.raises(error, match=message):
        validate_params(params)


def test_settings_without_effect_stay_out_of_model_files():
    params = {"max_cached_hist_node": 8, "debug_synchronize": True, "updater":
              "grow_quantile_histmaker", "disable_default_eval_metric": True,
              "sampling_method": "uniform", "lambdarank_bias_norm": 1.0}
    written = _file(gbm.train(params, DTRAIN, 2))["params"]
    assert not set(params) & set(written)


def test_disable_default_eval_metric():
    booster = gbm.train({"disable_default_eval_metric": True}, DTRAIN, 2,
                        evals=[(DTRAIN, "t")])
    assert booster.evals_result == {}

    def mean_error(y_true, prediction, weight):
        return "me", float(np.mean(prediction - y_true))

    booster = gbm.train({"disable_default_eval_metric": "1"}, DTRAIN, 2,
                        evals=[(DTRAIN, "t")], custom_metric=mean_error)
    assert list(booster.evals_result["t"]) == ["me"]
    booster = gbm.train({"disable_default_eval_metric": True, "eval_metric": "mae"}, DTRAIN,
                        2, evals=[(DTRAIN, "t")])
    assert list(booster.evals_result["t"]) == ["mae"]
    with pytest.raises(ValueError, match="early_stopping_rounds needs a metric"):
        gbm.train({"disable_default_eval_metric": True}, DTRAIN, 2, evals=[(DTRAIN, "t")],
                  early_stopping_rounds=1)


@pytest.mark.parametrize("gamma", [0.0, 0.5, 5.0])
def test_in_xgboost_prune_after_hist_changes_no_tree(gamma):
    """Why gbm takes ",prune" after its grower as a no-op: XGBoost's hist keeps no split
    below gamma either, so its prune updater finds nothing to remove."""
    xgb = pytest.importorskip("xgboost")
    d = xgb.DMatrix(X, label=y)
    params = {"gamma": gamma, "max_depth": 6, "tree_method": "hist"}
    plain = xgb.train(params, d, 5).get_dump()
    pruned = xgb.train(dict(params, updater="grow_quantile_histmaker,prune"), d, 5).get_dump()
    assert plain == pruned


def test_a_base_score_per_output_is_xgboosts():
    xgb = pytest.importorskip("xgboost")
    Y = np.stack([y, 1.0 - y], axis=1)
    labels = (Y > 0.5).astype(np.float64)
    for objective, target, scores in (("reg:squarederror", Y, [0.1, 0.2]),
                                      ("binary:logistic", labels, np.array([0.2, 0.7]))):
        params = {"objective": objective, "base_score": scores, "eta": 0}
        ours = gbm.train(params, X, target, 1)  # eta 0: each output stays at its start
        theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X, label=target), 1)
        np.testing.assert_allclose(ours.predict(X, output_margin=True),
                                   theirs.predict(xgb.DMatrix(X), output_margin=True),
                                   rtol=1e-6)
        np.testing.assert_allclose(ours.predict(X), np.tile(scores, (X.shape[0], 1)),
                                   rtol=1e-12)
    quantiles = gbm.train({"objective": "reg:quantileerror", "quantile_alpha": [0.1, 0.5],
                           "base_score": np.zeros(2, np.float32)}, X, y, 1)
    np.testing.assert_array_equal(quantiles.base_margin, [0.0, 0.0])


def test_a_base_score_vector_must_fit_the_outputs():
    with pytest.raises(ValueError, match="base_score has 3 values but the model has 1"):
        gbm.train({"base_score": [0.1, 0.2, 0.3]}, X, y, 1)
    with pytest.raises(ValueError, match=r"base_score must be in \(0, 1\) for binary:logistic"):
        validate_params({"objective": "binary:logistic", "base_score": [0.5, 1.5]})
    with pytest.raises(TypeError, match=r"base_score\[1\] must be a real number"):
        validate_params({"base_score": [0.5, "x"]})
    with pytest.raises(ValueError, match="non-empty list"):
        validate_params({"base_score": []})
