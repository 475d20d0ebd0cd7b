"""Every fast kernel against its NumPy twin, on random inputs and edge cases."""
import numpy as np
import pytest

import gbm.bins.binning
from gbm.kernels import cpu, reference
from gbm.kernels.layout import CAT_WORDS
from tests.support.kernel_inputs import (make_inputs, offsets_of, random_forest_arrays,
                                        random_splits, segments)

N_FEATURES = 5


CASES = [  # (n_rows, n_bins per feature, n_nodes)
    (1, [4, 4, 4, 4, 4], 1),  # one row
    (50, [1, 1, 1, 1, 1], 3),  # a single bin everywhere
    (300, [2, 2, 2, 2, 2], 4),  # max_bin = 2
    (5000, [256, 7, 100, 2, 255], 6),  # full byte, with an empty node
    (20000, [255, 255, 255, 255, 255], 1),  # several threads' pieces in one node
    (30000, [17, 256, 3, 90, 200], 40),  # many nodes: threads take whole nodes
]


@pytest.mark.parametrize("n_rows, n_bins, n_nodes", CASES)
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_build_histograms_matches_reference(n_rows, n_bins, n_nodes, n_threads):
    rng = np.random.default_rng(n_rows)
    n_bins = np.array(n_bins, dtype=np.int32)
    bins, gpair = make_inputs(rng, n_rows, n_bins, missing_rate=0.0 if n_bins.max() > 255 else 0.1)
    rows, starts, ends = segments(rng, n_rows, n_nodes)
    offsets = offsets_of(n_bins)
    shape = (n_nodes, int(offsets[-1]), 2)
    fast, slow = np.full(shape, -7, np.int64), np.full(shape, -7, np.int64)
    cpu.build_histograms(bins, gpair, rows, starts, ends, offsets, fast, n_threads)
    reference.build_histograms(bins, gpair, rows, starts, ends, offsets, slow, n_threads)
    np.testing.assert_array_equal(fast, slow)
    # each node's histogram holds exactly its rows' sums, for every feature
    for k in range(n_nodes):
        expected = gpair[rows[starts[k]:ends[k]]].sum(axis=0)
        for f in range(n_bins.size):
            np.testing.assert_array_equal(fast[k, offsets[f]:offsets[f + 1]].sum(axis=0), expected)


def test_build_histograms_uint16_bins_and_a_row_subset():
    rng = np.random.default_rng(5)
    n_bins = np.array([700, 3, 300], dtype=np.int32)  # more than a byte holds
    bins = np.column_stack([rng.integers(0, nb + 1, 9000) for nb in n_bins]).astype(np.uint16)
    gpair = rng.integers(-10**9, 10**9, (9000, 2)).astype(np.int64)
    rows = np.sort(rng.choice(9000, 5000, replace=False)).astype(np.int32)  # a row sample
    starts, ends = np.array([0, 2000]), np.array([2000, 5000])
    offsets = offsets_of(n_bins)
    fast, slow = (np.empty((2, int(offsets[-1]), 2), np.int64) for _ in range(2))
    cpu.build_histograms(bins, gpair, rows, starts, ends, offsets, fast, 2)
    reference.build_histograms(bins, gpair, rows, starts, ends, offsets, slow)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(fast[1, offsets[1]:offsets[2]].sum(axis=0),
                                  gpair[rows[2000:]].sum(axis=0))


def test_build_histograms_all_missing():
    bins = np.full((10, 2), 3, dtype=np.uint8)  # 3 value bins per feature, all rows missing
    gpair = np.ones((10, 2), dtype=np.int64)
    rows = np.arange(10, dtype=np.int32)
    hist = np.empty((1, 8, 2), np.int64)
    cpu.build_histograms(bins, gpair, rows, np.array([0]), np.array([10]), offsets_of([3, 3]),
                         hist, 2)
    assert (hist[0, [3, 7]] == 10).all() and (hist[0, [0, 1, 2, 4, 5, 6]] == 0).all()


