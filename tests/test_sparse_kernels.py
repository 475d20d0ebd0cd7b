"""The kernels over sparse bin matrices and raw CSR rows (kernels/*/csr.py,
csr_predict.py) against their reference twins, and against the dense kernels on the same
rows (the independent oracle: a sparse matrix is its dense form without the missing
cells); and split evaluation without missing slots (``missing_slots=0``) against the
same histograms with them."""
import numpy as np
import pytest

from gbm.kernels import cpu, reference
from gbm.kernels.layout import CAT_WORDS
from tests.support.kernel_inputs import (make_inputs, offsets_of, random_forest_arrays,
                                         random_histograms, random_splits, segments)
from tests.support.sparse_inputs import csr_bins, csr_values, drop_missing_slots, value_offsets

N_BINS = np.array([5, 1, 17, 2, 40], dtype=np.int32)


def _evaluate(module, hist, offsets, missing_slots, is_cat, sums, mask, monotone, bounds,
              params, onehot=4):
    n = hist.shape[0]
    out = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8),
           np.empty((n, 2), np.int64), np.empty((n, CAT_WORDS), np.uint32))
    module.evaluate_splits(hist, offsets, missing_slots, is_cat, sums, mask, monotone, bounds,
                           np.tile([2.0**20, 2.0**22], (n, 1)), np.array(params, np.float64),
                           onehot, 64, *out)
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("missing", [True, False])
@pytest.mark.parametrize("params", [(1.0, 0.0, 0.0, 1.0), (2.0, 0.5, 0.7, 3.0)])
def test_evaluate_splits_without_missing_slots(seed, missing, params):
    rng = np.random.default_rng(seed)
    n_bins = np.array([6, 3, 12, 2, 9], dtype=np.int32)
    hist = random_histograms(rng, 6, n_bins, missing)
    sums = hist[:, :n_bins[0] + 1].sum(axis=1)
    is_cat = np.array([0, 1, 0, 0, 1], np.uint8)
    mask = (rng.random((6, 5)) < 0.9).astype(np.uint8)
    monotone = np.array([1, 0, -1, 0, 0], np.int8)
    bounds = np.tile([-np.inf, np.inf], (6, 1))
    bounds[1] = [-0.2, 0.3]
    for onehot in (4, 16):
        args = (is_cat, sums, mask, monotone, bounds, params, onehot)
        expected = _evaluate(reference, hist, offsets_of(n_bins), 1, *args)
        assert (expected[1] >= 0).any()
        compact = drop_missing_slots(hist, n_bins)
        for module in (reference, cpu):
            got = _evaluate(module, compact, value_offsets(n_bins), 0, *args)
            for a, b in zip(got, expected):
                np.testing.assert_array_equal(a, b)
            dense = _evaluate(module, hist, offsets_of(n_bins), 1, *args)
            for a, b in zip(dense, expected):
                np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n_rows, n_nodes, n_threads", [
    (1, 1, 1), (50, 3, 2), (20000, 1, 2), (20000, 2, 4), (30000, 40, 2)])
def test_build_histograms_csr(n_rows, n_nodes, n_threads):
    rng = np.random.default_rng(n_rows + n_nodes)
    bins, gpair = make_inputs(rng, n_rows, N_BINS, missing_rate=0.6)
    bins[::7] = N_BINS  # rows without a stored entry
    rows, starts, ends = segments(rng, n_rows, n_nodes)
    indptr, slots, offsets = csr_bins(bins, N_BINS)
    dense = np.empty((n_nodes, int(offsets_of(N_BINS)[-1]), 2), np.int64)
    reference.build_histograms(bins, gpair, rows, starts, ends, offsets_of(N_BINS), dense)
    expected = drop_missing_slots(dense, N_BINS)
    # some features only: slots of features 0, 2 and 4, in a histogram of their own
    kept = np.concatenate([np.arange(offsets[f], offsets[f + 1]) for f in (0, 2, 4)])
    slot_map = np.full(int(offsets[-1]), -1, np.int32)
    slot_map[kept] = np.arange(kept.size)
    for module in (reference, cpu):
        hist = np.full((n_nodes, int(offsets[-1]), 2), 7, np.int64)  # overwritten
        module.build_histograms_csr(indptr, slots, np.zeros(0, np.int32), gpair, rows, starts,
                                    ends, hist, n_threads)
        np.testing.assert_array_equal(hist, expected)
        some = np.full((n_nodes, kept.size, 2), 7, np.int64)
        module.build_histograms_csr(indptr, slots, slot_map, gpair, rows, starts, ends, some,
                                    n_threads)
        np.testing.assert_array_equal(some, expected[:, kept])


def _sparse_split(rng, n_rows, n_nodes, categorical_rate):
    by_feature, rows, split = random_splits(rng, n_rows, n_nodes,
                                            np.array([5, 17, 40, 1], np.int32),
                                            categorical_rate)
    n_bins = split[-1]
    indptr, slots, offsets = csr_bins(np.ascontiguousarray(by_feature.T), n_bins)
    return by_feature, rows, split, (indptr, slots, offsets)


