"""Categorical splits of vector-leaf trees (``multi_strategy="multi_output_tree"``,
``kernels/cpu/vector_categorical.py``): the kernel against its NumPy twin, hand cases with
a known best split (one-hot and partition), one output against gbm's single-output
categorical split, and the model's life cycle (threads, files, XGBoost's JSON, SHAP,
ranks, lossguide)."""
import numpy as np
import pytest

import gbm
from gbm.collective import ThreadGroup
from gbm.kernels import cpu as cpu_all
from gbm.kernels import reference as ref_all
from gbm.kernels.cpu import vector_categorical as cpu
from gbm.kernels.cpu import vector_leaf as cpu_vector
from gbm.kernels.layout import CAT_WORDS
from gbm.kernels.reference import vector_categorical as ref
from gbm.kernels.reference import vector_leaf as ref_vector

VL = {"multi_strategy": "multi_output_tree"}
INF = np.array([-np.inf, np.inf])


def _offsets(n_bins):
    return np.concatenate(([0], np.cumsum(np.asarray(n_bins) + 1))).astype(np.int32)


def _histograms(rng, n_bins, k, n_nodes=3, missing=True, n_rows=1500):
    """Vector histograms int64 (n_nodes, n_slots, k, 2) of random rows (uneven category
    sizes, some absent from some nodes; the last slot of a feature: missing values) and
    the nodes' sums int64 (n_nodes, k, 2)."""
    bins = np.empty((n_bins.size, n_rows), np.uint8)
    for f, nb in enumerate(n_bins):
        bins[f] = rng.choice(nb, n_rows, p=rng.dirichlet(np.full(nb, 0.5)))
        if missing:
            bins[f, rng.random(n_rows) < 0.1] = nb
    gpair = np.empty((n_rows, k, 2), np.int64)
    signal = (bins[0] % 3 == 0)[:, None] * 400  # a categorical signal in feature 0
    gpair[:, :, 0] = rng.integers(-1000, 1000, (n_rows, k)) + signal * np.arange(1, k + 1)
    gpair[:, :, 1] = rng.integers(1, 500, (n_rows, k))
    rows = rng.permutation(n_rows).astype(np.int32)
    cuts = np.sort(rng.choice(np.arange(1, n_rows), n_nodes - 1, replace=False))
    starts = np.concatenate(([0], cuts)).astype(np.int64)
    ends = np.concatenate((cuts, [n_rows])).astype(np.int64)
    offsets = _offsets(n_bins)
    hist = np.empty((n_nodes, int(offsets[-1]), k, 2), np.int64)
    ref_vector.build_vector_histograms(bins, gpair, rows, starts, ends, offsets, hist)
    return hist, hist[:, offsets[0]:offsets[1]].sum(axis=1), offsets


def _evaluate(module, hist, offsets, sums, mask, bounds, monotone, is_cat, scales, params,
              onehot, threshold, n_words=CAT_WORDS):
    n, k = hist.shape[0], hist.shape[2]
    out = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8),
           np.empty((n, k, 2), np.int64), np.full((n, n_words), 7, np.uint32))
    module.evaluate_vector_splits_categorical(
        hist, offsets, sums, mask, bounds, monotone, np.asarray(is_cat, np.uint8), scales,
        np.asarray(params, np.float64), onehot, threshold, *out)
    return out


def _codes(bits):
    return np.flatnonzero(np.unpackbits(np.ascontiguousarray(bits, "<u4").view(np.uint8),
                                        bitorder="little")).tolist()


@pytest.mark.parametrize("params", [(1.0, 0.0, 0.0, 1.0), (0.5, 2.0, 0.7, 0.0),
                                    (1.0, 0.0, 0.0, 300.0)])
