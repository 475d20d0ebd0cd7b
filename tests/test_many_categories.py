"""Categorical features with more than 256 categories (uint16 codes, category sets wider
than 256 bits) and numeric features with up to 1,024 bins."""
import json

import numpy as np
import pytest

import gbm
from gbm.bins.binning import BinMapper
from gbm.kernels import cpu, reference
from gbm.kernels.layout import CAT_WORDS, cat_words

pd = pytest.importorskip("pandas")

SCALES = np.array([2.0**20, 2.0**22])


def offsets_of(n_bins):
    return np.concatenate(([0], np.cumsum(np.asarray(n_bins) + 1))).astype(np.int32)


def zip_codes(n, n_levels, seed):
    """A 1,000-level column whose effect on y has no order in the codes (a zip code)."""
    rng = np.random.default_rng(seed)
    effect = rng.normal(size=n_levels)
    codes = rng.integers(0, n_levels, n)
    x = rng.normal(size=n)
    X = np.column_stack([codes, x]).astype(np.float32)
    y = effect[codes] + 0.3 * x + rng.normal(scale=0.3, size=n)
    return X, y


def category_sets(booster):
    """(feature, codes) of every categorical node of every tree."""
    out = []
    for tree in booster.trees:
        for node in np.flatnonzero(tree.split_type == 1):
            out.append((int(tree.split_feature[node]), tree.node_categories(node)))
    return out


@pytest.fixture(scope="module")
def zip_model():
    X, y = zip_codes(12000, 1000, seed=0)
    params = {"max_depth": 4, "learning_rate": 0.2, "n_jobs": 1}
    booster = gbm.train(params, X[:8000], y[:8000], 30, categorical_features=[0])
    return booster, X, y


def rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


def test_many_categories_beat_one_hot(zip_model):
    booster, X, y = zip_model
    assert len(booster.categories[0]) == 1000
    sets = category_sets(booster)
    assert sets and max(max(codes) for _, codes in sets) >= 256  # codes past a byte split
    categorical = rmse(booster.predict(X[8000:]), y[8000:])
    # the same column one-hot encoded: 1,000 numeric 0/1 features
    one_hot = np.zeros((X.shape[0], 1001), np.float32)
    one_hot[np.arange(X.shape[0]), X[:, 0].astype(int)] = 1
    one_hot[:, 1000] = X[:, 1]
    encoded = gbm.train({"max_depth": 4, "learning_rate": 0.2, "n_jobs": 1}, one_hot[:8000],
                        y[:8000], 30)
    baseline = rmse(encoded.predict(one_hot[8000:]), y[8000:])
    print(f"test RMSE: categorical {categorical:.4f}, one-hot {baseline:.4f}")
    assert categorical < 0.9 * baseline


def test_max_cat_threshold_is_respected_with_many_categories():
    X, y = zip_codes(6000, 1000, seed=1)
    for threshold in (5, 64):
        b = gbm.train({"max_depth": 3, "max_cat_threshold": threshold, "n_jobs": 1}, X, y, 5,
                      categorical_features=[0])
        sets = [codes for f, codes in category_sets(b) if f == 0]
        assert sets, "the 1,000-level feature is split on"
        assert max(len(codes) for codes in sets) <= threshold - 1
        if threshold == 5:
            assert max(len(codes) for codes in sets) == 4  # the limit binds


def test_save_load_round_trip_with_wide_sets(zip_model, tmp_path):
    booster, X, _ = zip_model
    path = tmp_path / "zip.json"
    booster.save_model(path)
    d = json.loads(path.read_text())
    widths = {len(row) for t in d["trees"] for row in t.get("cat_bits", [])}
    assert max(widths) > CAT_WORDS and max(widths) <= cat_words(1000)
    assert len(d["categories"][0]) == 1000 and len(d["cuts"][0]) == 999
    loaded = gbm.Booster.load_model(path)
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    assert loaded.to_json() == booster.to_json()
    for tree, back in zip(booster.trees, loaded.trees):
        for node in np.flatnonzero(tree.split_type == 1):
            assert back.node_categories(node) == tree.node_categories(node)


