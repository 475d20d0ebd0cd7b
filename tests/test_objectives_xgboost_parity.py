"""XGBoost's other objectives against xgboost 3.2 itself: training on exact bins (features
of few values, so both libraries have one bin per value and the same candidate splits),
the estimated base_score, the default metric, and the models both ways through XGBoost's
JSON. ``reg:expectileerror`` came with XGBoost 3.3, which is not installed: its export is
checked against XGBoost 3.3's formulas written here, and it imports back.
"""
import json

import numpy as np
import pytest

import gbm
from gbm.data.queries import make_queries
from gbm.io.xgboost_json import to_xgboost
from gbm.metrics import get_metric
from gbm.objectives import get_objective
from gbm.objectives.expectile import margins_to_scores
from gbm.params import validate_params

xgb = pytest.importorskip("xgboost")

N_TRAIN, N_TEST = 3000, 1500
PARAMS = {"max_depth": 4, "learning_rate": 0.3}
ROUNDS = 30
RTOL, ATOL = 1e-5, 1e-5  # xgboost sums float32 leaf values and float32 gradients


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = N_TRAIN + N_TEST
    X = rng.integers(0, 8, size=(n, 5)).astype(np.float32)  # 8 values a feature: exact bins
    signal = 0.6 * X[:, 0] - 0.4 * X[:, 1] + 0.3 * X[:, 2] * (X[:, 3] > 3) - 1.0
    signal = signal + rng.normal(size=n)
    p = 1 / (1 + np.exp(-signal))
    labels = {
        "reg:logistic": np.clip(p + 0.1 * rng.normal(size=n), 0.0, 1.0),
        "binary": (rng.random(n) < p).astype(np.float64),
        "reg:squaredlogerror": np.exp(0.5 * signal + 0.3 * rng.normal(size=n)),
    }
    return X, labels, np.repeat(np.arange(n // 15), 15), rng.uniform(0.5, 2.0, n)


def _labels(labels, objective):
    return labels.get(objective, labels["binary"])


def _sigmoid_logloss(y, margin):
    p = 1 / (1 + np.exp(-margin))
    return float(-np.mean(y * np.log(np.maximum(p, 1e-16))
                          + (1 - y) * np.log(np.maximum(1 - p, 1e-16))))


def _train_both(data, objective, extra=(), weighted=False, rounds=ROUNDS):
    X, labels, qid, weight = data
    y = _labels(labels, objective)
    params = dict(PARAMS, objective=objective, **dict(extra))
    tr = slice(0, N_TRAIN)
    ours_kw, theirs_kw = {}, {}
    if objective.startswith("rank:"):
        ours_kw["qid"] = theirs_kw["qid"] = qid[tr]
    if weighted:
        ours_kw["sample_weight"], theirs_kw["weight"] = weight[tr], weight[tr]
    ours = gbm.train(params, X[tr], y[tr], rounds, **ours_kw)
    theirs = xgb.train(dict(params, tree_method="hist"),
                       xgb.DMatrix(X[tr], label=y[tr], **theirs_kw), rounds)
    return ours, theirs, params


CASES = [  # objective, its parameters, test metric, whether the trees are the same
    ("reg:logistic", {}, "rmse", True),
    ("binary:logitraw", {}, "logloss of sigmoid(margin)", True),
    ("binary:logitraw", {}, "auc", True),
    ("binary:hinge", {}, "error", True),
    ("reg:squaredlogerror", {}, "rmsle", True),
    ("rank:map", {}, "map@32", True),
    ("rank:map", {"lambdarank_num_pair_per_sample": 5}, "map@5", True),
    ("rank:map", {"lambdarank_normalization": False,
                  "lambdarank_score_normalization": False}, "map@32", True),
    # "mean" draws its pairs from gbm's hashes, xgboost from its own generator
    ("rank:map", {"lambdarank_pair_method": "mean", "lambdarank_num_pair_per_sample": 4},
     "map", False),
]


@pytest.mark.parametrize("objective, extra, metric, same_trees", CASES,
                         ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_test_metric_equals_xgboosts_on_exact_bins(data, objective, extra, metric, same_trees):
    X, labels, qid, _ = data
    ours, theirs, params = _train_both(data, objective, extra)
    test = slice(N_TRAIN, None)
    y = _labels(labels, objective)[test]
    mine, other = ours.predict(X[test]), theirs.predict(xgb.DMatrix(X[test])).astype(np.float64)
    if metric.startswith("logloss"):
        values = _sigmoid_logloss(y, mine), _sigmoid_logloss(y, other)
    else:
        fn = get_metric(metric, validate_params(params))
        queries = make_queries(None, qid[test], None, N_TEST).locate() if "map" in metric \
            else None
        values = [fn(y, p, None, queries) if queries else fn(y, p, None) for p in (mine, other)]
    assert values[0] == pytest.approx(values[1], rel=5e-3)  # the 0.5%
    if same_trees:
        np.testing.assert_allclose(mine, other, rtol=RTOL, atol=ATOL)
        assert values[0] == pytest.approx(values[1], rel=1e-5)


@pytest.mark.parametrize("objective", ["reg:logistic", "binary:logitraw",
                                       "reg:squaredlogerror"])
def test_weighted_training_equals_xgboosts(data, objective):
    X, _, _, _ = data
    ours, theirs, _ = _train_both(data, objective, weighted=True, rounds=10)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X)), rtol=RTOL,
                               atol=ATOL)


