"""Every CUDA kernel against the reference (and the CPU kernel, bit for bit), on small
inputs: under Numba's CUDA simulator in CI, on a GPU with ``GBM_TEST_GPU=1``."""
import numpy as np
import pytest

from gbm.kernels import cpu, cuda, reference
from gbm.kernels import elementary
from gbm.kernels import layout
from gbm.kernels.cuda.histogram import SHARED_SLOTS, feature_groups
from gbm.kernels.layout import CAT_WORDS
from tests.support.device_arrays import device_array as dev
from tests.support.device_arrays import host
from tests.support.elementary_kernel import elementary_kernel
from tests.support.kernel_inputs import (kernel_gradients, make_inputs, offsets_of,
                                        random_forest_arrays, random_histograms, random_rows,
                                        random_splits, segments)


@pytest.mark.parametrize("n_rows, n_bins, n_nodes", [
    (1, [4, 4, 4], 1),
    (60, [1, 1, 1], 3),
    (700, [256, 7, 100, 2, 255], 6),  # full byte, an empty node
    (500, [17, 256, 3, 90, 200], 40),  # many nodes in one launch
])
def test_build_histograms(n_rows, n_bins, n_nodes):
    rng = np.random.default_rng(n_rows)
    n_bins = np.array(n_bins, dtype=np.int32)
    bins, gpair = make_inputs(rng, n_rows, n_bins, missing_rate=0.0 if n_bins.max() > 255 else 0.1)
    rows, starts, ends = segments(rng, n_rows, n_nodes)
    offsets = offsets_of(n_bins)
    shape = (n_nodes, int(offsets[-1]), 2)
    expected = np.empty(shape, np.int64)
    reference.build_histograms(bins, gpair, rows, starts, ends, offsets, expected)
    got = dev(np.full(shape, -7, np.int64))
    cuda.build_histograms(dev(bins), dev(gpair), dev(rows), starts, ends, offsets, got)
    np.testing.assert_array_equal(host(got), expected)


def test_build_histograms_feature_groups_and_wide_features():
    """Features whose slots exceed one block's shared memory: several groups, and a
    uint16 feature wider than shared memory alone (summed with global atomics)."""
    rng = np.random.default_rng(3)
    n_bins = np.array([1000, 1500, 900, SHARED_SLOTS + 500, 5], dtype=np.int32)
    offsets = offsets_of(n_bins)
    groups = feature_groups(offsets)
    assert groups.tolist() == [0, 2, 3, 4, 5]  # 1001 + 1501 fit; 901 alone; the wide alone
    n_rows = 400
    bins = np.column_stack([rng.integers(0, nb + 1, n_rows) for nb in n_bins]).astype(np.uint16)
    gpair = rng.integers(-10**9, 10**9, (n_rows, 2)).astype(np.int64)
    rows = np.sort(rng.choice(n_rows, 300, replace=False)).astype(np.int32)
    starts, ends = np.array([0, 100]), np.array([100, 300])
    expected = np.empty((2, int(offsets[-1]), 2), np.int64)
    reference.build_histograms(bins, gpair, rows, starts, ends, offsets, expected)
    got = dev(np.empty_like(expected))
    cuda.build_histograms(dev(bins), dev(gpair), dev(rows), starts, ends, offsets, got)
    np.testing.assert_array_equal(host(got), expected)


def test_subtract_histograms():
    rng = np.random.default_rng(0)
    parent = rng.integers(-10**12, 10**12, (3, 40, 2)).astype(np.int64)
    child = rng.integers(-10**12, 10**12, (3, 40, 2)).astype(np.int64)
    out = dev(np.empty_like(parent))
    cuda.subtract_histograms(dev(parent), dev(child), out)
    np.testing.assert_array_equal(host(out), parent - child)


def _evaluate_both(hist, n_bins, is_cat, mask, params, onehot, threshold, monotone, bounds):
    n = hist.shape[0]
    offsets = offsets_of(n_bins)
    sums = hist[:, offsets[0]:offsets[1]].sum(axis=1)
    scales = np.tile([2.0**20, 2.0**22], (n, 1))
    scales[1::2] = [2.0**18, 2.0**25]  # nodes of another tree's scales
    results = []
    for module in (reference, cpu, cuda):
        out = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8),
               np.empty((n, 2), np.int64), np.empty((n, CAT_WORDS), np.uint32))
        h = dev(hist) if module is cuda else hist
        module.evaluate_splits(h, offsets, 1, is_cat, sums, mask, monotone, bounds, scales,
                               np.array(params, np.float64), onehot, threshold, *out)
        results.append(out)
    return results