@pytest.mark.parametrize("onehot, threshold", [(4, 64), (64, 64), (1, 5), (300, 1)])
@pytest.mark.parametrize("seed", range(3))
def test_kernel_matches_reference(params, onehot, threshold, seed):
    rng = np.random.default_rng(seed)
    k = 1 + seed
    n_bins = np.array([7, 1, 40, 9, 3, 200], np.int32)
    is_cat = np.array([1, 1, 1, 0, 1, 1], np.uint8)  # feature 3 numeric
    hist, sums, offsets = _histograms(rng, n_bins, k, missing=seed != 1)
    n = hist.shape[0]
    mask = (rng.random((n, n_bins.size)) < 0.85).astype(np.uint8)
    scales = np.ldexp(1.0, rng.integers(4, 8, (k, 2))).astype(np.float64)
    no_bounds = np.tile(INF, (n, k, 1))
    bounds = no_bounds.copy()
    bounds[1, :, 0], bounds[2, :, 1] = -0.3, 0.2  # finite bounds in some nodes
    for b, m in ((no_bounds, np.zeros(6, np.int8)), (bounds, np.array([0, 0, 0, 1, 0, 0],
                                                                       np.int8))):
        fast = _evaluate(cpu, hist, offsets, sums, mask, b, m, is_cat, scales, params, onehot,
                         threshold)
        slow = _evaluate(ref, hist, offsets, sums, mask, b, m, is_cat, scales, params, onehot,
                         threshold)
        for a, c in zip(fast, slow):
            np.testing.assert_array_equal(a, c)
    gain, feature, split_bin, _, left_sums, bits = fast
    assert (feature >= 0).any()
    for node in np.flatnonzero(feature >= 0):
        codes = _codes(bits[node])
        if not is_cat[feature[node]]:
            assert not codes
            continue
        nb = n_bins[feature[node]]
        assert split_bin[node] == 0 and codes and max(codes) < nb
        if nb < onehot:
            assert len(codes) == 1
        else:  # one group holds at most max_cat_threshold - 1 categories
            assert min(len(codes), nb - len(codes)) < threshold


@pytest.mark.parametrize("seed", range(4))
def test_without_categorical_features_is_the_plain_split_search(seed):
    rng = np.random.default_rng(50 + seed)
    k = 1 + seed % 3
    n_bins = np.array([5, 1, 12, 3], np.int32)
    hist, sums, offsets = _histograms(rng, n_bins, k, missing=seed % 2 == 0)
    n = hist.shape[0]
    mask = np.ones((n, 4), np.uint8)
    scales = np.ones((k, 2))
    params = np.array([1.0, 0.0, 0.0, 1.0])
    out = _evaluate(cpu, hist, offsets, sums, mask, np.tile(INF, (n, k, 1)),
                    np.zeros(4, np.int8), np.zeros(4), scales, params, 4, 64)
    plain = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8),
             np.empty((n, k, 2), np.int64))
    cpu_vector.evaluate_vector_splits(hist, offsets, sums, mask, scales, params, *plain)
    for a, c in zip(out[:5], plain):
        np.testing.assert_array_equal(a, c)
    assert not out[5].any()


def _hand_hist(rows_by_code, k=2):
    """One node, one categorical feature: category c's (G, H) in every output is
    ``rows_by_code[c]``; no missing rows."""
    n = len(rows_by_code)
    hist = np.zeros((1, n + 1, k, 2), np.int64)
    for c, (g, h) in enumerate(rows_by_code):
        hist[0, c, :, 0], hist[0, c, :, 1] = g, h
    return hist, hist[:, :n + 1].sum(axis=1), _offsets([n])


def _hand_gain(groups, lam=1.0, k=2):
    """Closed form: sum over outputs of sum_groups G^2/(H+lam) - G^2/(H+lam) of the node."""
    total_g, total_h = sum(g for g, _ in groups), sum(h for _, h in groups)
    return k * (sum(g * g / (h + lam) for g, h in groups) - total_g ** 2 / (total_h + lam))


