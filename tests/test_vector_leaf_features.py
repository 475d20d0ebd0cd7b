"""Vector-leaf trees (``multi_strategy="multi_output_tree"``) with the features added
after the first grower: multi-label classification through ``GBMClassifier``,
forests (``num_parallel_tree``) and ``grow_policy="lossguide"``; each against xgboost's
multi_output_tree on exact bins (every value its own bin: the same splits), on 1 and 2
threads, and through gbm's model file."""
import numpy as np
import pytest

import gbm

VL = {"multi_strategy": "multi_output_tree"}


def _exact_bins(n=1200, seed=1, k=3):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 16, (n, 5)).astype(np.float32)  # 16 values: each its own bin
    Y = np.stack([X[:, 0] * 0.2 + X[:, 1] * 0.1 + rng.normal(size=n) * 0.3,
                  np.sin(X[:, 2] / 3) + rng.normal(size=n) * 0.2,
                  (X[:, 3] > 10) * 1.0 + rng.normal(size=n) * 0.1][:k], 1)
    return X, Y


def _labels(n=1200, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 16, (n, 5)).astype(np.float32)
    Y = np.stack([(X[:, 0] + rng.integers(0, 8, n)) > 12, (X[:, 1] * X[:, 2]) % 3 == 0,
                  X[:, 3] + X[:, 4] > rng.integers(10, 22, n)], 1).astype(np.int64)
    return X, Y


# -- multi-label classification -------------------------------------------------------------
@pytest.mark.parametrize("strategy", ["multi_output_tree", "one_output_per_tree"])
def test_multilabel_classifier_matches_xgboost(strategy):
    xgb = pytest.importorskip("xgboost")
    X, Y = _labels()
    p = dict(n_estimators=6, max_depth=3, learning_rate=0.3, multi_strategy=strategy)
    ours = gbm.GBMClassifier(**p).fit(X, Y)
    theirs = xgb.XGBClassifier(tree_method="hist", **p).fit(X, Y)
    proba = ours.predict_proba(X)
    assert proba.shape == (1200, 3)
    np.testing.assert_allclose(proba, theirs.predict_proba(X), atol=2e-5)
    assert list(ours.classes_) == [0, 1] and ours.n_classes_ == 2
    np.testing.assert_array_equal(ours.predict(X), (proba > 0.5).astype(np.int64))
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    margin = ours.predict(X, output_margin=True)
    np.testing.assert_allclose(proba, 1 / (1 + np.exp(-margin)), rtol=1e-12)


def test_multilabel_is_binary_logistic_per_column_and_survives_files(tmp_path):
    X, Y = _labels(400)
    clf = gbm.GBMClassifier(n_estimators=4, max_depth=3, n_jobs=1, **VL).fit(
        X, Y, eval_set=[(X, Y)])
    booster = gbm.train({"objective": "binary:logistic", "max_depth": 3, "n_jobs": 1, **VL},
                        X, Y.astype(np.float64), 4)
    np.testing.assert_array_equal(clf.predict_proba(X), booster.predict(X))  # the same trees
    np.testing.assert_array_equal(clf.predict(X, output_margin=True),
                                  booster.predict(X, output_margin=True))
    assert len(clf.evals_result()["validation_0"]["logloss"]) == 4
    clf.save_model(tmp_path / "clf.json")
    booster.save_model(tmp_path / "booster.json")
    for path in ("clf.json", "booster.json"):
        back = gbm.GBMClassifier()
        back.load_model(tmp_path / path)
        assert list(back.classes_) == [0, 1]
        np.testing.assert_array_equal(back.predict(X), clf.predict(X))
    two = gbm.GBMClassifier(n_estimators=4, max_depth=3, n_jobs=2, **VL).fit(X, Y)
    assert two.get_booster().to_json() == clf.get_booster().to_json()


@pytest.mark.parametrize("y, match", [
    (np.full((50, 2), 2), r"y\[0, 0\] = 2"),
    (np.array([["a", "b"]] * 50), "dtype"),
])
def test_multilabel_bad_labels_are_refused(y, match):
    X = np.random.default_rng(0).random((50, 3))
    with pytest.raises(ValueError, match=match):
        gbm.GBMClassifier(n_estimators=1).fit(X, y)


def test_multilabel_refuses_a_multiclass_objective_and_a_bad_eval_set():
    X, Y = _labels(100)
    with pytest.raises(ValueError, match="binary:logistic"):
        gbm.GBMClassifier(n_estimators=1, objective="multi:softprob").fit(X, Y)
    with pytest.raises(ValueError, match="eval_set y has shape"):
        gbm.GBMClassifier(n_estimators=1).fit(X, Y, eval_set=[(X, Y[:, :2])])


