"""Eval metrics, verbose lines and early stopping."""
import numpy as np
import pytest
from sklearn.metrics import log_loss, roc_auc_score

import gbm

xgb = pytest.importorskip("xgboost")


def _noisy_exact_data(seed=0, n=6000):
    # Few distinct values per feature: both libraries bin exactly, so trees agree closely.
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 10, size=(n, 6)).astype(np.float32)
    logit = 0.4 * X[:, 0] - 0.3 * X[:, 1] + 0.2 * (X[:, 2] > 4) - 1.0
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
    return X, y


@pytest.mark.parametrize("metric", ["logloss", "error", "auc"])
def test_early_stopping_picks_xgboosts_best_iteration(metric):
    X, y = _noisy_exact_data()
    params = {"objective": "binary:logistic", "max_depth": 4, "learning_rate": 0.3,
              "eval_metric": metric}
    train, valid = slice(0, 4000), slice(4000, None)
    ours = gbm.train(params, X[train], y[train], 300, evals=[(X[valid], y[valid], "valid")],
                     early_stopping_rounds=15)
    theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X[train], y[train]), 300,
                       evals=[(xgb.DMatrix(X[valid], y[valid]), "valid")],
                       early_stopping_rounds=15, verbose_eval=False)
    assert ours.best_iteration == theirs.best_iteration
    assert ours.best_score == pytest.approx(theirs.best_score, rel=1e-3)
    assert ours.num_boosted_rounds == theirs.num_boosted_rounds() < 300  # same early stop


def test_metrics_are_recorded_per_set_and_round(capsys):
    X, y = _noisy_exact_data(1, 3000)
    b = gbm.train({"objective": "binary:logistic", "eval_metric": ["logloss", "auc", "error"]},
                  X[:2000], y[:2000], 4, evals=[(X[:2000], y[:2000], "train"),
                                                (X[2000:], y[2000:], "valid")], verbose_eval=True)
    assert set(b.evals_result) == {"train", "valid"}
    assert all(len(v) == 4 for v in b.evals_result["valid"].values())
    p = b.predict(X[2000:], iteration_range=(0, 3))
    assert b.evals_result["valid"]["logloss"][2] == pytest.approx(log_loss(y[2000:], p), rel=1e-9)
    assert b.evals_result["valid"]["auc"][2] == pytest.approx(roc_auc_score(y[2000:], p))
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 4 and lines[0].startswith("[0]\ttrain-logloss:")
    assert "valid-auc:" in lines[0] and "valid-error:" in lines[-1]


def test_estimator_eval_set_and_early_stopping_predict_with_the_best_round():
    X, y = _noisy_exact_data(2)
    clf = gbm.GBMClassifier(n_estimators=300, learning_rate=0.3, max_depth=4,
                            eval_metric="logloss", early_stopping_rounds=10)
    clf.fit(X[:4000], y[:4000], eval_set=[(X[4000:], y[4000:])])
    booster = clf.get_booster()
    assert booster.num_boosted_rounds == clf.best_iteration + 11
    best = booster.predict(X[4000:], iteration_range=(0, clf.best_iteration + 1))
    np.testing.assert_array_equal(clf.predict_proba(X[4000:])[:, 1], best)
    assert clf.evals_result()["validation_0"]["logloss"][clf.best_iteration] == clf.best_score


@pytest.mark.parametrize("kwargs, message", [
    ({"params": {"eval_metric": "accuracy"}}, "eval_metric 'accuracy' is not a known metric"),
    ({"params": {"eval_metric": "tweedie-nloglik@2.5"}}, "is not a known metric"),
    ({"early_stopping_rounds": 5}, "needs at least one eval set"),
    ({"early_stopping_rounds": 0, "evals": "valid"}, "early_stopping_rounds must be an integer >= 1"),
])
def test_bad_evaluation_arguments(kwargs, message):
    X, y = _noisy_exact_data(3, 200)
    params = kwargs.pop("params", {})
    if kwargs.get("evals") == "valid":
        kwargs["evals"] = [(X, y, "valid")]
    with pytest.raises(ValueError, match=message):
        gbm.train(params, X, y, 3, **kwargs)


def _early_stopped_fit(**kwargs):
    X, y = _noisy_exact_data(4, 3000)
    evals = [(X[:2000], y[:2000], "train"), (X[2000:], y[2000:], "valid")]
    params = {"objective": "binary:logistic", "eval_metric": ["logloss", "auc"],
              "max_depth": 4, "learning_rate": 0.5}
    return gbm.train(params, X[:2000], y[:2000], 200, evals=evals, **kwargs)


def test_early_stopping_callback_is_early_stopping_rounds():
    by_rounds = _early_stopped_fit(early_stopping_rounds=5)
    by_callback = _early_stopped_fit(callbacks=[gbm.callback.EarlyStopping(5)])
    assert by_rounds.num_boosted_rounds < 200  # it did stop early
    assert by_callback.to_json() == by_rounds.to_json()
    assert (by_callback.best_iteration, by_callback.best_score) == (
        by_rounds.best_iteration, by_rounds.best_score)


