"""Whole trees against oracles outside gbm: xgboost on exact bins, and small hand-made data
whose splits and leaves are computed by hand.

On features with few distinct values both libraries have one bin per value, so they see
the same candidate splits; with each regularisation parameter alone (and lossguide with
several leaves) their predictions must then agree to float32 precision. The one
documented difference: with both ``reg_alpha`` and ``max_delta_step``, xgboost's gain
adds ``+alpha |w|`` to ``-(2 G w + (H + lambda) w^2)`` where gbm subtracts ``2 alpha |w|``
(minus twice the regularised loss; tests/test_oracles_split.py checks it against the
loss minimum), so that pair is left out here; and depthwise growth with ``max_leaves``
binding splits a level's best nodes in gbm, the first ones by node id in xgboost.
"""
import json

import numpy as np
import pytest

import gbm
from gbm.bins.binning import BinMapper, feature_cuts

xgb = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 8, size=(1000, 4)).astype(np.float32)  # 8 values: exact bins
    y = X[:, 0] - 0.7 * X[:, 1] + 0.4 * X[:, 2] * (X[:, 3] > 3) + rng.normal(size=1000)
    return X, y


BASE = {"max_depth": 3, "learning_rate": 0.5, "base_score": 0.3, "max_bin": 256}
CASES = {
    "default": {},
    "lambda_0": {"reg_lambda": 0.0},
    "lambda_10": {"reg_lambda": 10.0},
    "alpha": {"reg_alpha": 20.0},
    "alpha_lambda": {"reg_alpha": 8.0, "reg_lambda": 3.0},
    "max_delta_step": {"max_delta_step": 0.3},
    "max_delta_step_lambda": {"max_delta_step": 0.6, "reg_lambda": 5.0},
    "gamma": {"gamma": 30.0},
    "min_child_weight": {"min_child_weight": 60.0},
    "monotone": {"monotone_constraints": "(1,-1,0,0)"},
    "lossguide": {"grow_policy": "lossguide", "max_leaves": 6, "max_depth": 0},
    "lossguide_lambda_gamma": {"grow_policy": "lossguide", "max_leaves": 5, "max_depth": 0,
                               "reg_lambda": 4.0, "gamma": 5.0},
}


@pytest.mark.parametrize("name", CASES)
def test_predictions_equal_xgboost_on_exact_bins(data, name):
    X, y = data
    params = dict(BASE, **CASES[name])
    ours = gbm.train(params, X, y, 3)
    theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X, y), 3)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X)), rtol=1e-5,
                               atol=1e-5)


def _nodes(dump):
    """(split feature, split value) of every inner node, in breadth-first order."""
    out, queue = [], [json.loads(dump)]
    while queue:
        node = queue.pop(0)
        if "children" in node:
            out.append((node["split"], node["split_condition"]))
            queue.extend(node["children"])
    return sorted(out)


def test_lossguide_trees_equal_xgboosts(data):
    """Several leaves: the order of expansion decides which leaves are split before
    max_leaves binds, so a wrong order gives other trees."""
    X, y = data
    params = dict(BASE, grow_policy="lossguide", max_leaves=7, max_depth=0)
    ours = gbm.train(params, X, y, 2)
    theirs = xgb.train(dict(params, tree_method="hist"), xgb.DMatrix(X, y), 2)
    for tree, dump in zip(ours.trees, theirs.get_dump(dump_format="json")):
        inner = tree.left_child >= 0
        mine = sorted((f"f{f}", float(t) + 0.5)  # gbm cuts halfway: v - 0.5 for xgboost's v
                      for f, t in zip(tree.split_feature[inner], tree.threshold[inner]))
        assert tree.n_leaves == 7
        assert mine == _nodes(dump)


# --- hand-made data: splits and leaves by hand -------------------------------------------

def _steps():
    """x = 0 0 0 1 1 1 1 1 1 1, y = -1 -1 -1 then 1: one split, gain by hand."""
    X = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1, 1], np.float64)[:, None]
    y = np.array([-1, -1, -1, 1, 1, 1, 1, 1, 1, 1], np.float64)
    return X, y