@pytest.mark.parametrize("n_rows, n_nodes", [(1, 1), (40, 3), (70000, 5)])
def test_partition_rows_csr(n_rows, n_nodes):
    rng = np.random.default_rng(n_rows + 3)
    by_feature, rows, split, matrix = _sparse_split(rng, n_rows, n_nodes, 0.4)
    expected, expected_n = rows.copy(), np.empty(n_nodes, np.int64)
    cpu.partition_rows(by_feature, expected, *split, np.empty_like(rows), expected_n)
    for module in (reference, cpu):
        got, n_left = rows.copy(), np.empty(n_nodes, np.int64)
        module.partition_rows_csr(*matrix, got, *split[:-1], np.empty_like(rows), n_left)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(n_left, expected_n)


@pytest.mark.parametrize("n_rows, n_nodes", [(1, 1), (40, 3), (70000, 5)])
def test_add_split_values_csr(n_rows, n_nodes):
    rng = np.random.default_rng(n_rows + 5)
    by_feature, rows, split, matrix = _sparse_split(rng, n_rows, n_nodes, 0.4)
    left, right = rng.normal(size=n_nodes), rng.normal(size=n_nodes)
    base = rng.normal(size=n_rows)
    expected = base.copy()
    cpu.add_split_values(by_feature, rows, *split, left, right, expected)
    kept = rows.copy()
    for module in (reference, cpu):
        got = base.copy()
        module.add_split_values_csr(*matrix, rows, *split[:-1], left, right, got)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(rows, kept)


@pytest.mark.parametrize("n_rows, n_groups", [(1, 1), (333, 3), (5000, 1)])
def test_predict_kernels_csr(n_rows, n_groups):
    rng = np.random.default_rng(n_rows + 1)
    n_bins = np.array([4, 9, 2, 30], dtype=np.int32)
    bins, _ = make_inputs(rng, n_rows, n_bins, missing_rate=0.5)
    f = random_forest_arrays(rng, 30, 4, n_bins, n_groups)
    trees = (f.walk_binned, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth)
    rows = np.arange(n_rows)[::2]
    expected = np.zeros((n_rows, n_groups))
    cpu.predict_binned(bins, rows, n_bins, *trees, expected)
    matrix = csr_bins(bins, n_bins)
    for module in (reference, cpu):
        got = np.zeros_like(expected)
        module.predict_binned_csr(*matrix, rows, *trees, got)
        np.testing.assert_array_equal(got, expected)
    # raw values: the bin index, NaN where missing (thresholds bin + 0.5)
    X = bins.astype(np.float32)
    X[bins == n_bins] = np.nan
    raw = (f.walk, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth)
    expected = np.zeros((n_rows, n_groups))
    cpu.predict(X, *raw, expected)
    leaves = np.empty((n_rows, f.n_trees), np.int32)
    cpu.predict_leaf(X, f.walk, f.cat_bits, f.tree_offsets, f.tree_depth, leaves)
    values = csr_values(X)
    for module in (reference, cpu):
        got = np.zeros_like(expected)
        module.predict_csr(*values, *raw, got)
        np.testing.assert_array_equal(got, expected)
        got_leaves = np.full_like(leaves, -1)
        module.predict_leaf_csr(*values, f.walk, f.cat_bits, f.tree_offsets, f.tree_depth,
                                got_leaves)
        np.testing.assert_array_equal(got_leaves, leaves)


@pytest.mark.parametrize("n_rows", [1, 1000, 30000])
def test_bin_values_csr(n_rows):
    rng = np.random.default_rng(n_rows)
    X = rng.normal(size=(n_rows, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.5] = np.nan
    X[::3, 2] = np.round(X[::3, 2], 1)  # values equal to cuts
    cuts = [np.empty(0, np.float32), np.array([0.0], np.float32),
            np.round(np.sort(rng.normal(size=40)), 1).astype(np.float32),
            np.unique(rng.normal(size=255)).astype(np.float32)]
    padded = np.full((4, 256), np.inf, np.float32)
    for f, c in enumerate(cuts):
        padded[f, :c.size] = c
    n_bins = np.array([c.size + 1 for c in cuts], dtype=np.int32)
    dense = np.empty(X.shape, np.uint16)  # a 256-bin feature's missing bin is 256
    cpu.bin_values(X, padded, n_bins, dense)
    expected = csr_bins(dense, n_bins)
    indptr, indices, data = csr_values(X)
    cut_values = np.concatenate(cuts)
    cut_offsets = np.concatenate(([0], np.cumsum([c.size for c in cuts])))
    for module in (reference, cpu):
        slots = np.full(data.shape, -1, np.int32)
        module.bin_values_csr(indptr, indices, data, cut_values, cut_offsets, expected[2], slots)
        np.testing.assert_array_equal(slots, expected[1])
