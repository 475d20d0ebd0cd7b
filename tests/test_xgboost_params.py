"""XGBoost's parameters and signatures (issue 11, item 4): settings copied from an
xgboost script work, with xgboost installed as the reference where behaviour is shared."""
import math

import numpy as np
import pytest

import gbm
from gbm.callback import TrainingCallback

pytest.importorskip("sklearn")


def _data(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    return X, X[:, 0] * 2 - X[:, 1] + rng.normal(scale=0.3, size=n)


def test_tree_method_verbosity_validate_parameters():
    X, y = _data()
    ref = gbm.train({"max_depth": 2}, X, y, 3).predict(X)
    for extra in ({"tree_method": "hist"}, {"tree_method": "auto"}, {"verbosity": 0},
                  {"validate_parameters": False, "not_a_gbm_param": 1}):
        np.testing.assert_array_equal(gbm.train(dict(max_depth=2, **extra), X, y, 3).predict(X),
                                      ref)
    for method in ("exact", "approx"):
        with pytest.raises(ValueError, match=f"tree_method='{method}' is not implemented"):
            gbm.train({"tree_method": method}, X, y, 1)
        with pytest.raises(ValueError, match="tree_method"):
            gbm.GBMRegressor(tree_method=method).fit(X, y)
    with pytest.raises(ValueError, match="unknown parameter 'not_a_gbm_param'"):
        gbm.train({"not_a_gbm_param": 1}, X, y, 1)
    est = gbm.GBMRegressor(n_estimators=3, max_depth=2, tree_method="hist", verbosity=0,
                           validate_parameters=True).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), ref)


def test_scale_pos_weight_is_a_weight_on_positive_rows():
    xgb = pytest.importorskip("xgboost")
    X, signal = _data()
    y = (signal > 1.0).astype(float)  # about a quarter positive
    # few distinct values: every value its own bin, so row weights cannot move bin edges
    X = np.round(X * 4) / 4
    params = {"objective": "binary:logistic", "max_depth": 3}
    ours = gbm.train(dict(params, scale_pos_weight=3.0), X, y, 10).predict(X)
    as_weights = gbm.train(params, X, y, 10, sample_weight=np.where(y == 1, 3.0, 1.0)).predict(X)
    np.testing.assert_allclose(ours, as_weights, rtol=1e-12)
    theirs = xgb.train(dict(params, scale_pos_weight=3.0), xgb.DMatrix(X, label=y), 10).predict(
        xgb.DMatrix(X))
    plain = gbm.train(params, X, y, 10).predict(X)
    # the same shift as xgboost: positives weighted up raise the mean probability
    assert ours.mean() > plain.mean() + 0.05
    assert abs(ours.mean() - theirs.mean()) < 0.03
    with pytest.raises(ValueError, match="scale_pos_weight applies to binary:logistic, "
                       "reg:logistic, binary:logitraw only"):
        gbm.train({"scale_pos_weight": 2.0}, X, signal, 1)
    clf = gbm.GBMClassifier(n_estimators=10, max_depth=3, scale_pos_weight=3.0).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], ours, rtol=1e-12)


def test_missing_value():
    X, y = _data()
    X_nan = X.copy()
    X_nan[::7, 1] = np.nan
    X_999 = np.where(np.isnan(X_nan), -999.0, X_nan)
    ref = gbm.GBMRegressor(n_estimators=4, max_depth=3).fit(X_nan, y)
    est = gbm.GBMRegressor(n_estimators=4, max_depth=3, missing=-999.0).fit(X_999, y)
    np.testing.assert_array_equal(est.predict(X_999), ref.predict(X_nan))
    booster = gbm.train({"max_depth": 3}, gbm.DMatrix(X_999, label=y, missing=-999), 4)
    np.testing.assert_array_equal(booster.predict(X_nan), ref.predict(X_nan))


