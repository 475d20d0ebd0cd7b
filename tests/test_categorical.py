"""Categorical features: parity with xgboost, encoding, model files (the kernels:
test_kernels_categorical.py)."""
import json

import numpy as np
import pytest

import gbm

pd = pytest.importorskip("pandas")


def make_data(n=4000, n_cats=40, seed=0, missing=0.05, binary=False, labels=None):
    """A categorical feature with random effects, a numeric feature, a noise category."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_cats, n)
    effect = rng.normal(0, 1, n_cats)
    x = np.round(rng.normal(size=n), 1)  # < 256 distinct values: the same exact bins in xgboost
    noise = rng.integers(0, 5, n)
    margin = effect[codes] + 0.7 * x + 0.2 * noise
    y = (rng.random(n) < 1 / (1 + np.exp(-margin))).astype(float) if binary \
        else margin + 0.3 * rng.normal(size=n)
    c = codes.astype(float)
    c[rng.random(n) < missing] = np.nan
    names = labels if labels is not None else [f"k{i}" for i in range(n_cats)]
    cat = pd.Categorical.from_codes(np.where(np.isnan(c), -1, c).astype(int), names)
    X = pd.DataFrame({"c": cat, "x": x, "noise": pd.Categorical(noise)})
    return X, y


# -- parity with xgboost ----------------------------------------------------------------------
xgb = pytest.importorskip("xgboost")


def _metric(y, p, binary):
    if binary:
        p = np.clip(p, 1e-7, 1 - 1e-7)
        return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    return np.sqrt(np.mean((p - y) ** 2))


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("n_cats", [3, 40])  # 3 < max_cat_to_onehot: one-hot; 40: partitions
def test_parity_with_xgboost(binary, n_cats):
    X, y = make_data(5000, n_cats=n_cats, seed=n_cats, binary=binary)
    train, test = slice(0, 4000), slice(4000, None)
    params = {"max_depth": 4, "learning_rate": 0.2, "base_score": 0.5,
              "objective": "binary:logistic" if binary else "reg:squarederror"}
    ours = gbm.train(params, X[train], y[train], 40).predict(X[test])
    theirs = xgb.train(dict(params, tree_method="hist"),
                       xgb.DMatrix(X[train], y[train], enable_categorical=True), 40)
    theirs = theirs.predict(xgb.DMatrix(X[test], enable_categorical=True))
    a, b = _metric(y[test], ours, binary), _metric(y[test], theirs, binary)
    assert abs(a - b) <= 0.01 * b, (a, b)


@pytest.mark.parametrize("n_cats", [3, 12])
def test_first_split_picks_xgboosts_category_set(n_cats):
    rng = np.random.default_rng(7)
    codes = rng.integers(0, n_cats, 3000)
    y = rng.normal(0, 1, n_cats)[codes] + 0.1 * rng.normal(size=3000)
    X = pd.DataFrame({"c": pd.Categorical(codes)})
    params = {"max_depth": 1, "base_score": 0.0}
    ours = gbm.train(params, X, y, 1)
    theirs = xgb.train(dict(params, tree_method="hist"),
                       xgb.DMatrix(X, y, enable_categorical=True), 1)
    row = theirs.trees_to_dataframe().iloc[0]
    theirs_set = frozenset(int(c) for c in row["Category"])
    ours_set = frozenset(ours.trees_to_dataframe().iloc[0]["Category"])
    everything = frozenset(range(n_cats))
    assert {ours_set, everything - ours_set} == {theirs_set, everything - theirs_set}
    if n_cats < 4:
        assert len(ours_set) == 1  # one-hot
    np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X, enable_categorical=True)),
                               rtol=1e-5, atol=1e-6)


# -- encoding --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def model():
    X, y = make_data(3000, n_cats=20, seed=3)
    return gbm.train({"max_depth": 4}, X, y, 10), X


def test_unseen_category_goes_the_missing_way(model):
    b, X = model
    rows = X.iloc[:50].copy()
    unseen = rows.copy()
    unseen["c"] = pd.Categorical(["never seen"] * 50, categories=["never seen", "k0"])
    missing = rows.copy()
    missing["c"] = pd.Categorical([None] * 50, categories=["k0"])
    np.testing.assert_array_equal(b.predict(unseen), b.predict(missing))
    assert not np.array_equal(b.predict(rows), b.predict(missing))


def test_category_order_and_subset_do_not_matter(model):
    b, X = model
    rows = X.iloc[:200]
    shuffled = rows.copy()
    cats = list(X["c"].cat.categories)
    shuffled["c"] = rows["c"].cat.reorder_categories(cats[::-1])
    subset = rows.copy()
    subset["c"] = pd.Categorical(rows["c"].astype(object), categories=sorted(set(rows["c"].dropna()),
                                                                             reverse=True))
    np.testing.assert_array_equal(b.predict(shuffled), b.predict(rows))
    np.testing.assert_array_equal(b.predict(subset), b.predict(rows))


def test_numeric_columns_named_categorical_match_category_columns():
    X, y = make_data(2000, n_cats=15, seed=4, labels=list(range(15)))
    numeric = pd.DataFrame({"c": X["c"].astype(float), "x": X["x"],
                            "noise": X["noise"].astype(int)})
    params = {"max_depth": 3}
    reference_model = gbm.train(params, X, y, 5)
    for spec in ([0, 2], ["c", "noise"], [True, False, True], np.array([True, False, True])):
        b = gbm.train(params, numeric, y, 5, categorical_features=spec)
        assert b.categories == reference_model.categories
        assert [t.to_dict() for t in b.trees] == [t.to_dict() for t in reference_model.trees]
    b = gbm.train(params, numeric.to_numpy(), y, 5, categorical_features=[0, 2])
    np.testing.assert_array_equal(b.predict(numeric.to_numpy()), reference_model.predict(X))
    # numeric values at predict are matched by value; an unseen integer is missing
    rows = numeric.to_numpy()[:20].copy()
    rows[:, 0] = 99
    as_missing = rows.copy()
    as_missing[:, 0] = np.nan
    np.testing.assert_array_equal(b.predict(rows), b.predict(as_missing))


def test_train_and_predict_leave_the_callers_matrix_unchanged():
    """A C-ordered float32 X is used as it is (no copy): the category codes must be
    written into a copy, not into the caller's numeric categorical column."""
    rng = np.random.default_rng(7)
    values = rng.choice([3, 5, 7, 10, 42], 300)
    X = np.column_stack([rng.normal(size=300), values]).astype(np.float32)
    y = X[:, 0] + (values == 7) - 2.0 * (values == 42)
    before = X.copy()
    b = gbm.train({"max_depth": 3}, X, y, 3, categorical_features=[1])
    np.testing.assert_array_equal(X, before)
    first = b.predict(X)
    np.testing.assert_array_equal(X, before)
    np.testing.assert_array_equal(b.predict(X), first)  # a second predict sees the values
    b.predict(X, pred_contribs=True)
    gbm.train({"max_depth": 3}, X, y, 1, init_model=b, evals=[(X, y, "train")])
    np.testing.assert_array_equal(X, before)