# codes 0 and 2: negative gradients (positive weights), 1 and 3: positive
HAND = [(-10, 5), (10, 5), (-8, 5), (9, 5)]


@pytest.mark.parametrize("module", [cpu, ref], ids=["cpu", "reference"])
def test_partition_hand_case(module):
    # node weight -1/21 in both outputs: the scores order the codes 0, 2, 3, 1, and the
    # best partition is {0, 2} against {1, 3}, met first as the 2 lowest going right
    hist, sums, offsets = _hand_hist(HAND)
    gain, feature, split_bin, left, left_sums, bits = _evaluate(
        module, hist, offsets, sums, np.ones((1, 1), np.uint8), np.tile(INF, (1, 2, 1)),
        np.zeros(1, np.int8), [1], np.ones((2, 2)), [1.0, 0.0, 0.0, 0.0], 4, 64)
    assert feature[0] == 0 and split_bin[0] == 0 and left[0] == 1
    assert _codes(bits[0]) == [0, 2]
    np.testing.assert_array_equal(left_sums[0], [[19, 10], [19, 10]])
    np.testing.assert_allclose(gain[0], _hand_gain([(19, 10), (-18, 10)]), rtol=1e-13)
    # max_cat_threshold 2: one category moved at most; {0} alone going right (missing
    # rows left) beats {1} alone going left
    out = _evaluate(module, hist, offsets, sums, np.ones((1, 1), np.uint8),
                    np.tile(INF, (1, 2, 1)), np.zeros(1, np.int8), [1], np.ones((2, 2)),
                    [1.0, 0.0, 0.0, 0.0], 4, 2)
    assert _codes(out[5][0]) == [0] and out[3][0] == 1
    np.testing.assert_allclose(out[0][0], _hand_gain([(11, 15), (-10, 5)]), rtol=1e-13)


@pytest.mark.parametrize("module", [cpu, ref], ids=["cpu", "reference"])
def test_one_hot_hand_case_and_missing_rows(module):
    hist, sums, offsets = _hand_hist(HAND)
    args = (np.ones((1, 1), np.uint8), np.tile(INF, (1, 2, 1)), np.zeros(1, np.int8), [1],
            np.ones((2, 2)), [1.0, 0.0, 0.0, 0.0], 5, 64)
    gain, _, _, left, left_sums, bits = _evaluate(module, hist, offsets, sums, *args)
    # each category alone: {0} gives 100/6 + 121/16 - 1/21 per output, the best
    assert _codes(bits[0]) == [0] and left[0] == 1
    np.testing.assert_allclose(gain[0], _hand_gain([(-10, 5), (11, 15)]), rtol=1e-13)
    # missing rows with a strongly negative gradient: they join category 0 on the right
    hist[0, 4, :, 0], hist[0, 4, :, 1] = -30, 4
    sums = hist.sum(axis=1)
    gain, _, _, left, left_sums, bits = _evaluate(module, hist, offsets, sums, *args)
    assert _codes(bits[0]) == [0] and left[0] == 0
    np.testing.assert_array_equal(left_sums[0], [[11, 15], [11, 15]])
    np.testing.assert_allclose(gain[0], _hand_gain([(-40, 9), (11, 15)]), rtol=1e-13)


def _single_output(hist, offsets, sums, is_cat, params, onehot, threshold):
    """gbm's single-output ``evaluate_splits`` on a one-output vector histogram."""
    n = hist.shape[0]
    out = (np.empty(n), np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.uint8),
           np.empty((n, 2), np.int64), np.empty((n, CAT_WORDS), np.uint32))
    cpu_all.evaluate_splits(np.ascontiguousarray(hist[:, :, 0]), offsets, 1,
                            np.asarray(is_cat, np.uint8), np.ascontiguousarray(sums[:, 0]),
                            np.ones((n, len(is_cat)), np.uint8), np.zeros(len(is_cat), np.int8),
                            np.tile(INF, (n, 1)), np.ones((n, 2)), np.asarray(params, float),
                            onehot, threshold, *out)
    return out


