"""What a vector-leaf tree stores beside its splits, against values gbm did not compute:
every node's cover (``sum_hessian``: the hessian sum over its rows and every output, what
SHAP's weights, cover importance and the XGBoost export read), gain and values.

- a hand case: one split of 8 rows whose two outputs have hessians 2**6 apart (so their
  fixed-point scales differ, and a cover read in another output's scale, or in the
  gradient's, is off), every number worked out below;
- every node's cover against the hessians a custom objective gave to the rows that reach
  it (from ``pred_leaf``), depthwise, lossguide, on projected gradients, on categorical
  and on sparse data;
- node by node against xgboost 3.2's ``multi_output_tree`` on exact bins: ``sum_hessian``,
  ``loss_changes``, ``base_weights`` and ``leaf_weights``.
"""
import numpy as np
import pytest

import gbm
from tests.support.node_stats import node_rows, paired_nodes, xgboost_trees

VL = {"multi_strategy": "multi_output_tree"}


def _fixed(grad, hess):
    """A custom objective returning these gradients whatever the margins."""
    def objective(margin, y, w):
        assert margin.shape == grad.shape
        return grad, hess
    return objective


def test_hand_case_cover_gain_and_values():
    # x = 0 0 0 0 1 1 1 1: one candidate split (x < 0.5). lambda 1, learning rate 0.5,
    # min_child_weight 0 (output 1's hessians are below the default 1).
    # output 0: left g -1 x4, h 1 1 2 2 (G -4, H 6); right g 4 x4, h 0.5 x4 (G 16, H 2)
    # output 1: left g 1/8 x4, h 1/128 x4 (G 1/2, H 1/32); right g -1/8 x4, h 3/128 x4
    #   (G -1/2, H 3/32)
    # fixed-point scales 2**floor(60 - log2(max * 8)): output 0 g 2**55, h 2**56; output 1
    # g 2**60, h 2**62; every value above is exact in them
    X = np.array([0, 0, 0, 0, 1, 1, 1, 1], np.float64)[:, None]
    grad = np.array([[-1, 1 / 8]] * 4 + [[4, -1 / 8]] * 4)
    hess = np.array([[1, 1 / 128], [1, 1 / 128], [2, 1 / 128], [2, 1 / 128]]
                    + [[0.5, 3 / 128]] * 4)
    params = dict(VL, max_depth=1, learning_rate=0.5, reg_lambda=1.0, min_child_weight=0.0,
                  base_score=0.0)
    tree = gbm.train(params, X, np.zeros((8, 2)), 1, obj=_fixed(grad, hess)).trees[0]
    assert tree.left_child.tolist() == [1, -1, -1] and tree.threshold[0] == 0.5
    # covers: root 8 + 1/8, left 6 + 1/32, right 2 + 3/32
    assert tree.cover.tolist() == [8.125, 6.03125, 2.09375]
    # gain: per output G_L^2 / (H_L + 1) + G_R^2 / (H_R + 1) - G^2 / (H + 1), summed
    gain = (16 / 7 + 256 / 3 - 144 / 9) + (0.25 / (33 / 32) + 0.25 / (35 / 32) - 0.0)
    assert tree.gain[0] == pytest.approx(gain, rel=1e-12)
    # values: -G / (H + 1); leaves times the learning rate
    np.testing.assert_allclose(tree.value, [[-12 / 9, 0.0], [0.5 * 4 / 7, -0.5 * 16 / 33],
                                            [-0.5 * 16 / 3, 0.5 * 16 / 35]], rtol=1e-12)


