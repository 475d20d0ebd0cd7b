"""Multi-output models through XGBoost's JSON, both ways (issue 44): every model xgboost
writes for several outputs (one tree per target, vector leaves, quantile levels,
classes, several labels; 0 rounds too) imports and predicts as xgboost does, and every
such gbm model (expectile levels too, which xgboost does not have) exports, loads in
xgboost, and imports back with the same predictions, to float32 rounding."""
import json
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import gbm
from gbm.io.xgboost_json import to_xgboost

xgb = pytest.importorskip("xgboost")

N_ROWS = 160
FAMILIES = ("targets", "multilabel", "quantile", "softprob", "softmax")


def _case(family, k, seed):
    """``(params, X, y)`` of ``k`` outputs: ``k`` regression targets, ``k`` binary labels,
    ``k`` quantile levels of one target, ``k`` classes."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_ROWS, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    clean = np.nan_to_num(X)
    score = clean[:, :1] * np.arange(1, k + 1) - clean[:, 1:2] + rng.normal(size=(N_ROWS, k))
    params = {"max_depth": 3, "learning_rate": 0.5, "max_bin": 64}
    if family == "targets":
        return params, X, score
    if family == "multilabel":
        return dict(params, objective="binary:logistic"), X, (score > 0).astype(np.float64)
    if family == "quantile":
        alphas = np.linspace(0.1, 0.9, k).round(2).tolist()
        return dict(params, objective="reg:quantileerror", quantile_alpha=alphas), X, score[:, 0]
    labels = np.argmax(score, axis=1).astype(np.float64)
    return dict(params, objective=f"multi:{family}", num_class=k), X, labels


def _xgb_predictions(booster, X):
    d = xgb.DMatrix(X)
    return (np.asarray(booster.predict(d, output_margin=True), np.float64),
            np.asarray(booster.predict(d), np.float64))


def _assert_predicts_as(model, margin, value, X):
    """gbm's margins and predictions of ``X`` are xgboost's, to float32 rounding."""
    np.testing.assert_allclose(model.predict(X, output_margin=True).reshape(margin.shape),
                               margin, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(model.predict(X).reshape(value.shape), value, rtol=1e-5,
                               atol=2e-6)


def _xgboost_model(family, strategy, k, rounds, seed):
    params, X, y = _case(family, k, seed)
    params = dict(params, tree_method="hist", multi_strategy=strategy, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xgb.train(params, xgb.DMatrix(X, y), rounds), X


STRATEGIES = ("one_output_per_tree", "multi_output_tree")
SMALL = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("family", FAMILIES)
@SMALL
@given(k=st.integers(2, 3), rounds=st.sampled_from([0, 1, 3]), seed=st.integers(0, 2**16))
def test_every_xgboost_multi_output_model_imports(family, strategy, k, rounds, seed):
    """xgboost's model of any multi-output objective and strategy, 0 rounds too: the
    import predicts as xgboost does, and its export loads in xgboost and predicts so."""
    booster, X = _xgboost_model(family, strategy, k, rounds, seed)
    margin, value = _xgb_predictions(booster, X)
    model = gbm.Booster.from_xgboost(booster)
    _assert_predicts_as(model, margin, value, X)
    back = xgb.Booster(model_file=bytearray(json.dumps(to_xgboost(model)).encode()))
    np.testing.assert_allclose(_xgb_predictions(back, X)[1], value, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("family,strategy,rounds", [
    ("targets", "one_output_per_tree", 4),  # XGBRegressor's default on a y of k columns
    ("quantile", "multi_output_tree", 4),  # vector leaves of two quantile levels
    ("targets", "one_output_per_tree", 0),
    ("multilabel", "one_output_per_tree", 0)])
def test_models_once_refused_import(family, strategy, rounds):
    """The models ``from_xgboost`` refused ("learner_model_param gives 2 outputs ... the
    objective has 1"; "cannot be combined with several targets") import and predict as
    xgboost does; a 0-round model's never-estimated base score is the margin itself."""
    booster, X = _xgboost_model(family, strategy, 2, rounds, 0)
    margin, value = _xgb_predictions(booster, X)
    _assert_predicts_as(gbm.Booster.from_xgboost(booster), margin, value, X)


def test_xgb_regressor_on_several_targets_imports():
    """The estimator's default model of a y of shape (n, 3): one tree per target."""
    _, X, y = _case("targets", 3, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = xgb.XGBRegressor(n_estimators=4, max_depth=3).fit(X, y)
    model = gbm.Booster.from_xgboost(est)
    np.testing.assert_allclose(model.predict(X), est.predict(X), rtol=1e-5, atol=2e-6)


GBM_FAMILIES = FAMILIES + ("expectile",)


def _gbm_model(family, strategy, k, rounds, seed):
    if family == "expectile":
        params, X, y = _case("quantile", k, seed)
        params = dict(params, objective="reg:expectileerror",
                      expectile_alpha=params.pop("quantile_alpha"))
    else:
        params, X, y = _case(family, k, seed)
    params = dict(params, multi_strategy=strategy, random_state=seed)
    return gbm.train(params, gbm.DMatrix(X, y), rounds), X


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("family", GBM_FAMILIES)
@SMALL
@given(k=st.integers(2, 3), rounds=st.sampled_from([0, 1, 3]), seed=st.integers(0, 2**16))
def test_every_gbm_multi_output_model_exports_and_reloads(family, strategy, k, rounds, seed):
    """gbm's model of any multi-output objective and strategy, 0 rounds too: xgboost
    loads its export and predicts as gbm does (not expectile: xgboost has no such
    objective), and the export imports back with gbm's predictions."""
    model, X = _gbm_model(family, strategy, k, rounds, seed)
    margin = model.predict(X, output_margin=True)
    value = model.predict(X)
    exported = json.dumps(to_xgboost(model))
    _assert_predicts_as(gbm.Booster.from_xgboost(exported), margin, value, X)
    if family != "expectile":
        loaded = xgb.Booster(model_file=bytearray(exported.encode()))
        m, v = _xgb_predictions(loaded, X)
        np.testing.assert_allclose(m.reshape(margin.shape), margin, rtol=1e-5, atol=2e-6)
        np.testing.assert_allclose(v.reshape(value.shape), value, rtol=1e-5, atol=2e-6)


def test_quantile_levels_of_several_targets_are_named():
    """A file of 2 quantile levels and 4 outputs (2 targets: a model gbm cannot hold)
    is refused naming the fields, not with a crash."""
    booster, _ = _xgboost_model("quantile", "one_output_per_tree", 2, 1, 0)
    d = json.loads(bytes(booster.save_raw(raw_format="json")))
    d["learner"]["learner_model_param"]["num_target"] = "4"
    with pytest.raises(ValueError, match="num_target 4"):
        gbm.Booster.from_xgboost(d)
