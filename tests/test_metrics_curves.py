"""XGBoost's ``aucpr`` (the interpolated precision-recall area, binary and multiclass),
``ams@k``, ``error@t`` and ``gamma-deviance``: closed forms against an independent
numeric integral and scikit-learn, and each equal to xgboost's on the same predictions."""
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate

from gbm.metrics import check_metric_name, get_metric, maximizes
from gbm.metrics.curves import _curve, pr_area

xgb = pytest.importorskip("xgboost")


def _xgb_eval(name, y, pred, weight=None, objective="binary:logistic", num_class=None):
    """xgboost's value of metric ``name`` on the fixed predictions ``pred`` (given as the
    base margin of a model whose one round adds nothing), and the predictions xgboost
    scored (float32 rounding of ``pred``)."""
    if objective == "binary:logistic":
        margin = np.log(pred / (1.0 - pred))
    elif objective == "reg:gamma":
        margin = np.log(pred)
    else:
        margin = np.log(pred)
    d = xgb.DMatrix(np.zeros((len(y), 1), np.float32), label=y, weight=weight,
                    base_margin=margin)
    params = {"objective": objective, "eval_metric": name, "eta": 0.0}
    if num_class:
        params["num_class"] = num_class
    booster = xgb.train(params, d, 1)
    return float(booster.eval(d).split(":")[-1]), booster.predict(d).astype(np.float64)


def _tied_scores(rng, n, levels):
    """Binary labels and probabilities with many ties (``levels`` distinct values)."""
    y = (rng.random(n) < 0.4).astype(np.float64)
    p = np.round(rng.random(n) * levels) / levels * 0.9 + 0.05 + 0.04 * y
    return y, p.astype(np.float32).astype(np.float64)


def _interpolated_area(tps, fps):
    """The oracle: precision along each segment of the curve, the segment's points taken
    as the rows between its ends are added one fraction at a time, integrated over recall
    numerically."""
    total, area = tps[-1], 0.0
    for tp0, tp1, fp0, fp1 in zip(tps[:-1], tps[1:], fps[:-1], fps[1:]):
        if tp1 == tp0:
            continue
        slope = (fp1 - fp0) / (tp1 - tp0)

        def precision(r):
            tp = r * total
            return tp / (tp + fp0 + slope * (tp - tp0)) if tp > 0 else 0.0

        area += integrate.quad(precision, tp0 / total, tp1 / total, epsabs=1e-13)[0]
    return area


@pytest.mark.parametrize("levels", [3, 20, 10_000])
def test_pr_area_is_the_integral_of_the_interpolated_curve(levels):
    y, p = _tied_scores(np.random.default_rng(levels), 300, levels)
    w = np.random.default_rng(1).uniform(0.1, 2.0, 300)
    for weight in (None, w):
        tps, fps = _curve(y, p, weight)
        assert pr_area(tps, fps) == pytest.approx(_interpolated_area(tps, fps), rel=1e-9)


def test_hand_value_one_tie():
    """Scores [0.9, 0.5, 0.5], labels [1, 1, 0]: precision 1 up to recall 1/2, then the
    tie adds one positive and one negative: precision r / (1.5 r - 0.25)... closed form."""
    y, p = np.array([1.0, 1.0, 0.0]), np.array([0.9, 0.5, 0.5])
    # segment 2: tp 1 -> 2, fp 0 -> 1, h = 1, a = 2, b = (0 - 1) / 2 = -0.5
    second = (1.0 - 0.5 - (-0.5 / 2.0) * (np.log(2 * 1.0 - 0.5) - np.log(2 * 0.5 - 0.5))) / 2.0
    assert get_metric("aucpr")(y, p, None) == pytest.approx(0.5 + second, rel=1e-12)


@pytest.mark.parametrize("levels", [4, 30, 100_000])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_aucpr_equals_xgboost_on_tied_predictions(levels, weighted):
    rng = np.random.default_rng(levels + weighted)
    y, p = _tied_scores(rng, 800, levels)
    w = rng.uniform(0.1, 2.0, 800).astype(np.float32).astype(np.float64) if weighted else None
    theirs, scored = _xgb_eval("aucpr", y, p, w)
    assert get_metric("aucpr")(y, scored, w) == pytest.approx(theirs, rel=1e-7)


@pytest.mark.parametrize("weighted", [False, True])
def test_multiclass_aucpr_equals_xgboost(weighted):
    rng = np.random.default_rng(7)
    n, k = 400, 3
    y = rng.integers(0, k, n).astype(np.float64)
    scores = rng.random((n, k))
    scores[np.arange(n), y.astype(int)] += 0.6
    scores = np.round(scores * 5) / 5 + 0.01  # ties
    proba = scores / scores.sum(axis=1, keepdims=True)
    w = rng.uniform(0.1, 2.0, n).astype(np.float32).astype(np.float64) if weighted else None
    theirs, scored = _xgb_eval("aucpr", y, proba, w, "multi:softprob", k)
    ours = get_metric("aucpr")(y, scored.reshape(n, k), w)
    assert ours == pytest.approx(theirs, rel=1e-7)


