"""Exclusive Feature Bundling made exact (gbm/bins/bundling.py, kernels/*/bundling.py,
kernels/*/bundled.py): the greedy proposal and the row check against their twins; only
features never stored in one row share a bundle, whatever the sample proposed; the
bundles are the same over any number of ranks and any split of the rows; the bundled
kernels give the dense kernels' results; and a bundled fit gives the model of every other
layout."""
import numpy as np
import pytest
import scipy.sparse as sp

import gbm
from gbm.collective import LOCAL, ThreadGroup
from gbm.bins.binning import BinMapper
from gbm.bins.bundling import MAX_CODES, code_slots, find_bundles, numbered, propose
from gbm.data.inputs import check_X
from gbm.data.sparse import SparseMatrix
from gbm.kernels import cpu, reference
from tests.support.kernel_inputs import make_inputs, random_forest_arrays, random_splits, segments
from tests.support.sparse_inputs import value_offsets


def one_hot(n=600, levels=(12, 9, 5), seed=0, extra=2):
    """CSR of categorical columns one-hot encoded (a stored 1.0 per row and column) and
    ``extra`` sparse numeric columns; (matrix, codes of each categorical)."""
    rng = np.random.default_rng(seed)
    codes = [rng.integers(0, k, n) for k in levels]
    rows, cols, vals = [], [], []
    first = 0
    for c, k in zip(codes, levels):
        rows.append(np.arange(n))
        cols.append(first + c)
        vals.append(np.ones(n))
        first += k
    for e in range(extra):
        at = np.flatnonzero(rng.random(n) < 0.1)
        rows.append(at)
        cols.append(np.full(at.size, first + e))
        vals.append(np.round(rng.normal(size=at.size), 1))
    X = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n, first + extra))
    return X, codes


def _exclusive(X, bundles):
    """Whether no row holds two features of one bundle."""
    X = check_X(X)
    rows = X.row_of_entries()
    pairs = rows * bundles.n_bundles + bundles.bundle_of[X.indices]
    return np.unique(pairs).size == pairs.size


def test_one_hot_columns_bundle_into_their_variables():
    X, _ = one_hot()
    sparse = check_X(X)
    mapper = BinMapper().fit(sparse)
    bundles = find_bundles(sparse, sparse, mapper.n_bins, LOCAL, cpu)
    assert _exclusive(X, bundles)
    assert bundles.n_bundles <= 6  # 28 columns: three variables, two sparse columns
    assert (bundles.widths <= MAX_CODES).all()
    assert bundles.widths.sum() == mapper.n_bins.sum() + bundles.n_bundles
    # bundles numbered by their lowest feature, features in increasing order in one
    lowest = [np.flatnonzero(bundles.bundle_of == j)[0] for j in range(bundles.n_bundles)]
    assert lowest == sorted(lowest)
    for j in range(bundles.n_bundles):
        members = np.flatnonzero(bundles.bundle_of == j)
        assert (np.diff(bundles.feature_code[members]) > 0).all()


def test_a_conflict_outside_the_sample_splits_the_bundle():
    X, _ = one_hot(n=400, levels=(10,), extra=0)
    X = X.tolil()
    X[399, 3] = 1.0  # row 399 holds levels 3 and X[399]'s own: one conflicting pair
    X = X.tocsr()
    sparse = check_X(X)
    sample = sparse.take_rows(np.arange(399))  # the sample misses the conflicting row
    mapper = BinMapper().fit(sparse)
    proposed = propose(sample, mapper.n_bins, cpu)
    assert np.unique(proposed).size == 1  # the sample saw ten exclusive features
    bundles = find_bundles(sample, sparse, mapper.n_bins, LOCAL, cpu)
    assert _exclusive(X, bundles)
    pair = sorted(set(sparse.indices[sparse.indptr[399]:sparse.indptr[400]].tolist()))
    assert len(pair) == 2 and bundles.bundle_of[pair[0]] != bundles.bundle_of[pair[1]]
    alone = [f for f in pair if (bundles.bundle_of == bundles.bundle_of[f]).sum() == 1]
    assert alone == pair  # each flagged feature on its own; the other eight stay together
    assert bundles.n_bundles == 3


@pytest.mark.parametrize("cuts", [[300], [100, 250], [0, 0, 450]])
def test_the_bundles_are_the_same_over_ranks_and_chunks(cuts):
    X, _ = one_hot(n=500, seed=3)
    X = X.tolil()
    X[17, 0] = X[17, 1] = 1.0  # conflicts in a few rows
    X[480, 20] = 1.0
    sparse = check_X(X.tocsr())
    mapper = BinMapper(sample_size=300, seed=2).fit(sparse)
    expected = find_bundles(mapper.sample, sparse, mapper.n_bins, LOCAL, cpu)
    bounds = [0] + cuts + [sparse.shape[0]]
    parts = [sparse.take_rows(np.arange(a, b)) for a, b in zip(bounds[:-1], bounds[1:])]

    def run(collective):
        r = collective.rank
        ranked = BinMapper(sample_size=300, seed=2).fit(
            parts[r], row_ids=np.arange(bounds[r], bounds[r + 1]), n_rows_total=500,
            collective=collective)
        return find_bundles(ranked.sample, parts[r], ranked.n_bins, collective, cpu)

    for got in ThreadGroup(len(parts)).run(run):
        np.testing.assert_array_equal(got.bundle_of, expected.bundle_of)
        np.testing.assert_array_equal(got.feature_code, expected.feature_code)
    assert _exclusive(X.tocsr(), expected)