def test_all_missing_categorical_column():
    X, y = make_data(1000, n_cats=5)
    X["empty"] = pd.Categorical([None] * 1000, categories=["a", "b"])
    b = gbm.train({"max_depth": 3}, X, y, 5)
    assert b.categories[3] == []
    assert all(3 not in t.split_feature for t in b.trees)
    assert np.isfinite(b.predict(X)).all()
    b2 = gbm.train({"max_depth": 3}, X.assign(empty=np.nan), y, 5, categorical_features=[3])
    np.testing.assert_array_equal(b2.predict(X.assign(empty=np.nan)), b.predict(X))


@pytest.mark.parametrize("values, message", [
    ([0, 1, -1, 2], "holds -1.0 at row 2"),
    ([0, 1.5, 2, 3], "holds 1.5 at row 1"),
    ([0, 1, 2, 2.0**24], "below 16777216"),
])
def test_bad_numeric_categories_are_rejected(values, message):
    X = np.column_stack([np.array(values, float), np.arange(4.0)])
    with pytest.raises(ValueError, match=f"column 0 is categorical but {message}|{message}"):
        gbm.train({}, X, np.arange(4.0), 1, categorical_features=[0])


def test_bad_categorical_input_is_rejected():
    X = pd.DataFrame({"a": np.arange(65537.0), "b": np.arange(65537.0) % 3})
    y = np.arange(65537.0)
    with pytest.raises(ValueError, match="'a' .* has 65537 categories; .* at most 65536"):
        gbm.train({}, X, y, 1, categorical_features=["a"])
    for spec, message in [([5], r"holds 5; expected column indices in \[0, 2\)"),
                          (["zz"], "names feature 'zz'"),
                          ([True], "boolean mask of length 1 but X has 2 features"),
                          ([1.0], "holds 1.0"),
                          ([-1], "holds -1")]:
        with pytest.raises(ValueError, match=message):
            gbm.train({}, X, y, 1, categorical_features=spec)
    with pytest.raises(TypeError, match="categorical_features must be a list"):
        gbm.train({}, X, y, 1, categorical_features="b")
    with pytest.raises(ValueError, match="feature b, which is categorical"):
        gbm.train({"monotone_constraints": {"b": 1}}, X, y, 1, categorical_features=["b"])
    for name, value, error in [("max_cat_to_onehot", 0, ValueError),
                               ("max_cat_threshold", 0, ValueError),
                               ("max_cat_threshold", 2.5, TypeError)]:
        with pytest.raises(error, match=name):
            gbm.train({name: value}, X, y, 1)
    bad_labels = pd.DataFrame({"c": pd.Categorical([pd.Timestamp(0), pd.Timestamp(1)])})
    with pytest.raises(ValueError, match="labels must be strings or finite numbers"):
        gbm.train({}, bad_labels, [0.0, 1.0], 1)
    numeric = gbm.train({}, X, y, 1)
    with pytest.raises(ValueError, match="dtype 'category' but the model has no categorical"):
        numeric.predict(X.astype({"b": "category"}))