def test_importance_type_and_constructor_callbacks():
    X, y = _data()

    class Count(TrainingCallback):
        rounds = 0

        def after_iteration(self, booster, epoch, evals_log):
            Count.rounds += 1
            return False

    est = gbm.GBMRegressor(n_estimators=5, max_depth=3, importance_type="gain",
                           callbacks=[Count()]).fit(X, y)
    assert Count.rounds == 5
    gain = est.get_booster().get_score(importance_type="gain")
    expected = np.array([gain.get(f"f{i}", 0.0) for i in range(4)])
    np.testing.assert_allclose(est.feature_importances_, expected / expected.sum())
    est.set_params(importance_type="weight")
    weight = est.get_booster().get_score(importance_type="weight")
    assert est.feature_importances_[0] == weight["f0"] / sum(weight.values())
    with pytest.raises(NotImplementedError, match="callbacks"):
        gbm.GBMRFRegressor(n_estimators=2, callbacks=[Count()]).fit(X, y)


def test_base_margin_train_predict_and_eval_sets():
    xgb = pytest.importorskip("xgboost")
    rng = np.random.RandomState(3)
    X, signal = _data(600)
    exposure = rng.uniform(0.5, 4.0, size=600)
    y = rng.poisson(exposure * np.exp(0.3 * np.clip(signal, -3, 3))).astype(float)
    offset = np.log(exposure)
    params = {"objective": "count:poisson", "max_depth": 3, "learning_rate": 0.3}
    booster = gbm.train(params, X[:400], y[:400], 20, base_margin=offset[:400],
                        evals=[{"X": X[400:], "y": y[400:], "name": "valid",
                                "base_margin": offset[400:]}])
    kept = offset.copy()
    ours = booster.predict(X[400:], base_margin=offset[400:])
    np.testing.assert_array_equal(offset, kept)  # the caller's array is not written to
    # xgboost with the same offsets: the same rule, so close predictions
    dtrain = xgb.DMatrix(X[:400], label=y[:400], base_margin=offset[:400])
    theirs = xgb.train(params, dtrain, 20).predict(
        xgb.DMatrix(X[400:], base_margin=offset[400:]))
    assert np.corrcoef(ours, theirs)[0, 1] > 0.98
    assert np.abs(ours - theirs).mean() < 0.08 * theirs.mean()
    # the margin with an offset is the offset plus the trees (no base margin)
    no_offset = booster.predict(X[400:], output_margin=True)
    np.testing.assert_allclose(booster.predict(X[400:], output_margin=True,
                                               base_margin=offset[400:]),
                               no_offset - booster.base_margin[0] + offset[400:], rtol=1e-9)
    # the eval set was scored with its offsets
    log_fact = np.array([math.lgamma(v + 1) for v in y[400:]])
    nll = np.mean(log_fact + ours - y[400:] * np.log(ours))
    assert booster.evals_result["valid"]["poisson-nloglik"][-1] == pytest.approx(nll, rel=1e-6)
    # estimators: base_margin in fit, predict and for eval sets
    est = gbm.GBMRegressor(objective="count:poisson", n_estimators=20, max_depth=3)
    est.fit(X[:400], y[:400], base_margin=offset[:400], eval_set=[(X[400:], y[400:])],
            base_margin_eval_set=[offset[400:]])
    np.testing.assert_allclose(est.predict(X[400:], base_margin=offset[400:]), ours, rtol=1e-12)
    assert est.evals_result()["validation_0"]["poisson-nloglik"][-1] == pytest.approx(nll, rel=1e-6)
    with pytest.raises(ValueError, match="base_margin has shape"):
        booster.predict(X[400:], base_margin=offset[:5])


def test_estimator_output_margin_and_iteration_range():
    X, signal = _data()
    clf = gbm.GBMClassifier(n_estimators=6, max_depth=3).fit(X, signal > 0)
    margin = clf.predict(X, output_margin=True)
    np.testing.assert_allclose(1 / (1 + np.exp(-margin)), clf.predict_proba(X)[:, 1], rtol=1e-12)
    booster = clf.get_booster()
    np.testing.assert_array_equal(clf.predict_proba(X, iteration_range=(0, 2))[:, 1],
                                  booster.predict(X, iteration_range=(0, 2)))
    reg = gbm.GBMRegressor(n_estimators=6, max_depth=3).fit(X, signal)
    np.testing.assert_array_equal(reg.predict(X, iteration_range=(1, 3)),
                                  reg.get_booster().predict(X, iteration_range=(1, 3)))