def _sides(codes, n, missing_left):
    """The split as an unordered pair of row groups (categories, and "m" for missing)."""
    right = set(codes) | (set() if missing_left else {"m"})
    left = (set(range(n)) - set(codes)) | ({"m"} if missing_left else set())
    return frozenset([frozenset(left), frozenset(right)])


@pytest.mark.parametrize("onehot, threshold", [(4, 64), (64, 64), (1, 3)])
@pytest.mark.parametrize("seed", range(3))
def test_one_output_finds_the_single_output_split(onehot, threshold, seed):
    # with one output the score orders the categories by weight (or the reverse when the
    # node's weight is negative): the same candidate partitions as gbm's single-output
    # search, possibly mirrored; the same best gain and the same groups of rows
    rng = np.random.default_rng(70 + seed)
    n_bins = np.array([6, 30, 2], np.int32)
    hist, sums, offsets = _histograms(rng, n_bins, 1, n_nodes=4)
    params = [1.0, 0.0, 0.0, 0.0]
    ours = _evaluate(cpu, hist, offsets, sums, np.ones((4, 3), np.uint8),
                     np.tile(INF, (4, 1, 1)), np.zeros(3, np.int8), [1, 1, 1], np.ones((1, 2)),
                     params, onehot, threshold)
    theirs = _single_output(hist, offsets, sums, [1, 1, 1], params, onehot, threshold)
    for node in range(4):
        assert theirs[0][node] > 0 and sums[node, 0, 0] != 0
        np.testing.assert_allclose(ours[0][node], theirs[0][node], rtol=1e-12)
        assert ours[1][node] == theirs[1][node]
        n = n_bins[ours[1][node]]
        assert _sides(_codes(ours[5][node]), n, ours[3][node]) == \
            _sides(_codes(theirs[5][node]), n, theirs[3][node])


# -- models ----------------------------------------------------------------------------------
def _frame(n=700, seed=0, missing=True):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 5, n), rng.integers(0, 40, n)
    c = rng.normal(size=n)
    X = pd.DataFrame({"a": pd.Categorical(a), "b": pd.Categorical(b, categories=range(40)),
                      "c": c})
    if missing:
        X.loc[rng.random(n) < 0.05, "b"] = np.nan
    Y = np.stack([a * 0.5 + (b % 4 == 1) + 0.1 * rng.normal(size=n),
                  (b % 3 == 0) * 1.0 - 0.5 * c, c + (a == 2)], 1)
    return X, Y


CASES = {
    "partition": dict(VL, max_depth=4, max_cat_to_onehot=4),
    "onehot": dict(VL, max_depth=3, max_cat_to_onehot=64),
    "lossguide": dict(VL, grow_policy="lossguide", max_leaves=9, max_cat_threshold=8),
    "softprob": dict(VL, max_depth=3, objective="multi:softprob", num_class=3),
    "sampled": dict(VL, max_depth=4, subsample=0.8, colsample_bynode=0.7, reg_alpha=0.3),
}


def _fit(name, n_jobs=1, X=None, Y=None, rounds=4, **extra):
    if X is None:
        X, Y = _frame()
    y = np.argmax(Y, axis=1).astype(np.float64) if name == "softprob" else Y
    return gbm.train(dict(CASES[name], n_jobs=n_jobs, **extra), X, y, rounds)


@pytest.mark.parametrize("name", sorted(CASES))
def test_model_splits_on_categories_same_on_threads_and_files(name, tmp_path):
    X, Y = _frame()
    one, two = _fit(name, 1), _fit(name, 2)
    assert one.to_json() == two.to_json()
    assert any(t.has_categorical for t in one.trees)
    one.save_model(tmp_path / "m.json")
    loaded = gbm.Booster.load_model(tmp_path / "m.json")
    assert loaded.to_json() == one.to_json()
    np.testing.assert_array_equal(loaded.predict(X), one.predict(X))
    # contributions (per output) sum to the margins
    margins = one.predict(X, output_margin=True)
    contrib = one.predict(X, pred_contribs=True)
    np.testing.assert_allclose(contrib.sum(axis=-1), margins, atol=1e-5)


