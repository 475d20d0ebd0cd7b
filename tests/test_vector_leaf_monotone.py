"""Monotone constraints on vector-leaf trees (``multi_strategy="multi_output_tree"``),
XGBoost 3.4's vector rule (``kernels/cpu/vector_leaf.py``): the CPU kernels against their
reference twins and a hand-computed case, fits monotone in the constrained feature for
every output (and not without the constraint), the same model on 1/2 threads and on
2/3 ranks. xgboost 3.2 (installed) refuses the combination, so there is no parity test."""
import numpy as np
import pytest

import gbm
from gbm.collective import ThreadGroup
from gbm.kernels.cpu import vector_leaf as cpu
from gbm.kernels.reference import vector_leaf as ref
from tests.support.vector_leaf_cases import random_case

VL = {"multi_strategy": "multi_output_tree"}
INF = np.inf


def _split(kernels, hist, offsets, sums, mask, bounds, monotone, scales, split_params):
    n, k = hist.shape[0], hist.shape[2]
    out = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8),
           np.empty((n, k, 2), np.int64))
    kernels.evaluate_vector_splits_monotone(hist, offsets, sums, mask, bounds, monotone,
                                            scales, split_params, *out)
    return out


def _child_bounds(kernels, sums, left, bounds, signs, scales, split_params):
    lb, rb = np.full(bounds.shape, np.nan), np.full(bounds.shape, np.nan)
    kernels.vector_child_bounds(sums, left, bounds, signs, scales, split_params, lb, rb)
    return lb, rb


def _hand_case():
    """One node, one feature with two value bins (and an empty missing slot), two
    outputs: output 0 rises from the left bin to the right one, output 1 falls."""
    hist = np.zeros((1, 3, 2, 2), np.int64)
    hist[0, 0] = [[4, 2], [-6, 3]]   # left bin:  (G, H) per output
    hist[0, 1] = [[-8, 2], [2, 1]]   # right bin
    sums = hist[:, :2].sum(axis=1)
    offsets = np.array([0, 3], np.int32)
    return hist, sums, offsets


@pytest.mark.parametrize("kernels", [cpu, ref], ids=["cpu", "reference"])
def test_wrong_order_output_is_pooled_and_bounds_split_at_the_mid_hand_case(kernels):
    hist, sums, offsets = _hand_case()
    scales = np.ones((2, 2))
    lam = 1.0
    params = np.array([lam, 0.0, 0.0, 0.0])
    bounds = np.array([[[-INF, INF], [-INF, INF]]])
    gain, feature, split_bin, _, left = _split(kernels, hist, offsets, sums, np.ones((1, 1), np.uint8),
                                               bounds, np.array([1], np.int8), scales, params)
    # by hand: output 0: wl = -4/3, wr = 8/3 (right order, plain gains 16/3 + 64/3);
    # output 1: wl = 6/4, wr = -2/2 (wrong order for +1) -> both the pooled
    # -(G)/(H + 2 lam) = 4/6, each child's loss at it: -(2 g w + (h + lam) w^2)
    w = 4.0 / 6.0
    pooled = -(2 * -6 * w + 4 * w * w) - (2 * 2 * w + 2 * w * w)
    parent = 16.0 / 5.0 + 16.0 / 5.0  # G^2 / (H + lam) per output: (-4)^2/5, (-4)^2/5
    assert (feature[0], split_bin[0]) == (0, 0)
    np.testing.assert_allclose(gain[0], 16 / 3 + 64 / 3 + pooled - parent, rtol=1e-12)
    np.testing.assert_array_equal(left[0], hist[0, 0])
    lb, rb = _child_bounds(kernels, sums, left, bounds, np.array([1], np.int8), scales, params)
    mid0 = -4 / 3 + 0.5 * (8 / 3 + 4 / 3)
    np.testing.assert_allclose(lb[0], [[-INF, mid0], [-INF, w]], rtol=1e-15)
    np.testing.assert_allclose(rb[0], [[mid0, INF], [w, INF]], rtol=1e-15)
    # -1: output 0 is now the wrong order (pooled: -(-4) / (4 + 2) = 4/6), output 1 right
    lb, rb = _child_bounds(kernels, sums, left, bounds, np.array([-1], np.int8), scales, params)
    mid1 = 1.5 + 0.5 * (-1.0 - 1.5)
    np.testing.assert_allclose(lb[0], [[w, INF], [mid1, INF]], rtol=1e-15)
    np.testing.assert_allclose(rb[0], [[-INF, w], [-INF, mid1]], rtol=1e-15)
    # a node's weights are clamped into its bounds
    weights = np.empty((1, 2))
    kernels.vector_bounded_weights(sums, np.array([[[-INF, -1.0], [0.0, 0.5]]]), scales, params,
                                   weights)
    np.testing.assert_array_equal(weights, [[-1.0, 0.5]])  # unclamped: 4/5, 4/5


