"""Bin edges: exact where values are few; else point masses alone and the rest of the
budget by weight; cuts at midpoints; independent of row order and layout."""
import numpy as np
import pytest

from gbm.bins.binning import BinMapper, feature_cuts, sample_mask


def test_few_distinct_values_get_exact_bins_cut_at_midpoints():
    X = np.array([[3.0], [1.0], [2.0], [1.0], [np.nan]], dtype=np.float32)
    m = BinMapper(max_bin=256).fit(X)
    np.testing.assert_array_equal(m.cuts[0], [1.5, 2.5])
    np.testing.assert_array_equal(m.transform(X)[:, 0], [2, 0, 1, 0, 3])  # NaN -> bin n_bins = 3
    # unseen values between two training values go to the nearer one
    unseen = np.array([[1.4], [1.6], [0.0], [9.0]], dtype=np.float32)
    np.testing.assert_array_equal(m.transform(unseen)[:, 0], [0, 1, 0, 2])


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


def _bins_of(cuts, x):
    return np.searchsorted(cuts, x, side="right")  # bin b holds cuts[b-1] <= x < cuts[b]


def test_point_mass_gets_its_own_bin_and_the_rest_follows_the_weight():
    # Hand-made: value 5 weighs 100 of 109 (> a bin's share 109 / 4), so it is alone. The
    # other 9 (weight 1 each) share 3 bins: one per side of 5, and the third goes to the
    # heavier side (0..4, weight 5 against 4), split at the weight's middle (2 | 3).
    x = np.arange(10, dtype=np.float32)
    w = np.where(x == 5, 100.0, 1.0)
    np.testing.assert_array_equal(feature_cuts(x, w, max_bin=4), [1.5, 4.5, 5.5])


def test_point_masses_are_found_to_a_fixed_point():
    # 0 weighs 50 of 100 (share 25): a point mass. Then 1 (20) reaches the share of the
    # rest, 50 / 3; the 30 values of weight 1 then share 2 bins (15 each) evenly.
    x = np.arange(32, dtype=np.float32)
    w = np.concatenate([[50.0, 20.0], np.ones(30)])
    cuts = feature_cuts(x, w, max_bin=4)
    np.testing.assert_array_equal(cuts, [0.5, 1.5, 16.5])


def test_more_point_masses_than_room_between_them():
    # Three point masses (30 each) leave one bin for four light runs: the heaviest run (4)
    # keeps it; the others join their lighter neighbouring point mass (the left one on a
    # tie, the only one at the ends).
    x = np.arange(7, dtype=np.float32)
    w = np.array([0.1, 30, 0.1, 30, 0.2, 30, 0.1])
    np.testing.assert_array_equal(feature_cuts(x, w, max_bin=4), [2.5, 3.5, 4.5])


def _rounded_measurements(n, seed):
    """Measurements recorded with one decimal: about 270 distinct values whose middle
    ones each hold more than 1/256 of the rows (the shape of issue 10)."""
    rng = np.random.default_rng(seed)
    return np.round(rng.normal(20.0, 3.0, n), 1).astype(np.float32)


def _point_masses_naive(mass, n_bins):
    """The definition, applied until nothing changes: a value is a point mass when it
    holds at least the weight of the other values per remaining bin."""
    heavy = np.zeros(mass.size, dtype=bool)
    while True:
        share = mass[~heavy].sum() / (n_bins - heavy.sum())
        new = ~heavy & (mass >= share)
        if not new.any():
            return heavy
        heavy |= new


@pytest.mark.parametrize("max_bin", [16, 64, 255, 256])
def test_point_mass_data_use_the_whole_budget_without_empty_bins(max_bin):
    x = np.concatenate([_rounded_measurements(50_000, 0), np.zeros(20_000, np.float32),
                        np.random.default_rng(1).exponential(50.0, 10_000).astype(np.float32)])
    w = np.ones(x.size)
    cuts = feature_cuts(x, w, max_bin)
    distinct, counts = np.unique(x, return_counts=True)
    assert distinct.size > 256
    assert cuts.size == max_bin - 1  # the old quantile edges gave 97 bins at 256
    per_bin = np.bincount(_bins_of(cuts, x), minlength=max_bin)
    assert per_bin.min() > 0
    # Point masses never share a bin, and hold most of theirs (a light run between two of
    # them may join one: at most about half a bin each side).
    heavy = _point_masses_naive(counts.astype(float), max_bin)
    heavy_bins = _bins_of(cuts, distinct[heavy])
    assert heavy.sum() > 0 and np.unique(heavy_bins).size == heavy.sum()
    assert np.all(counts[heavy] > 0.5 * per_bin[heavy_bins])
    # the other bins share the rest of the rows evenly
    light = np.delete(per_bin, heavy_bins)
    assert light.max() <= 2 * light.sum() / light.size