# base_score 0, squared error: g = -y, h = 1 per row. Left: G = 3, H = 3; right: G = -7,
# H = 7; root: G = -4, H = 10. lambda = 0: gain = 9/3 + 49/7 - 16/10 = 8.4
HAND = dict(base_score=0.0, reg_lambda=0.0, learning_rate=1.0, max_depth=1)


def test_split_and_leaves_by_hand():
    X, y = _steps()
    booster = gbm.train(HAND, X, y, 1)
    tree = booster.trees[0]
    assert tree.split_feature[0] == 0 and tree.threshold[0] == 0.5
    assert tree.gain[0] == pytest.approx(8.4, rel=1e-12)
    np.testing.assert_allclose(booster.predict(X), y, rtol=0, atol=1e-12)  # -G/H = means
    lam = gbm.train(dict(HAND, reg_lambda=2.0), X, y, 1)
    # leaves -G / (H + 2): -3/5 and 7/9; gain 9/5 + 49/9 - 16/12
    np.testing.assert_allclose(lam.predict(X[[0, 5]]), [-3 / 5, 7 / 9], rtol=1e-12)
    assert lam.trees[0].gain[0] == pytest.approx(9 / 5 + 49 / 9 - 16 / 12, rel=1e-12)
    alpha = gbm.train(dict(HAND, reg_alpha=1.0), X, y, 1)
    # soft threshold by 1: left G 3 -> 2, right G -7 -> -6: leaves -2/3 and 6/7
    np.testing.assert_allclose(alpha.predict(X[[0, 5]]), [-2 / 3, 6 / 7], rtol=1e-12)
    capped = gbm.train(dict(HAND, max_delta_step=0.5), X, y, 1)
    np.testing.assert_allclose(capped.predict(X[[0, 5]]), [-0.5, 0.5], rtol=1e-12)


@pytest.mark.parametrize("gamma, splits", [(8.4, True), (8.4 * (1 + 1e-9), False),
                                           (0.0, True)])
def test_gamma_at_the_gain(gamma, splits):
    """A split whose gain equals gamma is kept (xgboost prunes only below it)."""
    X, y = _steps()
    tree = gbm.train(dict(HAND, gamma=gamma), X, y, 1).trees[0]
    assert (tree.n_leaves == 2) == splits


@pytest.mark.parametrize("min_child_weight, splits", [(3.0, True), (3.0 + 1e-9, False)])
def test_min_child_weight_at_an_integer_hessian_sum(min_child_weight, splits):
    """The left child holds 3 rows of hessian 1: a limit of exactly 3 allows the split."""
    X, y = _steps()
    tree = gbm.train(dict(HAND, min_child_weight=min_child_weight), X, y, 1).trees[0]
    assert (tree.n_leaves == 2) == splits


def test_min_child_weight_with_integer_sample_weights():
    # weights 2, 1, 1 on the left: hessian sum 4; the limit 4 allows the split, 4.5 not
    X, y = _steps()
    w = np.array([2, 1, 1, 1, 1, 1, 1, 1, 1, 1], np.float64)
    assert gbm.train(dict(HAND, min_child_weight=4.0), X, y, 1, sample_weight=w).trees[0].n_leaves == 2
    assert gbm.train(dict(HAND, min_child_weight=4.5), X, y, 1, sample_weight=w).trees[0].n_leaves == 1


