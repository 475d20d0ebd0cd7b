"""``gbm.cv`` (gbm/training/cv.py): each fold's model is ``gbm.train``'s on the fold's
rows, the results are the folds' scores' mean and population std, the folds are drawn as
xgboost.cv draws them, and the metric trajectories match xgboost.cv's on exact bins."""
import numpy as np
import pytest
from sklearn.model_selection import KFold, StratifiedKFold

import gbm
from gbm.callback import EarlyStopping, TrainingCallback
from gbm.training import fold_threads
from gbm.training.folds import split_rows

xgb = pytest.importorskip("xgboost")


def _data(n=600, seed=0):
    """Features with 8 values each (exact bins: one bin per value in gbm and xgboost)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 8, size=(n, 4)).astype(np.float32)
    y = X[:, 0] - 0.7 * X[:, 1] + 0.4 * X[:, 2] * (X[:, 3] > 3) + rng.normal(size=n)
    return X, y


class Folds(TrainingCallback):
    """Keeps cv's ``CVBooster`` and the logs its callbacks saw."""

    def __init__(self):
        self.booster, self.logs, self.epochs = None, [], []

    def after_iteration(self, booster, epoch, evals_log):
        self.epochs.append(epoch)
        self.logs.append({s: {m: list(v) for m, v in ms.items()} for s, ms in evals_log.items()})
        return False

    def after_training(self, booster):
        self.booster = booster
        return booster


def _reference_folds(n, nfold, seed):
    """xgboost.cv's rule, written out: RandomState(seed).permutation, array_split."""
    parts = np.array_split(np.random.RandomState(seed).permutation(n), nfold)
    return [(np.concatenate([p for i, p in enumerate(parts) if i != k]), parts[k])
            for k in range(nfold)]


CASES = {
    "regression": ({"max_depth": 3}, None),
    "binary": ({"objective": "binary:logistic", "max_depth": 3, "subsample": 0.7,
                "colsample_bynode": 0.6}, lambda y: (y > 0).astype(float)),
    "multiclass": ({"objective": "multi:softprob", "num_class": 3, "max_depth": 2},
                   lambda y: np.digitize(y, [-1.0, 1.0]).astype(float)),
}


@pytest.mark.parametrize("case", CASES)
def test_each_fold_model_is_gbm_train_on_its_rows(case):
    params, label = CASES[case]
    X, y = _data()
    y = y if label is None else label(y)
    seen = Folds()
    gbm.cv(params, X, y, 6, nfold=3, seed=7, callbacks=[seen])
    for pack, (train_rows, test_rows) in zip(seen.booster.cvfolds, _reference_folds(len(y), 3, 7)):
        np.testing.assert_array_equal(pack.dtest.label, y[test_rows])
        alone = gbm.train(params, X[train_rows], y[train_rows], 6)
        assert pack.bst.to_json() == alone.to_json()


def test_mean_and_std_are_numpys_over_the_folds_own_predictions():
    X, y = _data()
    seen = Folds()
    res = gbm.cv({"max_depth": 3}, X, y, 5, nfold=4, metrics=["rmse", "mae"], seed=1,
                 callbacks=[seen], as_pandas=False)
    for rounds in range(1, 6):
        per_fold = {key: [] for key in res}
        for pack in seen.booster.cvfolds:
            for name, d in (("train", pack.dtrain), ("test", pack.dtest)):
                pred = pack.bst.predict(d.data, iteration_range=(0, rounds))
                err = pred - d.label
                per_fold[f"{name}-rmse-mean"].append(np.sqrt(np.mean(err ** 2)))
                per_fold[f"{name}-mae-mean"].append(np.mean(np.abs(err)))
        for key, values in per_fold.items():
            if key.endswith("-mean"):
                std = key[:-5] + "-std"
                assert res[key][rounds - 1] == pytest.approx(np.mean(values), rel=1e-12)
                assert res[std][rounds - 1] == pytest.approx(np.std(values), rel=1e-9, abs=1e-15)