def test_the_sets_send_the_rows_as_prediction_walks_them():
    # the grower's partition and the prediction walk agree: the training margins of a
    # one-round model (the leaf each row was grown in) are its predictions
    X, Y = _frame(missing=True)
    booster = gbm.train(dict(CASES["partition"], base_score=0.0), X, Y, 1)
    tree = booster.trees[0]
    assert tree.has_categorical
    node = int(np.flatnonzero(tree.split_type)[0])  # the dump shows the set, XGBoost's way
    name = "ab"[tree.split_feature[node]]
    shown = "{" + ",".join(str(c) for c in tree.node_categories(node)) + "}"
    assert f"{node}:[{name}:{shown}]" in booster.get_dump()[0]
    leaves = booster.predict(X, pred_leaf=True)[:, 0]
    codes = {"a": X["a"].cat.codes.to_numpy(), "b": X["b"].cat.codes.to_numpy(),
             "c": X["c"].to_numpy()}
    for i in range(0, len(X), 7):  # walk by hand: the set goes right, missing by default
        node = 0
        while tree.left_child[node] >= 0:
            f = ["a", "b", "c"][tree.split_feature[node]]
            v = codes[f][i]
            if tree.split_type[node]:
                missing = v < 0
                right = (not missing) and v in tree.node_categories(node)
            else:
                missing = np.isnan(v)
                right = (not missing) and not v < tree.threshold[node]
            go_left = tree.default_left[node] if missing else not right
            node = tree.left_child[node] + (0 if go_left else 1)
        assert leaves[i] == node


def test_xgboost_json_export_round_trips_and_loads_in_xgboost(tmp_path):
    X, Y = _frame()
    ours = _fit("partition")
    ours.save_model(tmp_path / "m.json", format="xgboost")
    back = gbm.Booster.from_xgboost(str(tmp_path / "m.json"))
    assert back.vector_leaf and any(t.has_categorical for t in back.trees)
    np.testing.assert_allclose(back.predict(X), ours.predict(X), atol=1e-6)
    xgb = pytest.importorskip("xgboost")
    theirs = xgb.Booster(model_file=str(tmp_path / "m.json"))
    np.testing.assert_allclose(theirs.predict(xgb.DMatrix(X, enable_categorical=True)),
                               ours.predict(X), atol=1e-6)


@pytest.mark.parametrize("name", ["partition", "lossguide"])
@pytest.mark.parametrize("cuts", [(0, 300, 700), (0, 250, 250, 700)], ids=["2ranks", "3ranks"])
def test_ranks_grow_the_local_model(name, cuts):
    X, Y = _frame()
    Xn = X.copy()
    Xn["a"], Xn["b"] = X["a"].cat.codes.astype(float), X["b"].cat.codes.astype(float)
    Xn = Xn.to_numpy()
    Xn[Xn == -1] = np.nan
    local = gbm.train(dict(CASES[name]), Xn, Y, 3, categorical_features=[0, 1])
    assert any(t.has_categorical for t in local.trees)

    def rank_fn(c):
        lo, hi = cuts[c.rank], cuts[c.rank + 1]  # rank 1 of 3 holds no rows
        return gbm.train(dict(CASES[name]), Xn[lo:hi], Y[lo:hi], 3, collective=c,
                         row_ids=np.arange(lo, hi), categorical_features=[0, 1])

    for booster in ThreadGroup(len(cuts) - 1).run(rank_fn):
        assert booster.to_json() == local.to_json()