# -- training: threads, constraints, sampling, eval sets -------------------------------------
def test_threads_do_not_change_the_model():
    X, y = make_data(30000, n_cats=60, seed=5)
    params = {"max_depth": 5, "colsample_bynode": 0.8}
    one = gbm.train(dict(params, n_jobs=1), X, y, 5)
    two = gbm.train(dict(params, n_jobs=2), X, y, 5)
    assert [t.to_dict() for t in one.trees] == [t.to_dict() for t in two.trees]
    np.testing.assert_array_equal(one.predict(X, n_jobs=1), two.predict(X, n_jobs=2))
    assert any(t.has_categorical for t in one.trees)


def test_sampling_and_interaction_constraints_with_categories():
    X, y = make_data(3000, n_cats=20, seed=6)
    b = gbm.train({"max_depth": 4, "colsample_bynode": 0.5, "colsample_bytree": 0.7,
                   "interaction_constraints": [["c", "x"]]}, X, y, 10)
    for tree in b.trees:  # "noise" only ever interacts with itself
        for node in np.flatnonzero(tree.left_child >= 0):
            if tree.split_feature[node] == 2:
                child_features = {tree.split_feature[c] for c in
                                  (tree.left_child[node], tree.right_child[node])}
                assert child_features <= {-1, 2}
    assert any(t.has_categorical for t in b.trees)


def test_eval_set_scores_match_predict():
    X, y = make_data(3800, n_cats=25, seed=8)
    X, Xv, y, yv = X.iloc[:3000], X.iloc[3000:], y[:3000], y[3000:]
    b = gbm.train({"max_depth": 4}, X, y, 8, evals=[(Xv, yv, "valid")])
    rmse = np.sqrt(np.mean((b.predict(Xv) - yv) ** 2))
    assert b.evals_result["valid"]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)


def test_continued_training_keeps_the_categories(model):
    b, X = model
    y = np.asarray(X["x"])
    more = gbm.train({"max_depth": 4}, X, y, 3, init_model=b)
    assert more.categories == b.categories and more.num_boosted_rounds == 13


# -- model file and dumps --------------------------------------------------------------------
def test_save_load_round_trip(model, tmp_path):
    b, X = model
    path = tmp_path / "m.json"
    b.save_model(path)
    d = json.loads(path.read_text())
    assert d["version"] == 4 and d["categories"][0] == list(X["c"].cat.categories)
    loaded = gbm.Booster.load_model(path)
    np.testing.assert_array_equal(loaded.predict(X), b.predict(X))
    assert loaded.to_json() == b.to_json()


def test_numeric_model_file_is_unchanged():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    d = json.loads(gbm.train({}, X, X[:, 0], 2).to_json())
    assert d["version"] == 4 and "categories" not in d
    assert all("split_type" not in t and "cat_bits" not in t for t in d["trees"])
    old = dict(d, version=1, params={k: v for k, v in d["params"].items()
                                     if not k.startswith("max_cat") and k != "num_parallel_tree"})
    del old["iteration_indptr"]
    assert gbm.Booster.from_json(json.dumps(old)).categories is None  # a version 1 file loads
    d["version"] = 2
    d["categories"] = [None, None, None]
    with pytest.raises(ValueError, match="categorical fields in a version 2 file"):
        gbm.Booster.from_json(json.dumps(d))


def _first_cat(d):
    for t, tree in enumerate(d["trees"]):
        if "split_type" in tree:
            return t, tree["split_type"].index(1)