def test_results_as_pandas_and_as_a_dict():
    X, y = _data()
    frame = gbm.cv({"max_depth": 2}, X, y, 4, metrics=["rmse", "mae"])
    plain = gbm.cv({"max_depth": 2}, X, y, 4, metrics=["rmse", "mae"], as_pandas=False)
    # xgboost.cv's columns and order: per metric, train then test, each mean then std
    assert list(plain) == ["train-rmse-mean", "train-rmse-std", "train-mae-mean",
                           "train-mae-std", "test-rmse-mean", "test-rmse-std", "test-mae-mean",
                           "test-mae-std"]
    assert list(frame.columns) == list(plain)
    assert len(frame) == 4 and all(len(v) == 4 for v in plain.values())
    for key, values in plain.items():
        assert frame[key].tolist() == values


def test_early_stopping_ends_the_results_at_the_best_round():
    X, y = _data(seed=3)
    params = {"max_depth": 5, "learning_rate": 0.8, "reg_lambda": 0.0}
    full = gbm.cv(params, X, y, 40, as_pandas=False)
    best, last = _stopping(full["test-rmse-mean"], 3, maximize=False)
    assert last < 39, "the data must make early stopping stop"
    seen = Folds()
    res = gbm.cv(params, X, y, 40, early_stopping_rounds=3, as_pandas=False, callbacks=[seen])
    assert seen.booster.best_iteration == best
    assert seen.booster.best_score == full["test-rmse-mean"][best]
    assert seen.epochs[-1] == last
    assert {k: len(v) for k, v in res.items()} == {k: best + 1 for k in full}
    for key in full:
        assert res[key] == full[key][:best + 1]
    for pack in seen.booster.cvfolds:
        assert pack.bst.num_boosted_rounds == last + 1


def _stopping(scores, patience, maximize):
    """XGBoost's early stopping rule over a whole trajectory: (best round, last round)."""
    best = 0
    for epoch, score in enumerate(scores):
        if (score > scores[best]) if maximize else (score < scores[best]):
            best = epoch
        if epoch - best >= patience:
            return best, epoch
    return best, len(scores) - 1


def test_early_stopping_watches_the_last_metric_and_maximizes_auc():
    X, y = _data(seed=4)
    y = (y > 0).astype(float)
    params = {"objective": "binary:logistic", "max_depth": 6, "learning_rate": 1.0}
    full = gbm.cv(params, X, y, 30, metrics=["logloss", "auc"], as_pandas=False)
    best, last = _stopping(full["test-auc-mean"], 2, maximize=True)
    assert last < 29 and best != _stopping(full["test-logloss-mean"], 2, maximize=False)[0]
    res = gbm.cv(params, X, y, 30, metrics=["logloss", "auc"], early_stopping_rounds=2,
                 as_pandas=False)
    assert len(res["test-auc-mean"]) == best + 1


def test_stratified_folds_keep_the_class_proportions_as_xgboosts_do():
    X, y = _data(n=700, seed=5)
    y = np.digitize(y, [-2.0, 1.5]).astype(float)  # three unequal classes
    seen = Folds()
    gbm.cv({"objective": "multi:softprob", "num_class": 3, "max_depth": 2}, X, y, 1,
           nfold=4, stratified=True, seed=11, callbacks=[seen])
    expected = StratifiedKFold(4, shuffle=True, random_state=11).split(y, y)
    for pack, (_, test_rows) in zip(seen.booster.cvfolds, expected):
        np.testing.assert_array_equal(pack.dtest.label, y[test_rows])
        for c in range(3):  # each class split evenly: at most one row off the share
            share = np.sum(y == c) / 4
            assert abs(np.sum(pack.dtest.label == c) - share) < 1


