"""XGBoost's callbacks: LearningRateScheduler, TrainingCheckPoint, EarlyStopping's
save_best and stopping_history, TrainingCallback.EvalsLog."""
import os
import pickle

import numpy as np
import pytest

import gbm
from gbm.callback import EarlyStopping, LearningRateScheduler, TrainingCallback
from gbm.callback import TrainingCheckPoint
from gbm.io import gbm_json

rng = np.random.default_rng(0)
X = rng.random((400, 5))
y = (X[:, 0] + 0.3 * rng.random(400) > 0.6).astype(np.float64)
DTRAIN = gbm.DMatrix(X, label=y)
PARAMS = {"objective": "binary:logistic", "max_depth": 3}


def _trees(booster):
    return gbm_json.to_dict(booster)["trees"]


def test_scheduler_rates_match_a_fit_continued_round_by_round():
    """The oracle: each round trained alone, continuing the model with the rate the
    scheduler gives it (round 0: the parameters' rate; round i > 0: rates[i - 1])."""
    rates = [0.8, 0.2, 0.5, 0.9]
    scheduled = gbm.train(dict(PARAMS, eta=0.3), DTRAIN, 4,
                          callbacks=[LearningRateScheduler(rates)])
    model = gbm.train(dict(PARAMS, eta=0.3), DTRAIN, 1)
    for rate in rates[:3]:
        model = gbm.train(dict(PARAMS, eta=rate), DTRAIN, 1, init_model=model)
    assert _trees(scheduled) == _trees(model)
    assert scheduled.params["learning_rate"] == 0.9  # the last rate set, as XGBoost's


def test_a_schedule_function_and_a_zero_start():
    result = {}
    gbm.train(dict(PARAMS, eta=0, eval_metric="logloss"), DTRAIN, 4, evals=[(DTRAIN, "t")],
              evals_result=result, callbacks=[LearningRateScheduler(lambda i: 1.0 / (i + 1))])
    loss = result["t"]["logloss"]
    start = {}
    gbm.train(dict(PARAMS, eta=0, eval_metric="logloss"), DTRAIN, 1, evals=[(DTRAIN, "t")],
              evals_result=start)
    assert loss[0] == start["t"]["logloss"][0]  # round 0 at the parameters' rate 0
    assert loss[1] < loss[0] and loss[-1] < loss[1]


def test_scheduler_counts_the_rounds_of_this_fit():
    first = gbm.train(PARAMS, DTRAIN, 2)
    seen = []
    gbm.train(PARAMS, DTRAIN, 3, init_model=first,
              callbacks=[LearningRateScheduler(lambda i: seen.append(i) or 0.1)])
    assert seen == [0, 1, 2]


def test_scheduler_under_cv_sets_every_fold():
    rates = LearningRateScheduler([0.0, 0.0, 0.0])
    folds = gbm.cv(dict(PARAMS, eta=0.5), DTRAIN, 3, nfold=3, callbacks=[rates], as_pandas=False)
    means = folds["test-logloss-mean"]
    assert means[0] == means[1] == means[2]  # rate 0 after round 0, in every fold
    plain = gbm.cv(dict(PARAMS, eta=0.5), DTRAIN, 3, nfold=3, as_pandas=False)
    assert plain["test-logloss-mean"][0] == means[0]
    assert plain["test-logloss-mean"][1] < means[1]


@pytest.mark.parametrize("rates, error, message", [
    (3.0, TypeError, "learning_rates must be a function of the round or a sequence"),
    ("fast", TypeError, "learning_rates must be"),
])
def test_scheduler_refuses_what_is_not_a_schedule(rates, error, message):
    with pytest.raises(error, match=message):
        LearningRateScheduler(rates)


def test_scheduler_names_a_missing_or_bad_rate():
    with pytest.raises(ValueError, match="learning_rates has no rate for round 1"):
        gbm.train(PARAMS, DTRAIN, 3, callbacks=[LearningRateScheduler([0.1])])
    with pytest.raises(ValueError, match="learning_rate must be >= 0"):
        gbm.train(PARAMS, DTRAIN, 2, callbacks=[LearningRateScheduler([-1.0, 0.1])])


def test_checkpoints_hold_the_model_of_their_round(tmp_path):
    booster = gbm.train(PARAMS, DTRAIN, 5, callbacks=[
        TrainingCheckPoint(tmp_path / "json", interval=2),
        TrainingCheckPoint(tmp_path / "pkl", name="m", interval=1, as_pickle=True)])
    assert sorted(os.listdir(tmp_path / "json")) == ["model_1.json", "model_3.json"]
    assert sorted(os.listdir(tmp_path / "pkl")) == [f"m_{i}.pkl" for i in range(5)]
    saved = gbm.Booster.load_model(str(tmp_path / "json" / "model_3.json"))
    np.testing.assert_array_equal(saved.predict(X), booster[:4].predict(X))
    with open(tmp_path / "pkl" / "m_2.pkl", "rb") as f:
        np.testing.assert_array_equal(pickle.load(f).predict(X), booster[:3].predict(X))
    assert TrainingCheckPoint.default_format == "json"