@pytest.mark.parametrize("objective, extra", [
    ("reg:logistic", {}), ("binary:logitraw", {}), ("binary:hinge", {}),
    ("reg:squaredlogerror", {}), ("rank:map", {}),
    ("rank:map", {"lambdarank_pair_method": "mean"})])
def test_default_metric_and_its_trajectory_are_xgboosts(data, objective, extra):
    X, labels, qid, _ = data
    y = _labels(labels, objective)
    params = dict(PARAMS, objective=objective, **extra)
    ev = slice(N_TRAIN, None)
    ours_kw, theirs_kw = {}, {}
    if objective.startswith("rank:"):
        ours_kw, theirs_kw = {"qid": qid[:N_TRAIN]}, {"qid": qid[:N_TRAIN]}
        evals = [{"X": X[ev], "y": y[ev], "qid": qid[ev], "name": "e"}]
        theirs_eval = xgb.DMatrix(X[ev], label=y[ev], qid=qid[ev])
    else:
        evals, theirs_eval = [(X[ev], y[ev], "e")], xgb.DMatrix(X[ev], label=y[ev])
    ours, theirs_log = {}, {}
    gbm.train(params, X[:N_TRAIN], y[:N_TRAIN], 5, evals=evals, evals_result=ours,
              verbose_eval=False, **ours_kw)
    booster = xgb.train(dict(params, tree_method="hist"),
                        xgb.DMatrix(X[:N_TRAIN], label=y[:N_TRAIN], **theirs_kw), 5,
                        evals=[(theirs_eval, "e")], evals_result=theirs_log,
                        verbose_eval=False)
    name = json.loads(booster.save_config())["learner"]["metrics"][0]["name"]
    assert get_objective(validate_params(params)).default_metric == name
    assert list(ours["e"]) == [name]
    # the same trees, the same scores (binary:logitraw's logloss reads margins outside
    # (0, 1): both floor the logs' arguments at 1e-16 and cap nothing)
    if extra.get("lambdarank_pair_method") != "mean":
        np.testing.assert_allclose(ours["e"][name], theirs_log["e"][name], rtol=1e-5)


def _xgboost_base_score(booster):
    config = json.loads(booster.save_config())["learner"]["learner_model_param"]
    return float(config["base_score"].strip("[]"))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("objective", ["reg:logistic", "binary:logitraw", "binary:hinge",
                                       "reg:squaredlogerror", "rank:map"])
def test_base_score_equals_xgboosts_intercept(data, objective, weighted):
    X, labels, qid, weight = data
    cases = [_labels(labels, objective)]
    if objective == "binary:hinge":  # a majority of 0 (base 0) and of 1 (base 1)
        cases.append(1.0 - cases[0])
    for y in cases:
        y = y[:N_TRAIN]
        kw = {"qid": qid[:N_TRAIN]} if objective == "rank:map" else {}
        w = weight[:N_TRAIN] if weighted and objective != "rank:map" else None
        ours = gbm.train({"objective": objective}, X[:N_TRAIN], y, 1, sample_weight=w, **kw)
        theirs = xgb.train({"objective": objective}, xgb.DMatrix(X[:N_TRAIN], label=y, weight=w,
                                                                 **kw), 1)
        margin = float(ours.base_margin[0])
        score = 1 / (1 + np.exp(-margin)) if objective == "reg:logistic" else margin
        assert score == pytest.approx(_xgboost_base_score(theirs), rel=1e-6, abs=1e-7)
    if objective == "binary:hinge":
        assert {_xgboost_base_score(xgb.train({"objective": objective},
                                              xgb.DMatrix(X[:N_TRAIN], label=y), 1))
                for y in (cases[0][:N_TRAIN], cases[1][:N_TRAIN])} == {0.0, 1.0}


IMPORTED = [("reg:logistic", {}), ("binary:logitraw", {}), ("binary:hinge", {}),
            ("reg:squaredlogerror", {}), ("rank:map", {}), ("rank:ndcg", {}),
            ("rank:map", {"lambdarank_pair_method": "mean",
                          "lambdarank_num_pair_per_sample": 3})]


