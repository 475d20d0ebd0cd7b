"""Bin edges: exact where values are few, weighted quantiles else, independent of layout."""
import numpy as np
import pytest

from gbm.binning import BinMapper, feature_cuts, sample_mask


def test_few_distinct_values_get_exact_bins():
    X = np.array([[3.0], [1.0], [2.0], [1.0], [np.nan]], dtype=np.float32)
    m = BinMapper(max_bin=256).fit(X)
    np.testing.assert_array_equal(m.cuts[0], [2.0, 3.0])
    np.testing.assert_array_equal(m.transform(X)[:, 0], [2, 0, 1, 0, 3])  # NaN -> bin n_bins = 3


def test_constant_and_all_missing_columns_have_one_bin():
    X = np.column_stack([np.full(10, 4.0), np.full(10, np.nan)]).astype(np.float32)
    m = BinMapper().fit(X)
    assert list(m.n_bins) == [1, 1]
    np.testing.assert_array_equal(m.transform(X), np.column_stack([np.zeros(10), np.ones(10)]))


@pytest.mark.parametrize("max_bin", [2, 3, 16, 256])
def test_quantile_bins_are_balanced_and_bounded(max_bin):
    x = np.random.default_rng(0).normal(size=(50_000, 1)).astype(np.float32)
    m = BinMapper(max_bin=max_bin).fit(x)
    assert m.n_bins[0] == max_bin
    counts = np.bincount(m.transform(x)[:, 0], minlength=max_bin)
    assert counts.min() > 0.5 * x.shape[0] / max_bin
    assert counts.max() < 1.5 * x.shape[0] / max_bin


def test_bins_agree_with_raw_threshold_rule():
    # "bin <= b" must be exactly "x < cuts[b]", the rule raw-value prediction uses.
    x = np.random.default_rng(1).exponential(size=(20_000, 1)).astype(np.float32)
    x[::7] = np.round(x[::7], 1)  # ties at cut values
    m = BinMapper(max_bin=32).fit(x)
    b = m.transform(x)[:, 0]
    for j, c in enumerate(m.cuts[0]):
        np.testing.assert_array_equal(b <= j, x[:, 0] < c)


def test_weights_move_the_quantiles():
    x = np.arange(1000, dtype=np.float32)
    w = np.where(x < 500, 9.0, 1.0)  # 90% of the weight below 500
    cuts = feature_cuts(x, w, max_bin=10)
    assert (cuts <= 500).sum() == 9 and cuts.size == 9
    # zero-weight rows do not count
    cuts0 = feature_cuts(x, np.where(x < 500, 0.0, 1.0), max_bin=10)
    assert cuts0.min() > 500 and cuts0.size == 9


def test_missing_values_cap_a_feature_at_255_value_bins():
    x = np.random.default_rng(2).normal(size=(10_000, 2)).astype(np.float32)
    x[0, 1] = np.nan
    m = BinMapper(max_bin=256).fit(x)
    assert list(m.n_bins) == [256, 255]
    assert m.transform(x)[0, 1] == 255
    with pytest.raises(ValueError, match="feature 0 has missing values"):
        m.transform(np.array([[np.nan, 0.0]], dtype=np.float32))


def test_sample_is_chosen_by_row_id_not_by_layout():
    n, size, seed = 10_000, 1_000, 7
    whole = sample_mask(np.arange(n), n, size, seed)
    pieces = np.concatenate([sample_mask(np.arange(a, b), n, size, seed)
                             for a, b in [(0, 1234), (1234, 1235), (1235, 8000), (8000, n)]])
    np.testing.assert_array_equal(whole, pieces)
    assert 800 < whole.sum() < 1200
    assert not np.array_equal(whole, sample_mask(np.arange(n), n, size, seed + 1))


def test_sampled_bins_do_not_depend_on_chunking():
    X = np.random.default_rng(3).normal(size=(30_000, 3)).astype(np.float32)
    full = BinMapper(max_bin=64, sample_size=5_000, seed=1).fit(X)
    # A shard fitted with its global offset selects the same sample rows; gathering the
    # shards' samples is what a distributed fit does.
    masks = [sample_mask(np.arange(a, b), 30_000, 5_000, 1) for a, b in [(0, 10_000), (10_000, 30_000)]]
    gathered = np.concatenate([X[:10_000][masks[0]], X[10_000:][masks[1]]])
    again = BinMapper(max_bin=64, sample_size=10**9).fit(gathered)
    for a, b in zip(full.cuts, again.cuts):
        np.testing.assert_array_equal(a, b)