@pytest.mark.parametrize("seed", range(4))
def test_bundling_kernels_match_reference(seed):
    rng = np.random.default_rng(seed)
    X, _ = one_hot(n=300, levels=(7, 4), seed=seed, extra=5)
    sparse = check_X(X)
    n_bins = rng.integers(1, 40, sparse.shape[1]).astype(np.int32)
    counts = sparse.stored_per_feature()
    col_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    col_rows = sparse.row_of_entries()[np.argsort(sparse.indices, kind="stable")].astype(np.int32)
    order = rng.permutation(sparse.shape[1]).astype(np.int64)
    for max_codes, max_search in ((MAX_CODES, 100), (60, 2), (50, 1)):
        fast = np.empty(sparse.shape[1], np.int32)
        slow = np.empty(sparse.shape[1], np.int32)
        nf = cpu.propose_bundles(col_ptr, col_rows, 300, order, n_bins, max_codes, max_search,
                                 fast)
        ns = reference.propose_bundles(col_ptr, col_rows, 300, order, n_bins, max_codes,
                                       max_search, slow)
        assert nf == ns and nf == fast.max() + 1
        np.testing.assert_array_equal(fast, slow)
        widths = 1 + np.bincount(fast, weights=n_bins)
        assert widths.max() <= max_codes
        flags_fast = np.full(sparse.shape[1], 9, np.uint8)
        flags_slow = np.zeros(sparse.shape[1], np.uint8)
        cpu.bundle_conflicts(sparse.indptr, sparse.indices, fast, nf, flags_fast)
        reference.bundle_conflicts(sparse.indptr, sparse.indices, fast, nf, flags_slow)
        np.testing.assert_array_equal(flags_fast, flags_slow)
        assert not flags_fast.any()  # proposed from every row: exclusive already
    shuffled = rng.integers(0, 3, sparse.shape[1]).astype(np.int32)  # conflicts galore
    flags_fast = np.empty(sparse.shape[1], np.uint8)
    flags_slow = np.empty(sparse.shape[1], np.uint8)
    cpu.bundle_conflicts(sparse.indptr, sparse.indices, shuffled, 3, flags_fast)
    reference.bundle_conflicts(sparse.indptr, sparse.indices, shuffled, 3, flags_slow)
    np.testing.assert_array_equal(flags_fast, flags_slow)
    assert flags_fast.any()


def test_numbered_codes():
    b = numbered(np.array([5, 2, 5, 2, 9]), np.array([3, 1, 2, 4, 6]))
    # bundles by their lowest feature: {0, 2} (id 5), {1, 3} (id 2), {4} (id 9)
    np.testing.assert_array_equal(b.bundle_of, [0, 1, 0, 1, 2])
    np.testing.assert_array_equal(b.feature_code, [1, 1, 4, 2, 1])
    np.testing.assert_array_equal(b.widths, [6, 6, 7])
    code_slot, code_base = code_slots(b, value_offsets(np.array([3, 1, 2, 4, 6])))
    np.testing.assert_array_equal(code_base, [0, 6, 12, 19])
    # bundle 0: codes 1..3 feature 0's slots 0..2, codes 4..5 feature 2's slots 4..5
    np.testing.assert_array_equal(code_slot[:6], [-1, 0, 1, 2, 4, 5])
    np.testing.assert_array_equal(code_slot[6:12], [-1, 3, 6, 7, 8, 9])
    np.testing.assert_array_equal(code_slot[12:], [-1, 10, 11, 12, 13, 14, 15])


def _bundled_inputs(rng, n_rows, n_bins):
    """Dense bins (missing = n_bins[f]) of features made exclusive in pairs, and their
    bundled form: ``(bins, (bins, bins_by_bundle, code_slot, code_base, feature_bundle,
    feature_code, feature_offsets))``."""
    bins, _ = make_inputs(rng, n_rows, n_bins, missing_rate=0.3)
    pair_of = np.arange(n_bins.size) // 2
    for f in range(1, n_bins.size, 2):  # feature f missing wherever f - 1 is stored
        bins[bins[:, f - 1] != n_bins[f - 1], f] = n_bins[f]
    bundles = numbered(pair_of, n_bins)
    offsets = value_offsets(n_bins)
    code_slot, code_base = code_slots(bundles, offsets)
    codes = np.zeros((n_rows, bundles.n_bundles), np.uint16)
    for f in range(n_bins.size):
        stored = bins[:, f] != n_bins[f]
        codes[stored, bundles.bundle_of[f]] = bundles.feature_code[f] + bins[stored, f]
    return bins, (codes, np.ascontiguousarray(codes.T), code_slot, code_base,
                  bundles.bundle_of, bundles.feature_code, offsets)