@pytest.mark.parametrize("params", [(1.0, 0.0, 0.0, 1.0), (2.0, 1.0, 0.7, 3.0),
                                    (1.0, 0.0, 0.0, 1e9)])
@pytest.mark.parametrize("onehot, threshold", [(4, 64), (64, 64), (1, 3)])
def test_evaluate_splits_numeric_categorical_monotone(params, onehot, threshold):
    rng = np.random.default_rng(int(params[0] * 10 + onehot))
    n_bins = np.array([6, 30, 3, 12, 2], dtype=np.int32)
    is_cat = np.array([1, 0, 1, 0, 0], dtype=np.uint8)
    n_nodes = 5
    hist = random_histograms(rng, n_nodes, n_bins)
    mask = (rng.random((n_nodes, n_bins.size)) < 0.85).astype(np.uint8)
    monotone = np.array([0, 1, 0, -1, 0], dtype=np.int8)
    bounds = np.tile([-np.inf, np.inf], (n_nodes, 1))
    bounds[1] = (-0.5, 0.2)  # a node with monotone bounds
    expected, on_cpu, got = _evaluate_both(hist, n_bins, is_cat, mask, params, onehot, threshold,
                                           monotone, bounds)
    for a, b, c in zip(expected, on_cpu, got):
        np.testing.assert_array_equal(c, b)  # the same bits as the CPU
        np.testing.assert_array_equal(c, a)
    if params[3] < 1e9:
        assert (got[1] >= 0).any()  # some split was found


def test_node_weights():
    rng = np.random.default_rng(1)
    sums = np.column_stack([rng.integers(-10**9, 10**9, 20),
                            rng.integers(0, 10**9, 20)]).astype(np.int64)
    bounds = np.tile([-np.inf, np.inf], (20, 1))
    bounds[::3] = (-0.001, 0.002)
    scales, params = np.tile([2.0**30, 2.0**31], (20, 1)), np.array([1.0, 0.3, 0.5, 0.0])
    scales[::2] = [2.0**26, 2.0**33]
    expected, got = np.empty(20), np.empty(20)
    reference.node_weights(sums, bounds, scales, params, expected)
    cuda.node_weights(sums, bounds, scales, params, got)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("n_rows, n_nodes", [(1, 1), (40, 3), (900, 5)])
def test_partition_rows_numeric_and_categorical(n_rows, n_nodes):
    rng = np.random.default_rng(n_rows)
    n_bins = np.array([5, 40, 9], dtype=np.int32)
    bins, _ = make_inputs(rng, n_rows, n_bins)
    by_feature = np.ascontiguousarray(bins.T)
    rows, starts, ends = segments(rng, n_rows, n_nodes)
    feature = rng.integers(0, 3, n_nodes).astype(np.int32)
    split_bin = np.array([rng.integers(0, n_bins[f]) for f in feature], dtype=np.int32)
    default_left = rng.integers(0, 2, n_nodes).astype(np.uint8)
    split_type = (rng.random(n_nodes) < 0.5).astype(np.uint8)
    cat_bits = rng.integers(0, 2**32, (n_nodes, CAT_WORDS), dtype=np.uint64).astype(np.uint32)
    args = (starts, ends, feature, split_bin, default_left, split_type, cat_bits, n_bins)
    expected_rows, expected_left = rows.copy(), np.empty(n_nodes, np.int64)
    reference.partition_rows(by_feature, expected_rows, *args, np.empty_like(rows), expected_left)
    got_rows, got_left = dev(rows), np.empty(n_nodes, np.int64)
    cuda.partition_rows(dev(by_feature), got_rows, *args, dev(np.empty_like(rows)), got_left)
    np.testing.assert_array_equal(host(got_rows), expected_rows)
    np.testing.assert_array_equal(got_left, expected_left)