@pytest.mark.parametrize("n_threads", [1, 2])
def test_build_histograms_two_rows_a_step(n_threads):
    """The kernel adds two rows a step: segments of every length from 0 to past twice the
    prefetch distance (an odd row left or not), in no order, with consecutive rows that
    hit the same bins (two additions to one slot in a step), against ``np.add.at``."""
    rng = np.random.default_rng(11)
    n_rows, n_bins = 700, np.array([5, 1, 256], dtype=np.int32)
    bins = np.column_stack([rng.integers(0, nb + 1, n_rows) for nb in n_bins]).astype(np.uint8)
    bins[1::2] = bins[0::2]  # rows 2i and 2i + 1 share every bin
    gpair = rng.integers(-2**40, 2**40, (n_rows, 2)).astype(np.int64)
    lengths = np.arange(36)  # 0 .. 35: below, at and past 2 x DISTANCE (16) + 1
    pairs = rng.permutation(n_rows // 2)  # row pairs (2i, 2i + 1), in no order
    rows = np.column_stack([2 * pairs, 2 * pairs + 1]).reshape(-1)[:lengths.sum()]
    rows = rows.astype(np.int32)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    offsets = offsets_of(n_bins)
    hist = np.full((lengths.size, int(offsets[-1]), 2), -7, np.int64)
    cpu.build_histograms(bins, gpair, rows, starts, ends, offsets, hist, n_threads)
    for k in range(lengths.size):
        expected = np.zeros_like(hist[k])
        seg = rows[starts[k]:ends[k]]
        for f in range(n_bins.size):
            np.add.at(expected, offsets[f] + bins[seg, f].astype(np.int64), gpair[seg])
        np.testing.assert_array_equal(hist[k], expected)


def test_subtract_histograms_matches_reference():
    rng = np.random.default_rng(0)
    parent = rng.integers(-1000, 1000, (3, 36, 2))
    child = rng.integers(-1000, 1000, (3, 36, 2))
    fast, slow = np.empty_like(parent), np.empty_like(parent)
    cpu.subtract_histograms(parent, child, fast)
    reference.subtract_histograms(parent, child, slow)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(fast + child, parent)


def _evaluate(module, hist, sums, n_bins, mask, params, monotone=None, bounds=None):
    """evaluate_splits on numeric features: (gain, feature, bin, default_left, left_sums)."""
    n = hist.shape[0]
    out = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8),
           np.empty((n, 2), np.int64), np.empty((n, CAT_WORDS), np.uint32))
    monotone = np.zeros(n_bins.size, np.int8) if monotone is None else monotone
    bounds = np.tile([-np.inf, np.inf], (n, 1)) if bounds is None else bounds
    module.evaluate_splits(hist, offsets_of(n_bins), 1, np.zeros(n_bins.size, np.uint8), sums, mask,
                           monotone, bounds, np.tile([2.0**20, 2.0**22], (n, 1)),
                           np.array(params, np.float64), 4, 64, *out)
    assert not out[5].any()  # numeric splits hold no category set
    return out[:5]


@pytest.mark.parametrize("params", [
    (1.0, 0.0, 0.0, 1.0),  # reg_lambda, reg_alpha, max_delta_step, min_child_weight
    (0.0, 0.5, 0.0, 0.0),
    (2.0, 1.0, 0.7, 3.0),
    (1.0, 0.0, 0.0, 1e9),  # nothing can satisfy min_child_weight
])
@pytest.mark.parametrize("seed", range(4))
def test_evaluate_splits_matches_reference(params, seed):
    rng = np.random.default_rng(seed)
    n_bins = np.array([1, 2, 9, 30, 255], dtype=np.int32)
    n_nodes = 4
    bins, gpair = make_inputs(rng, 3000, n_bins)
    gpair[:, 0] = rng.normal(0, 1, 3000) * 2**20
    gpair[:, 1] = rng.uniform(0, 1, 3000) * 2**22
    rows, starts, ends = segments(rng, 3000, n_nodes)
    offsets = offsets_of(n_bins)
    hist = np.empty((n_nodes, int(offsets[-1]), 2), np.int64)
    reference.build_histograms(bins, gpair, rows, starts, ends, offsets, hist)
    sums = hist[:, offsets[0]:offsets[1]].sum(axis=1)
    mask = (rng.random((n_nodes, n_bins.size)) < 0.8).astype(np.uint8)
    fast = _evaluate(cpu, hist, sums, n_bins, mask, params)
    slow = _evaluate(reference, hist, sums, n_bins, mask, params)
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)
    # monotone features and finite weight bounds
    monotone = np.array([0, 1, -1, 1, 0], np.int8)
    bounds = np.array([[-np.inf, np.inf], [-0.5, 0.5], [0.0, np.inf], [-np.inf, -0.1]])
    fast = _evaluate(cpu, hist, sums, n_bins, mask, params, monotone, bounds)
    slow = _evaluate(reference, hist, sums, n_bins, mask, params, monotone, bounds)
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)
    if params[3] == 1e9:
        assert np.isneginf(fast[0]).all() and (fast[1] == -1).all()