# -- forests (num_parallel_tree > 1) ---------------------------------------------------------
def test_forest_matches_xgboost_and_its_json_both_ways(tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, Y = _exact_bins()
    p = dict(max_depth=3, learning_rate=0.3, base_score=0.5, num_parallel_tree=3, **VL)
    ours = gbm.train(p, X, Y, 4)
    theirs = xgb.train(dict(p, tree_method="hist"), xgb.DMatrix(X, Y), 4)
    assert len(ours.trees) == 12 and ours.num_boosted_rounds == 4
    dm = xgb.DMatrix(X)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(dm), atol=2e-5)
    np.testing.assert_allclose(ours.predict(X, iteration_range=(1, 3)),
                               theirs.predict(dm, iteration_range=(1, 3)), atol=2e-5)
    np.testing.assert_array_equal(ours.predict(X, pred_leaf=True),
                                  theirs.predict(dm, pred_leaf=True))
    ours.save_model(tmp_path / "m.json", format="xgboost")
    loaded = xgb.Booster(model_file=str(tmp_path / "m.json"))
    np.testing.assert_allclose(loaded.predict(dm, iteration_range=(1, 3)),
                               ours.predict(X, iteration_range=(1, 3)), atol=1e-6)
    back = gbm.Booster.from_xgboost(theirs)
    assert back.num_boosted_rounds == 4 and len(back.trees) == 12
    np.testing.assert_allclose(back.predict(X), theirs.predict(dm), atol=1e-6)


def test_forest_leaves_carry_learning_rate_over_the_tree_count():
    X, Y = _exact_bins(400)
    p = dict(max_depth=2, learning_rate=0.6, base_score=0.0, n_jobs=1, **VL)
    one = gbm.train(dict(p, learning_rate=0.6 / 3), X, Y, 1)
    forest = gbm.train(dict(p, num_parallel_tree=3), X, Y, 1)
    # no sampling: the three trees are the same tree, each with a third of 0.6
    for tree in forest.trees:
        np.testing.assert_array_equal(tree.value, one.trees[0].value)
    np.testing.assert_allclose(forest.predict(X), 3 * one.predict(X), rtol=1e-12)


def test_sampled_forest_is_the_same_on_one_and_two_threads(tmp_path):
    X, Y = _exact_bins(800)
    p = dict(max_depth=3, num_parallel_tree=3, subsample=0.7, colsample_bynode=0.6, **VL)
    one = gbm.train(dict(p, n_jobs=1), X, Y, 3)
    two = gbm.train(dict(p, n_jobs=2), X, Y, 3)
    assert one.to_json() == two.to_json()
    values = [t.value for t in one.trees[:3]]
    assert not np.array_equal(values[0], values[1])  # each tree its own samples
    one.save_model(tmp_path / "f.json")
    back = gbm.Booster(model_file=tmp_path / "f.json")
    np.testing.assert_array_equal(back.predict(X), one.predict(X))


# -- grow_policy="lossguide" -----------------------------------------------------------------
@pytest.mark.parametrize("params", [{"max_leaves": 6, "max_depth": 0},
                                    {"max_leaves": 10, "max_depth": 3},
                                    {"max_leaves": 0, "max_depth": 4},
                                    {"max_leaves": 20, "max_depth": 0, "reg_alpha": 0.3,
                                     "gamma": 0.5}])
def test_lossguide_matches_xgboost_node_for_node(params):
    xgb = pytest.importorskip("xgboost")
    X, Y = _exact_bins()
    p = dict(params, learning_rate=0.3, base_score=0.5, grow_policy="lossguide", **VL)
    ours = gbm.train(p, X, Y, 5)
    theirs = xgb.train(dict(p, tree_method="hist"), xgb.DMatrix(X, Y), 5)
    dm = xgb.DMatrix(X)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(dm), atol=2e-5)
    # the same node ids: leaves are created in the same order
    np.testing.assert_array_equal(ours.predict(X, pred_leaf=True), theirs.predict(dm, pred_leaf=True))
    if params["max_leaves"]:
        assert all((t.left_child < 0).sum() <= params["max_leaves"] for t in ours.trees)