def _custom_case(seed=0, n=400, k=4):
    """Integer features (one NaN in 20) and a custom objective whose hessians differ by
    2**4 to 2**10 between outputs: squared error on ``Y`` with row weights ``hess``."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 10, (n, 5)).astype(np.float64)
    X[rng.random(X.shape) < 0.05] = np.nan
    Y = np.stack([np.nan_to_num(X[:, j % 5]) * (j + 1) + rng.normal(size=n)
                  for j in range(k)], 1)
    hess = rng.uniform(0.5, 1.5, (n, k)) * np.array([1.0, 1 / 16, 1 / 1024, 40.0][:k])

    def objective(margin, y, w):
        return (margin - Y) * hess, hess
    return X, Y, hess, objective


CASES = {
    "depthwise": {"max_depth": 4},
    "lossguide": {"grow_policy": "lossguide", "max_leaves": 9, "max_depth": 0},
    "projected": {"max_depth": 4, "gradient_projection": True, "projection_dim": 2},
    "categorical": {"max_depth": 3, "max_cat_to_onehot": 4},
    "sparse": {"max_depth": 4},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_cover_is_the_hessian_sum_of_its_rows(name):
    X, Y, hess, objective = _custom_case()
    params = dict(VL, learning_rate=0.3, min_child_weight=0.0, **CASES[name])
    kw = {}
    if name == "categorical":
        X = np.where(np.isnan(X), np.nan, X % 6)
        kw["categorical_features"] = [0, 2]
    data = X
    if name == "sparse":
        sparse = pytest.importorskip("scipy.sparse")
        X = np.where(X < 3, 0.0, X)  # zeros not stored (about a third of the entries)
        data = sparse.csr_matrix(np.nan_to_num(X))
    booster = gbm.train(params, data, Y, 3, obj=objective, **kw)
    leaves = booster.predict(data, pred_leaf=True)
    if name == "categorical":
        assert any(t.split_type.any() for t in booster.trees)
    for i, tree in enumerate(booster.trees):
        assert tree.n_leaves > 3
        expected = node_rows(tree, leaves[:, i]).astype(np.float64) @ hess.sum(axis=1)
        np.testing.assert_allclose(tree.cover, expected, rtol=1e-9)


def _exact_bins(seed=1, n=1500):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 12, (n, 4)).astype(np.float32)  # 12 values: one bin per value
    y = ((X[:, 0] + X[:, 1] + rng.integers(0, 6, n)) % 4).astype(np.float64)
    Y = np.stack([X[:, 0] * 0.2 + X[:, 1] * 0.1 + rng.normal(size=n) * 0.3,
                  np.sin(X[:, 2] / 3) + rng.normal(size=n) * 0.2, (X[:, 3] > 7) * 1.0], 1)
    return X, y, Y, rng.uniform(0.2, 2.0, n)


XGBOOST_CASES = {
    "softprob": {"objective": "multi:softprob", "num_class": 4, "max_depth": 3},
    "weighted_targets": {"max_depth": 4, "reg_lambda": 3.0, "min_child_weight": 5.0},
    "logistic_targets": {"objective": "binary:logistic", "max_depth": 3, "reg_alpha": 0.5},
}


@pytest.mark.parametrize("name", sorted(XGBOOST_CASES))
def test_node_statistics_equal_xgboost_multi_output_tree(name):
    xgb = pytest.importorskip("xgboost")
    X, y, Y, w = _exact_bins()
    target = {"softprob": y, "logistic_targets": (Y > 0.5) * 1.0}.get(name, Y)
    weight = w if name == "weighted_targets" else None
    params = dict(VL, learning_rate=0.5, base_score=0.5, **XGBOOST_CASES[name])
    ours = gbm.train(params, X, target, 4, sample_weight=weight)
    theirs = xgb.train(dict(params, tree_method="hist"),
                       xgb.DMatrix(X, target, weight=weight), 4)
    for tree, their in zip(ours.trees, xgboost_trees(theirs), strict=True):
        k = tree.value.shape[1]
        pairs = np.array(paired_nodes(tree, their))
        a, b = pairs[:, 0], pairs[:, 1]
        assert a.size > 5
        np.testing.assert_allclose(tree.cover[a], np.array(their["sum_hessian"])[b], rtol=2e-6)
        np.testing.assert_allclose(tree.gain[a], np.array(their["loss_changes"])[b],
                                   rtol=2e-5, atol=1e-5)
        values = np.array(their["base_weights"]).reshape(-1, k)
        np.testing.assert_allclose(tree.value[a], values[b], rtol=2e-5, atol=1e-7)
        leaves = np.array(their["leaf_weights"]).reshape(-1, k)
        leaf = tree.left_child[a] < 0
        index = np.array(their["right_children"])[b[leaf]]  # a leaf's index among leaves
        np.testing.assert_allclose(tree.value[a[leaf]], leaves[index], rtol=2e-5, atol=1e-7)