def test_unseen_categories_go_the_missing_way(zip_model):
    booster, X, _ = zip_model
    rows = X[:200].copy()
    unseen, missing = rows.copy(), rows.copy()
    unseen[:, 0] = 5000 + np.arange(200)  # integer codes never seen at fit
    missing[:, 0] = np.nan
    np.testing.assert_array_equal(booster.predict(unseen), booster.predict(missing))
    assert not np.array_equal(booster.predict(rows), booster.predict(missing))
    contribs = booster.predict(unseen, pred_contribs=True)  # TreeSHAP walks the wide sets
    np.testing.assert_allclose(contribs.sum(axis=1), booster.predict(unseen, output_margin=True),
                               rtol=1e-9, atol=1e-9)


def test_65536_categories_are_accepted():
    n = 65536 + 4000
    rng = np.random.default_rng(2)
    codes = np.concatenate([np.arange(65536), rng.integers(0, 65536, n - 65536)])
    y = (codes % 7 == 0) + 0.1 * rng.normal(size=n)  # no order in the codes
    X = codes[:, None].astype(np.float32)
    # max_cat_threshold above the category count: the scan may move any share of them
    b = gbm.train({"max_depth": 2, "learning_rate": 1.0, "max_cat_threshold": 70000,
                   "n_jobs": 1}, X, y, 2, categorical_features=[0])
    assert len(b.categories[0]) == 65536
    sets = [codes for f, codes in category_sets(b)]
    assert sets and max(max(c) for c in sets) >= 65000  # codes at the top end of uint16
    assert max(len(c) for c in sets) > 5000  # about one code in 7 moves right
    pred = b.predict(X)
    assert rmse(pred, y) < 0.5 * np.std(y)
    back = gbm.Booster.from_json(b.to_json())
    np.testing.assert_array_equal(back.predict(X), pred)


def test_65537_categories_are_refused_naming_the_feature():
    n = 65537
    X = pd.DataFrame({"x": np.zeros(n), "zip": pd.Categorical(np.arange(n))})
    with pytest.raises(ValueError, match=r"'zip' \(position 1\) has 65537 categories; .* at "
                                         "most 65536"):
        gbm.train({}, X, np.zeros(n), 1)


def test_65536_categories_with_missing_values_are_refused():
    X = np.arange(65537, dtype=np.float32)[:, None]
    X[-1] = np.nan  # 65,536 categories and a missing value: no uint16 symbol left
    with pytest.raises(ValueError, match="column 0 has 65536 categories and missing values"):
        gbm.train({}, X, np.zeros(X.shape[0]), 1, categorical_features=[0])


def test_max_bin_1024_numeric():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6000, 2)).astype(np.float32)
    X[rng.random(6000) < 0.1, 1] = np.nan  # a feature with missing values gets them too
    y = np.sin(3 * X[:, 0]) + np.nan_to_num(X[:, 1])
    b = gbm.train({"max_bin": 1024, "max_depth": 4, "n_jobs": 1}, X, y, 10)
    assert [c.size for c in b.cuts] == [1023, 1023]
    mapper = BinMapper(max_bin=1024).fit(X)
    assert mapper.bin_dtype == np.uint16 and mapper.transform(X)[:, 1].max() == 1024
    assert max(int(t.split_bin.max()) for t in b.trees) > 255  # splits past a byte's bins
    back = gbm.Booster.from_json(b.to_json())
    np.testing.assert_array_equal(back.predict(X), b.predict(X))
    small = gbm.train({"max_bin": 256, "max_depth": 4, "n_jobs": 1}, X, y, 10)
    assert rmse(b.predict(X), y) <= rmse(small.predict(X), y)


def test_max_bin_1025_is_refused():
    with pytest.raises(ValueError, match="max_bin must be <= 1024, got 1025"):
        gbm.train({"max_bin": 1025}, np.zeros((4, 1), np.float32), np.zeros(4), 1)


