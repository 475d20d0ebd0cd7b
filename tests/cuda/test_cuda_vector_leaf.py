"""Vector-leaf trees (``multi_strategy="multi_output_tree"``) on ``device="cuda"``: the
CUDA kernels of ``kernels/cuda/vector_leaf.py`` against the CPU kernels (bit for bit) and
the reference twins, and whole fits writing the CPU's model file, the projected
(``gradient_projection``) split search included. Small grids: the simulator runs every
CUDA thread as a Python thread."""
import json

import numpy as np
import pytest

import gbm
from gbm.kernels import cpu, cuda, reference
from tests.support.device_arrays import device_array as dev
from tests.support.device_arrays import host
from tests.support.model_cases import first_difference
from tests.support.vector_leaf_cases import evaluate_splits

VL = {"multi_strategy": "multi_output_tree"}


def _case(rng, n_rows, n_bins, k, n_nodes, missing=True):
    """Dense bins (feature-major), k-output integer pairs, rows cut into node segments."""
    n_bins = np.asarray(n_bins, dtype=np.int32)
    offsets = np.concatenate(([0], np.cumsum(n_bins + 1))).astype(np.int32)
    bins = np.empty((n_bins.shape[0], n_rows), dtype=np.uint8)
    for f, n in enumerate(n_bins):
        bins[f] = rng.integers(0, n + (1 if missing else 0), n_rows)  # n: the missing slot
    gpair = np.empty((n_rows, k, 2), dtype=np.int64)
    gpair[:, :, 0] = rng.integers(-1000, 1000, (n_rows, k))
    gpair[:, :, 1] = rng.integers(0, 500, (n_rows, k))
    rows = rng.permutation(n_rows).astype(np.int32)
    cuts = np.sort(rng.choice(np.arange(1, n_rows), n_nodes - 1, replace=False))
    starts = np.concatenate(([0], cuts)).astype(np.int64)
    ends = np.concatenate((cuts, [n_rows])).astype(np.int64)
    return bins, gpair, rows, starts, ends, offsets


@pytest.mark.parametrize("n_rows, n_bins, k, n_nodes", [
    (40, [3, 1, 5], 1, 2),
    (90, [4, 6, 2, 7], 3, 3),
    (60, [255, 3], 16, 2),  # 256 slots x 16 outputs: past shared memory, global atomics
])
def test_histograms_match_the_cpu(n_rows, n_bins, k, n_nodes):
    rng = np.random.default_rng(n_rows + k)
    bins, gpair, rows, starts, ends, offsets = _case(rng, n_rows, n_bins, k, n_nodes)
    shape = (n_nodes, int(offsets[-1]), k, 2)
    expected, slow = np.empty(shape, np.int64), np.empty(shape, np.int64)
    cpu.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, expected)
    reference.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, slow)
    got = dev(np.full(shape, -7, np.int64))
    cuda.build_vector_histograms(dev(bins), dev(gpair), dev(rows), starts, ends, offsets, got)
    np.testing.assert_array_equal(host(got), expected)
    np.testing.assert_array_equal(slow, expected)
    for node in range(n_nodes):  # oracle: each feature's slots hold all of the node's rows
        total = gpair[rows[starts[node]:ends[node]]].sum(axis=0)
        np.testing.assert_array_equal(host(got)[node, :offsets[1]].sum(axis=0), total)