def test_given_folds_are_used_as_given():
    X, y = _data()
    rng = np.random.default_rng(2)
    rows = rng.permutation(len(y))
    given = [(rows[:300], rows[300:450]), (rows[100:], rows[:100])]  # overlapping, unsorted
    seen = Folds()
    res = gbm.cv({"max_depth": 2}, X, y, 3, folds=given, callbacks=[seen], as_pandas=False)
    assert len(seen.booster.cvfolds) == 2
    for pack, (tr, te) in zip(seen.booster.cvfolds, given):
        np.testing.assert_array_equal(pack.dtrain.label, y[tr])
        np.testing.assert_array_equal(pack.dtest.label, y[te])
        assert pack.bst.to_json() == gbm.train({"max_depth": 2}, X[tr], y[tr], 3).to_json()
    splitter = KFold(5, shuffle=True, random_state=0)
    by_object = gbm.cv({"max_depth": 2}, X, y, 3, folds=splitter, as_pandas=False)
    by_list = gbm.cv({"max_depth": 2}, X, y, 3, folds=list(splitter.split(X)), nfold=5,
                     as_pandas=False)
    by_generator = gbm.cv({"max_depth": 2}, X, y, 3, folds=splitter.split(X), as_pandas=False)
    assert by_object == by_list == by_generator and by_object != res


def test_default_folds_are_xgboosts_for_the_same_seed():
    from xgboost.training import mknfold

    X, _ = _data(n=203)
    ids = np.arange(203, dtype=float)  # labels name the rows
    for seed, shuffle in ((0, True), (42, True), (0, False)):
        packs = mknfold(dall=xgb.DMatrix(X, ids), nfold=4, param={}, seed=seed, shuffle=shuffle)
        ours = split_rows(203, 4, ids, None, seed=seed, shuffle=shuffle)
        for pack, fold in zip(packs, ours):
            np.testing.assert_array_equal(pack.dtrain.get_label().astype(int), fold.train)
            np.testing.assert_array_equal(pack.dtest.get_label().astype(int), fold.test)


def _ranking(seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, 15, size=60)
    n = int(sizes.sum())
    X = rng.integers(0, 8, size=(n, 4)).astype(np.float32)
    y = np.clip(np.round(X[:, 0] / 2 - X[:, 1] / 3 + rng.normal(size=n)), 0, 3)
    return X, y, sizes


def test_ranking_folds_keep_query_groups_whole_as_xgboosts_do():
    from xgboost.training import mknfold

    X, y, sizes = _ranking()
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    d = xgb.DMatrix(X, np.arange(len(y), dtype=float))
    d.set_group(sizes)
    theirs = mknfold(dall=d, nfold=3, param={}, seed=4)
    seen = Folds()
    params = {"objective": "rank:ndcg", "max_depth": 3}
    gbm.cv(params, X, y, 3, group=sizes, seed=4, callbacks=[seen])
    for pack, fold, their in zip(seen.booster.cvfolds, split_rows(len(y), 3, y, ptr, seed=4),
                                 theirs):
        np.testing.assert_array_equal(their.dtest.get_label().astype(int), fold.test)
        np.testing.assert_array_equal(their.dtrain.get_label().astype(int), fold.train)
        np.testing.assert_array_equal(pack.dtest.group, their.dtest.get_group())
        alone = gbm.train(params, X[fold.train], y[fold.train], 3, group=pack.dtrain.group)
        assert pack.bst.to_json() == alone.to_json()


def test_given_folds_that_split_a_query_group_are_refused():
    X, y, sizes = _ranking()
    n = len(y)
    with pytest.raises(ValueError, match="query group 0"):
        gbm.cv({"objective": "rank:ndcg"}, X, y, 2, group=sizes,
               folds=[(np.arange(2, n), np.arange(2))])
    with pytest.raises(ValueError, match="splits rows by label"):
        gbm.cv({"objective": "rank:ndcg"}, X, y, 2, group=sizes, stratified=True)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"nfold": 1}, ValueError, "nfold must be >= 2"),
    ({"nfold": 2.5}, TypeError, "nfold must be an integer"),
    ({"nfold": 4, "folds": [(np.arange(10, 600), np.arange(10))] * 3}, ValueError,
     "nfold=4 but folds gives 3"),
    ({"metrics": ["rmse", "nope"]}, ValueError, r"metrics\[1\].*'nope' is not a known"),
    ({"metrics": 3}, TypeError, "metrics must be"),
    ({"folds": [(np.arange(10), np.array([600]))]}, ValueError, r"folds\[0\]\[1\].*outside"),
    ({"folds": [(np.ones(600, bool), np.arange(3))]}, TypeError, "boolean mask"),
    ({"folds": 3}, TypeError, "folds must be a splitter"),
    ({"callbacks": [print]}, TypeError, "TrainingCallback"),
    ({"fpreproc": 1}, TypeError, "fpreproc must be callable"),
    ({"early_stopping_rounds": 0}, ValueError, "early_stopping_rounds"),
    ({"verbose_eval": -1}, ValueError, "verbose_eval"),
    ({"custom_metric": len, "feval": len}, TypeError, "same argument"),
])
def test_bad_arguments_raise_clear_errors(kwargs, error, match):
    X, y = _data()
    with pytest.raises(error, match=match):
        gbm.cv({"max_depth": 2}, X, y, 2, **kwargs)