def test_one_hot_splits_match_xgboost_on_dummy_columns():
    # without missing values a one-hot split ({c} right) is the split of c's 0/1 dummy
    # column, so the model is XGBoost 3.2's multi_output_tree on the dummies (3.2 refuses
    # categorical features with multi_output_tree; 3.4's rules are what the kernel follows)
    xgb = pytest.importorskip("xgboost")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    n = 1500
    a, b, c = rng.integers(0, 6, n), rng.integers(0, 16, n), rng.integers(0, 16, n)
    Y = np.stack([np.isin(a, (1, 4)) + b * 0.1 + rng.normal(size=n) * 0.3,
                  (a == 2) - 0.05 * c + rng.normal(size=n) * 0.2,
                  np.sin(b / 3) + (a == 5) + rng.normal(size=n) * 0.1], 1)
    X = pd.DataFrame({"a": pd.Categorical(a, categories=range(6)),
                      "b": b.astype(np.float32), "c": c.astype(np.float32)})
    dummies = pd.DataFrame({**{f"a{j}": (a == j).astype(np.float32) for j in range(6)},
                            "b": b.astype(np.float32), "c": c.astype(np.float32)})
    for extra in ({}, {"max_depth": 5, "reg_lambda": 2.0, "min_child_weight": 3.0},
                  {"objective": "multi:softprob", "num_class": 3}):
        p = dict(dict(VL, max_depth=3, learning_rate=0.3, max_cat_to_onehot=64), **extra)
        y = np.argmax(Y, axis=1) if "num_class" in extra else Y
        ours = gbm.train(p, X, y, 8)
        theirs = xgb.train(dict(p, tree_method="hist"), xgb.DMatrix(dummies, y), 8)
        assert sum(int(t.split_type.sum()) for t in ours.trees) >= 20
        np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(dummies)),
                                   atol=2e-5)


@pytest.mark.parametrize("policy", ["depthwise", "lossguide"])
def test_one_output_model_is_the_single_output_model(policy):
    # k = 1, partitions (30 and 12 categories, missing values): the order by w_node * w_c
    # gives the single-output search's partitions, so the same predictions (squared
    # error: every row's hessian 1, so min_child_weight's per-output rule changes nothing)
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    n = 2000
    a, b, c = rng.integers(0, 30, n), rng.integers(0, 12, n), rng.normal(size=n)
    y = (a % 7) * 0.3 + np.isin(b, (2, 5, 9)) + c * 0.5 + rng.normal(size=n) * 0.2
    X = pd.DataFrame({"a": pd.Categorical(a), "b": pd.Categorical(b), "c": c})
    X.loc[rng.random(n) < 0.05, "a"] = np.nan
    p = dict(max_depth=4, max_cat_to_onehot=4, grow_policy=policy,
             max_leaves=12 if policy == "lossguide" else 0)
    single = gbm.train(p, X, y, 10)
    vector = gbm.train(dict(p, **VL), X, y[:, None], 10)
    assert sum(int(t.split_type.sum()) for t in vector.trees) >= 40
    np.testing.assert_allclose(vector.predict(X, output_margin=True).ravel(),
                               single.predict(X, output_margin=True), rtol=0, atol=1e-9)


def test_monotone_constraints_on_numeric_features_with_categorical_ones():
    X, Y = _frame()
    booster = gbm.train(dict(VL, max_depth=4, monotone_constraints=(0, 0, 1)), X, Y, 4)
    assert any(t.has_categorical for t in booster.trees)
    grid = X.iloc[:50].copy()
    low, high = grid.copy(), grid.copy()
    low["c"], high["c"] = -1.0, 1.0
    assert (booster.predict(high) >= booster.predict(low) - 1e-12).all()


def test_reference_kernels_module_exports_the_twin():
    assert ref_all.evaluate_vector_splits_categorical is ref.evaluate_vector_splits_categorical
    assert cpu_all.evaluate_vector_splits_categorical is cpu.evaluate_vector_splits_categorical