def test_early_stopping_watches_the_metric_and_set_it_is_given():
    # the training set's logloss keeps falling: no stop before the rounds run out
    b = _early_stopped_fit(callbacks=[gbm.callback.EarlyStopping(
        5, metric_name="logloss", data_name="train")])
    assert b.num_boosted_rounds == 200
    scores = b.evals_result["train"]["logloss"]
    assert b.best_iteration == int(np.argmin(scores)) and b.best_score == min(scores)
    # AUC is maximised: the best round is the highest AUC of the validation set
    b = _early_stopped_fit(callbacks=[gbm.callback.EarlyStopping(5, metric_name="auc")])
    auc = b.evals_result["valid"]["auc"]
    assert b.best_score == max(auc) and b.num_boosted_rounds == b.best_iteration + 6


def test_early_stopping_min_delta_needs_a_larger_improvement():
    plain = _early_stopped_fit(callbacks=[gbm.callback.EarlyStopping(3, data_name="train")])
    strict = _early_stopped_fit(callbacks=[gbm.callback.EarlyStopping(3, data_name="train",
                                                                       min_delta=0.05)])
    assert strict.num_boosted_rounds < plain.num_boosted_rounds
    # each new best beat the one before by more than min_delta
    scores = strict.evals_result["train"]["auc"]
    best = [scores[0]]
    for s in scores[1:]:
        if s > best[-1] + 0.05:
            best.append(s)
    assert strict.best_score == best[-1]


@pytest.mark.parametrize("kwargs, message", [
    ({"metric_name": "rmse"}, "metric_name 'rmse' is not scored on 'valid'"),
    ({"data_name": "test"}, "data_name 'test' is not an eval set"),
])
def test_early_stopping_names_what_it_cannot_find(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _early_stopped_fit(callbacks=[gbm.callback.EarlyStopping(5, **kwargs)])


def test_early_stopping_without_an_eval_set_says_so():
    X, y = _noisy_exact_data(5, 300)
    with pytest.raises(ValueError, match="needs at least one eval set"):
        gbm.train({}, X, y, 3, callbacks=[gbm.callback.EarlyStopping(2)])
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="rounds must be an integer >= 1"):
            gbm.callback.EarlyStopping(bad)
    with pytest.raises(ValueError, match="period must be an integer >= 1"):
        gbm.callback.EvaluationMonitor(0)


def test_evaluation_monitor_prints_what_verbose_eval_prints(capsys):
    X, y = _noisy_exact_data(6, 1000)
    evals = [(X, y, "train")]
    gbm.train({"eval_metric": ["rmse", "mae"]}, X, y, 7, evals=evals, verbose_eval=3)
    by_verbose = capsys.readouterr().out
    gbm.train({"eval_metric": ["rmse", "mae"]}, X, y, 7, evals=evals,
              callbacks=[gbm.callback.EvaluationMonitor(3)])
    assert capsys.readouterr().out == by_verbose
    lines = by_verbose.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["[0]", "[3]", "[6]"]
    fields = lines[0].split("\t")[1:]
    assert [f.split(":")[0] for f in fields] == ["train-rmse", "train-mae"]
    assert all(len(f.split(":")[1].split(".")[1]) == 5 for f in fields)  # 5 decimals


class _LogsMore(gbm.callback.TrainingCallback):
    """A caller's callback that adds its own entries to the log."""

    def after_iteration(self, booster, epoch, evals_log):
        evals_log.setdefault("zz", {}).setdefault("const", []).append(1.0)
        return False


def test_early_stopping_rounds_watches_trains_last_score_whatever_else_is_logged(capsys):
    X, y = _noisy_exact_data(7, 2000)
    params = {"objective": "binary:logistic", "eval_metric": ["logloss", "auc"],
              "max_depth": 4, "learning_rate": 0.5}
    kw = dict(evals=[(X[1000:], y[1000:], "v")], early_stopping_rounds=3, verbose_eval=True)
    plain = gbm.train(params, X[:1000], y[:1000], 100, **kw)
    printed = capsys.readouterr().out
    logged = gbm.train(params, X[:1000], y[:1000], 100, callbacks=[_LogsMore()], **kw)
    assert logged.to_json() == plain.to_json() and plain.num_boosted_rounds < 100
    assert logged.best_iteration == plain.best_iteration
    assert capsys.readouterr().out == printed  # the caller's entries are not printed
    assert logged.evals_result["zz"]["const"] == [1.0] * logged.num_boosted_rounds


def test_a_users_metric_named_like_a_built_in_one_is_the_watched_score():
    X, y = _noisy_exact_data(8, 2000)
    calls = []

    def rising(y_, pred, w):  # worse every round: stops after the patience
        calls.append(1)
        return "logloss", float(len(calls))

    b = gbm.train({"objective": "binary:logistic", "eval_metric": ["logloss", "auc"]},
                  X[:1000], y[:1000], 50, evals=[(X[1000:], y[1000:], "v")],
                  custom_metric=rising, early_stopping_rounds=2)
    assert b.best_iteration == 0 and b.num_boosted_rounds == 3 and b.best_score == 1.0
    # both scores named logloss are kept, the built-in one first each round
    assert b.evals_result["v"]["logloss"][1::2] == [1.0, 2.0, 3.0]