def test_lossguide_splits_the_best_leaf_first_hand_case():
    # y0 jumps at x0 = 8 (a large gain), y1 at x1 = 4 within x0 < 8 only (a smaller one):
    # with max_leaves=3 the root splits on x0, then the left child on x1
    X = np.array([[a, b] for a in range(16) for b in range(8)] * 3, dtype=np.float32)
    Y = np.stack([(X[:, 0] >= 8) * 10.0, ((X[:, 0] < 8) & (X[:, 1] >= 4)) * 1.0], 1)
    model = gbm.train(dict(VL, grow_policy="lossguide", max_leaves=3, max_depth=0,
                           learning_rate=1.0, reg_lambda=0.0, base_score=0.0), X, Y, 1)
    tree = model.trees[0]
    assert list(tree.split_feature[:3]) == [0, 1, -1]  # root, its left child, a leaf
    assert tree.left_child[1] == 3 and (tree.left_child < 0).sum() == 3
    leaves = {tuple(np.round(v, 12)) for v in tree.value[tree.left_child < 0]}
    assert leaves == {(0.0, 0.0), (0.0, 1.0), (10.0, 0.0)}


@pytest.mark.parametrize("extra", [{}, {"gradient_projection": True, "projection_dim": 2}])
def test_lossguide_same_on_threads_and_through_files(extra, tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, Y = _exact_bins(800)
    p = dict(extra, grow_policy="lossguide", max_leaves=7, max_depth=0, subsample=0.8,
             colsample_bynode=0.8, **VL)
    one = gbm.train(dict(p, n_jobs=1), X, Y, 4)
    two = gbm.train(dict(p, n_jobs=2), X, Y, 4)
    assert one.to_json() == two.to_json()
    one.save_model(tmp_path / "m.json", format="xgboost")
    theirs = xgb.Booster(model_file=str(tmp_path / "m.json"))
    np.testing.assert_allclose(theirs.predict(xgb.DMatrix(X)), one.predict(X), atol=1e-6)


# -- plots -----------------------------------------------------------------------------------
def test_plot_tree_labels_vector_leaves_with_their_values():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, Y = _exact_bins(300)
    Y = np.concatenate([Y, -Y], axis=1)  # 6 outputs: 4 shown, then the count
    booster = gbm.train(dict(VL, max_depth=2), X, Y, 1)
    tree = booster.trees[0]
    try:
        ax = gbm.plot_tree(booster, precision=3)
        labels = sorted(t.get_text() for t in ax.texts if t.get_text().startswith("leaf"))
    finally:
        plt.close("all")
    expected = sorted("leaf\n[" + ", ".join(f"{v:.3g}" for v in tree.value[node][:4])
                      + ", ... (6 values)]" for node in np.flatnonzero(tree.left_child < 0))
    assert labels == expected and len(labels) == 4


# -- leaf refresh (reg:absoluteerror, reg:quantileerror) -------------------------------------
def _heavy_tails(n=1200, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 16, (n, 5)).astype(np.float32)
    y = X[:, 0] * 0.2 + rng.standard_cauchy(size=n) * 0.3
    Y = np.stack([y, np.sin(X[:, 2] / 3) + rng.laplace(size=n) * 0.2, (X[:, 3] > 10) * 1.0], 1)
    return X, y, Y


@pytest.mark.parametrize("objective, target", [
    ({"objective": "reg:absoluteerror"}, "Y"),
    ({"objective": "reg:quantileerror", "quantile_alpha": [0.2, 0.5, 0.8]}, "y"),
    # a forest's trees all refresh from the round's residuals (not the first tree's margins)
    ({"objective": "reg:absoluteerror", "num_parallel_tree": 2}, "Y"),
    ({"objective": "reg:absoluteerror", "num_parallel_tree": 2, "grow_policy": "lossguide",
      "max_leaves": 6}, "Y")])
def test_leaf_refresh_matches_xgboost(objective, target):
    xgb = pytest.importorskip("xgboost")
    X, y, Y = _heavy_tails()
    labels = Y if target == "Y" else y
    p = dict(objective, max_depth=3, learning_rate=0.3, base_score=0.5, **VL)
    ours = gbm.train(p, X, labels, 5)
    theirs = xgb.train(dict(p, tree_method="hist"), xgb.DMatrix(X, labels), 5)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X)), atol=2e-5)


def test_absolute_error_leaves_are_residual_medians_hand_case():
    # one split (x < 1 | x >= 1), learning rate 1: each leaf's value per output is the
    # median of that output's residuals y - 0 in the leaf
    X = np.repeat([[0.0], [1.0]], 5, axis=0).astype(np.float32)
    Y = np.array([[1, 10], [2, 20], [3, 30], [4, 40], [100, 50],
                  [-1, 7], [-2, 7], [-3, 9], [-50, 9], [-5, 8]], dtype=np.float64)
    model = gbm.train(dict(VL, objective="reg:absoluteerror", max_depth=1, learning_rate=1.0,
                           base_score=0.0, min_child_weight=0.0), X, Y, 1)
    tree = model.trees[0]
    leaves = tree.value[tree.left_child < 0]
    np.testing.assert_array_equal(sorted(map(tuple, leaves)), [(-3.0, 8.0), (3.0, 30.0)])


