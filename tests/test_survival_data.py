"""Survival labels as data: interval bounds from a DMatrix (XGBoost's fields) or a ``y`` of
shape (n, 2), eval sets with their own bounds, bad labels refused by row, the estimators
(scikit-learn's model selection included), and the same model on 1 or 2 threads and over
ranks of a distributed fit."""
import math

import numpy as np
import pytest

import gbm
from gbm.collective import ThreadGroup
from tests.test_survival import survival_data

AFT = {"objective": "survival:aft", "max_depth": 3}
COX = {"objective": "survival:cox", "max_depth": 3}


@pytest.fixture(scope="module")
def data():
    return survival_data(400, 11)


def test_dmatrix_bounds_as_xgboost_has_them(data):
    X, _, intervals = data
    d = gbm.DMatrix(X, label_lower_bound=intervals[:, 0], label_upper_bound=intervals[:, 1])
    np.testing.assert_array_equal(d.get_float_info("label_upper_bound"),
                                  intervals[:, 1].astype(np.float32))
    assert d.get_float_info("label").shape == (0,)  # not set
    other = gbm.DMatrix(X)
    other.set_float_info("label_lower_bound", intervals[:, 0])
    other.set_info(label_upper_bound=intervals[:, 1])
    by_dmatrix = gbm.train(AFT, d, 4)
    by_fields = gbm.train(AFT, other, 4)
    by_array = gbm.train(AFT, X, intervals, 4)
    assert by_dmatrix.to_json() == by_fields.to_json() == by_array.to_json()
    # a DMatrix's labels are not AFT's: its bounds are read (as xgboost)
    with_label = gbm.DMatrix(X, label=np.ones(len(X)), label_lower_bound=intervals[:, 0],
                             label_upper_bound=intervals[:, 1])
    assert gbm.train(AFT, with_label, 4).to_json() == by_array.to_json()
    with pytest.raises(ValueError, match="unknown float field 'label_bound'"):
        d.set_float_info("label_bound", intervals[:, 0])


def test_eval_sets_carry_their_own_bounds(data):
    X, _, intervals = data
    train, valid = slice(0, 300), slice(300, 400)
    d_valid = gbm.DMatrix(X[valid], label_lower_bound=intervals[valid, 0],
                          label_upper_bound=intervals[valid, 1])
    params = dict(AFT, eval_metric=["aft-nloglik", "interval-regression-accuracy"])
    by_dmatrix = gbm.train(params, X[train], intervals[train], 5, evals=[(d_valid, "valid")])
    by_array = gbm.train(params, X[train], intervals[train], 5,
                         evals=[(X[valid], intervals[valid], "valid")])
    by_dict = gbm.train(params, X[train], intervals[train], 5, evals=[{
        "X": X[valid], "y": None, "name": "valid", "label_lower_bound": intervals[valid, 0],
        "label_upper_bound": intervals[valid, 1]}])
    scores = by_dmatrix.evals_result["valid"]
    assert scores == by_array.evals_result["valid"] == by_dict.evals_result["valid"]
    assert scores["aft-nloglik"][-1] < scores["aft-nloglik"][0]
    assert 0.0 <= scores["interval-regression-accuracy"][-1] <= 1.0


def test_a_users_metric_reads_the_bounds_as_xgboosts_does(data):
    X, _, intervals = data
    seen = {}

    def metric(predt, dmatrix):
        seen["lower"] = dmatrix.get_float_info("label_lower_bound")
        seen["upper"] = dmatrix.get_float_info("label_upper_bound")
        return "n", float(len(predt))

    gbm.train(AFT, X, intervals, 1, evals=[(X, intervals, "train")], custom_metric=metric)
    np.testing.assert_array_equal(seen["lower"], intervals[:, 0].astype(np.float32))
    np.testing.assert_array_equal(seen["upper"], intervals[:, 1].astype(np.float32))


def _bad(intervals, row, lower=None, upper=None):
    out = intervals.copy()
    if lower is not None:
        out[row, 0] = lower
    if upper is not None:
        out[row, 1] = upper
    return out