def test_more_folds_than_rows_and_a_bad_parameter_are_refused():
    X, y = _data(n=5)
    with pytest.raises(ValueError, match="nfold=6 but the data has 5 row"):
        gbm.cv({}, X, y, 2, nfold=6)
    with pytest.raises(ValueError, match="max_depht"):
        gbm.cv({"max_depht": 3}, X, y, 2)


def test_an_error_in_a_fold_reaches_the_caller():
    X, y = _data()
    yb = (y > 0).astype(float)

    def break_second_fold(dtrain, dtest, params):  # labels a classifier refuses
        if dtrain.num_row() == 598:
            dtrain = gbm.DMatrix(dtrain.data, dtrain.label + 5)
        return dtrain, dtest, params

    with pytest.raises(ValueError, match="binary:logistic") as info:
        gbm.cv({"objective": "binary:logistic"}, X, yb, 3, fpreproc=break_second_fold,
               folds=[(np.arange(1, 600), np.array([0])), (np.arange(2, 600), np.arange(2))])
    assert "fold 1" in "".join(getattr(info.value, "__notes__", ["fold 1"]))

    class Boom(TrainingCallback):
        def after_iteration(self, booster, epoch, evals_log):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        gbm.cv({}, X, y, 3, callbacks=[Boom()])


def test_thread_counts_change_nothing(monkeypatch):
    X, y = _data()
    y = np.digitize(y, [-1.0, 1.0]).astype(float)
    params = {"objective": "multi:softprob", "num_class": 3, "max_depth": 3, "subsample": 0.8}
    runs = {}
    for n_jobs, one_at_a_time in ((1, False), (2, False), (2, True)):
        if one_at_a_time:  # every fold on both threads, one fold after the other
            monkeypatch.setattr("gbm.training.cv.fold_slots",
                                lambda device, n_jobs, n, cells: (1, [2] * n))
        seen = Folds()
        res = gbm.cv(dict(params, n_jobs=n_jobs), X, y, 5, nfold=3, callbacks=[seen],
                     early_stopping_rounds=2, as_pandas=False)
        runs[(n_jobs, one_at_a_time)] = (res, [p.bst.to_json() for p in seen.booster.cvfolds])
    first = runs[(1, False)]
    assert all(run == first for run in runs.values())


def test_fold_slots_share_the_threads(monkeypatch):
    monkeypatch.setattr(fold_threads, "resolve_n_threads", lambda n_jobs: n_jobs)
    cell = fold_threads.CELLS_PER_THREAD
    assert fold_threads.fold_slots("cuda", 8, 5, cell) == (1, [None] * 5)
    assert fold_threads.fold_slots("cpu", 1, 3, cell) == (1, [1, 1, 1])
    # small folds: side by side, a thread each, in two waves
    assert fold_threads.fold_slots("cpu", 2, 3, cell) == (2, [1, 1, 1])
    # folds that keep 2 threads busy: one after the other (3 waves at twice the speed)
    assert fold_threads.fold_slots("cpu", 2, 3, 2 * cell) == (1, [2, 2, 2])
    # one wave of all folds, the threads shared out (every thread used)
    assert fold_threads.fold_slots("cpu", 16, 5, 4 * cell) == (5, [4, 3, 3, 3, 3])
    # equal costs: the most slots; waves never hold more than n_jobs threads
    assert fold_threads.fold_slots("cpu", 8, 4, 100 * cell) == (4, [2, 2, 2, 2])
    assert fold_threads.fold_slots("cpu", 5, 4, cell) == (4, [2, 1, 1, 1])
    slots, threads = fold_threads.fold_slots("cpu", 5, 6, 2 * cell)
    assert slots * max(threads) <= 5