def test_continuous_values_get_bins_of_near_equal_weight():
    rng = np.random.default_rng(2)
    x = rng.lognormal(size=40_000).astype(np.float32)
    w = rng.uniform(0.5, 2.0, x.size)
    cuts = feature_cuts(x, w, 64)
    assert cuts.size == 63
    per_bin = np.bincount(_bins_of(cuts, x), weights=w, minlength=64)
    np.testing.assert_allclose(per_bin, w.sum() / 64, rtol=0.01)


def test_cuts_keep_every_training_value_on_its_side_in_float32():
    # Adjacent float32 values: the midpoint rounds onto the lower one, so the cut must be
    # the upper one; and "bin <= b" must equal "x < cuts[b]" for every training value.
    base = np.float32(1.0)
    x = np.array([base, np.nextafter(base, np.float32(2)), np.float32(3e38), np.float32(-3e38),
                  np.float32(1e-45), np.float32(0.0)], dtype=np.float32)
    cuts = feature_cuts(x, np.ones(x.size), 256)
    assert cuts.dtype == np.float32 and np.all(np.diff(cuts) > 0) and cuts.size == 5
    xs = np.sort(x)
    for j, c in enumerate(cuts):
        assert xs[j] < c <= xs[j + 1]
    x = _rounded_measurements(20_000, 3)
    x[::5] = np.float32(20.05)  # a point mass that is not a round value
    m = BinMapper(max_bin=32).fit(x[:, None])
    b = m.transform(x[:, None])[:, 0]
    assert m.n_bins[0] == 32
    for j, c in enumerate(m.cuts[0]):
        np.testing.assert_array_equal(b <= j, x < c)


def test_cuts_do_not_depend_on_row_order_or_signed_zeros():
    rng = np.random.default_rng(4)
    x = np.concatenate([_rounded_measurements(30_000, 4), np.full(5_000, -0.0, np.float32),
                        np.zeros(5_000, np.float32), rng.normal(size=5_000).astype(np.float32)])
    w = np.round(rng.uniform(0.1, 3.0, x.size), 3)  # float sums of a value depend on order
    cuts = feature_cuts(x, w, 128)
    assert cuts.size == 127
    for seed in range(3):
        order = np.random.default_rng(seed).permutation(x.size)
        again = feature_cuts(x[order], w[order], 128)
        np.testing.assert_array_equal(cuts.view(np.uint32), again.view(np.uint32))


def test_point_mass_edges_do_not_depend_on_chunking():
    # Weighted point-mass data above the sample size: shards fitted with their global row
    # offsets (BinMapper.fit(row_offset=, n_rows_total=)) choose the rows of the whole
    # fit's sample; their samples gathered in any order give the same edges.
    n, size, seed = 60_000, 15_000, 5
    rng = np.random.default_rng(seed)
    X = np.column_stack([_rounded_measurements(n, 5) + np.round(rng.normal(size=n), 2),
                         np.round(rng.lognormal(4, 1.2, n)), rng.normal(size=n)]).astype(np.float32)
    X[rng.random(n) < 0.1, 1] = np.nan
    w = np.round(rng.uniform(0.5, 2.0, n), 2)
    full = BinMapper(max_bin=256, sample_size=size, seed=seed).fit(X, w)
    assert list(full.n_bins) == [256, 255, 256]  # missing values keep feature 1 at 255
    bounds = [(0, 7_000), (7_000, 7_001), (7_001, 41_000), (41_000, n)]
    samples = []
    for a, b in reversed(bounds):
        keep = sample_mask(np.arange(a, b), n, size, seed)
        samples.append((X[a:b][keep], w[a:b][keep]))
        # the shard's own fit takes exactly its part of that sample
        shard = BinMapper(max_bin=256, sample_size=size, seed=seed).fit(
            X[a:b], w[a:b], row_offset=a, n_rows_total=n)
        alone = BinMapper(max_bin=256, sample_size=10**9).fit(X[a:b][keep], w[a:b][keep])
        for c1, c2 in zip(shard.cuts, alone.cuts):
            np.testing.assert_array_equal(c1, c2)
    Xs = np.concatenate([s[0] for s in samples])
    ws = np.concatenate([s[1] for s in samples])
    order = rng.permutation(Xs.shape[0])
    # the gathered sample must keep the whole data's "has missing values" per feature
    gathered = BinMapper(max_bin=256, sample_size=10**9).fit(Xs[order], ws[order])
    for f, (a, b) in enumerate(zip(full.cuts, gathered.cuts)):
        np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))
        col, ok = Xs[:, f], ~np.isnan(Xs[:, f])
        np.testing.assert_array_equal(a, feature_cuts(col[ok], ws[ok], full.n_bins[f]))


