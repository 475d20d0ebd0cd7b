"""Feature importances, checked by hand and against xgboost."""
import numpy as np
import pytest
from sklearn.datasets import make_regression

import gbm

xgb = pytest.importorskip("xgboost")


def test_get_score_counts_and_sums_the_splits():
    X, y = make_regression(3000, 6, n_informative=3, random_state=0)
    b = gbm.train({"max_depth": 3}, X, y, 5)
    splits = [(t.split_feature[i], t.gain[i], t.cover[i])
              for t in b.trees for i in range(t.n_nodes) if t.left_child[i] >= 0]
    for f in range(6):
        mine = [s for s in splits if s[0] == f]
        if not mine:
            assert f"f{f}" not in b.get_score()
            continue
        assert b.get_score(importance_type="weight")[f"f{f}"] == len(mine)
        assert b.get_score(importance_type="total_gain")[f"f{f}"] == pytest.approx(sum(s[1] for s in mine))
        assert b.get_score(importance_type="cover")[f"f{f}"] == pytest.approx(np.mean([s[2] for s in mine]))
    with pytest.raises(ValueError, match="importance_type must be one of"):
        b.get_score(importance_type="split")


def test_root_split_scores_equal_xgboost():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 8, size=(2000, 4)).astype(np.float32)  # exact bins in both
    y = 2 * X[:, 1] + rng.normal(size=2000)
    params = {"max_depth": 1, "base_score": 0.5}
    ours = gbm.train(params, X, y, 1)
    theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X, y), 1)
    for kind in ("weight", "gain", "cover"):
        a, b = ours.get_score(importance_type=kind), theirs.get_score(importance_type=kind)
        assert a.keys() == b.keys()
        for key in a:
            assert a[key] == pytest.approx(b[key], rel=1e-4), (kind, key)


def test_feature_importances_sum_to_one_and_use_names():
    pd = pytest.importorskip("pandas")
    X, y = make_regression(2000, 5, n_informative=2, random_state=2)
    df = pd.DataFrame(X, columns=list("abcde"))
    model = gbm.GBMRegressor(n_estimators=10, max_depth=3).fit(df, y)
    imp = model.feature_importances_
    assert imp.shape == (5,) and imp.sum() == pytest.approx(1.0)
    assert set(model.get_booster().get_score()) <= set("abcde")
    assert np.argsort(imp)[-2:].tolist() == np.argsort(np.abs(np.corrcoef(X.T, y)[-1, :5]))[-2:].tolist()


def test_dumps_and_dataframe_describe_the_same_trees():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 6, size=(2000, 3)).astype(np.float32)
    X[::9, 1] = np.nan
    y = X[:, 0] - np.nan_to_num(X[:, 1]) + rng.normal(size=2000)
    b = gbm.train({"max_depth": 2}, X, y, 2)
    tree = b.trees[0]
    text = b.get_dump()[0].splitlines()
    assert text[0].startswith(f"0:[f{tree.split_feature[0]}<{tree.threshold[0]:.9g}] yes=1,no=2,missing=")
    assert sum(line.strip().split(":")[1].startswith("leaf=") for line in text) == tree.n_leaves
    root = __import__("json").loads(b.get_dump(dump_format="json")[0])
    assert root["split"] == f"f{tree.split_feature[0]}" and len(root["children"]) == 2
    df = b.trees_to_dataframe()
    assert len(df) == sum(t.n_nodes for t in b.trees)
    leaves = df[df.Feature == "Leaf"]
    np.testing.assert_allclose(leaves.Gain.to_numpy(),
                               np.concatenate([t.value[t.left_child < 0] for t in b.trees]))
    # the text dump has the same layout as xgboost's for the same exact-bin split; xgboost
    # cuts at the upper integer v, gbm halfway between v - 1 and v
    theirs = xgb.train({"max_depth": 2, "tree_method": "hist"}, xgb.DMatrix(X, y), 1).get_dump()[0]
    feature, value = theirs.splitlines()[0].split(" ")[0].rstrip("]").split("<")
    assert text[0].split(" ")[0] == f"{feature}<{float(value) - 0.5:.9g}]"
    with pytest.raises(ValueError, match="dump_format"):
        b.get_dump(dump_format="xml")
