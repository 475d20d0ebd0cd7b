"""XGBoost's JSON model format both ways (gbm.io.xgboost_json): xgboost loads what gbm
exports and predicts the same to float32 rounding; gbm imports xgboost's models."""
import json

import numpy as np
import pytest

import gbm

xgb = pytest.importorskip("xgboost")

RTOL, ATOL = 1e-5, 1e-5  # XGBoost sums float32 leaf values, gbm float64


def _data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    X[rng.random((n, 4)) < 0.1] = np.nan  # default directions are exported too
    y = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2 + 0.3 * rng.normal(size=n)
    return X, y


def _exported(booster, tmp_path, name="m.json"):
    path = tmp_path / name
    booster.save_model(path, format="xgboost")
    return xgb.Booster(model_file=str(path))


def _labels(objective, y):
    if objective in ("count:poisson", "reg:gamma", "reg:tweedie"):
        return np.exp(y / 3)
    if objective == "binary:logistic":
        return (y > 0.5).astype(float)
    if objective.startswith(("multi:", "rank:")):
        return np.digitize(y, [0.0, 1.5]).astype(float)
    return y


OBJECTIVES = ["reg:squarederror", "reg:absoluteerror", "reg:pseudohubererror",
              "reg:quantileerror", "count:poisson", "reg:gamma", "reg:tweedie",
              "binary:logistic", "multi:softprob", "multi:softmax", "rank:pairwise",
              "rank:ndcg"]


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_xgboost_loads_the_export_and_predicts_the_same(objective, tmp_path):
    X, y = _data()
    params = {"objective": objective, "max_depth": 3}
    extra = {}
    if objective.startswith("multi:"):
        params["num_class"] = 3
    if objective == "reg:quantileerror":
        params["quantile_alpha"] = [0.2, 0.8]  # two outputs, two base scores
    if objective.startswith("rank:"):
        extra["qid"] = np.repeat(np.arange(12), 20)
    booster = gbm.train(params, X, _labels(objective, y), num_boost_round=4, **extra)
    xb = _exported(booster, tmp_path)
    dm = xgb.DMatrix(X)
    expected = booster.predict(X)
    got = xb.predict(dm)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(xb.predict(dm, output_margin=True),
                               booster.predict(X, output_margin=True), rtol=RTOL, atol=ATOL)
    # and back: the imported model is the same model (leaf values now float32)
    back = gbm.Booster.from_xgboost(xb)
    assert back.params["objective"] == objective
    np.testing.assert_allclose(back.predict(X), expected, rtol=RTOL, atol=ATOL)


def test_categorical_splits_export_with_their_categories(tmp_path):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    n = 300
    letters = rng.choice(list("pqrstuvw"), n)
    ints = rng.choice([3, 5, 7, 10, 42], n)
    x = rng.normal(size=n)
    df = pd.DataFrame({"a": pd.Categorical(letters), "b": x, "c": ints.astype(float)})
    y = np.isin(letters, list("psv")) * 2.0 + x + (ints == 7) * 1.5 - (ints == 42)
    booster = gbm.train({"max_depth": 3, "max_cat_to_onehot": 1}, df, y, num_boost_round=4,
                        categorical_features=["c"])
    assert sum(t.has_categorical for t in booster.trees) > 0
    xb = _exported(booster, tmp_path)
    expected = booster.predict(df)
    # xgboost re-codes category columns by label, also when their order differs
    shuffled = df.assign(a=df["a"].cat.reorder_categories(list("wvutsrqp")),
                         c=pd.Categorical(ints, categories=[42, 10, 7, 5, 3]))
    got = xb.predict(xgb.DMatrix(shuffled, enable_categorical=True))
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
    back = gbm.Booster.from_xgboost(xb)
    assert back.categories == booster.categories
    np.testing.assert_allclose(back.predict(df), expected, rtol=RTOL, atol=ATOL)


