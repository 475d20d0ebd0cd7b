"""Categorical splits in the kernels: each against its NumPy twin, with numeric and
categorical features side by side (one evaluate, one partition, one predict path)."""
import numpy as np
import pytest

import gbm
from gbm.kernels import cpu, reference
from gbm.kernels.cpu.tree_walk import categorical_goes_left as cpu_goes_left
from gbm.kernels.layout import CAT_WORDS
from gbm.kernels.reference.predict import categorical_goes_left as reference_goes_left
from tests.support.kernel_inputs import offsets_of, random_histograms

pd = pytest.importorskip("pandas")

SCALES = np.array([2.0**20, 2.0**22])


def _evaluate(module, hist, n_bins, is_cat, mask, params, onehot, threshold, bounds=None,
              monotone=None):
    n = hist.shape[0]
    offsets = offsets_of(n_bins)
    sums = hist[:, offsets[0]:offsets[1]].sum(axis=1)
    bounds = np.tile([-np.inf, np.inf], (n, 1)) if bounds is None else bounds
    monotone = np.zeros(n_bins.size, np.int8) if monotone is None else monotone
    out = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8),
           np.empty((n, 2), np.int64), np.empty((n, CAT_WORDS), np.uint32))
    module.evaluate_splits(hist, offsets, 1, is_cat, sums, mask, monotone, bounds,
                           np.tile(SCALES, (n, 1)),
                           np.array(params, np.float64), onehot, threshold, *out)
    return out


@pytest.mark.parametrize("params", [
    (1.0, 0.0, 0.0, 1.0),  # reg_lambda, reg_alpha, max_delta_step, min_child_weight
    (0.0, 0.5, 0.7, 0.0),
    (2.0, 0.0, 0.0, 50.0),
    (1.0, 0.0, 0.0, 1e9),  # nothing can satisfy min_child_weight
])
@pytest.mark.parametrize("onehot, threshold", [(4, 64), (64, 64), (1, 5), (300, 1)])
@pytest.mark.parametrize("seed", range(2))
def test_evaluate_splits_with_categories_matches_reference(params, onehot, threshold, seed):
    rng = np.random.default_rng(seed)
    n_bins = np.array([3, 1, 40, 7, 255, 9], dtype=np.int32)
    is_cat = np.array([1, 1, 1, 0, 1, 1], np.uint8)  # feature 3 is numeric
    n_nodes = 4
    hist = random_histograms(rng, n_nodes, n_bins, missing=seed == 0)
    mask = (rng.random((n_nodes, n_bins.size)) < 0.8).astype(np.uint8)
    bounds = np.array([[-np.inf, np.inf], [-0.5, 0.5], [0.0, np.inf], [-np.inf, -0.1]])
    monotone = np.array([0, 0, 0, 1, 0, 0], np.int8)
    for b, m in ((None, None), (bounds, monotone)):
        fast = _evaluate(cpu, hist, n_bins, is_cat, mask, params, onehot, threshold, b, m)
        slow = _evaluate(reference, hist, n_bins, is_cat, mask, params, onehot, threshold, b, m)
        for a, c in zip(fast, slow):
            np.testing.assert_array_equal(a, c)
    gain, feature, split_bin, _, _, bits = fast
    if params[3] == 1e9:
        assert np.isneginf(gain).all() and (feature == -1).all() and not bits.any()
    else:
        assert (feature >= 0).any()
    for k in np.flatnonzero(feature >= 0):
        codes = np.flatnonzero(np.unpackbits(bits[k].view(np.uint8), bitorder="little"))
        if not is_cat[feature[k]]:  # a numeric split: a bin, no set
            assert codes.size == 0
            continue
        assert split_bin[k] == 0 and 0 < codes.size and codes.max() < n_bins[feature[k]]
        if n_bins[feature[k]] < onehot:
            assert codes.size == 1  # one-hot
        else:
            assert codes.size < threshold  # at most max_cat_threshold - 1 moved


def test_evaluate_categorical_known_partition():
    # Codes 0 and 2 hold negative gradients, 1 and 3 positive: the best set is {0, 2} or
    # {1, 3}, whichever the scan meets first; the partition is the same.
    hist = np.zeros((1, 5, 2), np.int64)
    hist[0, :, 0] = [-10, 10, -10, 10, 0]
    hist[0, :, 1] = [10, 10, 10, 10, 0]
    gain, feature, _, default_left, left, bits = _evaluate(
        cpu, hist, np.array([4], np.int32), np.ones(1, np.uint8), np.ones((1, 1), np.uint8),
        (0.0, 0.0, 0.0, 0.0), 4, 64)
    right_codes = {c for c in range(4) if bits[0, 0] >> c & 1}
    assert right_codes in ({0, 2}, {1, 3}) and feature[0] == 0
    g, h = np.array([-20, 20]) / SCALES[0], np.array([20, 20]) / SCALES[1]
    assert gain[0] == pytest.approx((g ** 2 / h).sum(), rel=1e-12)