def test_multiclass_aucpr_is_the_mean_of_the_classes_present():
    rng = np.random.default_rng(2)
    y = np.array([0, 1, 1, 0, 1, 0, 1, 1], dtype=np.float64)  # class 2 absent
    proba = rng.dirichlet(np.ones(3), size=8)
    binary = [get_metric("aucpr")((y == c).astype(np.float64), proba[:, c], None)
              for c in (0, 1)]
    assert get_metric("aucpr")(y, proba, None) == pytest.approx(np.mean(binary), rel=1e-12)


def test_aucpr_needs_both_classes():
    with pytest.raises(ValueError, match="both classes"):
        get_metric("aucpr")(np.ones(4), np.linspace(0.1, 0.9, 4), None)
    with pytest.raises(ValueError, match="both classes"):
        get_metric("aucpr")(np.zeros(4), np.linspace(0.1, 0.9, 4), None)


def test_gamma_deviance_is_scikit_learns_and_xgboosts():
    from sklearn.metrics import mean_gamma_deviance

    rng = np.random.default_rng(5)
    y, p = rng.gamma(2.0, 3.0, 500) + 1.0, rng.gamma(2.0, 3.0, 500) + 1.0
    w = rng.uniform(0.5, 2.0, 500)
    metric = get_metric("gamma-deviance")
    # XGBoost's 1e-6 shift of both: scikit-learn's deviance of the shifted values
    shifted = mean_gamma_deviance(y + 1e-6, p + 1e-6, sample_weight=w)
    assert metric(y, p, w) == pytest.approx(shifted, rel=1e-12)
    assert metric(y, p, w) == pytest.approx(mean_gamma_deviance(y, p, sample_weight=w), rel=1e-6)
    theirs, scored = _xgb_eval("gamma-deviance", y, p, objective="reg:gamma")
    assert metric(y, scored, None) == pytest.approx(theirs, rel=1e-6)
    with pytest.raises(ValueError, match=r"y\[1\] = -1.0"):
        metric(np.array([1.0, -1.0]), np.array([1.0, 1.0]), None)


@pytest.mark.parametrize("name", ["error@0.7", "error@0.3", "error@0.5"])
def test_error_at_a_threshold_equals_xgboost(name):
    rng = np.random.default_rng(11)
    y = (rng.random(300) < 0.5).astype(np.float64)
    p = rng.uniform(0.02, 0.98, 300)
    w = rng.uniform(0.5, 2.0, 300).astype(np.float32).astype(np.float64)
    theirs, scored = _xgb_eval(name, y, p, w)
    assert get_metric(name)(y, scored, w) == pytest.approx(theirs, rel=1e-7)
    assert not maximizes(name)


@pytest.mark.parametrize("name", ["ams@0", "ams@0.15", "ams@0.5"])
@pytest.mark.parametrize("weighted", [False, True])
def test_ams_equals_xgboost_on_distinct_scores(name, weighted):
    """XGBoost breaks ties in an arbitrary order; on distinct scores the value is fixed."""
    rng = np.random.default_rng(13)
    y = (rng.random(400) < 0.3).astype(np.float64)
    p = 0.05 + 0.7 * rng.random(400) + 0.2 * y * rng.random(400)
    w = rng.uniform(0.1, 1.0, 400).astype(np.float32).astype(np.float64) if weighted else None
    theirs, scored = _xgb_eval(name, y, p, w)
    assert len(np.unique(scored)) == 400
    assert get_metric(name)(y, scored, w) == pytest.approx(theirs, rel=1e-6)
    assert maximizes(name)


def test_every_xgboost_metric_name_is_known():
    for name in ["rmse", "rmsle", "mae", "mape", "mphe", "logloss", "error", "error@0.6",
                 "merror", "mlogloss", "auc", "aucpr", "ams@0.1", "pre", "pre@5", "ndcg",
                 "ndcg@3-", "map", "map@2", "poisson-nloglik", "gamma-nloglik",
                 "gamma-deviance", "cox-nloglik", "tweedie-nloglik@1.5", "aft-nloglik",
                 "interval-regression-accuracy", "quantile", "expectile"]:
        assert check_metric_name(name) == name
    for bad in ["error@x", "ams@2", "ams", "gamma-deviance@1"]:
        with pytest.raises(ValueError, match="not a known metric"):
            check_metric_name(bad)