def test_forest_rounds_export_with_iteration_indptr(tmp_path):
    X, y = _data(seed=2)
    params = {"num_parallel_tree": 3, "subsample": 0.7, "colsample_bynode": 0.6,
              "learning_rate": 1.0, "max_depth": 3}
    booster = gbm.train(params, X, y, num_boost_round=2)
    xb = _exported(booster, tmp_path)
    dm = xgb.DMatrix(X)
    for rounds in [(0, 0), (0, 1), (1, 2)]:
        np.testing.assert_allclose(xb.predict(dm, iteration_range=rounds),
                                   booster.predict(X, iteration_range=rounds),
                                   rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("params", [
    {"objective": "multi:softprob", "num_class": 3},
    {"objective": "binary:logistic", "num_parallel_tree": 2, "subsample": 0.6},
    {"objective": "reg:squarederror", "booster": "dart", "rate_drop": 0.3},
], ids=["multiclass", "forest", "dart"])
def test_import_of_models_xgboost_trained(params):
    X, y = _data(seed=3)
    label = _labels(params["objective"], y)
    xb = xgb.train(dict(params, max_depth=3), xgb.DMatrix(X, label=label), 4)
    imported = gbm.Booster.from_xgboost(xb)
    np.testing.assert_allclose(imported.predict(X), xb.predict(xgb.DMatrix(X)),
                               rtol=RTOL, atol=ATOL)


def test_import_from_path_text_dict_ubj_and_best_iteration(tmp_path):
    X, y = _data(seed=4)
    booster = gbm.train({"max_depth": 2}, X[:160], y[:160], num_boost_round=30,
                        evals=[(X[160:], y[160:], "valid")], early_stopping_rounds=2)
    assert booster.best_iteration is not None  # early stopping stopped before round 30
    path = tmp_path / "m.json"
    booster.save_model(path, format="xgboost")
    assert xgb.Booster(model_file=str(path)).attr("best_iteration") == str(booster.best_iteration)
    text = path.read_text()
    ubj = tmp_path / "m.ubj"  # UBJSON: read through the installed xgboost
    xgb.Booster(model_file=str(path)).save_model(str(ubj))
    for source in (path, str(path), text, json.loads(text), ubj):
        imported = gbm.Booster.from_xgboost(source)
        assert imported.best_iteration == booster.best_iteration
        assert imported.num_boosted_rounds == booster.num_boosted_rounds
        np.testing.assert_allclose(imported.predict(X), booster.predict(X), rtol=RTOL, atol=ATOL)


def test_unsupported_xgboost_models_are_clear_errors():
    X, y = _data(seed=5)
    linear = xgb.train({"booster": "gblinear"}, xgb.DMatrix(X, label=y), 2)
    with pytest.raises(ValueError, match="gblinear"):
        gbm.Booster.from_xgboost(linear)
    # an objective gbm does not have (survival:cox, once the example here, now imports)
    model = json.loads(bytes(xgb.train({"max_depth": 2}, xgb.DMatrix(X, label=y), 2)
                             .save_raw(raw_format="json")))
    model["learner"]["objective"] = {"name": "survival:weibull"}
    with pytest.raises(ValueError, match="objective.name is 'survival:weibull'"):
        gbm.Booster.from_xgboost(model)
    with pytest.raises(ValueError, match="not an XGBoost JSON model"):
        gbm.Booster.from_xgboost({"format": "gbm-model"})
    with pytest.raises(ValueError, match="format must be"):
        gbm.train({"max_depth": 1}, X, y, 1).save_model("unused.json", format="lightgbm")


@pytest.mark.parametrize("objective", ["reg:squarederror", "multi:softprob"])
def test_shap_tree_explainer_on_the_export_gives_gbm_contributions(objective, tmp_path):
    shap = pytest.importorskip("shap")
    X, y = _data(seed=6)
    params = {"objective": objective, "max_depth": 3}
    if objective == "multi:softprob":
        params["num_class"] = 3
    booster = gbm.train(params, X, _labels(objective, y), num_boost_round=4)
    explainer = shap.TreeExplainer(_exported(booster, tmp_path))
    values = np.asarray(explainer.shap_values(X))
    contribs = booster.predict(X, pred_contribs=True)
    if contribs.ndim == 3:  # (n, groups, features + 1); shap gives (n, features, groups)
        values = np.moveaxis(values, -1, 1)
        bias = contribs[0, :, -1]
    else:
        bias = contribs[0, -1]
    np.testing.assert_allclose(values, contribs[..., :-1], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(explainer.expected_value, bias, rtol=RTOL, atol=ATOL)


def _thresholds_per_feature(model_dict):
    trees = model_dict["learner"]["gradient_booster"]["model"]["trees"]
    found = {}
    for t in trees:
        cat_nodes = set(t.get("categories_nodes", []))
        for node, (left, f, cond) in enumerate(zip(t["left_children"], t["split_indices"],
                                                   t["split_conditions"])):
            if left != -1 and node not in cat_nodes:
                found.setdefault(f, set()).add(np.float32(cond))
    return {f: len(v) for f, v in found.items()}


def test_import_of_an_xgboost_model_trained_with_max_bin_1024(tmp_path):
    """More than 255 thresholds per feature (gbm holds max_bin up to 1024, uint16 bins):
    the imported model predicts and explains as xgboost does, and survives both files."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 3)).astype(np.float32)
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=3000)
    xb = xgb.train({"max_bin": 1024, "max_depth": 8, "learning_rate": 0.3,
                    "min_child_weight": 0}, xgb.DMatrix(X, label=y), 40)
    assert max(_thresholds_per_feature(json.loads(bytes(xb.save_raw("json")))).values()) > 255
    imported = gbm.Booster.from_xgboost(xb)
    dm = xgb.DMatrix(X)
    np.testing.assert_allclose(imported.predict(X), xb.predict(dm), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(imported.predict(X, pred_contribs=True),
                               xb.predict(dm, pred_contribs=True), rtol=RTOL, atol=1e-4)
    assert max(c.size for c in imported.cuts) > 255
    path = tmp_path / "imported.json"
    imported.save_model(path)
    np.testing.assert_array_equal(gbm.Booster.load_model(path).predict(X), imported.predict(X))
    np.testing.assert_allclose(_exported(imported, tmp_path).predict(dm), xb.predict(dm),
                               rtol=RTOL, atol=ATOL)


def test_a_model_with_1000_categories_exports_and_imports_back(tmp_path):
    """Category codes up to 999: the sets are wider than 256 bits both ways."""
    rng = np.random.default_rng(9)
    n = 3000
    codes = rng.permutation(n) % 1000  # every category seen
    X = np.column_stack([rng.normal(size=n), codes]).astype(np.float32)
    y = X[:, 0] + 2.0 * rng.normal(size=1000)[codes]
    booster = gbm.train({"max_depth": 4, "max_cat_to_onehot": 1}, X, y, 3,
                        categorical_features=[1])
    assert len(booster.categories[1]) == 1000
    assert max(t.cat_bits.shape[1] for t in booster.trees) > 8  # a code above 255 is split
    xb = _exported(booster, tmp_path)
    dm = xgb.DMatrix(X)
    expected = booster.predict(X)
    np.testing.assert_allclose(xb.predict(dm), expected, rtol=RTOL, atol=ATOL)
    back = gbm.Booster.from_xgboost(xb)
    assert back.categories == booster.categories
    np.testing.assert_allclose(back.predict(X), expected, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(back.predict(X, pred_contribs=True),
                               booster.predict(X, pred_contribs=True), rtol=RTOL, atol=ATOL)
    path = tmp_path / "back.json"
    back.save_model(path)
    np.testing.assert_array_equal(gbm.Booster.load_model(path).predict(X), back.predict(X))


def test_import_of_an_xgboost_model_with_1000_categories():
    rng = np.random.default_rng(10)
    n = 3000
    codes = rng.permutation(n) % 1000
    X = np.column_stack([rng.normal(size=n), codes]).astype(np.float32)
    y = X[:, 0] + 2.0 * rng.normal(size=1000)[codes]
    dm = xgb.DMatrix(X, label=y, feature_types=["q", "c"], enable_categorical=True)
    xb = xgb.train({"max_depth": 4, "max_cat_to_onehot": 1, "tree_method": "hist"}, dm, 3)
    imported = gbm.Booster.from_xgboost(xb)
    assert imported.categories[1] is not None and len(imported.categories[1]) > 256
    assert max(t.cat_bits.shape[1] for t in imported.trees) > 8  # a set with codes above 255
    np.testing.assert_allclose(imported.predict(X), xb.predict(dm), rtol=RTOL, atol=ATOL)


def test_a_numeric_categorical_column_with_gaps_predicts_the_same_in_xgboost(tmp_path):
    """Integer categories (3, 5, 7, 10, 42: not their codes 0..4) are exported by value:
    xgboost reads a NumPy column's values as its categories, and re-codes a DataFrame's
    category column by label to the same values; the import gives the categories back."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(11)
    values = rng.choice([3, 5, 7, 10, 42], 400)
    X = np.column_stack([rng.normal(size=400), values]).astype(np.float32)
    y = X[:, 0] + 1.5 * (values == 7) - 2.0 * (values == 42) + (values == 3)
    booster = gbm.train({"max_depth": 3, "max_cat_to_onehot": 1}, X, y, 4,
                        categorical_features=[1])
    expected = booster.predict(X)
    xb = _exported(booster, tmp_path)
    np.testing.assert_allclose(xb.predict(xgb.DMatrix(X)), expected, rtol=RTOL, atol=ATOL)
    frame = pd.DataFrame({"x": X[:, 0], "c": pd.Categorical(values, categories=[42, 10, 7, 5, 3])})
    np.testing.assert_allclose(xb.predict(xgb.DMatrix(frame, enable_categorical=True)),
                               expected, rtol=RTOL, atol=ATOL)
    back = gbm.Booster.from_xgboost(xb)
    assert back.categories == booster.categories
    np.testing.assert_allclose(back.predict(X), expected, rtol=RTOL, atol=ATOL)
    # without gbm's lists (an attribute anyone may change) the import keeps XGBoost's
    # codes, the values, as categories: the same predictions on those values
    xb.set_attr(gbm_categories="not json")
    plain = gbm.Booster.from_xgboost(xb)
    assert plain.categories[1] == list(range(43))
    np.testing.assert_allclose(plain.predict(X), expected, rtol=RTOL, atol=ATOL)