def _random_case(rng, k, n_nodes=3, n_rows=80, n_features=4):
    bins, gpair, rows, starts, ends, offsets = random_case(rng, n_rows, n_features, k, n_nodes)
    hist = np.empty((n_nodes, int(offsets[-1]), k, 2), np.int64)
    ref.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, hist)
    return hist, offsets


@pytest.mark.parametrize("seed", range(8))
def test_monotone_kernels_match_reference(seed):
    rng = np.random.default_rng(300 + seed)
    k = 1 + seed % 3
    hist, offsets = _random_case(rng, k)
    n, n_features = hist.shape[0], offsets.shape[0] - 1
    sums = hist[:, offsets[0]:offsets[1]].sum(axis=1)
    mask = (rng.random((n, n_features)) < 0.8).astype(np.uint8)
    scales = np.ldexp(1.0, rng.integers(4, 8, (k, 2))).astype(np.float64)
    params = np.array([[1.0, 0.0, 0.0, 1.0], [0.5, 2.0, 0.0, 0.0], [1.0, 0.5, 0.7, 3.0],
                       [0.0, 0.0, 0.0, 40.0]][seed % 4])
    monotone = rng.integers(-1, 2, n_features).astype(np.int8)
    bounds = np.empty((n, k, 2))
    bounds[..., 0] = np.where(rng.random((n, k)) < 0.5, -INF, rng.uniform(-1.0, 0.0, (n, k)))
    bounds[..., 1] = np.where(rng.random((n, k)) < 0.5, INF, rng.uniform(0.0, 1.0, (n, k)))
    fast = _split(cpu, hist, offsets, sums, mask, bounds, monotone, scales, params)
    slow = _split(ref, hist, offsets, sums, mask, bounds, monotone, scales, params)
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)
    signs = monotone[np.maximum(fast[1], 0)] * (fast[1] >= 0)
    for a, b in zip(_child_bounds(cpu, sums, fast[4], bounds, signs, scales, params),
                    _child_bounds(ref, sums, fast[4], bounds, signs, scales, params)):
        np.testing.assert_array_equal(a, b)
    w_fast, w_slow = np.empty((n, k)), np.empty((n, k))
    cpu.vector_bounded_weights(sums, bounds, scales, params, w_fast)
    ref.vector_bounded_weights(sums, bounds, scales, params, w_slow)
    np.testing.assert_array_equal(w_fast, w_slow)
    assert (w_fast >= bounds[..., 0]).all() and (w_fast <= bounds[..., 1]).all()


@pytest.mark.parametrize("seed", range(3))
def test_no_constraint_and_no_bounds_is_the_plain_split_search(seed):
    # every feature free, infinite bounds: the same bits as evaluate_vector_splits
    rng = np.random.default_rng(400 + seed)
    k = 2 + seed
    hist, offsets = _random_case(rng, k)
    n, n_features = hist.shape[0], offsets.shape[0] - 1
    sums = hist[:, offsets[0]:offsets[1]].sum(axis=1)
    mask = np.ones((n, n_features), np.uint8)
    scales = np.full((k, 2), 64.0)
    params = np.array([1.0, 0.3, 0.0, 1.0])
    bounds = np.empty((n, k, 2))
    bounds[..., 0], bounds[..., 1] = -INF, INF
    plain = tuple(np.empty_like(a) for a in _split(cpu, hist, offsets, sums, mask, bounds,
                                                   np.zeros(n_features, np.int8), scales, params))
    cpu.evaluate_vector_splits(hist, offsets, sums, mask, scales, params, *plain)
    bounded = _split(cpu, hist, offsets, sums, mask, bounds, np.zeros(n_features, np.int8),
                     scales, params)
    for a, b in zip(plain, bounded):
        np.testing.assert_array_equal(a, b)