def test_callbacks_see_cv_means_and_can_stop():
    X, y = _data()

    class StopAt(TrainingCallback):
        def after_iteration(self, booster, epoch, evals_log):
            mean, std = evals_log["test"]["rmse"][-1]
            assert isinstance(mean, float) and std >= 0
            return epoch == 2

    res = gbm.cv({}, X, y, 10, callbacks=[StopAt()], as_pandas=False)
    assert len(res["test-rmse-mean"]) == 3  # no best round: not cut back
    es = Folds()
    res = gbm.cv({}, X, y, 10, callbacks=[EarlyStopping(2, data_name="train"), es],
                 as_pandas=False)
    assert len(res["train-rmse-mean"]) == 10  # train rmse keeps falling: never stops
    assert [list(log) for log in es.logs] == [["train", "test"]] * 10


def test_verbose_eval_prints_xgboosts_lines(capsys):
    X, y = _data()
    gbm.cv({}, X, y, 5, verbose_eval=2, metrics="mae", seed=3)
    ours = capsys.readouterr().out.splitlines()
    xgb.cv({"tree_method": "hist"}, xgb.DMatrix(X, y), 5, verbose_eval=2, metrics="mae",
           seed=3)
    theirs = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in ours] == ["[0]", "[2]", "[4]"]
    assert ours == theirs  # the same folds and trees: the same 5 decimals
    gbm.cv({}, X, y, 2, verbose_eval=True, show_stdv=False, metrics="mae")
    line = capsys.readouterr().out.splitlines()[0]
    assert "+" not in line and line.startswith("[0]\ttrain-mae:")


def test_fpreproc_and_xgboost_style_objective_and_metric():
    X, y = _data()
    calls = []

    def fpreproc(dtrain, dtest, params):  # params without eval_metric, as in XGBoost
        calls.append((dtrain.num_row(), dtest.num_row(), sorted(params)))
        return dtrain, dtest, {"max_depth": 2}

    def squared(predt, dtrain):  # XGBoost's form: the fold's own DMatrix
        return predt - dtrain.get_label(), np.ones_like(predt)

    def worst(predt, dmatrix):
        return "worst", float(np.max(np.abs(predt - dmatrix.get_label())))

    seen = Folds()
    res = gbm.cv({"max_depth": 6, "eval_metric": "rmse"}, X, y, 3, nfold=3, fpreproc=fpreproc,
                 obj=squared, custom_metric=worst, early_stopping_rounds=5, callbacks=[seen],
                 as_pandas=False)
    assert calls == [(400, 200, ["max_depth"])] * 3
    assert list(res) == ["train-rmse-mean", "train-rmse-std", "test-rmse-mean",
                         "test-rmse-std", "train-worst-mean", "train-worst-std",
                         "test-worst-mean", "test-worst-std"]
    for pack in seen.booster.cvfolds:
        assert pack.params == {"max_depth": 2, "eval_metric": ["rmse"]}
        alone = gbm.train(pack.params, pack.dtrain, 3, obj=squared)
        assert pack.bst.to_json() == alone.to_json()


def test_dmatrix_and_positional_rounds_as_in_xgboost():
    X, y = _data()
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    seen = Folds()
    res = gbm.cv({"max_depth": 2}, gbm.DMatrix(X, y, weight=w), 4, seed=2, callbacks=[seen],
                 as_pandas=False)
    assert len(res["test-rmse-mean"]) == 4
    for pack, (tr, te) in zip(seen.booster.cvfolds, _reference_folds(len(y), 3, 2)):
        np.testing.assert_array_equal(pack.dtrain.weight, w[tr])
        alone = gbm.train({"max_depth": 2}, X[tr], y[tr], 4, sample_weight=w[tr])
        assert pack.bst.to_json() == alone.to_json()