def test_add_split_values():
    rng = np.random.default_rng(5)
    n_rows, n_nodes = 260, 4
    by_feature, rows, split = random_splits(rng, n_rows, n_nodes,
                                            np.array([5, 40, 9], dtype=np.int32))
    left, right = rng.normal(size=n_nodes), rng.normal(size=n_nodes)
    base = rng.normal(size=n_rows)
    expected = base.copy()
    reference.add_split_values(by_feature, rows, *split, left, right, expected)
    got = dev(base)
    cuda.add_split_values(dev(by_feature), dev(rows), *split, left, right, got)
    np.testing.assert_array_equal(host(got), expected)


def test_add_leaf_values():
    rng = np.random.default_rng(2)
    rows, starts, ends = segments(rng, 300, 7)
    values = rng.normal(size=7)
    base = rng.normal(size=300)
    expected = base.copy()
    reference.add_leaf_values(rows, starts, ends, values, expected)
    got = dev(base)
    cuda.add_leaf_values(dev(rows), starts, ends, values, got)
    np.testing.assert_array_equal(host(got), expected)


@pytest.mark.parametrize("n_rows, n_groups", [(1, 1), (150, 3)])
def test_predict_kernels(n_rows, n_groups):
    rng = np.random.default_rng(n_rows)
    n_bins = np.array([4, 9, 2, 30], dtype=np.int32)
    bins, _ = make_inputs(rng, n_rows, n_bins, missing_rate=0.2)
    f = random_forest_arrays(rng, 12, 4, n_bins, n_groups)
    binned_args = (f.walk_binned, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth)
    expected = np.zeros((n_rows, n_groups))
    some = np.arange(n_rows)[::2]
    reference.predict_binned(bins, some, n_bins, *binned_args, expected)
    got = dev(np.zeros((n_rows, n_groups)))
    cuda.predict_binned(dev(bins), dev(some), n_bins, *binned_args, got)
    np.testing.assert_array_equal(host(got), expected)
    X = bins.astype(np.float32)
    X[bins == n_bins] = np.nan
    raw_args = (f.walk, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth)
    expected = np.zeros((n_rows, n_groups))
    reference.predict(X, *raw_args, expected)
    got = dev(np.zeros((n_rows, n_groups)))
    cuda.predict(dev(X), *raw_args, got)
    np.testing.assert_array_equal(host(got), expected)
    expected_leaf = np.empty((n_rows, f.n_trees), np.int32)
    reference.predict_leaf(X, f.walk, f.cat_bits, f.tree_offsets, f.tree_depth, expected_leaf)
    got_leaf = dev(np.empty((n_rows, f.n_trees), np.int32))
    cuda.predict_leaf(dev(X), f.walk, f.cat_bits, f.tree_offsets, f.tree_depth, got_leaf)
    np.testing.assert_array_equal(host(got_leaf), expected_leaf)


def test_predict_with_categorical_splits():
    pd = pytest.importorskip("pandas")
    import gbm

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"x": rng.normal(size=300),
                          "c": pd.Categorical.from_codes(rng.integers(-1, 9, 300),
                                                         [f"k{i}" for i in range(9)])})
    y = frame["x"].to_numpy() + (frame["c"].cat.codes.to_numpy() % 3)
    model = gbm.train({"max_depth": 3, "max_cat_to_onehot": 1, "n_jobs": 1}, frame, y, 3)
    f = model.forest()
    assert f.has_categorical
    X = model._check_predict_X(frame)
    expected = np.zeros((300, 1))
    cpu.predict(X, f.walk, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth,
                expected)
    got = dev(np.zeros((300, 1)))
    cuda.predict(dev(X), f.walk, f.cat_bits, f.value, f.tree_offsets, f.tree_group,
                 f.tree_depth, got)
    np.testing.assert_array_equal(host(got), expected)


def test_bin_values():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    from gbm.bins.binning import BinMapper

    mapper = BinMapper(max_bin=20).fit(X)
    expected = np.empty(X.shape, np.uint8)
    reference.bin_values(X, mapper.padded_cuts(), mapper.n_bins, expected)
    got = dev(np.empty(X.shape, np.uint8))
    cuda.bin_values(dev(X), mapper.padded_cuts(), mapper.n_bins, got)
    np.testing.assert_array_equal(host(got), expected)


