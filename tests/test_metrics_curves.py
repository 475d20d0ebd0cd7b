"""XGBoost's ``aucpr`` (the interpolated precision-recall area, binary and multiclass),
``ams@k``, ``error@t`` and ``gamma-deviance``: closed forms against an independent
numeric integral and scikit-learn, and each equal to xgboost's on the same predictions."""
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
