"""Exact TreeSHAP contributions: ``Booster.predict(X, pred_contribs=True)``.

Three tiers: the Numba kernel (Algorithm 2) against a brute-force Shapley oracle on
random trees; the contract on trained models (sum to the margin, shapes, thread count);
parity with XGBoost's ``pred_contribs`` on XGBoost's own trees, converted to gbm.
"""
import json

import numpy as np
import pytest

import gbm
from gbm.model.booster import Booster
from gbm.kernels import cpu, reference
from gbm.params import validate_params
from gbm.tree.structure import Forest, Tree
from tests.support.kernel_inputs import random_rows
from tests.support.random_trees import random_tree, with_categorical_splits


# --- kernel inputs ---------------------------------------------------------------

def shap_both(forest, X, n_groups, n_threads=2):
    """The kernel's and the brute-force oracle's contributions, (n, n_groups, n_features + 1)."""
    args = (X, forest.split_feature, forest.threshold, forest.default_left, forest.split_type,
            forest.cat_row, forest.cat_bits, forest.left_child, forest.value, forest.cover, forest.tree_offsets, forest.tree_group,
            forest.tree_depth, n_threads)
    fast = np.zeros((X.shape[0], n_groups, X.shape[1] + 1))
    slow = np.zeros_like(fast)
    cpu.tree_shap(*args, fast)
    reference.tree_shap(*args, slow)
    return fast, slow


def forest_margin(forest, X, n_groups):
    margin = np.zeros((X.shape[0], n_groups))
    cpu.predict(X, forest.walk, forest.cat_bits, forest.value, forest.tree_offsets,
                forest.tree_group, forest.tree_depth, margin)
    return margin


# --- kernel vs brute force ------------------------------------------------------------

@pytest.mark.parametrize("case", ["lone_leaf", "stump", "chain", "chain_one_feature", "bushy",
                                  "multi_tree", "multiclass", "loose_cover"])
def test_kernel_matches_brute_force(case):
    rng = np.random.default_rng(sum(map(ord, case)))  # a fixed seed per case
    n_features, n_groups, n_rows = 5, 1, 40
    if case == "lone_leaf":
        trees = [random_tree(rng, 0, n_features)]
    elif case == "stump":
        trees = [random_tree(rng, 1, n_features)]
    elif case == "chain":
        trees = [random_tree(rng, 7, n_features, chain=True)]
    elif case == "chain_one_feature":  # the same feature split again and again on one path
        trees = [random_tree(rng, 6, 1, chain=True)]
    elif case == "bushy":
        trees = [random_tree(rng, 14, n_features)]
    elif case == "multi_tree":
        trees = [random_tree(rng, k, n_features, chain=k % 3 == 0) for k in range(12)]
    elif case == "multiclass":
        n_groups = 3
        trees = [random_tree(rng, k % 9, n_features) for k in range(12)]
    else:  # parents' covers not their children's sum: still an exact game to explain
        trees = [random_tree(rng, k, n_features, consistent_cover=False) for k in range(1, 8)]
    groups = np.arange(len(trees)) % n_groups
    forest = Forest(trees, groups)
    X = random_rows(rng, n_rows, n_features, missing_rate=0.25)
    X[0] = np.nan  # a row missing everywhere: every split sends it its default way
    fast, slow = shap_both(forest, X, n_groups)
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-10)
    if case == "lone_leaf":
        np.testing.assert_array_equal(fast[:, 0, :n_features], 0.0)
        np.testing.assert_array_equal(fast[:, 0, n_features], trees[0].value[0])
    # efficiency: contributions + bias = the tree outputs, row by row
    np.testing.assert_allclose(fast.sum(axis=2), forest_margin(forest, X, n_groups),
                               rtol=1e-10, atol=1e-10)


def test_stump_by_hand():
    """One split on feature 1 (x < 2.5 left, NaN right), covers 1 and 3, leaves -2 and 6:
    the mean is (1 * -2 + 3 * 6) / 4 = 4, and the split feature gets leaf - mean."""
    tree = Tree(split_feature=np.array([1, -1, -1], np.int32), split_bin=np.zeros(3, np.int32),
                threshold=np.array([2.5, 0, 0], np.float32),
                default_left=np.array([0, 0, 0], np.uint8),
                left_child=np.array([1, -1, -1], np.int32),
                right_child=np.array([2, -1, -1], np.int32),
                value=np.array([0.0, -2.0, 6.0]), gain=np.zeros(3),
                cover=np.array([4.0, 1.0, 3.0]))
    X = np.array([[9, 1, 9], [9, 3, 9], [9, np.nan, 9]], np.float32)
    fast, _ = shap_both(Forest([tree], [0]), X, 1)
    expected = np.array([[0, -6, 0, 4], [0, 2, 0, 4], [0, 2, 0, 4]], np.float64)
    np.testing.assert_array_equal(fast[:, 0, :], expected)