@pytest.mark.parametrize("change, message", [
    (dict(row=17, lower=5.0, upper=3.0), r"row 17: the lower bound 5.0 \(y\[17, 0\]\) is above "
                                         r"the upper bound 3.0"),
    (dict(row=4, lower=-3.0), r"y\[4, 0\] = -3.0; survival:aft needs bounds >= 0"),
    (dict(row=9, upper=np.nan), r"y\[9, 1\] is NaN"),
    (dict(row=2, lower=np.nan), r"y\[2, 0\] is NaN"),
    (dict(row=5, lower=0.0, upper=0.0), r"y\[5, 1\] = 0.0; survival:aft needs upper bounds > 0"),
    (dict(row=6, lower=np.inf, upper=np.inf), r"y\[6, 0\] = inf; survival:aft needs a finite "
                                               r"lower bound"),
    (dict(row=8, lower=1e-40, upper=1.0), r"y\[8, 0\] = 1e-40; survival:aft needs positive "
                                           r"bounds of at least 1.17549e-38"),
])
def test_bad_bounds_are_refused_by_row(data, change, message):
    X, _, intervals = data
    with pytest.raises(ValueError, match=message):
        gbm.train(AFT, X, _bad(intervals, **change), 1)
    bad = _bad(intervals, **change)
    d = gbm.DMatrix(X, label_lower_bound=bad[:, 0], label_upper_bound=bad[:, 1])
    with pytest.raises(ValueError, match=rf"label_(lower|upper)_bound\[{change['row']}\]"):
        gbm.train(AFT, d, 1)
    with pytest.raises(ValueError, match=r"evals\['valid'\] y"):
        gbm.train(AFT, X, intervals, 1, evals=[(X, bad, "valid")])


def test_missing_bounds_and_labels_are_refused(data):
    X, signed, intervals = data
    with pytest.raises(ValueError, match="label_upper_bound is missing"):
        gbm.train(AFT, gbm.DMatrix(X, label_lower_bound=intervals[:, 0]), 1)
    with pytest.raises(ValueError, match=r"shape \(400,\); survival:aft needs intervals"):
        gbm.train(AFT, X, signed, 1)
    with pytest.raises(ValueError, match=r"survival:aft needs interval labels: evals\['v'\] y"):
        gbm.train(AFT, X, intervals, 1, evals=[{"X": X, "y": None, "name": "v"}])
    with pytest.raises(ValueError, match="the DMatrix has no labels"):
        gbm.train(AFT, gbm.DMatrix(X), 1)
    with pytest.raises(ValueError, match="has label bounds but no labels; objective "
                                         "'survival:cox' needs labels"):
        gbm.train(COX, gbm.DMatrix(X, label_lower_bound=intervals[:, 0],
                                   label_upper_bound=intervals[:, 1]), 1)
    with pytest.raises(ValueError, match=r"y contains nan at row 3"):
        gbm.train(COX, X, np.where(np.arange(400) == 3, np.nan, signed), 1)
    with pytest.raises(ValueError, match="survival:cox needs at least one event"):
        gbm.train(COX, X, -np.abs(signed), 1)


def test_metrics_need_their_objective(data):
    X, signed, intervals = data
    with pytest.raises(ValueError, match="eval_metric 'rmse' needs one label per row"):
        gbm.train(dict(AFT, eval_metric="rmse"), X, intervals, 1)
    with pytest.raises(ValueError, match="eval_metric 'aft-nloglik' needs "
                                         "objective='survival:aft'"):
        gbm.train(dict(COX, eval_metric="aft-nloglik"), X, signed, 1)
    with pytest.raises(ValueError, match="eval_metric 'cox-nloglik' needs "
                                         "objective='survival:cox'"):
        gbm.train({"eval_metric": "cox-nloglik"}, X, signed, 1)
    with pytest.raises(ValueError, match="aft_loss_distribution must be one of"):
        gbm.train(dict(AFT, aft_loss_distribution="weibull"), X, intervals, 1)
    with pytest.raises(ValueError, match="aft_loss_distribution_scale must be >= 1.17549"):
        gbm.train(dict(AFT, aft_loss_distribution_scale=0.0), X, intervals, 1)
    with pytest.raises(ValueError, match="cox-nloglik' needs at least one event"):
        gbm.train(COX, X, signed, 1, evals=[(X, -np.abs(signed), "censored")])