# --- parity with xgboost.cv on exact bins ------------------------------------------------
# Same folds, same candidate splits (8 values per feature: one bin each in both): the trees
# are the same, and the scores differ only by xgboost's float32 predictions (relative
# rounding 6e-8 per value). Measured over 30 rounds: means within 4e-8 relative, stds within
# 3e-8 absolute; the tolerances below leave a factor of ~25 for other CPUs' float32 sums.

@pytest.mark.parametrize("objective, metrics, label", [
    ("reg:squarederror", ["rmse", "mae"], None),
    ("binary:logistic", ["logloss", "error", "auc"], lambda y: (y > 0.5).astype(float)),
])
def test_metric_trajectories_match_xgboost_cv_on_exact_bins(objective, metrics, label):
    X, y = _data(n=1500, seed=9)
    y = y if label is None else label(y)
    folds = list(KFold(4, shuffle=True, random_state=1).split(X))
    params = {"objective": objective, "max_depth": 3, "learning_rate": 0.3}
    ours = gbm.cv(params, X, y, 30, folds=folds, metrics=metrics)
    theirs = xgb.cv(dict(params, tree_method="hist"), xgb.DMatrix(X, y), 30, folds=folds,
                    metrics=metrics)
    assert list(ours.columns) == list(theirs.columns)
    for column in ours.columns:
        if column.endswith("-mean"):
            np.testing.assert_allclose(ours[column], theirs[column], rtol=1e-6, err_msg=column)
        else:
            np.testing.assert_allclose(ours[column], theirs[column], rtol=0, atol=1e-6,
                                       err_msg=column)


def test_ranking_trajectory_matches_xgboost_cv_with_its_own_folds():
    X, y, sizes = _ranking(seed=1)
    params = {"objective": "rank:ndcg", "max_depth": 3, "lambdarank_pair_method": "topk"}
    ours = gbm.cv(params, X, y, 10, group=sizes, seed=5, metrics="ndcg@5")
    d = xgb.DMatrix(X, y)
    d.set_group(sizes)
    theirs = xgb.cv(dict(params, tree_method="hist"), d, 10, seed=5, metrics="ndcg@5")
    np.testing.assert_allclose(ours.values, theirs.values, rtol=1e-6, atol=1e-7)


def test_inputs_as_gbm_train_takes_them():
    import pandas as pd
    import scipy.sparse as sparse

    X, y = _data()
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": X[:, 0], "b": pd.Categorical(rng.choice(list("uvwxyz"), len(y))),
                          "c": X[:, 2]})
    y = y + 2.0 * (frame["b"] == "u")
    seen = Folds()
    gbm.cv({"max_depth": 3}, frame, y, 3, seed=1, callbacks=[seen])
    for pack, (tr, _) in zip(seen.booster.cvfolds, _reference_folds(len(y), 3, 1)):
        assert pack.bst.to_json() == gbm.train({"max_depth": 3}, frame.iloc[tr], y[tr],
                                               3).to_json()
    dense = gbm.cv({"max_depth": 3}, X + 1, y, 3, as_pandas=False)  # no 0: none missing
    assert gbm.cv({"max_depth": 3}, sparse.csr_matrix(X + 1), y, 3, as_pandas=False) == dense
    two = gbm.cv({"max_depth": 3}, X + 1, np.c_[y, 2 * y], 3, as_pandas=False)  # two targets
    assert list(two) == list(dense) and two != dense


def test_query_ids_with_group_weights_and_a_group_splitter():
    from sklearn.model_selection import GroupKFold

    X, y, sizes = _ranking(seed=2)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(sizes))  # one per query
    params = {"objective": "rank:ndcg", "max_depth": 3}
    seen = Folds()
    gbm.cv(params, X, y, 3, qid=qid, sample_weight=w, folds=GroupKFold(3), callbacks=[seen])
    ptr = np.concatenate(([0], np.cumsum(sizes)))
    for pack, (tr, te) in zip(seen.booster.cvfolds, GroupKFold(3).split(X, y, qid)):
        np.testing.assert_array_equal(pack.dtest.label, y[te])
        groups = np.unique(qid[tr])
        np.testing.assert_array_equal(pack.dtrain.weight, w[groups])
        alone = gbm.train(params, X[tr], y[tr], 3, group=np.diff(ptr)[groups],
                          sample_weight=w[groups])
        assert pack.bst.to_json() == alone.to_json()