def test_evaluate_splits_known_best():
    # Feature 0: bins 0,1 hold g=-1 each, bins 2,3 hold g=+1: the split is after bin 1.
    # Missing (slot 4) holds strongly negative gradients: they must go left.
    hist = np.zeros((1, 5, 2), np.int64)
    hist[0, :, 0] = [-10, -10, 10, 10, -30]
    hist[0, :, 1] = [10, 10, 10, 10, 10]
    sums = hist.sum(axis=1)
    gain, feature, split_bin, default_left, left = _evaluate(
        cpu, hist, sums, np.array([4], np.int32), np.ones((1, 1), np.uint8), (0.0, 0.0, 0.0, 0.0))
    assert (feature[0], split_bin[0], default_left[0]) == (0, 1, 1)
    np.testing.assert_array_equal(left[0], [-50, 30])
    # gain = GL^2/HL + GR^2/HR - G^2/H with the scales 2**20 (g) and 2**22 (h)
    g, h = np.array([-50, 20, -30]) / 2.0**20, np.array([30, 20, 50]) / 2.0**22
    expected = g[0] ** 2 / h[0] + g[1] ** 2 / h[1] - g[2] ** 2 / h[2]
    assert gain[0] == pytest.approx(expected, rel=1e-12)


def test_node_weights_match_reference():
    rng = np.random.default_rng(3)
    sums = np.column_stack([rng.integers(-10**9, 10**9, 50), rng.integers(0, 10**9, 50)])
    bounds = np.tile([-np.inf, np.inf], (50, 1))
    bounds[::3] = [-0.01, 0.02]
    scales = np.tile([2.0**30, 2.0**31], (50, 1))
    scales[1::2] = [2.0**27, 2.0**34]  # nodes of another tree's scales
    for params in ((1.0, 0.0, 0.0, 1.0), (0.5, 0.3, 0.2, 0.0)):
        fast, slow = np.empty(50), np.empty(50)
        cpu.node_weights(sums, bounds, scales, np.array(params), fast)
        reference.node_weights(sums, bounds, scales, np.array(params), slow)
        np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("n_rows, n_nodes", [(1, 1), (40, 3), (70000, 5), (100000, 1)])
def test_partition_rows_matches_reference(n_rows, n_nodes):
    rng = np.random.default_rng(n_rows)
    n_bins = np.array([5, 17, 2], dtype=np.int32)
    bins, _ = make_inputs(rng, n_rows, n_bins)
    rows, starts, ends = segments(rng, n_rows, n_nodes)
    feature = rng.integers(0, 3, n_nodes).astype(np.int32)
    split_bin = np.array([rng.integers(0, n_bins[f]) for f in feature], dtype=np.int32)
    default_left = rng.integers(0, 2, n_nodes).astype(np.uint8)
    fast_rows, slow_rows = rows.copy(), rows.copy()
    fast_n, slow_n = np.empty(n_nodes, np.int64), np.empty(n_nodes, np.int64)
    by_feature = np.ascontiguousarray(bins.T)
    numeric = (np.zeros(n_nodes, np.uint8), np.zeros((n_nodes, CAT_WORDS), np.uint32))
    cpu.partition_rows(by_feature, fast_rows, starts, ends, feature, split_bin, default_left,
                       *numeric, n_bins, np.empty_like(rows), fast_n)
    reference.partition_rows(by_feature, slow_rows, starts, ends, feature, split_bin, default_left,
                             *numeric, n_bins, np.empty_like(rows), slow_n)
    np.testing.assert_array_equal(fast_rows, slow_rows)
    np.testing.assert_array_equal(fast_n, slow_n)


