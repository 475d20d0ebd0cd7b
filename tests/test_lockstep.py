"""A round's output groups grown in lockstep (gbm/tree/lockstep.py): the same model file, byte
for byte, as growing each group's tree alone, for every setting that changes what a tree
does (sampling, leaf limits, constraints, categories, missing values, weights, early
stopping, thread counts); and used only where it may be."""
import numpy as np
import pandas as pd
import pytest

import gbm
import gbm.params
from gbm.tree import growers, lockstep
from gbm.runtime.backend import get_backend
from gbm.collective import ThreadCollective, ThreadGroup
from gbm.bins.dense import DenseBins
from gbm.bins.binning import RaggedCuts
from gbm.tree.tree_data import TreeData


def _data(n=2500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    X[::9, 1] = np.nan
    X[:, 5] = rng.integers(0, 40, n)  # many ties: empty bins, repeated thresholds
    return X, rng


def _classes(X, rng, k=4):
    score = X[:, 0] + np.nan_to_num(X[:, 1]) * 0.5 + X[:, 5] / 20 + rng.normal(size=len(X))
    return np.digitize(score, np.quantile(score, np.linspace(0, 1, k + 1)[1:-1])).astype(float)


MULTI = {"objective": "multi:softprob", "num_class": 4, "max_depth": 4, "n_jobs": 2}
CASES = {
    "softprob": {},
    "softmax_depth_1": {"objective": "multi:softmax", "max_depth": 1},
    "deep": {"max_depth": 9, "min_child_weight": 0.0, "reg_lambda": 0.1},
    "sampled": {"subsample": 0.6, "colsample_bytree": 0.8, "colsample_bylevel": 0.8,
                "colsample_bynode": 0.5},
    "max_leaves": {"max_leaves": 7, "max_depth": 6},  # binds at different levels per tree
    "constraints": {"monotone_constraints": [1, 0, -1, 0, 0, 1],
                    "interaction_constraints": [[0, 1, 5], [2, 3, 4]]},
    "regularised": {"reg_alpha": 0.5, "max_delta_step": 0.3, "gamma": 0.4,
                    "min_child_weight": 3.0, "learning_rate": 0.5},
    "one_thread": {"n_jobs": 1, "subsample": 0.7},
}


@pytest.fixture(autouse=True)
def _level_by_level(monkeypatch):
    """Lockstep is the level-by-level path's (trees grown in one call each, where that
    path applies, are compared with it in tests/test_whole_tree.py)."""
    monkeypatch.setattr(growers.SWITCHES, "whole_trees", False)


def _train_both(monkeypatch, params, X, y, rounds=5, **kwargs):
    """(lockstep model file, per-group model file, rounds grown in lockstep)."""
    calls = []
    real = lockstep.Lockstep.grow_round
    monkeypatch.setattr(lockstep.Lockstep, "grow_round",
                        lambda self, *a: calls.append(1) or real(self, *a))
    together = gbm.train(params, X, y, rounds, **kwargs).to_json()
    n_rounds = len(calls)
    with monkeypatch.context() as m:
        m.setattr(growers.SWITCHES, "lockstep", False)
        alone = gbm.train(params, X, y, rounds, **kwargs).to_json()
    return together, alone, n_rounds


@pytest.mark.parametrize("case", sorted(CASES))
def test_lockstep_gives_the_model_of_trees_grown_alone(case, monkeypatch):
    X, rng = _data()
    y = _classes(X, rng)
    together, alone, n_rounds = _train_both(monkeypatch, dict(MULTI, **CASES[case]), X, y)
    assert n_rounds == 5
    assert together == alone


def test_multi_target_regression_with_weights(monkeypatch):
    X, rng = _data(seed=1)
    y = np.column_stack([X[:, 0], X[:, 2] ** 2, -X[:, 4], np.sin(X[:, 5])])
    w = rng.uniform(0.2, 3.0, len(X))
    together, alone, n_rounds = _train_both(monkeypatch, {"max_depth": 5, "n_jobs": 2}, X, y,
                                            sample_weight=w)
    assert n_rounds == 5
    assert together == alone


def test_categorical_features(monkeypatch):
    X, rng = _data(n=2000, seed=2)
    frame = pd.DataFrame(X[:, :4], columns=list("abcd"))
    codes = rng.integers(0, 12, len(X))
    frame["many"] = pd.Categorical.from_codes(codes, [f"c{i}" for i in range(12)])
    frame["few"] = pd.Categorical.from_codes(rng.integers(0, 3, len(X)), ["x", "y", "z"])
    y = _classes(np.column_stack([X[:, :5], codes]), rng, k=3)
    params = {"objective": "multi:softprob", "num_class": 3, "max_depth": 4, "n_jobs": 2,
              "max_cat_to_onehot": 4}
    together, alone, n_rounds = _train_both(monkeypatch, params, frame, y)
    assert n_rounds == 5
    assert together == alone


def test_a_group_without_sampled_rows(monkeypatch):
    """A tiny row sample: some groups' trees get no rows in some rounds."""
    X, rng = _data(n=60, seed=3)
    y = _classes(X, rng, k=3)
    params = dict(MULTI, num_class=3, subsample=0.02, min_child_weight=0.0)
    together, alone, n_rounds = _train_both(monkeypatch, params, X, y, rounds=8)
    assert n_rounds == 8
    assert together == alone


def test_early_stopping_on_an_eval_set(monkeypatch):
    X, rng = _data(n=3000, seed=4)
    y = _classes(X, rng)
    params = dict(MULTI, learning_rate=0.8, eval_metric="mlogloss")
    evals = [(X[2000:], y[2000:], "valid")]
    together, alone, n_rounds = _train_both(monkeypatch, params, X[:2000], y[:2000],
                                            rounds=60, evals=evals, early_stopping_rounds=3)
    assert 3 < n_rounds < 60  # it stopped early
    assert together == alone


def _tree_data(n_rows, n_features, dtype=np.uint8):
    bins = np.zeros((n_rows, n_features), dtype)
    n_bins = np.full(n_features, 4, np.int32)
    cuts = RaggedCuts(np.zeros(3 * n_features, np.float32), np.arange(0, 3 * n_features + 1, 3))
    return TreeData(DenseBins(bins, bins.T.copy(), n_bins), n_bins, cuts,
                    np.zeros(n_features, np.uint8), np.zeros(n_features, np.int8))


def test_used_only_where_it_may_be():
    p = gbm.params.validate_params({"objective": "multi:softprob", "num_class": 3})
    cpu, data = get_backend("cpu", 2), _tree_data(1000, 5)
    assert growers.use_lockstep(p, cpu, 3, data, False)
    assert not growers.use_lockstep(p, cpu, 1, data, False)  # one group
    assert not growers.use_lockstep(p, cpu, 3, data, True)  # leaves refreshed (quantiles)
    for change in ({"grow_policy": "lossguide"}, {"num_parallel_tree": 2}):
        assert not growers.use_lockstep(gbm.params.validate_params(
            {"objective": "multi:softprob", "num_class": 3, **change}), cpu, 3, data, False)
    rank = ThreadCollective(ThreadGroup(2), 0)
    assert not growers.use_lockstep(p, get_backend("cpu", 2, rank), 3, data, False)
    # the stacked copies' memory: 2 * groups * rows * features bytes
    limit = lockstep.MAX_STACKED_BYTES
    rows = limit // (2 * 4 * 8)
    assert growers.use_lockstep(p, cpu, 4, _tree_data(rows, 8), False)
    assert not growers.use_lockstep(p, cpu, 4, _tree_data(rows + 1, 8), False)