@pytest.mark.parametrize("seed", range(6))
def test_point_masses_agree_with_the_definition(seed):
    from gbm.bins.cuts import _point_masses
    rng = np.random.default_rng(seed)
    k, n_bins = int(rng.integers(100, 400)), int(rng.integers(3, 20))
    at_share = np.ones(2 + 20 * (n_bins - 2))  # two values of 20: exactly a bin's share
    at_share[rng.choice(at_share.size, 2, replace=False)] = 20.0
    shapes = [rng.pareto(1.0, k) + 1e-3,  # heavy tail
              rng.permutation(0.2 ** np.arange(k)),  # one more point mass per round
              np.where(np.isin(np.arange(k), rng.choice(k, 2, replace=False)), 3.0 * k, 1.0),
              at_share, np.ones(k)]
    found = [int(_point_masses(mass, n_bins).sum()) for mass in shapes]
    for mass in shapes:
        np.testing.assert_array_equal(_point_masses(mass, n_bins),
                                      _point_masses_naive(mass, n_bins))
    assert found[1:] == [n_bins - 1, 2, 2, 0], found  # the last three: tied at 3k, at the share


@pytest.mark.parametrize("seed", range(4))
def test_one_segment_takes_every_free_bin_as_the_queue_would(seed):
    """``_bin_starts`` gives a lone segment (no point mass, or point masses only at the
    ends) every free bin at once; the greedy queue it skips, written out here, hands
    them out one by one to the same count, so the starts are the same."""
    import heapq

    from gbm.bins.cuts import _bin_starts, _point_masses, _segment_starts

    rng = np.random.default_rng(seed)
    mass = rng.integers(1, 4, size=3000).astype(np.float64)
    if seed % 2:
        mass[0] = mass.sum()  # a point mass at the lower end: still one segment after it
    n_bins = 64
    heavy = _point_masses(mass, n_bins)
    lo = int(np.argmin(heavy))  # the segment: the values after the leading point masses
    assert not heavy[lo:].any()
    n_free = n_bins - int(heavy.sum())
    queue, given = [(-2.0 * mass[lo:].sum(), 0)], 0
    for _ in range(n_free):  # the queue's hand-out for one segment, spelled out
        _, s = heapq.heappop(queue)
        given += 1
        heapq.heappush(queue, (-mass[lo:].sum() / given, s))
    before = np.concatenate(([0.0], np.cumsum(mass)))
    expected = sorted(set(_segment_starts(before, lo, mass.size, given).tolist())
                      | ({lo} if lo else set()))
    np.testing.assert_array_equal(_bin_starts(mass, n_bins), expected)
    assert len(expected) == n_bins - 1


@pytest.mark.parametrize("seed", range(6))
def test_unweighted_cuts_from_run_starts_are_the_weighted_ones(seed):
    """Unweighted values take their weight below each distinct value from the run starts
    (no cumulative sum, ``_distinct_unweighted``): the same cuts, bit for bit, as the same
    values with equal weights (sorted, counted and summed the weighted way), over
    continuous values, ties, point masses and missing values."""
    from gbm.bins.cuts import _bin_starts, _distinct_unweighted

    rng = np.random.default_rng(seed)
    n = 5000
    col = rng.normal(size=n).astype(np.float32)
    if seed % 3 == 1:
        col = np.round(col, 2)  # ties: a few hundred distinct values
    if seed % 3 == 2:
        col[rng.random(n) < 0.3] = 0.0  # a point mass among continuous values
    col[rng.random(n) < 0.05] = np.nan
    ok = ~np.isnan(col)
    for max_bin in (2, 16, 255, 256):
        got = feature_cuts(col, None, max_bin)
        expected = feature_cuts(col[ok], np.full(int(ok.sum()), 0.5), max_bin)
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
    distinct, mass, before = _distinct_unweighted(col)
    np.testing.assert_array_equal(before, np.concatenate(([0.0], np.cumsum(mass))))
    assert before[-1] == ok.sum()
    np.testing.assert_array_equal(_bin_starts(mass, 64, before), _bin_starts(mass, 64))
