"""The XGBoost importer reads a vector-leaf tree's leaves by their index: XGBoost keeps a
leaf's index among the leaves in ``right_children`` and its vector at that index of
``leaf_weights``. Each leaf must have its own index: a file in which two leaves point at
one vector (so another is never used) is refused, and a file whose leaves hold their
indices in another order (``leaf_weights`` permuted to match) is the same model."""
import json

import numpy as np
import pytest

import gbm

xgb = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def model():
    """A parsed xgboost 3.2 multi_output_tree model (2 targets, depth 2: 4 leaves a tree),
    its rows, and xgboost's predictions of them."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    Y = np.stack([X[:, 0] + X[:, 1] ** 2, np.sin(X[:, 2]) - X[:, 0]], 1)
    booster = xgb.train({"max_depth": 2, "tree_method": "hist", "nthread": 1,
                         "multi_strategy": "multi_output_tree"}, xgb.DMatrix(X, Y), 2)
    return json.loads(booster.save_raw("json")), X, booster.predict(xgb.DMatrix(X))


def _first_tree(d):
    return d["learner"]["gradient_booster"]["model"]["trees"][0]


def _leaves(tree):
    """The leaves' node ids, in the order of their indices."""
    leaves = [i for i, left in enumerate(tree["left_children"]) if left == -1]
    return sorted(leaves, key=lambda i: tree["right_children"][i])


def test_the_model_imports_as_xgboost_predicts_it(model):
    d, X, theirs = model
    assert len(_leaves(_first_tree(d))) == 4
    np.testing.assert_allclose(gbm.Booster.from_xgboost(d).predict(X), theirs, atol=1e-6)


@pytest.mark.parametrize("shared, unused", [(0, 1), (3, 0), (1, 2)])
def test_two_leaves_sharing_a_vector_are_refused(model, shared, unused):
    d = json.loads(json.dumps(model[0]))
    tree = _first_tree(d)
    leaves = _leaves(tree)
    # every index in range, the count right; vector `unused` read by no leaf (the message
    # names whichever of the two leaves the walk reaches second)
    tree["right_children"][leaves[unused]] = shared
    nodes = f"({leaves[unused]}|{leaves[shared]})"
    with pytest.raises(ValueError, match=rf"trees\[0\]\.right_children\[{nodes}\] is {shared}: "
                                         r"a leaf of a vector-leaf tree holds its own index "
                                         r"among the 4 leaves"):
        gbm.Booster.from_xgboost(d)


def test_leaves_in_another_order_are_the_same_model(model):
    d, X, theirs = model
    d = json.loads(json.dumps(d))
    tree = _first_tree(d)
    leaves = _leaves(tree)
    k = int(tree["tree_param"]["size_leaf_vector"])
    vectors = np.array(tree["leaf_weights"]).reshape(-1, k)
    order = [2, 0, 3, 1]  # leaf leaves[i] now holds index order[i], and its vector there
    moved = np.empty_like(vectors)
    for i, leaf in enumerate(leaves):
        tree["right_children"][leaf] = order[i]
        moved[order[i]] = vectors[i]
    tree["leaf_weights"] = moved.ravel().tolist()
    assert not np.array_equal(moved, vectors)
    np.testing.assert_allclose(gbm.Booster.from_xgboost(d).predict(X), theirs, atol=1e-6)