def test_leaf_refresh_with_weights_and_sampling_same_on_threads():
    X, y, Y = _heavy_tails(600)
    w = np.random.default_rng(0).random(600) + 0.5
    p = dict(objective="reg:absoluteerror", max_depth=3, subsample=0.7, **VL)
    one = gbm.train(dict(p, n_jobs=1), X, Y, 3, sample_weight=w)
    two = gbm.train(dict(p, n_jobs=2), X, Y, 3, sample_weight=w)
    assert one.to_json() == two.to_json()


def test_lossguide_paths_keep_to_the_interaction_constraints():
    # XGBoost 3.2 refuses interaction constraints on multi-target trees: the rule is checked
    # on every root-to-leaf path instead (its features lie in one allowed set)
    X, Y = _exact_bins()
    sets = [{0, 1}, {2, 3, 4}]
    model = gbm.train(dict(VL, grow_policy="lossguide", max_leaves=12, max_depth=0,
                           interaction_constraints="[[0,1],[2,3,4]]"), X, Y, 4)
    paths = 0
    for tree in model.trees:
        stack = [(0, frozenset())]
        while stack:
            node, used = stack.pop()
            if tree.left_child[node] < 0:
                assert any(used <= s for s in sets), used
                paths += 1
                continue
            used = used | {int(tree.split_feature[node])}
            stack += [(tree.left_child[node], used), (tree.right_child[node], used)]
    assert paths == 4 * 12  # every tree grew its 12 leaves


def test_multilabel_file_with_other_classes_is_refused(tmp_path):
    import json

    X, Y = _labels(200)
    gbm.GBMClassifier(n_estimators=2, max_depth=2, **VL).fit(X, Y).save_model(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["estimator"]["classes"] == [0, 1]
    doc["estimator"]["classes"] = [0, 1, 2]  # one per output: not a multi-label file
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="estimator.classes must hold 2 distinct labels"):
        gbm.GBMClassifier().load_model(tmp_path / "bad.json")


# -- trees_to_dataframe -----------------------------------------------------------------------
def test_trees_to_dataframe_vector_leaves():
    """XGBoost 3.4's layout: a split is one row with no Target, a leaf one row per output;
    the frame rebuilds the model's margins from pred_leaf (an oracle independent of the
    dump code) and its Yes/No/Missing are the trees' children."""
    X, Y = _exact_bins(400)
    booster = gbm.train(dict(VL, max_depth=3, base_score=0.0), X, Y, 3)
    df = booster.trees_to_dataframe()
    assert list(df.columns[:3]) == ["Tree", "Target", "Node"] and str(df.Target.dtype) == "Int64"
    splits, leaves = df[df.Feature != "Leaf"], df[df.Feature == "Leaf"]
    assert splits.Target.isna().all() and not leaves.Target.isna().any()
    assert len(splits) == sum(t.n_nodes - t.n_leaves for t in booster.trees)
    assert len(leaves) == 3 * sum(t.n_leaves for t in booster.trees)
    assert df[["Tree", "Node"]].drop_duplicates().shape[0] == sum(t.n_nodes for t in booster.trees)
    for row in splits.itertuples():
        tree = booster.trees[row.Tree]
        assert row.Yes == f"{row.Tree}-{tree.left_child[row.Node]}"
        assert row.No == f"{row.Tree}-{tree.right_child[row.Node]}"
        assert row.Split == pytest.approx(float(tree.threshold[row.Node]))
    # leaf values per (tree, node, target), summed along each row's leaves = the margin
    value = {(r.Tree, r.Node, r.Target): r.Gain for r in leaves.itertuples()}
    leaf_ids = booster.predict(X, pred_leaf=True).astype(int)
    rebuilt = np.array([[sum(value[(t, leaf_ids[i, t], j)] for t in range(3)) for j in range(3)]
                        for i in range(0, 400, 7)])
    np.testing.assert_allclose(rebuilt, booster.predict(X[::7], output_margin=True), rtol=1e-6)


def test_trees_to_dataframe_one_output_per_tree_unchanged():
    """A model of one-output trees keeps the frame without a Target column."""
    X, Y = _exact_bins(300)
    df = gbm.train({"max_depth": 2}, X, Y, 2).trees_to_dataframe()
    assert "Target" not in df.columns and df.columns[0] == "Tree"