def test_lossguide_expands_the_best_leaf_first_by_hand():
    """Four groups of 4 rows, y = 0, 1, 10, 20 (g = -y, h = 1). The root splits at
    x < 1.5 (gain 2 + 1800 - 961 = 841, above 320.3 and 800.3); then the right leaf gains
    400 + 1600 - 1800 = 200 at x < 2.5, the left one 0 + 4 - 2 = 2 at x < 0.5. With 3
    leaves only the better one is split."""
    X = np.repeat([0.0, 1.0, 2.0, 3.0], 4)[:, None]
    y = np.repeat([0.0, 1.0, 10.0, 20.0], 4)
    params = dict(HAND, grow_policy="lossguide", max_depth=0)
    two = gbm.train(dict(params, max_leaves=2), X, y, 1).trees[0]
    assert two.threshold[0] == 1.5 and two.gain[0] == pytest.approx(841.0, rel=1e-12)
    three = gbm.train(dict(params, max_leaves=3), X, y, 1).trees[0]
    inner = three.left_child >= 0
    assert three.threshold[inner].tolist() == [1.5, 2.5]  # nodes 0 and 2 (the right)
    assert three.left_child[1] == -1
    np.testing.assert_allclose(three.gain[inner], [841.0, 200.0], rtol=1e-12)
    four = gbm.train(dict(params, max_leaves=4), X, y, 1).trees[0]
    # children get ids as they are created: the right leaf's (3, 4) before the left's (5, 6)
    assert (four.left_child[2], four.left_child[1]) == (3, 5)
    assert four.gain[1] == pytest.approx(2.0, rel=1e-12)


def test_depthwise_max_leaves_splits_the_best_nodes_of_a_level():
    """The data above, depthwise: level 1 holds the left leaf (gain 2) and the right one
    (gain 200); with max_leaves=3 only the right one may split."""
    X = np.repeat([0.0, 1.0, 2.0, 3.0], 4)[:, None]
    y = np.repeat([0.0, 1.0, 10.0, 20.0], 4)
    tree = gbm.train(dict(HAND, max_depth=2, max_leaves=3), X, y, 1).trees[0]
    assert tree.left_child[1] == -1 and tree.left_child[2] >= 0
    assert tree.threshold[2] == 2.5


def test_lossguide_ties_go_to_the_lower_node_id():
    """Two leaves with the same gain: the first created (lower id) is split first."""
    X = np.repeat([0.0, 1.0, 2.0, 3.0], 4)[:, None]
    y = np.repeat([0.0, 1.0, 10.0, 11.0], 4)
    params = dict(HAND, grow_policy="lossguide", max_depth=0, max_leaves=3)
    tree = gbm.train(params, X, y, 1).trees[0]
    # root: x < 1.5; then both children gain exactly 2 (16/4 - 16/8 and 400 + 484 - 882):
    # the left one (id 1) is split first
    assert tree.left_child[1] >= 0 and tree.left_child[2] < 0


# --- cut positions pinned on small data ---------------------------------------------------

@pytest.mark.parametrize("values, max_bin, cuts", [
    (np.arange(12), 4, [2.5, 5.5, 8.5]),  # 12 equal weights into 4 bins of 3
    (np.arange(9), 3, [2.5, 5.5]),
    (np.arange(20), 5, [3.5, 7.5, 11.5, 15.5]),
    (np.arange(8) * 2.0, 8, [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0]),  # exact: midpoints
    (np.array([0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0]), 2, [0.5]),  # a point mass alone
])
def test_cut_positions_on_hand_made_data(values, max_bin, cuts):
    got = feature_cuts(values.astype(np.float32), np.ones(values.size), max_bin)
    np.testing.assert_array_equal(got, np.array(cuts, np.float32))
    mapper = BinMapper(max_bin).fit(values[:, None].astype(np.float32))
    np.testing.assert_array_equal(mapper.cuts[0], np.array(cuts, np.float32))


def test_weighted_cut_positions():
    # values 0..5, weights 3 1 1 1 1 3 into 2 bins: half the weight (5) lies below 2.5
    got = feature_cuts(np.arange(6, dtype=np.float32), np.array([3.0, 1, 1, 1, 1, 3]), 2)
    np.testing.assert_array_equal(got, np.array([2.5], np.float32))
    # weights 6 1 1 1 1 1: half (5.5) is nearest to the boundary after 0 (6 below)
    got = feature_cuts(np.arange(6, dtype=np.float32), np.array([6.0, 1, 1, 1, 1, 1]), 2)
    np.testing.assert_array_equal(got, np.array([0.5], np.float32))