def test_kernel_matches_brute_force_with_categorical_splits():
    rng = np.random.default_rng(11)
    trees = [with_categorical_splits(rng, random_tree(rng, k, 5, chain=k % 4 == 0))
             for k in range(1, 10)]
    forest = Forest(trees, np.zeros(len(trees), np.int32))
    assert forest.has_categorical
    X = random_rows(rng, 60, 5, missing_rate=0.2)
    X[1, :] = 7.0  # a code no set holds: goes left everywhere it meets a categorical split
    fast, slow = shap_both(forest, X, 1)
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-10)
    margin = np.zeros((X.shape[0], 1))
    cpu.predict(X, forest.walk, forest.cat_bits, forest.value, forest.tree_offsets,
                forest.tree_group, forest.tree_depth, margin)
    np.testing.assert_allclose(fast.sum(axis=2), margin, rtol=1e-10, atol=1e-10)


def test_contributions_of_a_model_with_category_columns_sum_to_margin():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(12)
    n = 3000
    codes = rng.integers(0, 12, n)
    X = pd.DataFrame({"c": pd.Categorical.from_codes(codes, [f"k{i}" for i in range(12)]),
                      "x": rng.normal(size=n)})
    y = rng.normal(size=12)[codes] + X["x"].to_numpy()
    booster = gbm.train({"max_depth": 4}, X, y, 15)
    assert booster.forest().has_categorical
    contribs = booster.predict(X, pred_contribs=True)
    np.testing.assert_allclose(contribs.sum(axis=1), booster.predict(X, output_margin=True),
                               rtol=1e-9, atol=1e-9)
    # the category column explains the category effect: it varies with the category only
    by_code = pd.Series(contribs[:, 0]).groupby(codes).std()
    assert contribs[:, 0].std() > 0.3 and by_code.max() < contribs[:, 0].std()


def test_kernel_thread_count_does_not_change_results():
    rng = np.random.default_rng(3)
    trees = [random_tree(rng, k % 10, 6) for k in range(20)]
    forest = Forest(trees, np.arange(20) % 2)
    X = random_rows(rng, 301, 6, missing_rate=0.1)
    one, _ = shap_both(forest, X, 2, n_threads=1)
    for n_threads in (2, 3, 7):
        many, _ = shap_both(forest, X, 2, n_threads=n_threads)
        np.testing.assert_array_equal(one, many)


# --- trained models -------------------------------------------------------------------

def _data(rng, n_rows=400, n_features=6, missing_rate=0.0):
    X = rng.normal(size=(n_rows, n_features)).astype(np.float32)
    X[rng.random(X.shape) < missing_rate] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
    return X, signal


def _trained(kind, missing_rate=0.0, rounds=8, n_jobs=1):
    rng = np.random.default_rng(7)
    X, signal = _data(rng, missing_rate=missing_rate)
    params = {"max_depth": 4, "learning_rate": 0.3, "n_jobs": n_jobs}
    if kind == "regression":
        y = signal + rng.normal(scale=0.1, size=signal.size)
    elif kind == "binary":
        params["objective"], y = "binary:logistic", (signal > 0).astype(float)
    else:
        params.update(objective="multi:softprob", num_class=3)
        y = np.digitize(signal, [-0.5, 0.5]).astype(float)
    return gbm.train(params, X, y, rounds), X


@pytest.mark.parametrize("kind, missing_rate", [("regression", 0.0), ("binary", 0.0),
                                                ("multiclass", 0.0), ("regression", 0.2),
                                                ("multiclass", 0.2)])
def test_contributions_sum_to_margin(kind, missing_rate):
    booster, X = _trained(kind, missing_rate)
    contribs = booster.predict(X, pred_contribs=True)
    margin = booster.predict(X, output_margin=True)
    n_groups = 3 if kind == "multiclass" else 1
    expected_shape = (X.shape[0], X.shape[1] + 1) if n_groups == 1 else \
        (X.shape[0], n_groups, X.shape[1] + 1)
    assert contribs.shape == expected_shape and contribs.dtype == np.float64
    np.testing.assert_allclose(contribs.sum(axis=-1), margin, rtol=0, atol=1e-6)
    # the bias is the same for every row; the informative features get non-zero shares
    bias = contribs[..., -1]
    np.testing.assert_array_equal(bias, np.broadcast_to(bias[0], bias.shape))
    assert np.abs(contribs[..., 0]).mean() > 0.01


@pytest.mark.parametrize("kind", ["regression", "multiclass"])
def test_contributions_with_iteration_range(kind):
    booster, X = _trained(kind, missing_rate=0.1)
    for rounds in [(0, 3), (2, 6), (5, 8)]:
        contribs = booster.predict(X, pred_contribs=True, iteration_range=rounds)
        margin = booster.predict(X, output_margin=True, iteration_range=rounds)
        np.testing.assert_allclose(contribs.sum(axis=-1), margin, rtol=0, atol=1e-6)
    first = booster.predict(X, pred_contribs=True, iteration_range=(0, 3))
    assert not np.allclose(first, booster.predict(X, pred_contribs=True))


def test_unused_feature_gets_zero_and_output_margin_is_ignored():
    rng = np.random.default_rng(11)
    X, signal = _data(rng)
    X[:, 4] = 1.0  # a constant feature is never split on
    booster = gbm.train({"max_depth": 3}, X, signal, 5)
    contribs = booster.predict(X, pred_contribs=True)
    np.testing.assert_array_equal(contribs[:, 4], 0.0)
    np.testing.assert_array_equal(contribs,
                                  booster.predict(X, pred_contribs=True, output_margin=True))


