"""Sparse bin matrices on the device (issue 25): every CSR kernel of ``kernels/cuda`` against
the CPU's (and so the reference's), split evaluation without missing slots, and
``device="cuda"`` fits on sparse input giving the CPU's model file, in the sparse and the
dense layout; under Numba's CUDA simulator in CI, on a GPU with ``GBM_TEST_GPU=1``."""
import numpy as np
import pytest

import gbm
from gbm.kernels import cpu, cuda
from gbm.kernels.layout import CAT_WORDS
from tests.support.device_arrays import device_array as dev
from tests.support.device_arrays import host
from tests.support.kernel_inputs import (make_inputs, offsets_of, random_forest_arrays,
                                         random_histograms, random_splits, segments)
from tests.support.sparse_inputs import csr_bins, csr_values, drop_missing_slots, value_offsets

pytest.importorskip("pandas")


@pytest.mark.parametrize("n_rows, n_nodes", [(1, 1), (300, 3), (900, 12)])
def test_build_histograms_csr(n_rows, n_nodes):
    rng = np.random.default_rng(n_rows)
    n_bins = np.array([5, 1, 17, 2, 40], dtype=np.int32)
    bins, gpair = make_inputs(rng, n_rows, n_bins, missing_rate=0.6)
    rows, starts, ends = segments(rng, n_rows, n_nodes)
    indptr, slots, offsets = csr_bins(bins, n_bins)
    expected = np.empty((n_nodes, int(offsets[-1]), 2), np.int64)
    no_map = np.zeros(0, np.int32)
    cpu.build_histograms_csr(indptr, slots, no_map, gpair, rows, starts, ends, expected, 1)
    got = dev(np.full(expected.shape, -3, np.int64))
    cuda.build_histograms_csr(dev(indptr), dev(slots), no_map, dev(gpair), dev(rows), starts,
                              ends, got)
    np.testing.assert_array_equal(host(got), expected)
    slot_map = np.where(np.arange(int(offsets[-1])) % 3 == 1, -1,
                        np.arange(int(offsets[-1]))).astype(np.int32)  # every third left out
    cpu.build_histograms_csr(indptr, slots, slot_map, gpair, rows, starts, ends, expected, 1)
    got = dev(np.full(expected.shape, -3, np.int64))
    cuda.build_histograms_csr(dev(indptr), dev(slots), dev(slot_map), dev(gpair), dev(rows),
                              starts, ends, got)
    np.testing.assert_array_equal(host(got), expected)


def test_evaluate_splits_without_missing_slots():
    rng = np.random.default_rng(5)
    n_bins = np.array([6, 3, 12, 2, 9], dtype=np.int32)
    hist = random_histograms(rng, 4, n_bins)
    sums = hist[:, :n_bins[0] + 1].sum(axis=1)
    is_cat = np.array([0, 1, 0, 0, 1], np.uint8)
    n = hist.shape[0]
    results = []
    for module, h, offsets, missing_slots in (
            (cpu, hist, offsets_of(n_bins), 1),
            (cuda, dev(drop_missing_slots(hist, n_bins)), value_offsets(n_bins), 0)):
        out = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32),
               np.empty(n, np.uint8), np.empty((n, 2), np.int64),
               np.empty((n, CAT_WORDS), np.uint32))
        module.evaluate_splits(h, offsets, missing_slots, is_cat, sums,
                               np.ones((n, 5), np.uint8), np.array([1, 0, -1, 0, 0], np.int8),
                               np.tile([-np.inf, np.inf], (n, 1)),
                               np.tile([2.0**20, 2.0**22], (n, 1)),
                               np.array([1.0, 0.0, 0.0, 1.0]), 4, 64, *out)
        results.append(out)
    assert (results[0][1] >= 0).any()
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n_rows, n_nodes", [(1, 1), (400, 3)])
def test_partition_and_split_values_csr(n_rows, n_nodes):
    rng = np.random.default_rng(n_rows + 1)
    by_feature, rows, split = random_splits(rng, n_rows, n_nodes,
                                            np.array([5, 17, 40, 1], np.int32), 0.4)
    matrix = csr_bins(np.ascontiguousarray(by_feature.T), split[-1])
    expected, expected_n = rows.copy(), np.empty(n_nodes, np.int64)
    cpu.partition_rows_csr(*matrix, expected, *split[:-1], np.empty_like(rows), expected_n)
    got, got_n = dev(rows), np.empty(n_nodes, np.int64)
    cuda.partition_rows_csr(*(dev(a) for a in matrix), got, *split[:-1],
                            dev(np.empty_like(rows)), got_n)
    np.testing.assert_array_equal(host(got), expected)
    np.testing.assert_array_equal(got_n, expected_n)
    left, right = rng.normal(size=n_nodes), rng.normal(size=n_nodes)
    base = rng.normal(size=n_rows)
    want = base.copy()
    cpu.add_split_values_csr(*matrix, rows, *split[:-1], left, right, want)
    out = dev(base)
    cuda.add_split_values_csr(*(dev(a) for a in matrix), dev(rows), *split[:-1], left, right,
                              out)
    np.testing.assert_array_equal(host(out), want)