@pytest.mark.parametrize("mutate, message", [
    (lambda d, t, n: d["trees"][t]["cat_bits"][0].__setitem__(0, 0) or
     [d["trees"][t]["cat_bits"][0].__setitem__(i, 0) for i in range(8)], "bad category set"),
    (lambda d, t, n: d["trees"][t]["cat_bits"][0].__setitem__(7, 1 << 31), "bad category set"),
    (lambda d, t, n: d["trees"][t]["cat_bits"][0].__setitem__(0, -1), r"cat_bits holds -1, outside \[0, 4294967295\]"),
    (lambda d, t, n: d["trees"][t]["cat_bits"].pop(), "rows of cat_bits, expected"),
    (lambda d, t, n: d["trees"][t]["cat_bits"][0].pop(), "all of one length from 8"),
    (lambda d, t, n: d["trees"][t]["split_type"].__setitem__(-1, 1), "leaf marked"),
    (lambda d, t, n: d["trees"][t]["split_type"].__setitem__(n, 2), "not 0 or 1"),
    (lambda d, t, n: d["trees"][t]["split_feature"].__setitem__(n, 1), "on numeric feature 1"),
    (lambda d, t, n: d.update(categories=[["a"]]), "list of 3 entries"),
    (lambda d, t, n: d["categories"].__setitem__(0, ["a", "a"]), "holds the label .a. twice"),
])
def test_bad_categorical_fields_are_rejected(model, mutate, message):
    b, _ = model
    d = json.loads(b.to_json())
    t, n = _first_cat(d)
    mutate(d, t, n)
    with pytest.raises(ValueError, match=message):
        gbm.Booster.from_json(json.dumps(d))


def test_dumps_show_category_sets():
    X, y = make_data(2000, n_cats=12, seed=10, labels=[f"v{i}" for i in range(12)])
    b = gbm.train({"max_depth": 2}, X[["c"]], y, 1)
    tree = b.trees[0]
    assert tree.split_type[0] == 1
    cats = [f"v{c}" for c in tree.node_categories(0)]
    right, left = tree.right_child[0], tree.left_child[0]
    missing = left if tree.default_left[0] else right
    assert b.get_dump()[0].splitlines()[0] == \
        f"0:[c:{{{','.join(cats)}}}] yes={right},no={left},missing={missing}"
    root = json.loads(b.get_dump(dump_format="json")[0])
    assert root["split_condition"] == cats and root["yes"] == right
    df = b.trees_to_dataframe()
    assert df.loc[0, "Category"] == cats and np.isnan(df.loc[0, "Split"])
    assert df.loc[0, "Yes"] == f"0-{right}"


# -- estimators -------------------------------------------------------------------------------
def test_estimators_with_category_columns():
    X, y = make_data(3500, n_cats=30, seed=11)
    X, Xv, y, yv = X.iloc[:3000], X.iloc[3000:], y[:3000], y[3000:]
    reg = gbm.GBMRegressor(n_estimators=20, max_depth=4, enable_categorical=True,
                           max_cat_to_onehot=4, max_cat_threshold=32)
    reg.fit(X, y, eval_set=[(Xv, yv)])
    booster = reg.get_booster()
    assert booster.categories[0] is not None and booster.params["max_cat_threshold"] == 32
    np.testing.assert_array_equal(reg.predict(Xv), booster.predict(Xv))
    assert reg.evals_result()["validation_0"]["rmse"][-1] == pytest.approx(
        np.sqrt(np.mean((reg.predict(Xv) - yv) ** 2)))
    assert reg.score(Xv, yv) > 0.5
    Xb, yb = make_data(3000, n_cats=30, seed=13, binary=True)
    clf = gbm.GBMClassifier(n_estimators=20, max_depth=3).fit(Xb, np.where(yb > 0, "yes", "no"))
    proba = clf.predict_proba(Xb)
    assert proba.shape == (3000, 2) and set(clf.predict(Xb)) <= {"yes", "no"}
    numeric = Xb.assign(c=Xb["c"].cat.codes.replace(-1, np.nan), noise=Xb["noise"].astype(int))
    clf2 = gbm.GBMClassifier(n_estimators=20, max_depth=3, categorical_features=["c", "noise"])
    clf2.fit(numeric, np.where(yb > 0, "yes", "no"))
    assert clf2.get_booster().categories[0] == list(range(30))
    assert clf2.score(numeric, np.where(yb > 0, "yes", "no")) > 0.6


def test_arrow_dictionary_columns_are_categorical():
    pa = pytest.importorskip("pyarrow")
    X, y = make_data(1000, n_cats=10, seed=14)
    table = pa.Table.from_pandas(X)
    from_arrow = gbm.train({"max_depth": 3}, table, y, 3)
    from_pandas = gbm.train({"max_depth": 3}, X, y, 3)
    assert from_arrow.categories == from_pandas.categories
    np.testing.assert_array_equal(from_arrow.predict(table), from_pandas.predict(X))