@pytest.mark.parametrize("seed", range(4))
def test_splits_match_the_cpu(seed):
    rng = np.random.default_rng(50 + seed)
    k = 1 + seed % 3
    bins, gpair, rows, starts, ends, offsets = _case(rng, 80, [1, 4, 6], k, 3,
                                                     missing=seed % 2 == 0)
    hist = np.empty((3, int(offsets[-1]), k, 2), np.int64)
    cpu.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, hist)
    sums = hist[:, :offsets[1]].sum(axis=1)
    mask = (rng.random((3, 3)) < 0.8).astype(np.uint8)
    mask[0] = 1
    scales = np.ldexp(1.0, rng.integers(4, 9, (k, 2))).astype(np.float64)
    # min_child_weight 4: some outputs of some candidates count 0 (XGBoost 3.2's rule)
    split_params = np.array([1.0, 0.3 * (seed % 2), 0.7 * (seed == 2), (0.5, 4.0)[seed // 2]])
    expected = evaluate_splits(cpu, hist, offsets, sums, mask, scales, split_params)
    got = evaluate_splits(cuda, dev(hist), offsets, dev(sums), dev(mask), dev(scales), split_params)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)
    assert (expected[1][:1] >= 0).all()  # the root found a split: candidates were compared
    slow = evaluate_splits(reference, hist, offsets, sums, mask, scales, split_params)
    np.testing.assert_array_equal(slow[1], expected[1])


@pytest.mark.parametrize("mcw", [0.0, 20.0])
def test_weights_children_and_segment_sums_match_the_cpu(mcw):
    rng = np.random.default_rng(7)
    k = 3
    sums = rng.integers(-5000, 5000, (5, k, 2)).astype(np.int64)
    sums[:, :, 1] = np.abs(sums[:, :, 1])
    scales = np.ldexp(1.0, rng.integers(3, 8, (k, 2))).astype(np.float64)
    split_params = np.array([1.0, 0.5, 0.3, mcw])
    a, b = np.empty((5, k)), np.empty((5, k))
    cpu.vector_node_weights(sums, scales, split_params, a)
    cuda.vector_node_weights(dev(sums), dev(scales), split_params, b)
    np.testing.assert_array_equal(a, b)
    # an output lighter than min_child_weight weighs 0, the others as without it
    light = sums[:, :, 1] / scales[:, 1] < mcw
    unbound = np.empty((5, k))
    cpu.vector_node_weights(sums, scales, np.array([1.0, 0.5, 0.3, 0.0]), unbound)
    assert light.any() == (mcw > 0) and (a[light] == 0).all()
    assert mcw == 0 or (unbound[light] != 0).any()  # the bound changed something
    np.testing.assert_array_equal(a[~light], unbound[~light])

    parent = rng.integers(-100, 100, (2, 6, k, 2)).astype(np.int64)
    built = rng.integers(-100, 100, (2, 6, k, 2)).astype(np.int64)
    small_is_right = np.array([0, 1], np.uint8)
    a, b = np.empty((4, 6, k, 2), np.int64), dev(np.full((4, 6, k, 2), -7, np.int64))
    cpu.vector_children_histograms(parent, built, small_is_right, a)
    cuda.vector_children_histograms(dev(parent), dev(built), small_is_right, b)
    np.testing.assert_array_equal(host(b), a)
    np.testing.assert_array_equal(a[1] + a[0], parent[0])  # oracle: siblings add to the parent

    gpair = rng.integers(-100, 100, (k, 30, 2)).astype(np.int64)
    rows = rng.permutation(30).astype(np.int32)
    starts, ends = np.array([0, 10, 10]), np.array([10, 10, 30])
    a, b = np.empty((3, k, 2), np.int64), np.empty((3, k, 2), np.int64)
    cpu.vector_segment_sums(gpair, rows, starts, ends, a)
    cuda.vector_segment_sums(dev(gpair), dev(rows), starts, ends, b)
    np.testing.assert_array_equal(host(b), a)
    np.testing.assert_array_equal(a[2], gpair[:, rows[10:30]].sum(axis=1))


# -- whole fits ---------------------------------------------------------------------------
def _data(n_rows=120, n_features=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    return rng, X


def _assert_same_model(params, X, y, rounds=2):
    cpu_model = gbm.train(params, X, y, rounds)
    on_gpu = gbm.train(dict(params, device="cuda"), X, y, rounds)
    a, b = on_gpu.to_json(), cpu_model.to_json()
    if a != b:
        pytest.fail(f"the CUDA model differs: {first_difference(json.loads(a), json.loads(b))}")
    assert sum(t.n_nodes for t in cpu_model.trees) > len(cpu_model.trees)  # trees did split
    # one vector-leaf tree a round (a forest's num_parallel_tree)
    assert len(cpu_model.trees) == rounds * params.get("num_parallel_tree", 1)
    np.testing.assert_array_equal(on_gpu.predict(X), cpu_model.predict(X))


def test_multiclass_same_model_as_the_cpu():
    rng, X = _data()
    y = (np.nan_to_num(X[:, 0]) > 0) + (np.nan_to_num(X[:, 1]) > 0.5)
    _assert_same_model(dict(VL, objective="multi:softprob", num_class=3, max_depth=3,
                            max_bin=16, subsample=0.8, colsample_bynode=0.75, reg_alpha=0.1),
                       X, y)


def test_multi_target_regression_same_model_as_the_cpu():
    rng, X = _data(seed=1)
    y = np.stack([np.nan_to_num(X[:, 0]), np.nan_to_num(X[:, 1]) * 2,
                  rng.normal(size=X.shape[0])], axis=1)
    _assert_same_model(dict(VL, objective="reg:squarederror", max_depth=3, max_bin=16,
                            max_leaves=5, max_delta_step=0.5), X, y)


def test_projected_split_search_same_model_as_the_cpu():
    rng, X = _data(seed=2)
    y = rng.integers(0, 6, X.shape[0])
    _assert_same_model(dict(VL, objective="multi:softprob", num_class=6, max_depth=2,
                            max_bin=8, gradient_projection=True, projection_dim=2), X, y)


def test_multi_label_same_model_as_the_cpu():
    rng, X = _data(seed=3)
    Z = np.nan_to_num(X)
    y = np.stack([Z[:, 0] > 0, Z[:, 1] + Z[:, 2] > 0.5], axis=1).astype(np.float64)
    _assert_same_model(dict(VL, objective="binary:logistic", max_depth=3, max_bin=16), X, y)



def test_lossguide_forest_and_leaf_refresh_same_model_as_the_cpu():
    rng, X = _data(seed=4)
    y = np.stack([np.nan_to_num(X[:, 0]), rng.normal(size=X.shape[0])], axis=1)
    _assert_same_model(dict(VL, objective="reg:absoluteerror", grow_policy="lossguide",
                            max_leaves=5, num_parallel_tree=2, max_bin=16, subsample=0.8),
                       X, y)


@pytest.mark.parametrize("layout", ["sparse", "bundled"])
def test_sparse_and_bundled_layouts_same_model_as_the_cpu(layout):
    # their bins expanded to dense ones on the device (gbm.tree.vector_leaf.dense_data)
    rng, X = _data(seed=6)
    X[:, 2:][rng.random((X.shape[0], 2)) < 0.6] = np.nan  # mostly missing: bundles form
    y = np.stack([np.nan_to_num(X[:, 0]), np.nan_to_num(X[:, 2]) + rng.normal(size=120)], 1)
    _assert_same_model(dict(VL, max_depth=3, max_bin=16, bin_layout=layout), X, y)


def _categorical_case(rng, k, n_nodes=3, n_rows=150):
    """Vector histograms of random rows over a numeric feature and categorical ones
    (one-hot and partition sized), their node sums and offsets."""
    n_bins = np.array([3, 5, 2, 12], np.int32)
    bins, gpair, rows, starts, ends, offsets = _case(rng, n_rows, n_bins, k, n_nodes)
    hist = np.empty((n_nodes, int(offsets[-1]), k, 2), np.int64)
    reference.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, hist)
    return hist, hist[:, offsets[0]:offsets[1]].sum(axis=1), offsets


@pytest.mark.parametrize("seed", range(3))
def test_categorical_splits_match_the_cpu(seed):
    rng = np.random.default_rng(30 + seed)
    k = 1 + seed
    hist, sums, offsets = _categorical_case(rng, k)
    n = hist.shape[0]
    is_cat = np.array([0, 1, 1, 1], np.uint8)
    mask = (rng.random((n, 4)) < 0.85).astype(np.uint8)
    bounds = np.tile([-np.inf, np.inf], (n, k, 1))
    scales = np.ldexp(1.0, rng.integers(4, 8, (k, 2))).astype(np.float64)
    params = np.array([[1.0, 0.0, 0.0, 1.0], [0.5, 2.0, 0.7, 0.0], [1.0, 0.0, 0.0, 30.0]][seed])
    for onehot, threshold in ((4, 64), (1, 3)):
        results = []
        for module in (cpu, cuda):
            out = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32),
                   np.empty(n, np.uint8), np.empty((n, k, 2), np.int64),
                   np.empty((n, 8), np.uint32))
            module.evaluate_vector_splits_categorical(
                hist, offsets, sums, mask, bounds, np.zeros(4, np.int8), is_cat, scales,
                params, onehot, threshold, *out)
            results.append(out)
        for a, b in zip(*results):
            np.testing.assert_array_equal(a, b)
        assert (results[0][1] >= 0).any()