def _data(n=1200, seed=0):
    """Three targets, each non-monotone in feature 0 (a bump or a dip) plus other features."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    x = X[:, 0].astype(np.float64)
    Y = np.stack([x + 0.8 * np.sin(4 * x) + 0.3 * X[:, 1],
                  -x - 0.8 * np.sin(4 * x) + 0.5 * X[:, 2],
                  2 * x - np.cos(5 * x) + 0.2 * X[:, 1] * X[:, 2]], axis=1)
    return X, Y + rng.normal(scale=0.1, size=Y.shape)


def _steps(booster, sign):
    """Smallest step of ``sign`` * prediction along feature 0, per output, over a grid of
    feature 0 at several settings of the other features."""
    grid = np.linspace(-1.1, 1.1, 60, dtype=np.float32)
    worst = np.full(3, np.inf)
    for a in (-0.7, 0.0, 0.6):
        for b in (-0.5, 0.4):
            Xg = np.stack([grid, np.full_like(grid, a), np.full_like(grid, b)], axis=1)
            worst = np.minimum(worst, (sign * np.diff(booster.predict(Xg), axis=0)).min(axis=0))
    return worst


@pytest.mark.parametrize("policy", ["depthwise", "lossguide"])
@pytest.mark.parametrize("sign", [1, -1])
def test_predictions_are_monotone_in_the_constrained_feature_for_every_output(policy, sign):
    X, Y = _data()
    p = dict(VL, max_depth=5, learning_rate=0.3, grow_policy=policy,
             max_leaves=16 if policy == "lossguide" else 0)
    free = gbm.train(p, X, Y, 25)
    assert (_steps(free, sign) < -1e-3).all()  # without the constraint: not monotone
    bound = gbm.train(dict(p, monotone_constraints=(sign, 0, 0)), X, Y, 25)
    assert (_steps(bound, sign) >= 0).all()
    # the constrained fit still learns the trend of the outputs that rise (+1) or fall
    # (-1) with feature 0 overall (outputs 0 and 2 rise, 1 falls): not a constant model
    span = sign * (bound.predict(np.array([[1, 0, 0]], np.float32))
                   - bound.predict(np.array([[-1, 0, 0]], np.float32)))[0]
    assert (span[[0, 2] if sign > 0 else [1]] > 0.3).all()
    # and a free feature of the same fit is not forced monotone
    assert sum(t.n_nodes for t in bound.trees) > 3 * len(bound.trees)


def test_mixed_signs_and_softprob():
    X, Y = _data(seed=1)
    classes = (Y[:, 0] > 0).astype(np.float64) + (Y[:, 2] > 0.5)
    p = dict(VL, objective="multi:softprob", num_class=3, max_depth=4,
             monotone_constraints=(1, -1, 0), reg_alpha=0.2, max_delta_step=0.5)
    booster = gbm.train(p, X, classes, 10)
    grid = np.linspace(-1.1, 1.1, 40, dtype=np.float32)
    for other in (-0.6, 0.5):
        up = np.stack([grid, np.full_like(grid, other), np.zeros_like(grid)], axis=1)
        down = np.stack([np.full_like(grid, other), grid, np.zeros_like(grid)], axis=1)
        assert (np.diff(booster.predict(up, output_margin=True), axis=0) >= 0).all()
        assert (np.diff(booster.predict(down, output_margin=True), axis=0) <= 0).all()


def test_same_model_on_one_and_two_threads(tmp_path):
    X, Y = _data()
    p = dict(VL, max_depth=4, monotone_constraints=(1, 0, -1), subsample=0.8,
             colsample_bynode=0.7)
    one = gbm.train(dict(p, n_jobs=1), X, Y, 6)
    two = gbm.train(dict(p, n_jobs=2), X, Y, 6)
    assert one.to_json() == two.to_json()
    one.save_model(tmp_path / "m.json")
    loaded = gbm.Booster.load_model(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(X), one.predict(X))


@pytest.mark.parametrize("policy", ["depthwise", "lossguide"])
@pytest.mark.parametrize("cuts", [(0, 500, 1200), (0, 300, 300, 1200)], ids=["2ranks", "3ranks"])
def test_ranks_grow_the_local_model(policy, cuts):
    X, Y = _data()
    p = dict(VL, max_depth=4, monotone_constraints=(1, 0, 0), grow_policy=policy,
             max_leaves=9 if policy == "lossguide" else 0, subsample=0.8)
    local = gbm.train(p, X, Y, 3)
    assert sum(t.n_nodes for t in local.trees) > 3 * len(local.trees)

    def rank_fn(c):
        lo, hi = cuts[c.rank], cuts[c.rank + 1]  # rank 1 of 3 holds no rows
        return gbm.train(p, X[lo:hi], Y[lo:hi], 3, collective=c, row_ids=np.arange(lo, hi))

    for booster in ThreadGroup(len(cuts) - 1).run(rank_fn):
        assert booster.to_json() == local.to_json()


def test_xgboost_export_of_a_constrained_model_predicts_the_same(tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, Y = _data(500)
    ours = gbm.train(dict(VL, max_depth=3, monotone_constraints=(1, 0, 0)), X, Y, 5)
    ours.save_model(tmp_path / "m.json", format="xgboost")
    theirs = xgb.Booster(model_file=str(tmp_path / "m.json"))
    np.testing.assert_allclose(theirs.predict(xgb.DMatrix(X)), ours.predict(X), atol=1e-6)