def _groups(rng, n_groups=40):
    from gbm.data.queries import QueryGroups

    sizes = rng.integers(2, 25, n_groups)
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    return sizes, ptr, QueryGroups(ptr, rng.uniform(0.5, 2.0, n_groups))


def test_aucpr_with_query_groups_equals_xgboost():
    from gbm.metrics.curves import aucpr_by_query

    rng = np.random.default_rng(17)
    sizes, ptr, queries = _groups(rng)
    n = ptr[-1]
    y = (rng.random(n) < 0.3).astype(np.float64)
    p = (np.round(rng.random(n) * 8) / 8 + 0.3 * y * rng.random(n)).astype(np.float32)
    d = xgb.DMatrix(np.zeros((n, 1), np.float32), label=y, base_margin=p)
    d.set_group(sizes)
    d.set_weight(queries.weight)  # scales both counts of a group: no effect
    booster = xgb.train({"objective": "rank:pairwise", "eta": 0.0, "eval_metric": "aucpr",
                         "base_score": 0.0}, d, 1)
    theirs = float(booster.eval(d).split(":")[-1])
    assert aucpr_by_query(y, p.astype(np.float64), queries) == pytest.approx(theirs, rel=1e-9)
    with pytest.raises(ValueError, match=r"y\[0\] = 2.0; aucpr with query groups needs"):
        aucpr_by_query(np.full(n, 2.0), p.astype(np.float64), queries)


def test_auc_with_query_groups_is_each_groups_pairwise_share():
    """The oracle: every pair of a group with different labels, by brute force."""
    from gbm.metrics.curves import auc_by_query

    rng = np.random.default_rng(19)
    _, ptr, queries = _groups(rng)
    y = rng.integers(0, 3, ptr[-1]).astype(np.float64)  # graded relevance
    p = np.round(rng.random(ptr[-1]) * 6) / 6 + 0.2 * y
    shares = []
    for g in range(ptr.shape[0] - 1):
        ys, ps = y[ptr[g]:ptr[g + 1]], p[ptr[g]:ptr[g + 1]]
        hi, lo = np.nonzero(ys[:, None] > ys[None, :])
        if hi.size:
            shares.append(np.mean((ps[hi] > ps[lo]) + 0.5 * (ps[hi] == ps[lo])))
    assert auc_by_query(y, p, queries) == pytest.approx(np.mean(shares), rel=1e-12)
    with pytest.raises(ValueError, match="needs a group with two labels"):
        auc_by_query(np.ones(ptr[-1]), p, queries)


def test_a_ranking_eval_set_is_scored_per_group():
    import gbm

    rng = np.random.default_rng(23)
    sizes, ptr, queries = _groups(rng, 30)
    X = rng.random((ptr[-1], 4))
    y = (X[:, 0] + 0.3 * rng.random(ptr[-1]) > 0.7).astype(np.float64)
    result = {}
    booster = gbm.train({"objective": "rank:pairwise", "eval_metric": ["auc", "aucpr"]}, X, y,
                        3, group=sizes, evals=[{"X": X, "y": y, "group": sizes, "name": "t"}],
                        evals_result=result)
    from gbm.metrics.curves import auc_by_query, aucpr_by_query

    margin = booster.predict(X)
    assert result["t"]["auc"][-1] == pytest.approx(auc_by_query(y, margin, queries), rel=1e-9)
    assert result["t"]["aucpr"][-1] == pytest.approx(aucpr_by_query(y, margin, queries),
                                                     rel=1e-9)


def test_the_metrics_coming_from_xgboost_lists_exist():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "coming_from_xgboost.md").read_text()
    listed = doc.split("- Metrics gbm has:")[1].split("every metric of")[0]
    examples = {"tweedie-nloglik@rho": "tweedie-nloglik@1.5", "error@t": "error@0.7",
                "ams@k": "ams@0.1", "@k": None, "-": None}
    names = [examples.get(n, n) for n in re.findall(r"`([^`]+)`", listed)]
    names = [n for n in names if n is not None]
    assert len(names) >= 25
    for name in names:
        assert check_metric_name(name) == name


def test_gamma_regressions_default_metric_is_xgboosts():
    import gbm

    rng = np.random.default_rng(29)
    X, y = rng.random((200, 3)), rng.gamma(2.0, 2.0, 200)
    theirs = {}
    xgb.train({"objective": "reg:gamma"}, xgb.DMatrix(X, label=y), 1,
              evals=[(xgb.DMatrix(X, label=y), "t")], evals_result=theirs, verbose_eval=False)
    booster = gbm.train({"objective": "reg:gamma"}, X, y, 1, evals=[(X, y, "t")])
    assert list(booster.evals_result["t"]) == list(theirs["t"]) == ["gamma-deviance"]