def test_checkpoint_names_count_from_the_models_first_round(tmp_path):
    first = gbm.train(PARAMS, DTRAIN, 3)
    gbm.train(PARAMS, DTRAIN, 2, init_model=first,
              callbacks=[TrainingCheckPoint(tmp_path, interval=1)])
    assert sorted(os.listdir(tmp_path)) == ["model_3.json", "model_4.json"]
    with pytest.raises(ValueError, match="interval must be an integer >= 1"):
        TrainingCheckPoint(tmp_path, interval=0)


def test_save_best_returns_the_model_up_to_its_best_round():
    stop = EarlyStopping(rounds=3, save_best=True, min_delta=100)  # no round improves on 0
    booster = gbm.train(PARAMS, DTRAIN, 50, evals=[(DTRAIN, "t")], callbacks=[stop])
    assert booster.num_boosted_rounds == 1 and booster.best_iteration == 0
    assert len(booster.evals_result["t"]["logloss"]) == 4  # every round trained
    assert stop.stopping_history == {"t": {"logloss": booster.evals_result["t"]["logloss"]}}

    kept = EarlyStopping(rounds=3)
    full = gbm.train(PARAMS, DTRAIN, 30, evals=[(DTRAIN, "t")], callbacks=[kept])
    best = EarlyStopping(rounds=3, save_best=True)
    cut = gbm.train(PARAMS, DTRAIN, 30, evals=[(DTRAIN, "t")], callbacks=[best])
    assert cut.num_boosted_rounds == full.best_iteration + 1
    assert (cut.best_iteration, cut.best_score) == (full.best_iteration, full.best_score)
    np.testing.assert_array_equal(cut.predict(X), full[:full.best_iteration + 1].predict(X))
    assert len(kept.stopping_history["t"]["logloss"]) == full.num_boosted_rounds


def test_stopping_history_of_a_named_metric_and_set():
    def error(y_true, prediction, weight):
        return "CustomErr", float(np.mean((prediction > 0.5) != y_true))

    stop = EarlyStopping(rounds=2, metric_name="CustomErr", data_name="Train")
    booster = gbm.train(dict(PARAMS, eval_metric=["error", "rmse"]), DTRAIN, 200,
                        evals=[(DTRAIN, "Train"), (DTRAIN, "Valid")], custom_metric=error,
                        callbacks=[stop])
    assert list(stop.stopping_history) == ["Train"]
    assert len(stop.stopping_history["Train"]["CustomErr"]) == booster.num_boosted_rounds


def test_save_best_does_not_apply_to_cv():
    with pytest.raises(ValueError, match="save_best=True. does not apply to gbm.cv"):
        gbm.cv(PARAMS, DTRAIN, 3, nfold=2, callbacks=[EarlyStopping(rounds=1, save_best=True)])


def test_evals_log_type():
    assert TrainingCallback.EvalsLog.__origin__ is dict
    assert set(gbm.callback.__all__) >= {"EarlyStopping", "EvaluationMonitor",
                                         "LearningRateScheduler", "TrainingCheckPoint",
                                         "TrainingCallback"}


def test_evaluation_monitor_logger_and_rank():
    from gbm.callback import EvaluationMonitor
    from gbm.collective import ThreadGroup

    lines = []
    gbm.train(PARAMS, DTRAIN, 3, evals=[(DTRAIN, "t")],
              callbacks=[EvaluationMonitor(period=2, logger=lines.append)])
    assert [line.split("\t")[0] for line in lines] == ["[0]", "[2]"]
    assert lines[0].startswith("[0]\tt-logloss:")

    by_rank = [[], []]
    halves = [np.arange(200), np.arange(200, 400)]

    def fit(collective):
        rows = halves[collective.rank]
        monitor = EvaluationMonitor(rank=1, logger=by_rank[collective.rank].append)
        gbm.train(PARAMS, X[rows], y[rows], 2, evals=[(X[rows], y[rows], "t")],
                  callbacks=[monitor], collective=collective, row_ids=rows)

    ThreadGroup(2).run(fit)
    assert by_rank[0] == [] and len(by_rank[1]) == 2
    with pytest.raises(ValueError, match="rank must be an integer >= 0"):
        EvaluationMonitor(rank=-1)
    with pytest.raises(TypeError, match="logger must be a function"):
        EvaluationMonitor(logger="stdout")