@pytest.mark.parametrize("n", [0, 1, 700])
def test_quantize_kernels(n):
    rng = np.random.default_rng(n)
    grad, hess = rng.normal(size=n) * 3, rng.random(n)
    if n:
        grad[0], hess[0] = -7.5, 0.0
    assert cuda.max_abs(dev(grad)) == reference.max_abs(grad)
    scales = np.array([4.0, 2.0**40])  # 2.5 * 4 etc.: halves round to even, as np.rint
    grad = np.concatenate([grad, [0.625, 0.375, -0.625]])
    hess = np.concatenate([hess, [0.5, 1.5, 2.5]]) * 0 + np.concatenate([hess, [0.125, 0.375, 0.625]])
    expected = np.empty((grad.shape[0], 2), np.int64)
    reference.quantize_gradients(grad, hess, scales, expected)
    got = dev(np.empty_like(expected))
    cuda.quantize_gradients(dev(grad), dev(hess), scales, got)
    np.testing.assert_array_equal(host(got), expected)


@pytest.mark.parametrize("kind, n_groups, params", [
    (layout.SQUARED, 1, ()), (layout.LOGISTIC, 1, ()), (layout.SOFTMAX, 4, ()),
    (layout.POISSON, 1, (0.7,)), (layout.GAMMA, 1, ()), (layout.TWEEDIE, 1, (1.3,)),
    (layout.PSEUDOHUBER, 1, (2.0,)), (layout.ABSOLUTE, 1, ()), (layout.QUANTILE, 2, (0.2, 0.8)),
    (layout.HINGE, 1, ()), (layout.SQUARED_LOG, 1, ()), (layout.EXPECTILE, 1, (0.3,)),
    (layout.EXPECTILE, 3, (0.1, 0.5, 0.9)),
])
def test_pointwise_gradients(kind, n_groups, params):
    rng = np.random.default_rng(kind)
    n = 120
    margin = rng.normal(scale=2, size=(n, n_groups))
    y = rng.integers(0, n_groups, n).astype(np.float64) if kind == layout.SOFTMAX else \
        rng.random(n) * 3 + (0.1 if kind == layout.GAMMA else 0.0)
    if kind in (layout.LOGISTIC, layout.HINGE):
        y = (y > 1.5) * 1.0
    if kind == layout.HINGE:
        margin[:2, 0] = [1.0, -1.0]  # on the hinge: met for y = 1 and y = 0 respectively
        y[:2] = [1.0, 0.0]
    w = rng.random(n) + 0.5
    objective_params = np.array(params if params else (0.0,), np.float64)
    results = []
    for module in (reference, cpu, cuda):
        grad, hess = np.empty((n, n_groups)), np.empty((n, n_groups))
        if module is cuda:
            grad, hess = dev(grad), dev(hess)
            module.pointwise_gradients(kind, dev(margin), dev(y), dev(w), objective_params,
                                       grad, hess)
        else:
            module.pointwise_gradients(kind, margin, y, w, objective_params, grad, hess, 1)
        results.append((host(grad), host(hess)))
    for got in results[1:]:
        np.testing.assert_array_equal(got[0], results[0][0])
        np.testing.assert_array_equal(got[1], results[0][1])


@pytest.mark.parametrize("params", [
    {"objective": "rank:ndcg"},
    {"objective": "rank:ndcg", "ndcg_exp_gain": False, "lambdarank_normalization": False},
    {"objective": "rank:pairwise", "lambdarank_score_normalization": False},
    {"objective": "rank:ndcg", "lambdarank_pair_method": "mean"},
    {"objective": "rank:pairwise", "lambdarank_pair_method": "mean",
     "lambdarank_num_pair_per_sample": 3},
])
def test_lambdarank_gradients(params):
    rng = np.random.default_rng(1)
    sizes = np.concatenate(([1, 2, 17], rng.integers(1, 9, 8)))
    n = int(sizes.sum())
    margin = np.round(rng.normal(size=n), 1)  # ties in the scores
    y = rng.integers(0, 5, n).astype(np.float64)
    scale = rng.random(len(sizes)) + 0.5
    on_cpu = kernel_gradients(cpu, margin, y, sizes, params, scale=scale)
    slow = kernel_gradients(reference, margin, y, sizes, params, scale=scale)
    got = kernel_gradients(cuda, margin, y, sizes, params, scale=scale)
    np.testing.assert_array_equal(got[0], on_cpu[0])  # the same bits as the CPU
    np.testing.assert_array_equal(got[1], on_cpu[1])
    np.testing.assert_allclose(got[0], slow[0], rtol=1e-12, atol=1e-14)
    assert np.abs(got[0]).max() > 0