@pytest.mark.parametrize("n_rows, n_nodes", [(1, 1), (40, 3), (70000, 5)])
def test_add_split_values_matches_reference(n_rows, n_nodes):
    """The last level's partition and leaf update in one pass: numeric and categorical
    splits, missing values both ways, segments of several chunks; rows not moved."""
    rng = np.random.default_rng(n_rows + 7)
    by_feature, rows, split = random_splits(rng, n_rows, n_nodes,
                                            np.array([5, 17, 40], dtype=np.int32), 0.4)
    starts, ends = split[:2]
    left, right = rng.normal(size=n_nodes), rng.normal(size=n_nodes)
    base = rng.normal(size=n_rows)
    fast, slow = base.copy(), base.copy()
    kept = rows.copy()
    cpu.add_split_values(by_feature, rows, *split, left, right, fast)
    reference.add_split_values(by_feature, rows, *split, left, right, slow)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(rows, kept)
    # the same as partitioning, then adding each child's value to its rows
    moved, n_left = rows.copy(), np.empty(n_nodes, np.int64)
    cpu.partition_rows(by_feature, moved, *split, np.empty_like(rows), n_left)
    expected = base.copy()
    for k in range(n_nodes):
        expected[moved[starts[k]:starts[k] + n_left[k]]] += left[k]
        expected[moved[starts[k] + n_left[k]:ends[k]]] += right[k]
    np.testing.assert_array_equal(fast, expected)


def test_add_leaf_values_matches_reference():
    rng = np.random.default_rng(1)
    rows, starts, ends = segments(rng, 1000, 6)
    values = rng.normal(size=6)
    fast, slow = np.zeros(1000), np.zeros(1000)
    cpu.add_leaf_values(rows, starts, ends, values, fast)
    reference.add_leaf_values(rows, starts, ends, values, slow)
    np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("n_rows, n_groups", [(1, 1), (333, 3), (5000, 1)])
def test_predict_kernels_match_reference(n_rows, n_groups):
    rng = np.random.default_rng(n_rows)
    n_bins = np.array([4, 9, 2, 30], dtype=np.int32)
    bins, _ = make_inputs(rng, n_rows, n_bins, missing_rate=0.2)
    f = random_forest_arrays(rng, 30, 4, n_bins, n_groups)
    assert f.tree_depth.min() == 0 and f.tree_depth.max() >= 4
    tree_args = (f.walk_binned, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth)
    fast, slow = np.zeros((n_rows, n_groups)), np.zeros((n_rows, n_groups))
    rows = np.arange(n_rows)
    cpu.predict_binned(bins, rows, n_bins, *tree_args, fast)
    reference.predict_binned(bins, rows, n_bins, *tree_args, slow)
    np.testing.assert_array_equal(fast, slow)
    some = rows[::3]  # a subset of the rows: only theirs change
    part = np.zeros_like(fast)
    cpu.predict_binned(bins, some, n_bins, *tree_args, part)
    np.testing.assert_array_equal(part[some], fast[some])
    assert not np.delete(part, some, axis=0).any()
    # Raw values equal to the bin index, NaN where missing: the thresholds (bin + 0.5)
    # send each row exactly where its bin goes.
    X = bins.astype(np.float32)
    X[bins == n_bins] = np.nan
    raw_args = (f.walk, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth)
    fast_raw, slow_raw = np.zeros_like(fast), np.zeros_like(fast)
    cpu.predict(X, *raw_args, fast_raw)
    reference.predict(X, *raw_args, slow_raw)
    np.testing.assert_array_equal(fast_raw, slow_raw)
    np.testing.assert_array_equal(fast_raw, fast)