def test_predict_and_bin_kernels_csr():
    rng = np.random.default_rng(9)
    n_rows, n_groups = 120, 2
    n_bins = np.array([4, 9, 2, 30], dtype=np.int32)
    bins, _ = make_inputs(rng, n_rows, n_bins, missing_rate=0.5)
    f = random_forest_arrays(rng, 12, 4, n_bins, n_groups)
    trees = (f.walk_binned, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth)
    matrix = csr_bins(bins, n_bins)
    rows = np.arange(n_rows)[1::2]
    expected = np.zeros((n_rows, n_groups))
    cpu.predict_binned_csr(*matrix, rows, *trees, expected)
    got = dev(np.zeros((n_rows, n_groups)))
    cuda.predict_binned_csr(*(dev(a) for a in matrix), dev(rows), *trees, got)
    np.testing.assert_array_equal(host(got), expected)
    X = bins.astype(np.float32)
    X[bins == n_bins] = np.nan
    values = csr_values(X)
    raw = (f.walk, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth)
    expected = np.zeros((n_rows, n_groups))
    cpu.predict_csr(*values, *raw, expected)
    got = dev(np.zeros((n_rows, n_groups)))
    cuda.predict_csr(*(dev(a) for a in values), *raw, got)
    np.testing.assert_array_equal(host(got), expected)
    leaves = np.empty((n_rows, f.n_trees), np.int32)
    cpu.predict_leaf_csr(*values, f.walk, f.cat_bits, f.tree_offsets, f.tree_depth, leaves)
    got = dev(np.empty_like(leaves))
    cuda.predict_leaf_csr(*(dev(a) for a in values), f.walk, f.cat_bits, f.tree_offsets,
                          f.tree_depth, got)
    np.testing.assert_array_equal(host(got), leaves)
    cut_values = np.array([-0.5, 0.5, 1.5, 2.5, 3.5], np.float32)
    cut_offsets = np.array([0, 1, 3, 3, 5])
    slots = np.empty(values[2].shape, np.int32)
    cpu.bin_values_csr(*values, cut_values, cut_offsets, value_offsets(n_bins), slots)
    got = dev(np.full(slots.shape, -1, np.int32))
    cuda.bin_values_csr(*(dev(a) for a in values), cut_values, cut_offsets,
                        value_offsets(n_bins), got)
    np.testing.assert_array_equal(host(got), slots)


@pytest.mark.parametrize("params", [
    {},
    {"objective": "binary:logistic", "subsample": 0.8, "colsample_bynode": 0.7},
    {"objective": "multi:softprob", "num_class": 4},
], ids=["squared", "binary-sampled", "softprob"])
def test_same_model_as_the_cpu_on_sparse_input(params):
    from tests.test_sparse_models import _label, sparse_data

    dense, csr = sparse_data(n=160, n_features=10, density=0.3, seed=2, categorical=(3,))
    kind = {"binary:logistic": "binary", "multi:softprob": "multiclass"}.get(
        params.get("objective"), "regression")
    y = _label(dense, np.random.default_rng(3), kind)
    params = dict(params, max_depth=3, max_bin=16)
    expected = gbm.train(dict(params, bin_layout="dense"), dense, y, 2,
                         categorical_features=[3]).to_json()
    for layout in ("sparse", "dense"):
        got = gbm.train(dict(params, device="cuda", bin_layout=layout), csr, y, 2,
                        categorical_features=[3])
        assert got.to_json() == expected, layout
    np.testing.assert_array_equal(got.predict(csr), gbm.Booster.from_json(expected).predict(dense))