def test_zero_rounds_params_as_pairs_and_label_errors_in_the_callers_rows():
    X, y = _data()
    assert gbm.cv({}, X, y, 0, as_pandas=False) == {}
    pairs = [("max_depth", 2), ("eval_metric", "rmse"), ("eval_metric", "mae")]
    assert gbm.cv(pairs, X, y, 2, as_pandas=False) == gbm.cv(
        {"max_depth": 2}, X, y, 2, metrics=["rmse", "mae"], as_pandas=False)
    # metrics= wins over eval_metric (as in XGBoost); nthread is n_jobs, shared out
    only_mae = gbm.cv({"max_depth": 2, "eval_metric": "rmse", "nthread": 2}, X, y, 2,
                      metrics="mae", as_pandas=False)
    assert list(only_mae) == ["train-mae-mean", "train-mae-std", "test-mae-mean", "test-mae-std"]
    y = (y > 0).astype(float)
    y[431] = 2.0
    with pytest.raises(ValueError, match=r"y\[431\] = 2.0"):
        gbm.cv({"objective": "binary:logistic"}, X, y, 2)


def test_a_progress_bar_shows_the_mean_scores():
    import io

    from gbm.callback import ProgressBar

    X, y = _data()
    bar = ProgressBar(file=io.StringIO())
    res = gbm.cv({}, X, y, 3, callbacks=[bar], as_pandas=False)
    assert bar.bar.n == bar.bar.total == 3
    assert f"test-rmse={res['test-rmse-mean'][-1]:.5g}" in bar.bar.postfix


def _survival(n=900, seed=3):
    """Exact-bin features and survival times: every third row right-censored (upper bound
    +inf), the signed labels of survival:cox (negative: censored)."""
    X, _ = _data(n=n, seed=seed)
    rng = np.random.default_rng(seed)
    t = np.exp(0.3 * X[:, 0] - 0.2 * X[:, 1] + 0.3 * rng.normal(size=n))
    censored = np.arange(n) % 3 == 0
    return X, t, np.where(censored, np.inf, t), np.where(censored, -t, t)


def test_survival_folds_carry_the_label_bounds_and_match_xgboost_cv():
    X, lower, upper, signed = _survival()
    params = {"objective": "survival:aft", "max_depth": 3, "learning_rate": 0.3,
              "aft_loss_distribution": "logistic", "aft_loss_distribution_scale": 1.2}
    metrics = ["aft-nloglik", "interval-regression-accuracy"]
    ours = gbm.cv(params, gbm.DMatrix(X, label_lower_bound=lower, label_upper_bound=upper),
                  8, nfold=3, seed=2, metrics=metrics)
    # the same intervals as a y of two columns: the same folds and scores
    as_columns = gbm.cv(params, X, np.column_stack([lower, upper]), 8, nfold=3, seed=2,
                        metrics=metrics)
    assert ours.equals(as_columns)
    theirs = xgb.cv(dict(params, tree_method="hist"),
                    xgb.DMatrix(X, label_lower_bound=lower, label_upper_bound=upper), 8,
                    nfold=3, seed=2, metrics=metrics)
    assert list(ours.columns) == list(theirs.columns)
    np.testing.assert_allclose(ours.values, theirs.values, rtol=1e-5, atol=1e-6)
    cox = {"objective": "survival:cox", "max_depth": 3, "learning_rate": 0.3}
    ours = gbm.cv(cox, gbm.DMatrix(X, signed), 8, nfold=3, seed=2)
    theirs = xgb.cv(dict(cox, tree_method="hist"), xgb.DMatrix(X, signed), 8, nfold=3, seed=2)
    np.testing.assert_allclose(ours.values, theirs.values, rtol=1e-5, atol=1e-6)