@pytest.mark.parametrize("n_rows", [1, 1000, 70000])
def test_bin_values_matches_reference(n_rows):
    rng = np.random.default_rng(n_rows)
    X = rng.normal(size=(n_rows, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[::3, 2] = np.round(X[::3, 2], 1)  # values equal to cuts
    cuts = [np.empty(0, np.float32), np.array([0.0], np.float32),
            np.round(np.sort(rng.normal(size=40)), 1).astype(np.float32),
            np.unique(rng.normal(size=255)).astype(np.float32)]  # 255 cuts: 256 bins
    padded = np.full((4, 256), np.inf, np.float32)
    for f, c in enumerate(cuts):
        padded[f, :c.size] = c
    n_bins = np.array([c.size + 1 for c in cuts], dtype=np.int32)
    fast, slow = np.empty(X.shape, np.uint8), np.empty(X.shape, np.uint8)
    cpu.bin_values(X, padded, n_bins, fast)
    reference.bin_values(X, padded, n_bins, slow)
    np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("n", [0, 1, 5000, 100_000])
def test_quantize_kernels_match_reference(n):
    rng = np.random.default_rng(n)
    grad, hess = rng.normal(size=n) * 3, rng.uniform(size=n)
    assert cpu.max_abs(grad) == reference.max_abs(grad)
    scales = np.array([2.0**40, 2.0**43])
    fast, slow = np.empty((n, 2), np.int64), np.empty((n, 2), np.int64)
    cpu.quantize_gradients(grad, hess, scales, fast)
    reference.quantize_gradients(grad, hess, scales, slow)
    np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("values", [[-0.0], [0.0, -0.0], [-np.inf, 1.0], [5e-324, -5e-324],
                                    [1.7e308, -1.79e308, 3.0], [-2.5, 2.5, -2.5]])
def test_max_abs_on_the_edges_of_float64(values):
    """The largest |value| (read from the values' bits): signed zeros, infinities,
    subnormals, the largest finite floats, ties of opposite signs."""
    values = np.array(values)
    assert np.float64(cpu.max_abs(values)).tobytes() == \
        np.float64(reference.max_abs(values)).tobytes()


def test_max_abs_passes_over_nan():
    # a NaN gradient is caught where it is made (the objectives); the scale comes from
    # the other values, as it did before the kernel read bits
    assert cpu.max_abs(np.array([np.nan, -3.0, 2.0, np.nan])) == 3.0
    assert cpu.max_abs(np.full(40, np.nan)) == 0.0


def test_predict_matches_a_walk_of_the_tree_arrays():
    # Independent of the packed walk tables: follow left/right children row by row.
    rng = np.random.default_rng(11)
    n_bins = np.array([4, 9, 2, 30], dtype=np.int32)
    f = random_forest_arrays(rng, 20, 4, n_bins, 2)
    X = rng.integers(0, 9, size=(200, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.2] = np.nan
    expected = np.zeros((200, 2))
    for t in range(f.n_trees):
        base = f.tree_offsets[t]
        for r in range(200):
            node = 0
            while f.left_child[base + node] >= 0:
                x = X[r, f.split_feature[base + node]]
                left = f.default_left[base + node] == 1 if np.isnan(x) else x < f.threshold[base + node]
                node = f.left_child[base + node] if left else f.right_child[base + node]
            expected[r, f.tree_group[t]] += f.value[base + node]
    out = np.zeros((200, 2))
    cpu.predict(X, f.walk, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth, out)
    np.testing.assert_array_equal(out, expected)


def test_predict_leaf_matches_reference_and_values():
    rng = np.random.default_rng(12)
    n_bins = np.array([4, 9, 2, 30], dtype=np.int32)
    f = random_forest_arrays(rng, 25, 4, n_bins, 1)
    X = rng.integers(0, 9, size=(500, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.2] = np.nan
    fast, slow = np.empty((500, 25), np.int32), np.empty((500, 25), np.int32)
    cpu.predict_leaf(X, f.walk, f.cat_bits, f.tree_offsets, f.tree_depth, fast)
    reference.predict_leaf(X, f.walk, f.cat_bits, f.tree_offsets, f.tree_depth, slow)
    np.testing.assert_array_equal(fast, slow)
    assert (f.left_child[f.tree_offsets[:-1] + fast] < 0).all()  # every id is a leaf
    margin = np.zeros((500, 1))
    cpu.predict(X, f.walk, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth,
                margin)
    np.testing.assert_allclose(f.value[f.tree_offsets[:-1] + fast].sum(axis=1), margin[:, 0])


def test_bin_values_with_more_than_256_bins_matches_reference():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(3000, 3)).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    cuts = [np.unique(rng.normal(size=n)).astype(np.float32) for n in (700, 3, 300)]
    mapper = gbm.bins.binning.BinMapper.from_cuts(cuts)
    assert mapper.bin_dtype == np.uint16 and mapper.padded_cuts().shape[1] == 1024
    fast, slow = (np.empty(X.shape, np.uint16) for _ in range(2))
    cpu.bin_values(X, mapper.padded_cuts(), mapper.n_bins, fast)
    reference.bin_values(X, mapper.padded_cuts(), mapper.n_bins, slow)
    np.testing.assert_array_equal(fast, slow)
    assert fast[:, 0].max() == mapper.n_bins[0]  # the missing bin of a 700-bin feature
    np.testing.assert_array_equal(mapper.transform(X), fast)