@pytest.mark.parametrize("params, labels", [(COX, 1), (AFT, 2)], ids=["cox", "aft"])
def test_same_model_on_one_or_two_threads(data, params, labels):
    X, signed, intervals = data
    y = signed if labels == 1 else intervals
    kwargs = dict(evals=[(X, y, "train")])
    one = gbm.train(dict(params, n_jobs=1), X, y, 5, **kwargs)
    two = gbm.train(dict(params, n_jobs=2), X, y, 5, **kwargs)
    assert one.to_json() == two.to_json()
    assert one.evals_result == two.evals_result


@pytest.mark.parametrize("world", [2, 3])
@pytest.mark.parametrize("params, labels", [
    (COX, 1), (dict(AFT, aft_loss_distribution="extreme"), 2)], ids=["cox", "aft"])
def test_ranks_train_the_local_model(data, params, labels, world):
    """Uneven rank shares (one empty with 3 ranks), rows given out of order (row_ids: the
    Cox sums order ties by global row index, not by rank)."""
    X, signed, intervals = data
    y = signed if labels == 1 else intervals
    perm = np.random.default_rng(0).permutation(len(X))
    kwargs = dict(evals=[(X, y, "train")])
    local = gbm.train(params, X, y, 4, **kwargs)
    cuts = {2: [0, 130, 400], 3: [0, 220, 220, 400]}[world]

    def rank_fn(c):
        ids = np.sort(perm[cuts[c.rank]:cuts[c.rank + 1]])
        evals = [(X[ids], y[ids], "train")]
        return gbm.train(params, X[ids], y[ids], 4, evals=evals, collective=c, row_ids=ids)

    for booster in ThreadGroup(world).run(rank_fn):
        assert booster.to_json() == local.to_json()
        assert booster.evals_result == local.evals_result  # the metrics' sums too


def test_estimators_fit_survival_with_scikit_learn_tools(data, tmp_path):
    from sklearn.model_selection import GridSearchCV, cross_val_score

    X, signed, intervals = data
    cox = gbm.GBMRegressor(objective="survival:cox", n_estimators=5, max_depth=2)
    scores = cross_val_score(cox, X, signed, cv=3)
    assert scores.shape == (3,) and np.isfinite(scores).all()
    aft = gbm.GBMRegressor(objective="survival:aft", n_estimators=5,
                           aft_loss_distribution="logistic", aft_loss_distribution_scale=0.8)
    search = GridSearchCV(aft, {"max_depth": [1, 3]}, cv=3).fit(X, intervals)
    assert search.best_params_["max_depth"] in (1, 3)
    aft.fit(X, intervals, eval_set=[(X, intervals)])
    booster = gbm.train(dict(AFT, max_depth=6, aft_loss_distribution="logistic",
                             aft_loss_distribution_scale=0.8), X, intervals, 5)
    np.testing.assert_array_equal(aft.predict(X), booster.predict(X))
    # score: minus the objective's metric
    assert aft.score(X, intervals) == -aft.evals_result()["validation_0"]["aft-nloglik"][-1]
    aft.save_model(tmp_path / "aft.json")
    loaded = gbm.GBMRegressor().load_model(tmp_path / "aft.json")
    assert loaded.aft_loss_distribution == "logistic"
    np.testing.assert_array_equal(loaded.predict(X), aft.predict(X))
    np.testing.assert_array_equal(cox.fit(X, signed).predict(X),
                                  np.exp(cox.predict(X, output_margin=True)))
    with pytest.raises(ValueError, match="needs intervals"):
        gbm.GBMRegressor(objective="survival:aft").fit(X, signed)
