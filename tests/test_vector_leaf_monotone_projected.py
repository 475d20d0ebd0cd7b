"""Monotone constraints with the projected split search (``gradient_projection`` on
vector-leaf trees, ``VectorLeafGrower._check_projected``): the full-sum gain kernel against
its reference twin and against the monotone split search's own gains, predictions
monotone in the constrained feature for every output, the refused candidates replaced,
and the same model file on 1/2 threads and on 2 ranks."""
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


def _sums_case(seed, k=4, n=7):
    rng = np.random.default_rng(seed)
    total = np.stack([rng.integers(-4000, 4000, (n, k)), rng.integers(0, 4000, (n, k))], -1)
    left = np.stack([rng.integers(-3000, 3000, (n, k)), total[..., 1] * rng.random((n, k))], -1)
    bounds = np.empty((n, k, 2))
    bounds[..., 0] = np.where(rng.random((n, k)) < 0.5, -INF, rng.uniform(-1.0, 0.0, (n, k)))
    bounds[..., 1] = np.where(rng.random((n, k)) < 0.5, INF, rng.uniform(0.0, 1.0, (n, k)))
    signs = rng.integers(-1, 2, n).astype(np.int8)
    return total.astype(np.int64), left.astype(np.int64), bounds, signs


@pytest.mark.parametrize("seed", range(4))
def test_constrained_gain_kernel_matches_reference(seed):
    total, left, bounds, signs = _sums_case(seed)
    scales, params = np.full((4, 2), 512.0), np.array([1.0, 0.2 * seed, 0.0, 0.5])
    fast, slow = np.empty(7), np.empty(7)
    cpu.vector_constrained_gains(total, left, bounds, signs, scales, params, fast)
    ref.vector_constrained_gains(total, left, bounds, signs, scales, params, slow)
    np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("seed", range(4))
def test_constrained_gain_is_the_monotone_search_gain_of_its_split(seed):
    # an independent path: the monotone split search scores every candidate; the gain it
    # reports for its best one is the gain of that split's left sums
    rng = np.random.default_rng(700 + seed)
    k = 2 + seed % 3
    bins, gpair, rows, starts, ends, offsets = random_case(rng, k=k)
    hist = np.empty((starts.shape[0], int(offsets[-1]), k, 2), np.int64)
    ref.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, hist)
    n, n_features = hist.shape[0], offsets.shape[0] - 1
    sums = hist[:, offsets[0]:offsets[1]].sum(axis=1)
    monotone = rng.integers(-1, 2, n_features).astype(np.int8)
    bounds = np.empty((n, k, 2))
    bounds[..., 0], bounds[..., 1] = rng.uniform(-0.5, 0.0, (n, k)), INF
    scales, params = np.full((k, 2), 64.0), np.array([1.0, 0.1, 0.0, 1.0])
    gain, feature = np.empty(n), np.empty(n, np.int32)
    split_bin, left, left_sums = np.empty(n, np.int32), np.empty(n, np.uint8), \
        np.empty((n, k, 2), np.int64)
    cpu.evaluate_vector_splits_monotone(hist, offsets, sums, np.ones((n, n_features), np.uint8),
                                        bounds, monotone, scales, params, gain, feature,
                                        split_bin, left, left_sums)
    found = feature >= 0
    assert found.any()
    again = np.empty(n)
    cpu.vector_constrained_gains(sums, left_sums, bounds, monotone[np.maximum(feature, 0)],
                                 scales, params, again)
    np.testing.assert_array_equal(again[found], gain[found])


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
    check = VectorLeafGrower._full_gain_ok

    def counting(self, *args):
        worth = check(self, *args)
        refused.append(int((~worth).sum()))
        return worth

    monkeypatch.setattr(VectorLeafGrower, "_full_gain_ok", counting)
    bound = gbm.train(dict(p, monotone_constraints=(sign, 0, 0)), X, Y, 20)
    assert (_steps(bound, sign) >= 0).all()
    assert refused and sum(refused) > 0  # some projected choices were replaced
    # the fit still learns: the outputs that follow the constraint's direction move
    span = sign * (bound.predict(np.array([[1, 0, 0]], np.float32))
                   - bound.predict(np.array([[-1, 0, 0]], np.float32)))[0]
    assert (span[[0, 1, 2] if sign > 0 else [3, 4, 5]] > 0.3).all()
    assert sum(t.n_nodes for t in bound.trees) > 3 * len(bound.trees)


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
