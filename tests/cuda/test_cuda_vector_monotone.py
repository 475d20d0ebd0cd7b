"""Monotone constraints on vector-leaf trees with ``device="cuda"``: the CUDA kernels of
``kernels/cuda/vector_leaf.py`` and ``vector_monotone.py`` (and the categorical search's
bounded gains) against the CPU's, bit for bit, and whole fits writing the CPU's model
file: depthwise, lossguide, the projected split search and categorical features. Small
grids: the simulator runs every CUDA thread as a Python thread."""
import json

import numpy as np
import pytest

import gbm
from gbm.kernels import cpu, cuda
from tests.support.device_arrays import device_array as dev
from tests.support.device_arrays import host
from tests.support.model_cases import first_difference
from tests.support.vector_leaf_cases import random_case

VL = {"multi_strategy": "multi_output_tree"}
INF = np.inf


def _case(seed, k):
    rng = np.random.default_rng(seed)
    bins, gpair, rows, starts, ends, offsets = random_case(rng, k=k)
    hist = np.empty((starts.shape[0], int(offsets[-1]), k, 2), np.int64)
    cpu.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, hist)
    n = hist.shape[0]
    bounds = np.empty((n, k, 2))
    bounds[..., 0] = np.where(rng.random((n, k)) < 0.5, -INF, rng.uniform(-1.0, 0.0, (n, k)))
    bounds[..., 1] = np.where(rng.random((n, k)) < 0.5, INF, rng.uniform(0.0, 1.0, (n, k)))
    monotone = rng.integers(-1, 2, offsets.shape[0] - 1).astype(np.int8)
    return rng, hist, offsets, hist[:, offsets[0]:offsets[1]].sum(axis=1), bounds, monotone


def _outs(n, k, cat_words=0):
    out = [np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8),
           np.empty((n, k, 2), np.int64)]
    return out + [np.empty((n, cat_words), np.uint32)] if cat_words else out


@pytest.mark.parametrize("seed", range(3))
def test_monotone_kernels_match_the_cpu(seed):
    k = 1 + seed
    rng, hist, offsets, sums, bounds, monotone = _case(900 + seed, k)
    n = hist.shape[0]
    mask = np.ones((n, offsets.shape[0] - 1), np.uint8)
    scales = np.ldexp(1.0, rng.integers(4, 9, (k, 2))).astype(np.float64)
    params = np.array([1.0, 0.3 * seed, 0.5 * (seed == 1), 1.0])
    results = []
    for module, wrap in ((cpu, lambda a: a), (cuda, dev)):
        out = _outs(n, k)
        module.evaluate_vector_splits_monotone(hist, offsets, wrap(sums), mask, bounds,
                                               monotone, wrap(scales), params, *out)
        signs = monotone[np.maximum(out[1], 0)] * (out[1] >= 0)
        lb, rb, w = np.empty((n, k, 2)), np.empty((n, k, 2)), np.empty((n, k))
        module.vector_child_bounds(sums, out[4], bounds, signs, scales, params, lb, rb)
        module.vector_bounded_weights(sums, bounds, scales, params, w)
        results.append([host(a) for a in out] + [lb, rb, w])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    assert (results[0][1] >= 0).any()
    assert (results[0][5] != results[0][6]).any()  # some bounds were narrowed


@pytest.mark.parametrize("seed", range(2))
def test_feature_histograms_match_the_cpu(seed):
    rng = np.random.default_rng(60 + seed)
    k = 2 + seed
    bins, gpair, rows, starts, ends, offsets = random_case(rng, k=k)
    n = starts.shape[0]
    features = rng.integers(0, offsets.shape[0] - 1, n).astype(np.int32)
    by_output = np.ascontiguousarray(gpair.transpose(1, 0, 2))
    shape = (n, int(np.diff(offsets).max()), k, 2)
    expected, got = np.empty(shape, np.int64), dev(np.full(shape, -7, np.int64))
    cpu.build_vector_feature_histograms(bins, by_output, rows, starts, ends, features,
                                        expected)
    cuda.build_vector_feature_histograms(dev(bins), dev(by_output), dev(rows), starts, ends,
                                         features, got)
    np.testing.assert_array_equal(host(got), expected)
    assert expected.any()


def test_categorical_search_with_bounds_matches_the_cpu():
    rng = np.random.default_rng(3)
    k = 2
    _, hist, offsets, sums, bounds, _ = _case(77, k)
    n, n_features = hist.shape[0], offsets.shape[0] - 1
    is_cat = np.zeros(n_features, np.uint8)
    is_cat[1:] = 1  # numeric feature 0 constrained, the others categorical
    monotone = np.zeros(n_features, np.int8)
    monotone[0] = 1
    scales = np.ldexp(1.0, rng.integers(4, 8, (k, 2))).astype(np.float64)
    for onehot in (64, 1):
        results = []
        for module in (cpu, cuda):
            out = _outs(n, k, cat_words=8)
            module.evaluate_vector_splits_categorical(
                hist, offsets, sums, np.ones((n, n_features), np.uint8), bounds, monotone,
                is_cat, scales, np.array([1.0, 0.2, 0.0, 1.0]), onehot, 8, *out)
            results.append([host(a) for a in out])
        for a, b in zip(*results):
            np.testing.assert_array_equal(a, b)
        assert (results[0][1] >= 0).any()


def _data(n_rows=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n_rows, 3)).astype(np.float32)
    X[rng.random(X.shape) < 0.08] = np.nan
    x = np.nan_to_num(X[:, 0]).astype(np.float64)
    Y = np.stack([x + 0.8 * np.sin(4 * x), -x + 0.3 * np.nan_to_num(X[:, 1]),
                  2 * x - np.cos(5 * x), rng.normal(size=n_rows)], axis=1)
    return rng, X, Y


def _assert_same_model(params, X, y, rounds=2):
    cpu_model = gbm.train(params, X, y, rounds)
    on_gpu = gbm.train(dict(params, device="cuda"), X, y, rounds)
    a, b = on_gpu.to_json(), cpu_model.to_json()
    if a != b:
        pytest.fail(f"the CUDA model differs: {first_difference(json.loads(a), json.loads(b))}")
    assert sum(t.n_nodes for t in cpu_model.trees) > len(cpu_model.trees)  # trees did split
    np.testing.assert_array_equal(on_gpu.predict(X), cpu_model.predict(X))


@pytest.mark.parametrize("extra", [
    {},
    {"grow_policy": "lossguide", "max_leaves": 6},
    {"gradient_projection": True, "projection_dim": 2},
], ids=["depthwise", "lossguide", "projected"])
def test_monotone_fit_same_model_as_the_cpu(extra):
    _, X, Y = _data()
    _assert_same_model(dict(VL, max_depth=3, max_bin=16, monotone_constraints=(1, -1, 0),
                            reg_alpha=0.1, **extra), X, Y)


def test_monotone_with_categorical_features_same_model_as_the_cpu():
    pd = pytest.importorskip("pandas")
    rng, X, Y = _data(seed=2)
    a = rng.integers(0, 6, X.shape[0])
    frame = pd.DataFrame({"x0": X[:, 0], "a": pd.Categorical(a), "x1": X[:, 1]})
    Y = Y[:, :3] + np.isin(a, (1, 4))[:, None]
    _assert_same_model(dict(VL, max_depth=3, max_bin=16, monotone_constraints=(1, 0, 0),
                            max_cat_to_onehot=4), frame, Y)