@pytest.mark.parametrize("objective, extra", IMPORTED)
def test_models_xgboost_trained_import_and_predict_the_same(data, objective, extra):
    X, labels, qid, _ = data
    y = _labels(labels, objective)[:600]
    kw = {"qid": qid[:600]} if objective.startswith("rank:") else {}
    theirs = xgb.train(dict(PARAMS, objective=objective, **extra),
                       xgb.DMatrix(X[:600], label=y, **kw), 8)
    ours = gbm.Booster.from_xgboost(theirs)
    assert ours.params["objective"] == objective
    expected_pairs = extra.get("lambdarank_num_pair_per_sample",
                               1 if extra.get("lambdarank_pair_method") == "mean" else 32)
    if objective.startswith("rank:"):  # xgboost saves an unset count as 2**32 - 1
        assert ours.params["lambdarank_num_pair_per_sample"] == expected_pairs
    dm = xgb.DMatrix(X)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(dm), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(ours.predict(X, output_margin=True),
                               theirs.predict(dm, output_margin=True), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("objective", ["reg:logistic", "binary:logitraw", "binary:hinge",
                                       "reg:squaredlogerror", "rank:map"])
def test_exports_load_in_xgboost_and_predict_the_same(data, objective, tmp_path):
    X, labels, qid, weight = data
    y = _labels(labels, objective)[:600]
    kw = {"qid": qid[:600]} if objective.startswith("rank:") else \
        {"sample_weight": weight[:600]}
    ours = gbm.train(dict(PARAMS, objective=objective), X[:600], y, 8, **kw)
    path = tmp_path / "model.json"
    ours.save_model(path, format="xgboost")
    theirs = xgb.Booster(model_file=str(path))
    config = json.loads(theirs.save_config())["learner"]
    assert config["objective"]["name"] == objective
    dm = xgb.DMatrix(X)
    np.testing.assert_allclose(theirs.predict(dm), ours.predict(X), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(theirs.predict(dm, output_margin=True),
                               ours.predict(X, output_margin=True), rtol=RTOL, atol=ATOL)


def _softplus_inverse32(x):
    """XGBoost 3.3's ``SoftPlusInv`` in float32: ``max(x, 1e-6) + log(-expm1(-x))``."""
    x = np.maximum(np.float32(x), np.float32(1e-6))
    return x + np.log(-np.expm1(-x))


@pytest.mark.parametrize("alphas", [[0.7], [0.1, 0.5, 0.9]])
def test_expectile_exports_as_xgboost_3_3_writes_it_and_imports_back(data, alphas):
    X, labels, _, _ = data
    y = labels["reg:squaredlogerror"][:600]
    ours = gbm.train(dict(PARAMS, objective="reg:expectileerror", expectile_alpha=alphas),
                     X[:600], y, 6)
    model = to_xgboost(ours)
    learner = model["learner"]
    block = learner["objective"]
    assert sorted(block) == ["expectile_loss_param", "name"]
    assert block["name"] == "reg:expectileerror"
    written = block["expectile_loss_param"]["expectile_alpha"]  # XGBoost's list form "[a,b]"
    assert written[0] == "[" and written[-1] == "]"
    np.testing.assert_array_equal(np.array(written[1:-1].split(","), dtype=np.float32),
                                  np.array(alphas, dtype=np.float32))
    assert learner["learner_model_param"]["num_target"] == str(len(alphas))
    scores = np.array(learner["learner_model_param"]["base_score"].strip("[]").split(","),
                      dtype=np.float32)
    np.testing.assert_allclose(scores, margins_to_scores(ours.base_margin), rtol=1e-6)
    # XGBoost 3.3's ProbToMargin (float32) gives back gbm's base margins
    margins = [scores[0]] + [_softplus_inverse32(b - a - np.float32(1e-6))
                             for a, b in zip(scores[:-1], scores[1:])]
    np.testing.assert_allclose(margins, ours.base_margin, rtol=1e-4, atol=1e-5)
    back = gbm.Booster.from_xgboost(json.dumps(model))
    np.testing.assert_array_equal(np.float32(back.params["expectile_alpha"]),
                                  np.float32(alphas))  # XGBoost's parameters are float32
    np.testing.assert_allclose(back.predict(X), ours.predict(X), rtol=RTOL, atol=ATOL)
    assert ours.predict(X).shape == ((len(X),) if len(alphas) == 1 else (len(X), len(alphas)))


def test_expectile_with_several_targets_exports_each_targets_base_score():
    """One level and several targets (gbm's MultiTarget): each target's base score is
    its own, not a level's cumulative sum. (Importing a model of several targets is
    refused for every objective.)"""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 5, size=(200, 3)).astype(np.float32)
    Y = np.column_stack([X[:, 0] + rng.normal(size=200), 5.0 - X[:, 1]])
    ours = gbm.train(dict(PARAMS, objective="reg:expectileerror", expectile_alpha=0.8), X, Y, 3)
    model = to_xgboost(ours)
    scores = np.array(model["learner"]["learner_model_param"]["base_score"].strip("[]")
                      .split(","), dtype=np.float64)
    np.testing.assert_allclose(scores, ours.base_margin, rtol=1e-6)
    assert model["learner"]["learner_model_param"]["num_target"] == "2"