def test_n_jobs_1_and_2_give_identical_contributions():
    booster, X = _trained("multiclass", missing_rate=0.1, rounds=10, n_jobs=2)
    X = np.tile(X, (3, 1))  # enough work that two threads are really used
    one = booster.predict(X, pred_contribs=True, n_jobs=1)
    two = booster.predict(X, pred_contribs=True, n_jobs=2)
    np.testing.assert_array_equal(one, two)


def test_bad_arguments():
    booster, X = _trained("regression", rounds=2)
    with pytest.raises(ValueError, match="pred_contribs=True and pred_leaf=True"):
        booster.predict(X, pred_contribs=True, pred_leaf=True)
    with pytest.raises(TypeError, match="pred_contribs must be True or False"):
        booster.predict(X, pred_contribs="yes")
    with pytest.raises(ValueError, match="features"):
        booster.predict(X[:, :3], pred_contribs=True)
    with pytest.raises(ValueError, match="iteration_range"):
        booster.predict(X, pred_contribs=True, iteration_range=(0, 5))


# --- parity with XGBoost --------------------------------------------------------------

def booster_from_xgboost(xgb_booster, objective, num_class=0):
    """A gbm Booster with the same trees as an XGBoost model (numerical splits only).

    Nodes are renumbered breadth first so that each split's children are adjacent and
    come after it (gbm's layout); a leaf's value is XGBoost's ``split_conditions`` entry
    there, an inner node's value its ``base_weights``; covers are ``sum_hessian``.
    """
    learner = json.loads(xgb_booster.save_raw("json"))["learner"]
    model = learner["gradient_booster"]["model"]
    base_score = np.atleast_1d(json.loads(learner["learner_model_param"]["base_score"]))
    if objective == "binary:logistic":
        base_margin = np.log(base_score / (1 - base_score))
    else:
        base_margin = base_score
    params = validate_params({"objective": objective, "num_class": num_class or 1})
    n_features = int(learner["learner_model_param"]["num_feature"])
    booster = Booster(params, n_features=n_features,
                      base_margin=np.asarray(base_margin, np.float64))
    for tree, group in zip(model["trees"], model["tree_info"]):
        booster.add_tree(_tree_from_xgboost(tree), int(group))
    return booster


def _tree_from_xgboost(t):
    xl, xr = t["left_children"], t["right_children"]
    order, new_id = [0], {0: 0}
    for old in order:  # breadth first; children appended in pairs
        if xl[old] >= 0:
            new_id[xl[old]], new_id[xr[old]] = len(order), len(order) + 1
            order += [xl[old], xr[old]]
    n = len(order)
    left = np.full(n, -1, np.int32)
    feature = np.full(n, -1, np.int32)
    threshold = np.zeros(n, np.float32)
    default_left = np.zeros(n, np.uint8)
    value, cover, gain = np.zeros(n), np.zeros(n), np.zeros(n)
    for new, old in enumerate(order):
        cover[new] = t["sum_hessian"][old]
        if xl[old] >= 0:
            left[new] = new_id[xl[old]]
            feature[new] = t["split_indices"][old]
            threshold[new] = t["split_conditions"][old]
            default_left[new] = t["default_left"][old]
            value[new] = t["base_weights"][old]
            gain[new] = t["loss_changes"][old]
        else:
            value[new] = t["split_conditions"][old]
    return Tree(split_feature=feature, split_bin=np.zeros(n, np.int32), threshold=threshold,
                default_left=default_left, left_child=left,
                right_child=np.where(left >= 0, left + 1, -1).astype(np.int32),
                value=value, gain=gain, cover=cover)


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic", "multi:softprob"])
def test_contributions_match_xgboost(objective):
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(5)
    X, signal = _data(rng, n_rows=500, missing_rate=0.15)
    params = {"objective": objective, "tree_method": "hist", "max_depth": 5, "eta": 0.3,
              "nthread": 1}
    num_class = 0
    if objective == "reg:squarederror":
        y = signal + rng.normal(scale=0.1, size=signal.size)
    elif objective == "binary:logistic":
        y = (signal > 0).astype(float)
    else:
        num_class = params["num_class"] = 3
        y = np.digitize(signal, [-0.5, 0.5]).astype(float)
    theirs = xgb.train(params, xgb.DMatrix(X, y), 12)
    ours = booster_from_xgboost(theirs, objective, num_class)
    dmatrix = xgb.DMatrix(X)
    np.testing.assert_allclose(ours.predict(X, output_margin=True),
                               theirs.predict(dmatrix, output_margin=True), rtol=0, atol=1e-5)
    their_contribs = theirs.predict(dmatrix, pred_contribs=True)
    our_contribs = ours.predict(X, pred_contribs=True)
    assert our_contribs.shape == their_contribs.shape
    np.testing.assert_allclose(our_contribs, their_contribs, rtol=0, atol=1e-4)