@pytest.mark.parametrize("params", [
    {"objective": "rank:map"},
    {"objective": "rank:map", "lambdarank_num_pair_per_sample": 3,
     "lambdarank_normalization": False},
    {"objective": "rank:map", "lambdarank_pair_method": "mean",
     "lambdarank_num_pair_per_sample": 2},
])
def test_lambdarank_map_gradients(params):
    """rank:map's |delta MAP| (binary labels) on the device: the CPU's bits."""
    rng = np.random.default_rng(2)
    sizes = np.concatenate(([1, 2, 17], rng.integers(1, 9, 8)))
    n = int(sizes.sum())
    margin = np.round(rng.normal(size=n), 1)
    y = (rng.random(n) < 0.4).astype(np.float64)
    scale = rng.random(len(sizes)) + 0.5
    on_cpu = kernel_gradients(cpu, margin, y, sizes, params, scale=scale)
    slow = kernel_gradients(reference, margin, y, sizes, params, scale=scale)
    got = kernel_gradients(cuda, margin, y, sizes, params, scale=scale)
    np.testing.assert_array_equal(got[0], on_cpu[0])
    np.testing.assert_array_equal(got[1], on_cpu[1])
    np.testing.assert_allclose(got[0], slow[0], rtol=1e-12, atol=1e-14)
    assert np.abs(got[0]).max() > 0


def test_tree_shap_is_the_cpu_kernel():
    rng = np.random.default_rng(6)
    f = random_forest_arrays(rng, 6, 4, np.array([4, 9, 2, 30]), 2)
    f.cover[:] = 1.0 + np.arange(f.cover.shape[0]) % 5  # positive covers
    X = random_rows(rng, 20, 4, 0.1)
    args = (f.split_feature, f.threshold, f.default_left, f.split_type, f.cat_row, f.cat_bits,
            f.left_child, f.value, f.cover, f.tree_offsets, f.tree_group, f.tree_depth)
    expected = np.zeros((20, 2, 5))
    cpu.tree_shap(X, *args, 1, expected)
    got = dev(np.zeros((20, 2, 5)))
    cuda.tree_shap(dev(X), *args, 1, got)
    np.testing.assert_array_equal(host(got), expected)


@pytest.mark.parametrize("name, width", [("tree_shap_interactions", (5, 5)),
                                         ("tree_saabas", (5,))])
def test_interactions_and_saabas_are_the_cpu_kernels(name, width):
    """pred_interactions and approx_contribs on the CUDA backend: the CPU kernels on host
    copies, their result written back into the device array."""
    rng = np.random.default_rng(8)
    f = random_forest_arrays(rng, 6, 4, np.array([4, 9, 2, 30]), 2)
    f.cover[:] = 1.0 + np.arange(f.cover.shape[0]) % 5  # positive covers
    X = random_rows(rng, 20, 4, 0.1)
    args = (f.split_feature, f.threshold, f.default_left, f.split_type, f.cat_row, f.cat_bits,
            f.left_child, f.value, f.cover, f.tree_offsets, f.tree_group, f.tree_depth)
    expected = np.zeros((20, 2) + width)
    assert getattr(cpu, name)(X, *args, 1, expected)
    got = dev(np.zeros((20, 2) + width))
    assert getattr(cuda, name)(dev(X), *args, 1, got)
    np.testing.assert_array_equal(host(got), expected)
    assert np.abs(expected).max() > 0