@pytest.mark.parametrize("extra", [{"max_cat_to_onehot": 4},
                                   {"max_cat_to_onehot": 64, "grow_policy": "lossguide",
                                    "max_leaves": 6}])
def test_categorical_features_same_model_as_the_cpu(extra):
    pd = pytest.importorskip("pandas")
    rng, X = _data(n_rows=160, n_features=2, seed=7)
    a, b = rng.integers(0, 9, 160), rng.integers(0, 3, 160)
    frame = pd.DataFrame({"x0": X[:, 0], "a": pd.Categorical(a), "b": pd.Categorical(b),
                          "x1": X[:, 1]})
    y = np.stack([np.isin(a, (2, 5, 7)) + np.nan_to_num(X[:, 0]), (b == 1) - 0.5 * (a > 4),
                  rng.normal(size=160)], axis=1)
    params = dict(VL, max_depth=3, max_bin=16, **extra)
    assert any(t.has_categorical for t in gbm.train(params, frame, y, 2).trees)
    _assert_same_model(params, frame, y)


def test_external_memory_on_the_device_is_refused(tmp_path):
    """Vector-leaf trees sum an ``ExtMemQuantileDMatrix``'s pages on the host only
    (``gbm.tree.vector_paged``): on ``device="cuda"`` a clear ``NotImplementedError``."""
    from tests.test_streaming import Batches

    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 3)).astype(np.float32)
    Y = np.stack([X[:, 0], X[:, 1]], 1)
    with gbm.ExtMemQuantileDMatrix(Batches([30, 30], cache_prefix=str(tmp_path), data=X,
                                           label=Y)) as pages:
        with pytest.raises(NotImplementedError, match="ExtMemQuantileDMatrix with device"):
            gbm.train(dict(VL, objective="reg:squarederror", device="cuda"), pages, 1)