def test_max_bin_257_with_256_distinct_values_and_missing_goes_wide():
    # 256 value bins and a missing bin (256) only fit uint16
    X = np.concatenate([np.arange(256.0), [np.nan]]).astype(np.float32)[:, None]
    mapper = BinMapper(max_bin=300).fit(X)
    assert mapper.n_bins[0] == 256 and mapper.bin_dtype == np.uint16
    assert mapper.transform(X)[-1, 0] == 256


def test_256_categories_with_missing_values_go_wide():
    # codes 0..255 fill a byte: the missing bin, 256, needs uint16
    rng = np.random.default_rng(4)
    X = (np.arange(3000) % 256).astype(np.float32)[:, None]
    X[::7] = np.nan
    y = np.where(np.isnan(X[:, 0]), 3.0, X[:, 0] % 2) + 0.01 * rng.normal(size=3000)
    mapper = BinMapper().fit(X, n_categories=np.array([256]))
    assert mapper.n_bins[0] == 256 and mapper.bin_dtype == np.uint16
    assert mapper.transform(X, fitted_on_X=True)[0, 0] == 256
    b = gbm.train({"max_depth": 3, "n_jobs": 1}, X, y, 20, categorical_features=[0])
    pred = b.predict(X)  # missing rows (y = 3) are told apart from codes 0 and 255 (y = 0, 1)
    missing, code = np.isnan(X[:, 0]), X[:, 0]
    assert pred[missing].min() > 2.5 and pred[code == 0].max() < 0.5
    assert pred[code == 255].min() > 0.5 and pred[code == 255].max() < 1.5


# -- kernels against their NumPy twins on uint16 bins and wide category sets -------------

def wide_data(rng, n_rows, n_bins, n_nodes):
    """uint16 bins (codes), 10% missing; gradient pairs with signal in code % 5; rows
    grouped into ``n_nodes`` segments."""
    bins = np.empty((n_rows, n_bins.size), dtype=np.uint16)
    for f, nb in enumerate(n_bins):
        bins[:, f] = rng.choice(nb, n_rows, p=rng.dirichlet(np.full(nb, 0.5)))
        bins[rng.random(n_rows) < 0.1, f] = nb
    gpair = np.column_stack([rng.normal(0, 1, n_rows) * 2**20,
                             rng.uniform(0, 1, n_rows) * 2**22]).astype(np.int64)
    gpair[:, 0] += (bins[:, 0].astype(np.int64) * 7 % 5) * 2**18
    node = rng.integers(0, n_nodes, n_rows)
    rows = np.argsort(node, kind="stable").astype(np.int32)
    ends = np.cumsum(np.bincount(node, minlength=n_nodes)).astype(np.int64)
    starts = np.concatenate(([0], ends[:-1])).astype(np.int64)
    return bins, gpair, rows, starts, ends


@pytest.mark.parametrize("onehot, threshold", [(4, 64), (4, 3), (2000, 64)])
def test_evaluate_splits_on_wide_categories_matches_reference(onehot, threshold):
    rng = np.random.default_rng(threshold)
    n_bins = np.array([1000, 700, 40, 300], dtype=np.int32)  # feature 1 is numeric
    is_cat = np.array([1, 0, 1, 1], np.uint8)
    bins, gpair, rows, starts, ends = wide_data(rng, 20000, n_bins, 3)
    offsets = offsets_of(n_bins)
    hist, slow = (np.empty((3, int(offsets[-1]), 2), np.int64) for _ in range(2))
    cpu.build_histograms(bins, gpair, rows, starts, ends, offsets, hist, 2)
    reference.build_histograms(bins, gpair, rows, starts, ends, offsets, slow)
    np.testing.assert_array_equal(hist, slow)
    sums = hist[:, offsets[0]:offsets[1]].sum(axis=1)
    words = cat_words(1000)
    results = []
    for module in (cpu, reference):
        out = (np.empty(3), np.empty(3, np.int32), np.empty(3, np.int32), np.empty(3, np.uint8),
               np.empty((3, 2), np.int64), np.empty((3, words), np.uint32))
        module.evaluate_splits(hist, offsets, 1, is_cat, sums, np.ones((3, 4), np.uint8),
                               np.zeros(4, np.int8), np.tile([-np.inf, np.inf], (3, 1)),
                               np.tile(SCALES, (3, 1)), np.array([1.0, 0.0, 0.0, 1.0]), onehot,
                               threshold, *out)
        results.append(out)
    for a, c in zip(*results):
        np.testing.assert_array_equal(a, c)
    gain, feature, _, _, _, bits = results[0]
    assert (feature == 0).any()  # the 1,000-code feature holds the signal
    for k in range(3):
        codes = np.flatnonzero(np.unpackbits(bits[k].view(np.uint8), bitorder="little"))
        if is_cat[feature[k]]:
            assert 0 < codes.size and codes.max() < n_bins[feature[k]]
            assert codes.size == 1 if n_bins[feature[k]] < onehot else codes.size < threshold
        else:
            assert codes.size == 0


