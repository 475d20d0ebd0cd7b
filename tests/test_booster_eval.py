"""Booster.eval and eval_set, XGBoost's: the model's eval metrics on labelled DMatrices, as
XGBoost's text. Oracles: the scores ``gbm.train`` logged for the same sets (another code
path: margins kept on the bins round by round), and XGBoost's own eval_set on the same
trees (an imported model)."""
import re

import numpy as np
import pytest

import gbm


def _data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, (X[:, 0] + rng.normal(scale=0.5, size=n) > 0).astype(float)


def _scores(text):
    """``[3]\\ta-rmse:0.5\\t...`` -> (3, {("a", "rmse"): 0.5, ...})."""
    head, *items = text.split("\t")
    pairs = [item.rsplit(":", 1) for item in items]
    return int(head.strip("[]")), {tuple(k.split("-", 1)): float(v) for k, v in pairs}


def test_scores_equal_the_ones_train_logged():
    X, y = _data()
    Xv, yv = _data(seed=1, n=200)
    params = {"objective": "binary:logistic", "max_depth": 3,
              "eval_metric": ["logloss", "auc", "error"]}
    log = {}
    booster = gbm.train(params, gbm.DMatrix(X, y), 5,
                        evals=[(gbm.DMatrix(X, y), "train"), (gbm.DMatrix(Xv, yv), "valid")],
                        evals_result=log)
    text = booster.eval_set([(gbm.DMatrix(X, y), "train"), (gbm.DMatrix(Xv, yv), "valid")], 4)
    assert re.fullmatch(r"\[4\](\t(train|valid)-(logloss|auc|error):[-0-9.e]+){6}", text)
    iteration, scores = _scores(text)
    assert iteration == 4 and len(scores) == 6
    for (name, metric), value in scores.items():
        assert value == pytest.approx(log[name][metric][-1], rel=1e-12, abs=1e-15)
    assert booster.eval(gbm.DMatrix(Xv, yv)).startswith("[0]\teval-logloss:")
    assert booster.eval(gbm.DMatrix(Xv, yv), "v", 7) == "[7]" + "".join(
        f"\tv-{m}:{scores[('valid', m)]:.17g}" for m in ("logloss", "auc", "error"))


def test_score_digits_and_custom_metric():
    """17 significant digits (XGBoost's), a custom metric with 6 decimals after them."""
    X, y = _data()
    booster = gbm.train({"objective": "binary:logistic", "eval_metric": "error",
                         "max_depth": 1}, X, y, 1)
    d = gbm.DMatrix(X, y)
    error = np.mean((booster.predict(X) > 0.5) != y)
    seen = {}

    def feval(predt, dmatrix):
        seen["predt"] = predt
        return [("half", 0.5), ("third", 1 / 3)]

    text = booster.eval_set([(d, "a")], 2, feval=feval)
    assert text == f"[2]\ta-error:{error:.17g}\ta-half:0.500000\ta-third:0.333333"
    np.testing.assert_array_equal(seen["predt"], booster.predict(X, output_margin=True))
    booster.eval_set([(d, "a")], feval=feval, output_margin=False)
    np.testing.assert_array_equal(seen["predt"], booster.predict(X))


def test_equal_to_xgboosts_eval_set():
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    for params, label in (({"objective": "binary:logistic",
                            "eval_metric": ["logloss", "auc", "error"]}, y),
                          ({"objective": "reg:squarederror", "eval_metric": ["rmse", "mae"]},
                           X[:, 1]),
                          ({"objective": "multi:softprob", "num_class": 3}, (X[:, 0] > 0) + (X[:, 1] > 0))):
        theirs = xgb.train(dict(params, max_depth=3), xgb.DMatrix(X, label), 4)
        ours = gbm.Booster.from_xgboost(theirs)
        ours.set_param({k: v for k, v in params.items() if k == "eval_metric"})
        ref = theirs.eval_set([(xgb.DMatrix(X, label), "d")], 3)
        mine = ours.eval_set([(gbm.DMatrix(X, label), "d")], 3)
        (i, a), (j, b) = _scores(mine), _scores(ref)
        assert i == j and a.keys() == b.keys()
        for key in a:  # XGBoost predicts in float32, gbm in float64
            assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-7), key


def test_ranking_sets_use_their_groups():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 3))
    y = np.clip(np.round(X[:, 0] + 1.5), 0, 3)
    log = {}
    booster = gbm.train({"objective": "rank:ndcg", "eval_metric": "ndcg@5"},
                        gbm.DMatrix(X, y, group=[30] * 4), 3,
                        evals=[(gbm.DMatrix(X, y, group=[30] * 4), "t")], evals_result=log)
    _, scores = _scores(booster.eval(gbm.DMatrix(X, y, group=[30] * 4), "t"))
    assert scores[("t", "ndcg@5")] == pytest.approx(log["t"]["ndcg@5"][-1], rel=1e-12)


def test_bad_eval_sets():
    X, y = _data()
    booster = gbm.train({"max_depth": 2}, X, y, 2)
    with pytest.raises(TypeError, match=r"evals\[0\]: expected DMatrix, got ndarray"):
        booster.eval_set([(X, "a")])
    with pytest.raises(TypeError, match=r"evals\[0\]: expected string, got int"):
        booster.eval_set([(gbm.DMatrix(X, y), 1)])
    with pytest.raises(TypeError, match="got one pair; put it in a list"):
        booster.eval_set((gbm.DMatrix(X, y), "a"))
    with pytest.raises(ValueError, match="the DMatrix has no labels"):
        booster.eval(gbm.DMatrix(X))
    with pytest.raises(ValueError, match="empty"):
        gbm.Booster().eval(gbm.DMatrix(X, y))