def test_bundled_kernels_match_the_dense_ones():
    rng = np.random.default_rng(8)
    n_rows, n_nodes = 3000, 5
    n_bins = np.array([5, 17, 1, 40, 2, 9], dtype=np.int32)
    bins, matrix = _bundled_inputs(rng, n_rows, n_bins)
    codes, by_bundle, code_slot, code_base, feature_bundle, feature_code, offsets = matrix
    rows_arg = (by_bundle, feature_bundle, feature_code, offsets)
    _, gpair = make_inputs(rng, n_rows, n_bins)
    rows, starts, ends = segments(rng, n_rows, n_nodes)
    dense_offsets = np.concatenate(([0], np.cumsum(n_bins + 1))).astype(np.int32)
    dense = np.empty((n_nodes, int(dense_offsets[-1]), 2), np.int64)
    cpu.build_histograms(bins.astype(np.uint8), gpair, rows, starts, ends, dense_offsets, dense,
                         1)
    expected = np.delete(dense, dense_offsets[1:] - 1, axis=1)
    for module in (reference, cpu):
        for n_threads in (1, 3):
            hist = np.full(expected.shape, 5, np.int64)
            module.build_histograms_bundled(codes, code_slot, code_base, offsets, gpair, rows,
                                            starts, ends, hist, n_threads)
            np.testing.assert_array_equal(hist, expected)
    _, _, split = random_splits(rng, n_rows, n_nodes, n_bins, 0.4)
    by_feature = np.ascontiguousarray(bins.T)
    want_rows, want_n = rows.copy(), np.empty(n_nodes, np.int64)
    cpu.partition_rows(by_feature, want_rows, starts, ends, *split[2:-1], n_bins,
                       np.empty_like(rows), want_n)
    left, right = rng.normal(size=n_nodes), rng.normal(size=n_nodes)
    want_values = np.zeros(n_rows)
    cpu.add_split_values(by_feature, rows, starts, ends, *split[2:-1], n_bins, left, right,
                         want_values)
    f = random_forest_arrays(rng, 20, n_bins.size, n_bins, 2)
    trees = (f.walk_binned, f.cat_bits, f.value, f.tree_offsets, f.tree_group, f.tree_depth)
    want_pred = np.zeros((n_rows, 2))
    cpu.predict_binned(bins, np.arange(n_rows), n_bins, *trees, want_pred)
    for module in (reference, cpu):
        got_rows, got_n = rows.copy(), np.empty(n_nodes, np.int64)
        module.partition_rows_bundled(*rows_arg, got_rows, starts, ends, *split[2:-1],
                                      np.empty_like(rows), got_n)
        np.testing.assert_array_equal(got_rows, want_rows)
        np.testing.assert_array_equal(got_n, want_n)
        got_values = np.zeros(n_rows)
        module.add_split_values_bundled(*rows_arg, rows, starts, ends, *split[2:-1], left,
                                        right, got_values)
        np.testing.assert_array_equal(got_values, want_values)
        got_pred = np.zeros((n_rows, 2))
        module.predict_binned_bundled(*rows_arg, np.arange(n_rows), *trees, got_pred)
        np.testing.assert_array_equal(got_pred, want_pred)


def test_bundled_fits_give_every_layouts_model():
    X, codes = one_hot(n=800, seed=4)
    rng = np.random.default_rng(4)
    y = codes[0] % 3 - (codes[1] == 2) * 1.5 + rng.normal(scale=0.2, size=800)
    dense = check_X(X).dense_rows(0, 800)
    params = {"max_depth": 4, "learning_rate": 0.5, "colsample_bynode": 0.8}
    files = {}
    for name, data, layout in (("dense", dense, "dense"), ("sparse", X, "sparse"),
                               ("bundled", X, "bundled"), ("auto", X, "auto"),
                               ("dense, bundled", dense, "bundled")):
        files[name] = gbm.train(dict(params, bin_layout=layout), data, y, 5).to_json()
    assert len(set(files.values())) == 1, files.keys()
    from gbm.data.training_data import TrainingData
    from gbm.training.prepare import Fit

    matrix = Fit({}, TrainingData(X, y), 1).data.matrix  # auto: bundles beat the CSR
    assert matrix.layout == "bundled" and matrix.n_bundles <= 6
    assert matrix.bins.dtype == np.uint8 and matrix.bins.shape == (800, matrix.n_bundles)
    # the model file names the original features
    booster = gbm.Booster.from_json(files["bundled"])
    assert max(int(t.split_feature.max()) for t in booster.trees) >= 12