def test_partition_and_predict_with_wide_sets_match_reference():
    rng = np.random.default_rng(5)
    n_rows, n_nodes = 5000, 4
    n_bins = np.array([1000, 300], dtype=np.int32)
    bins = np.column_stack([rng.integers(0, nb + 1, n_rows) for nb in n_bins]).astype(np.uint16)
    rows = rng.permutation(n_rows).astype(np.int32)
    starts = np.array([0, 1000, 1000, 3000], np.int64)
    ends = np.array([1000, 1000, 3000, 5000], np.int64)
    feature = np.array([0, 1, 0, 1], np.int32)
    split_bin = np.array([0, 100, 0, 280], np.int32)
    split_type = np.array([1, 0, 1, 0], np.uint8)
    words = cat_words(1000)
    bits = np.zeros((n_nodes, words), np.uint32)
    bits[split_type == 1] = rng.integers(0, 2**32, (2, words), dtype=np.uint64)
    bits[:, words - 1] &= np.uint32((1 << (1000 - 32 * (words - 1))) - 1)  # codes < 1000
    default_left = np.array([1, 0, 0, 1], np.uint8)
    by_feature = np.ascontiguousarray(bins.T)
    out = []
    for module in (cpu, reference):
        r, n_left = rows.copy(), np.empty(n_nodes, np.int64)
        module.partition_rows(by_feature, r, starts, ends, feature, split_bin, default_left,
                              split_type, bits, n_bins, np.empty_like(rows), n_left)
        out.append((r, n_left))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    for k in (0, 2):  # the rule at the categorical nodes: a code in the set goes right
        for p, r in enumerate(out[0][0][starts[k]:ends[k]]):
            b = int(bins[r, 0])
            left = default_left[k] == 1 if b == 1000 else not (int(bits[k, b >> 5]) >> (b & 31)) & 1
            assert left == (p < out[0][1][k])


def test_predict_kernels_on_a_wide_model_match_reference(zip_model):
    booster, X, _ = zip_model
    forest = booster.forest()
    assert forest.cat_bits.shape[1] > CAT_WORDS
    Xf = booster._check_predict_X(X[:400])
    mapper = BinMapper.from_cuts(booster.cuts)
    bins = mapper.transform(Xf)
    assert bins.dtype == np.uint16
    outs = []
    for module in (cpu, reference):
        margin = np.zeros((400, 1))
        module.predict(Xf, forest.walk, forest.cat_bits, forest.value, forest.tree_offsets,
                       forest.tree_group, forest.tree_depth, margin)
        binned = np.zeros((400, 1))
        module.predict_binned(bins, np.arange(400), mapper.n_bins, forest.walk_binned,
                              forest.cat_bits, forest.value, forest.tree_offsets,
                              forest.tree_group, forest.tree_depth, binned)
        outs.append((margin, binned))
    for a, c in zip(*outs):
        np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(outs[0][0], outs[0][1])