def test_equal_gains_go_to_the_lower_feature_whatever_its_kind():
    # the same histogram on a categorical feature 0 and a numeric feature 1 (two codes = a
    # threshold between them): equal gains, and the lower feature wins; swapped, too
    one = np.array([[-10, 10], [10, 10], [0, 0]], np.int64)  # 2 bins + missing
    hist = np.concatenate([one, one])[None]
    for is_cat in (np.array([1, 0], np.uint8), np.array([0, 1], np.uint8)):
        for module in (cpu, reference):
            gain, feature, *_ = _evaluate(module, hist, np.array([2, 2], np.int32), is_cat,
                                          np.ones((1, 2), np.uint8), (0.0, 0.0, 0.0, 0.0), 4, 64)
            assert feature[0] == 0 and gain[0] > 0


@pytest.mark.parametrize("n_rows, n_nodes", [(1, 1), (40, 3), (70000, 5)])
def test_partition_rows_mixed_splits_matches_reference(n_rows, n_nodes):
    rng = np.random.default_rng(n_rows)
    n_bins = np.array([5, 60, 255], dtype=np.int32)
    bins = np.column_stack([rng.integers(0, nb + 1, n_rows) for nb in n_bins]).astype(np.uint8)
    rows = rng.permutation(n_rows).astype(np.int32)
    cuts = np.sort(rng.integers(0, n_rows + 1, n_nodes - 1))
    starts = np.concatenate(([0], cuts)).astype(np.int64)
    ends = np.concatenate((cuts, [n_rows])).astype(np.int64)
    feature = rng.integers(0, 3, n_nodes).astype(np.int32)
    split_bin = np.array([rng.integers(0, n_bins[f]) for f in feature], dtype=np.int32)
    split_type = (np.arange(n_nodes) % 2 == 0).astype(np.uint8)  # categorical, numeric, ...
    bits = rng.integers(0, 2**32, (n_nodes, CAT_WORDS), dtype=np.uint64).astype(np.uint32)
    default_left = rng.integers(0, 2, n_nodes).astype(np.uint8)
    by_feature = np.ascontiguousarray(bins.T)
    out = []
    for module in (cpu, reference):
        r, n_left = rows.copy(), np.empty(n_nodes, np.int64)
        module.partition_rows(by_feature, r, starts, ends, feature, split_bin, default_left,
                              split_type, bits, n_bins, np.empty_like(rows), n_left)
        out.append((r, n_left))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    # the rule, row by row: a code in the set goes right, missing the default way
    for k in range(n_nodes):
        f = feature[k]
        for p, r in enumerate(out[0][0][starts[k]:ends[k]]):
            b = int(bins[r, f])
            if b == n_bins[f]:
                left = default_left[k] == 1
            elif split_type[k]:
                left = not (int(bits[k, b >> 5]) >> (b & 31)) & 1
            else:
                left = b <= split_bin[k]
            assert left == (p < out[0][1][k])


def test_categorical_goes_left():
    bits = np.zeros((2, CAT_WORDS), np.uint32)
    bits[1, 0] = 0b1010  # codes 1 and 3
    bits[1, 7] = 1 << 30  # code 254
    for goes_left in (cpu_goes_left, reference_goes_left):
        assert goes_left(0.0, False, bits, 1)  # not in the set: left
        assert not goes_left(3.0, True, bits, 1)  # in the set: right
        assert not goes_left(254.0, True, bits, 1)
        assert goes_left(np.nan, True, bits, 1)  # missing: default
        assert not goes_left(np.nan, False, bits, 1)
        assert not goes_left(-1.0, False, bits, 1)  # no code: default


def test_predict_kernels_match_reference_and_bins():
    rng = np.random.default_rng(0)
    n = 3000
    codes = rng.integers(0, 30, n)
    x = np.round(rng.normal(size=n), 1)
    X = pd.DataFrame({"c": pd.Categorical.from_codes(codes, [f"k{i}" for i in range(30)]),
                      "x": np.where(np.arange(n) % 7 != 0, x, np.nan)})
    y = rng.normal(size=30)[codes] + 0.7 * x
    b = gbm.train({"max_depth": 4, "max_cat_to_onehot": 8}, X, y, 6)
    forest = b.forest()
    assert forest.has_categorical and forest.split_type.sum() == forest.cat_bits.shape[0]
    Xf = b._check_predict_X(X)
    mapper = gbm.bins.binning.BinMapper.from_cuts(b.cuts)
    bins = mapper.transform(Xf)
    outs = []
    for module in (cpu, reference):
        margin = np.full((n, 1), b.base_margin[0])
        module.predict(Xf, forest.walk, forest.cat_bits, forest.value, forest.tree_offsets,
                       forest.tree_group, forest.tree_depth, margin)
        leaves = np.empty((n, forest.n_trees), np.int32)
        module.predict_leaf(Xf, forest.walk, forest.cat_bits, forest.tree_offsets,
                            forest.tree_depth, leaves)
        binned = np.full((n, 1), b.base_margin[0])
        module.predict_binned(bins, np.arange(n), mapper.n_bins, forest.walk_binned,
                              forest.cat_bits, forest.value, forest.tree_offsets,
                              forest.tree_group, forest.tree_depth, binned)
        outs.append((margin, leaves, binned))
    for a, c in zip(*outs):
        np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(outs[0][0], outs[0][2])  # raw and binned walks agree
    np.testing.assert_array_equal(outs[0][0][:, 0], b.predict(X, output_margin=True))