def test_bundled_kernels():
    from tests.test_bundling import _bundled_inputs

    rng = np.random.default_rng(12)
    n_rows, n_nodes = 300, 3
    n_bins = np.array([5, 17, 1, 40, 2, 9], dtype=np.int32)
    _, matrix = _bundled_inputs(rng, n_rows, n_bins)
    codes, by_bundle, code_slot, code_base, feature_bundle, feature_code, offsets = matrix
    rows_arg = (by_bundle, feature_bundle, feature_code, offsets)
    _, gpair = make_inputs(rng, n_rows, n_bins)
    rows, starts, ends = segments(rng, n_rows, n_nodes)
    expected = np.empty((n_nodes, int(offsets[-1]), 2), np.int64)
    cpu.build_histograms_bundled(codes, code_slot, code_base, offsets, gpair, rows, starts,
                                 ends, expected, 1)
    got = dev(np.full(expected.shape, 4, np.int64))
    cuda.build_histograms_bundled(dev(codes), code_slot, code_base, offsets, dev(gpair),
                                  dev(rows), starts, ends, got)
    np.testing.assert_array_equal(host(got), expected)
    _, _, split = random_splits(rng, n_rows, n_nodes, n_bins, 0.4)
    want_rows, want_n = rows.copy(), np.empty(n_nodes, np.int64)
    cpu.partition_rows_bundled(*rows_arg, want_rows, starts, ends, *split[2:-1],
                               np.empty_like(rows), want_n)
    got_rows, got_n = dev(rows), np.empty(n_nodes, np.int64)
    cuda.partition_rows_bundled(*(dev(a) for a in rows_arg), got_rows, starts, ends,
                                *split[2:-1], dev(np.empty_like(rows)), got_n)
    np.testing.assert_array_equal(host(got_rows), want_rows)
    np.testing.assert_array_equal(got_n, want_n)
    left, right = rng.normal(size=n_nodes), rng.normal(size=n_nodes)
    want = np.zeros(n_rows)
    cpu.add_split_values_bundled(*rows_arg, rows, starts, ends, *split[2:-1], left, right, want)
    got = dev(np.zeros(n_rows))
    cuda.add_split_values_bundled(*(dev(a) for a in rows_arg), dev(rows), starts, ends,
                                  *split[2:-1], left, right, got)
    np.testing.assert_array_equal(host(got), want)
    f = random_forest_arrays(rng, 10, n_bins.size, n_bins, 2)
    trees = (f.walk_binned, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth)
    want = np.zeros((n_rows, 2))
    cpu.predict_binned_bundled(*rows_arg, np.arange(n_rows), *trees, want)
    got = dev(np.zeros((n_rows, 2)))
    cuda.predict_binned_bundled(*(dev(a) for a in rows_arg), dev(np.arange(n_rows)), *trees,
                                got)
    np.testing.assert_array_equal(host(got), want)


def test_bundled_fit_on_the_device():
    from tests.test_bundling import one_hot

    X, codes = one_hot(n=150, levels=(6, 4), seed=5)
    y = codes[0] % 3 - (codes[1] == 2) * 1.5
    params = {"max_depth": 3, "learning_rate": 0.5}
    expected = gbm.train(dict(params, bin_layout="dense"), X, y, 2).to_json()
    for layout in ("bundled", "auto"):
        assert gbm.train(dict(params, device="cuda", bin_layout=layout), X, y, 2).to_json() \
            == expected, layout


def test_histograms_of_the_features_that_can_split_on_the_device():
    from tests.test_sparse_models import _hashed

    X, y = _hashed(n=200, n_features=800, per_row=8, seed=4)
    params = {"max_depth": 3, "learning_rate": 0.5, "min_child_weight": 0.5,
              "objective": "binary:logistic"}
    expected = gbm.train(dict(params, bin_layout="dense"), X, y, 2).to_json()
    assert gbm.train(dict(params, device="cuda", bin_layout="sparse"), X, y, 2).to_json() \
        == expected
