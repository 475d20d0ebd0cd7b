"""Monotone constraints with the projected split search (``gradient_projection`` on
vector-leaf trees, ``gbm.tree.vector_monotone``): the one-feature full histogram kernel
against its reference twin and the all-features histograms, a stump equal to the full
search's, predictions monotone in the constrained feature for every output, refused
candidates replaced, and the same model file on 1/2 threads and on 2 ranks."""
import numpy as np
import pytest

import gbm
from gbm.collective import ThreadGroup
from gbm.kernels.cpu import vector_leaf as cpu
from gbm.kernels.reference import vector_leaf as ref
from gbm.tree.vector_leaf import VectorLeafGrower
from tests.support.vector_leaf_cases import random_case

VL = {"multi_strategy": "multi_output_tree", "gradient_projection": True, "projection_dim": 2}
INF = np.inf


@pytest.mark.parametrize("seed", range(4))
def test_feature_histogram_kernel_matches_reference_and_full_histograms(seed):
    rng = np.random.default_rng(700 + seed)
    k = 1 + seed
    bins, gpair, rows, starts, ends, offsets = random_case(rng, k=k)
    n, n_features = starts.shape[0], offsets.shape[0] - 1
    features = rng.integers(0, n_features, n).astype(np.int32)
    width = int(np.diff(offsets).max())
    by_output = np.ascontiguousarray(gpair.transpose(1, 0, 2))
    fast, slow = np.full((n, width, k, 2), -7, np.int64), np.empty((n, width, k, 2), np.int64)
    cpu.build_vector_feature_histograms(bins, by_output, rows, starts, ends, features, fast)
    ref.build_vector_feature_histograms(bins, by_output, rows, starts, ends, features, slow)
    np.testing.assert_array_equal(fast, slow)
    # oracle: each node's slots are its feature's slots of the all-features histograms
    full = np.empty((n, int(offsets[-1]), k, 2), np.int64)
    ref.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, full)
    for node, f in enumerate(features):
        w = offsets[f + 1] - offsets[f]
        np.testing.assert_array_equal(fast[node, :w], full[node, offsets[f]:offsets[f + 1]])
        assert not fast[node, w:].any()


def _data(n=1200, seed=0):
    """Six targets: three rise with feature 0 overall (with bumps), three fall."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    x = X[:, 0].astype(np.float64)
    up = np.stack([x + 0.8 * np.sin(4 * x) + 0.3 * X[:, 1],
                   2 * x - np.cos(5 * x) + 0.2 * X[:, 1] * X[:, 2],
                   x + 0.5 * X[:, 2]], axis=1)
    Y = np.concatenate([up, -up + 0.3 * X[:, [1]]], axis=1)
    return X, Y + rng.normal(scale=0.1, size=Y.shape)


def _steps(booster, sign):
    """Smallest step of ``sign`` * prediction along feature 0, per output."""
    grid = np.linspace(-1.1, 1.1, 60, dtype=np.float32)
    worst = np.full(6, np.inf)
    for a in (-0.7, 0.0, 0.6):
        for b in (-0.5, 0.4):
            Xg = np.stack([grid, np.full_like(grid, a), np.full_like(grid, b)], axis=1)
            worst = np.minimum(worst, (sign * np.diff(booster.predict(Xg), axis=0)).min(axis=0))
    return worst


@pytest.mark.parametrize("policy", ["depthwise", "lossguide"])
@pytest.mark.parametrize("sign", [1, -1])
def test_predictions_are_monotone_for_every_output(policy, sign, monkeypatch):
    X, Y = _data()
    p = dict(VL, max_depth=5, learning_rate=0.3, grow_policy=policy,
             max_leaves=16 if policy == "lossguide" else 0)
    free = gbm.train(p, X, Y, 20)
    assert (_steps(free, sign) < -1e-3).any()  # without the constraint: not monotone
    refused = []
    refine = VectorLeafGrower._refine

    def counting(self, *args):
        worth = refine(self, *args)
        refused.append(int((~worth).sum()))
        return worth

    monkeypatch.setattr(VectorLeafGrower, "_refine", counting)
    bound = gbm.train(dict(p, monotone_constraints=(sign, 0, 0)), X, Y, 20)
    assert (_steps(bound, sign) >= 0).all()
    assert refused and sum(refused) > 0  # some projected choices were replaced
    # the fit still learns: the outputs that follow the constraint's direction move
    span = sign * (bound.predict(np.array([[1, 0, 0]], np.float32))
                   - bound.predict(np.array([[-1, 0, 0]], np.float32)))[0]
    assert (span[[0, 1, 2] if sign > 0 else [3, 4, 5]] > 0.3).all()
    assert sum(t.n_nodes for t in bound.trees) > 3 * len(bound.trees)


def test_a_stump_on_the_constrained_feature_is_the_full_search_stump():
    # the root's split on the constrained feature is searched again on the full gradients:
    # its threshold and leaves are the full (unprojected) search's
    X, Y = _data()
    p = dict(VL, max_depth=1, monotone_constraints=(1, 0, 0))
    projected = gbm.train(p, X, Y, 1).trees[0]
    full = gbm.train(dict(p, gradient_projection=False), X, Y, 1).trees[0]
    assert projected.split_feature[0] == full.split_feature[0] == 0
    assert projected.threshold[0] == full.threshold[0]
    np.testing.assert_array_equal(projected.value[1:], full.value[1:])


def test_same_model_on_one_and_two_threads_and_two_ranks(tmp_path):
    X, Y = _data()
    p = dict(VL, max_depth=4, monotone_constraints=(1, 0, -1), subsample=0.8,
             colsample_bynode=0.7)
    one = gbm.train(dict(p, n_jobs=1), X, Y, 5)
    two = gbm.train(dict(p, n_jobs=2), X, Y, 5)
    assert one.to_json() == two.to_json()
    one.save_model(tmp_path / "m.json")
    np.testing.assert_array_equal(gbm.Booster.load_model(tmp_path / "m.json").predict(X),
                                  one.predict(X))

    def rank_fn(c):
        lo, hi = (0, 500, 1200)[c.rank], (0, 500, 1200)[c.rank + 1]
        return gbm.train(dict(p, n_jobs=1), X[lo:hi], Y[lo:hi], 5, collective=c,
                         row_ids=np.arange(lo, hi))

    for booster in ThreadGroup(2).run(rank_fn):
        assert booster.to_json() == one.to_json()