def test_elementary_functions_on_the_device_are_the_cpus():
    """exp / log / log2 as compiled for CUDA give the CPU's bits (on a GPU: libdevice is
    not involved, and no FMA changes a rounding)."""
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.normal(scale=5, size=60), [0.0, -0.0, 1.0, 2.0, 3.0, 700.0, -740.0,
                                                      np.nan, np.inf, -np.inf, 1e-310]])
    got = dev(np.empty((x.shape[0], 3)))
    elementary_kernel[1, 8](dev(x), got)
    expected = np.array([[elementary.cpu.exp(v), elementary.cpu.log(abs(v)),
                          elementary.cpu.log2(abs(v))] for v in x])
    np.testing.assert_array_equal(host(got), expected)


def test_evaluate_splits_refuses_more_than_256_categories():
    """The split kernel's per-thread order holds 256 codes: a wider categorical feature
    is refused, naming it, rather than split on a truncated order."""
    n_bins = np.array([5, 300], dtype=np.int32)
    offsets = offsets_of(n_bins)
    hist = np.zeros((1, int(offsets[-1]), 2), np.int64)
    out = (np.empty(1), np.empty(1, np.int32), np.empty(1, np.int32), np.empty(1, np.uint8),
           np.empty((1, 2), np.int64), np.empty((1, layout.cat_words(300)), np.uint32))
    with pytest.raises(ValueError, match="at most 256 categories, but feature 1 has 300"):
        cuda.evaluate_splits(dev(hist), offsets, 1, np.array([0, 1], np.uint8),
                             np.zeros((1, 2), np.int64), np.ones((1, 2), np.uint8),
                             np.zeros(2, np.int8), np.array([[-np.inf, np.inf]]),
                             np.ones((1, 2)), np.array([1.0, 0.0, 0.0, 1.0]), 4, 64, *out)


def test_partition_and_predict_with_wide_category_sets():
    """uint16 codes and category sets wider than 256 bits (a model trained on the CPU)
    partition and predict as the reference does."""
    rng = np.random.default_rng(8)
    n_rows, n_nodes = 300, 3
    n_bins = np.array([1000, 40], dtype=np.int32)
    bins = np.column_stack([rng.integers(0, nb + 1, n_rows) for nb in n_bins]).astype(np.uint16)
    by_feature = np.ascontiguousarray(bins.T)
    rows, starts, ends = segments(rng, n_rows, n_nodes)
    feature = np.array([0, 1, 0], np.int32)
    split_bin = np.array([0, 20, 0], np.int32)
    default_left = np.array([1, 0, 0], np.uint8)
    split_type = np.array([1, 0, 1], np.uint8)
    words = layout.cat_words(1000)
    cat_bits = rng.integers(0, 2**32, (n_nodes, words), dtype=np.uint64).astype(np.uint32)
    args = (starts, ends, feature, split_bin, default_left, split_type, cat_bits, n_bins)
    expected_rows, expected_left = rows.copy(), np.empty(n_nodes, np.int64)
    reference.partition_rows(by_feature, expected_rows, *args, np.empty_like(rows), expected_left)
    got_rows, got_left = dev(rows), np.empty(n_nodes, np.int64)
    cuda.partition_rows(dev(by_feature), got_rows, *args, dev(np.empty_like(rows)), got_left)
    np.testing.assert_array_equal(host(got_rows), expected_rows)
    np.testing.assert_array_equal(got_left, expected_left)

    import gbm

    codes = rng.integers(0, 1000, 2000)
    X = np.column_stack([codes, rng.normal(size=2000)]).astype(np.float32)
    y = rng.normal(size=1000)[codes] + X[:, 1]
    model = gbm.train({"max_depth": 3, "n_jobs": 1}, X, y, 2, categorical_features=[0])
    f = model.forest()
    assert f.cat_bits.shape[1] > CAT_WORDS
    Xp = model._check_predict_X(X[:200])
    expected = np.zeros((200, 1))
    reference.predict(Xp, f.walk, f.cat_bits, f.value, f.tree_offsets, f.tree_group,
                      f.tree_depth, expected)
    got = dev(np.zeros((200, 1)))
    cuda.predict(dev(Xp), f.walk, f.cat_bits, f.value, f.tree_offsets, f.tree_group,
                 f.tree_depth, got)
    np.testing.assert_array_equal(host(got), expected)
