"""Row and column sampling: counter-based, so the seed alone decides what is drawn."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.metrics import roc_auc_score

import gbm
from gbm.tree.sampling import ColumnSampler, row_sample
from gbm.params import validate_params

xgb = pytest.importorskip("xgboost")

X, y = make_classification(8000, 16, n_informative=10, random_state=0)
SAMPLED = {"objective": "binary:logistic", "max_depth": 4, "subsample": 0.7,
           "colsample_bytree": 0.8, "colsample_bylevel": 0.8, "colsample_bynode": 0.7}


def test_same_seed_same_model_for_any_thread_count():
    models = [gbm.train(dict(SAMPLED, n_jobs=n, seed=3), X, y, 10).to_json()
              for n in (1, 2, 1)]
    assert models[0] == models[1] == models[2]
    other = gbm.train(dict(SAMPLED, n_jobs=1, seed=4), X, y, 10).to_json()
    assert other != models[0]


def test_row_sample_depends_on_row_id_only():
    whole = row_sample(7, 3, 0, np.arange(10_000), 0.3)
    parts = np.concatenate([row_sample(7, 3, 0, np.arange(a, b), 0.3)
                            for a, b in [(0, 4000), (4000, 4001), (4001, 10_000)]])
    np.testing.assert_array_equal(whole, parts)
    assert 2700 < whole.sum() < 3300
    assert not np.array_equal(whole, row_sample(7, 4, 0, np.arange(10_000), 0.3))
    assert row_sample(7, 3, 0, np.arange(10), 1.0) is None


def test_subsample_leaves_rows_out_of_each_tree():
    full = gbm.train({"max_depth": 2}, X, y, 3)
    half = gbm.train({"max_depth": 2, "subsample": 0.5}, X, y, 3)
    for a, b in zip(full.trees, half.trees):  # root cover = hessian sum of the rows used
        assert 0.45 < b.cover[0] / a.cover[0] < 0.55


def test_colsample_bytree_limits_each_tree_to_its_features():
    b = gbm.train({"max_depth": 6, "colsample_bytree": 0.25}, X, y, 8)
    used = [set(t.split_feature[t.split_feature >= 0]) for t in b.trees]
    assert all(len(u) <= 4 for u in used)
    assert len(set.union(*used)) > 4  # different trees draw different features


def test_column_levels_and_nodes_are_nested_subsets():
    params = validate_params(dict(SAMPLED, colsample_bytree=0.5, colsample_bylevel=0.5,
                                  colsample_bynode=0.5))
    sampler = ColumnSampler(params, 16, round_=2, group=0)
    assert sampler.tree.size == 8
    for depth in range(3):
        for node in range(5):
            chosen = np.flatnonzero(sampler.mask(node, depth))
            assert chosen.size == 2 and set(chosen) <= set(sampler._levels[depth])
            assert set(sampler._levels[depth]) <= set(sampler.tree) and sampler._levels[depth].size == 4


def test_sampled_accuracy_on_par_with_xgboost():
    params = dict(SAMPLED, learning_rate=0.1)
    ours = gbm.train(params, X[:6000], y[:6000], 100)
    theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X[:6000], y[:6000]), 100)
    a = roc_auc_score(y[6000:], ours.predict(X[6000:]))
    b = roc_auc_score(y[6000:], theirs.predict(xgb.DMatrix(X[6000:])))
    assert abs(a - b) / b < 0.01, (a, b)


@pytest.mark.parametrize("name", ["subsample", "colsample_bytree", "colsample_bylevel",
                                  "colsample_bynode"])
@pytest.mark.parametrize("value, message", [(0.0, "must be > 0"), (1.5, "must be <= 1")])
def test_bad_sampling_rates(name, value, message):
    with pytest.raises(ValueError, match=f"{name} {message}"):
        gbm.GBMClassifier(n_estimators=2, **{name: value}).fit(X[:50], y[:50])


def test_rows_left_out_are_not_read_by_the_histogram_kernel(monkeypatch):
    from gbm.kernels import cpu
    from gbm.tree import growers
    from gbm.tree.sampling import row_sample as draw

    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(5000, 4)), rng.normal(size=5000)
    seen = []
    build = cpu.build_histograms

    def recording(bins, gpair, rows, starts, ends, *rest):
        seen.append(sorted(rows[starts[0]:ends[0]].tolist()) if len(starts) == 1 else None)
        return build(bins, gpair, rows, starts, ends, *rest)

    monkeypatch.setattr(cpu, "build_histograms", recording)
    # the level-by-level path, whose kernel calls Python sees (a tree grown in one call
    # gets the same rows: tests/test_sampling_contract.py spies on both)
    monkeypatch.setattr(growers.SWITCHES, "whole_trees", False)
    gbm.train({"subsample": 0.3, "max_depth": 3, "seed": 5}, X, y, 1)
    kept = np.flatnonzero(draw(5, 0, 0, np.arange(5000), 0.3))
    assert seen[0] == kept.tolist()  # the root histogram: exactly the sampled rows