def test_verbose_every_n_rounds_as_xgboost(capsys):
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    gbm.train({"max_depth": 2}, X, y, 7, evals=[(X, y, "train")], verbose_eval=3)
    ours = [line.split("]")[0] for line in capsys.readouterr().out.splitlines()]
    xgb.train({"max_depth": 2}, xgb.DMatrix(X, label=y), 7,
              evals=[(xgb.DMatrix(X, label=y), "train")], verbose_eval=3)
    theirs = [line.split("]")[0] for line in capsys.readouterr().out.splitlines()]
    assert ours == theirs == ["[0", "[3", "[6"]
    gbm.GBMRegressor(n_estimators=5, max_depth=2).fit(X, y, eval_set=[(X, y)], verbose=2)
    assert [line.split("]")[0] for line in capsys.readouterr().out.splitlines()] == \
        ["[0", "[2", "[4"]


def test_evals_result_feval_and_xgboost_form_objective():
    X, y = _data()
    result = {"stale": {}}
    booster = gbm.train({"max_depth": 2}, X, y, 4, evals=[(X, y, "train")],
                        evals_result=result)
    assert result == booster.evals_result and len(result["train"]["rmse"]) == 4

    def mae_xgb(predt, dmatrix):
        return "mae", float(np.mean(np.abs(predt - dmatrix.get_label())))

    def mae_gbm(y_true, pred, w):
        return "mae", float(np.mean(np.abs(pred - y_true)))

    a = gbm.train({"max_depth": 2}, X, y, 4, evals=[(X, y, "train")], feval=mae_xgb)
    b = gbm.train({"max_depth": 2}, X, y, 4, evals=[(X, y, "train")], custom_metric=mae_gbm)
    np.testing.assert_allclose(a.evals_result["train"]["mae"], b.evals_result["train"]["mae"],
                               rtol=1e-6)  # get_label is float32, as xgboost's

    def squared_xgb(predt, dtrain):
        return predt - dtrain.get_label().astype(np.float64), np.ones_like(predt)

    def squared_gbm(margin, y_true, w):
        return margin - y_true.astype(np.float32).astype(np.float64), np.ones_like(margin)

    np.testing.assert_array_equal(
        gbm.train({"max_depth": 2}, X, y, 4, obj=squared_xgb).predict(X),
        gbm.train({"max_depth": 2}, X, y, 4, obj=squared_gbm).predict(X))
    with pytest.raises(TypeError, match="same argument"):
        gbm.train({}, X, y, 1, feval=mae_xgb, custom_metric=mae_gbm)


def test_a_default_is_not_set_over_an_alias():
    """with_default (gbm.dask's per-worker thread count) respects XGBoost's alias names."""
    from gbm.params import validate_params, with_default

    assert with_default({"nthread": 3}, "n_jobs", 8) == {"nthread": 3}
    assert with_default({"n_jobs": 2}, "n_jobs", 8) == {"n_jobs": 2}
    assert with_default({"nthread": None, "eta": 0.1}, "n_jobs", 8) == {"eta": 0.1, "n_jobs": 8}
    assert with_default({"eta": 0.1}, "learning_rate", 0.3) == {"eta": 0.1}
    assert validate_params(with_default({"seed": 5}, "random_state", 0))["random_state"] == 5


@pytest.mark.parametrize("objective", ["reg:logistic", "binary:logitraw"])
def test_scale_pos_weight_weighs_the_positives_of_every_logistic_loss(objective):
    """As for binary:logistic: the rows labelled 1 weighted up, as sample weights would;
    on exact bins the trees are xgboost's."""
    xgb = pytest.importorskip("xgboost")
    X, signal = _data()
    y = (signal > 1.0).astype(float)
    X = np.round(X * 4) / 4
    params = {"objective": objective, "max_depth": 3, "base_score": 0.5}
    ours = gbm.train(dict(params, scale_pos_weight=3.0), X, y, 10)
    as_weights = gbm.train(params, X, y, 10, sample_weight=np.where(y == 1, 3.0, 1.0))
    np.testing.assert_allclose(ours.predict(X), as_weights.predict(X), rtol=1e-12)
    theirs = xgb.train(dict(params, scale_pos_weight=3.0), xgb.DMatrix(X, label=y), 10)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X)), rtol=1e-5,
                               atol=1e-5)
