"""SHAP interaction values (``pred_interactions``) and Saabas's contributions
(``approx_contribs``).

Three tiers: a hand-made tree whose values are worked out by hand from the Shapley
formulas (an oracle independent of both twins); the CPU kernels against their brute-force
reference twins on random trees (missing values, categorical splits, repeated features on
a path); the identities on trained models (rows sum to ``pred_contribs``, the matrix to the
margin), thread counts, and parity with XGBoost's own ``predict`` on the same model.
"""
import numpy as np
import pytest

import gbm
from gbm.kernels import cpu, reference
from gbm.tree.structure import Forest, Tree
from tests.support.kernel_inputs import random_rows
from tests.support.random_trees import random_tree, with_categorical_splits

KERNELS = ("tree_shap_interactions", "tree_saabas")


def _run(module, name, forest, X, n_groups, n_threads=2):
    width = X.shape[1] + 1
    shape = (X.shape[0], n_groups, width, width) if name == "tree_shap_interactions" else \
        (X.shape[0], n_groups, width)
    out = np.zeros(shape)
    complete = getattr(module, name)(
        X, forest.split_feature, forest.threshold, forest.default_left, forest.split_type,
        forest.cat_row, forest.cat_bits, forest.left_child, forest.value, forest.cover,
        forest.tree_offsets, forest.tree_group, forest.tree_depth, n_threads, out)
    assert complete
    return out


def _margin(forest, X, n_groups):
    margin = np.zeros((X.shape[0], n_groups))
    cpu.predict(X, forest.walk, forest.cat_bits, forest.value, forest.tree_offsets,
                forest.tree_group, forest.tree_depth, margin)
    return margin


# --- a hand-made tree -------------------------------------------------------------------

def _hand_tree(categorical_root=False):
    """Root: feature 0 (x0 < 0.5 left, missing right; or, categorical, code 1 goes right),
    cover 10. Left (cover 6): feature 1 (x1 < 0.5 left, missing left) -> leaves 1.0
    (cover 2) and 4.0 (cover 4). Right: leaf -2.0 (cover 4). Feature 2 is never used."""
    split_type = np.array([1, 0, 0, 0, 0], np.uint8) if categorical_root else None
    cat_bits = np.array([[2, 0, 0, 0, 0, 0, 0, 0]], np.uint32) if categorical_root else None
    return Tree(split_feature=np.array([0, 1, -1, -1, -1], np.int32),
                split_bin=np.zeros(5, np.int32),
                threshold=np.array([0.0 if categorical_root else 0.5, 0.5, 0, 0, 0], np.float32),
                default_left=np.array([0, 1, 0, 0, 0], np.uint8),
                left_child=np.array([1, 3, -1, -1, -1], np.int32),
                right_child=np.array([2, 4, -1, -1, -1], np.int32),
                value=np.array([0.0, 0.0, -2.0, 1.0, 4.0]), gain=np.zeros(5),
                cover=np.array([10.0, 6.0, 4.0, 2.0, 4.0]), split_type=split_type,
                cat_bits=cat_bits)


# Worked by hand. The game v(S) = the tree's expected output knowing the features in S:
# E(left) = (2 * 1 + 4 * 4) / 6 = 3, v({}) = (6 * 3 + 4 * -2) / 10 = 1.
# Row A (x0 left, x1 right -> leaf 4): v({0}) = 3, v({1}) = (6 * 4 - 8) / 10 = 1.6,
#   v({0, 1}) = 4. phi_0 = ((3 - 1) + (4 - 1.6)) / 2 = 2.2, phi_1 = (0.6 + 1) / 2 = 0.8,
#   phi_01 = (v01 - v0 - v1 + v{}) / 2 = (4 - 3 - 1.6 + 1) / 2 = 0.2; diagonal 2.0, 0.6.
#   Saabas: bias 1, feature 0 gets 3 - 1 = 2, feature 1 gets 4 - 3 = 1.
# Row B (x0 right -> leaf -2; x1 left): v({0}) = -2, v({1}) = (6 * 1 - 8) / 10 = -0.2,
#   v({0, 1}) = -2. phi_0 = (-3 - 1.8) / 2 = -2.4, phi_1 = (-1.2 + 0) / 2 = -0.6,
#   phi_01 = (-2 + 2 + 0.2 + 1) / 2 = 0.6; diagonal -3.0, -1.2. Saabas: -3 and 0.
HAND_INTERACTIONS = {
    "A": [[2.0, 0.2, 0, 0], [0.2, 0.6, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1.0]],
    "B": [[-3.0, 0.6, 0, 0], [0.6, -1.2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1.0]],
}
HAND_SAABAS = {"A": [2.0, 1.0, 0, 1.0], "B": [-3.0, 0, 0, 1.0]}


@pytest.mark.parametrize("categorical_root", [False, True])
@pytest.mark.parametrize("module", [cpu, reference], ids=["cpu", "reference"])
def test_hand_made_tree(module, categorical_root):
    forest = Forest([_hand_tree(categorical_root)], [0])
    # row A: x0 goes left, x1 right; row B: x0 goes right (x0 = 1: the category in the
    # set, or 1 >= 0.5), x1 left; row C is B with x0 and x1 missing (right, then left)
    X = np.array([[0.0, 1.0, 7.0], [1.0, 0.0, 7.0], [np.nan, np.nan, np.nan]], np.float32)
    interactions = _run(module, "tree_shap_interactions", forest, X, 1)[:, 0]
    saabas = _run(module, "tree_saabas", forest, X, 1)[:, 0]
    expected = np.array([HAND_INTERACTIONS[k] for k in "ABB"])
    np.testing.assert_allclose(interactions, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(saabas, np.array([HAND_SAABAS[k] for k in "ABB"]), rtol=0,
                               atol=1e-12)


# --- kernels vs their brute-force twins ----------------------------------------------------

def _forest(case, rng, n_features):
    n_groups = 1
    if case == "stump":
        trees = [random_tree(rng, 1, n_features)]
    elif case == "chain_one_feature":  # one feature split again and again on a path
        trees = [random_tree(rng, 6, 1, chain=True)]
    elif case == "chain":
        trees = [random_tree(rng, 7, n_features, chain=True)]
    elif case == "bushy":
        trees = [random_tree(rng, 14, n_features)]
    elif case == "multiclass":
        n_groups = 3
        trees = [random_tree(rng, k % 9, n_features) for k in range(12)]
    elif case == "loose_cover":  # parents' covers not their children's sums
        trees = [random_tree(rng, k, n_features, consistent_cover=False) for k in range(1, 8)]
    else:  # "categorical"
        trees = [with_categorical_splits(rng, random_tree(rng, k, n_features, chain=k % 4 == 0))
                 for k in range(1, 10)]
    return Forest(trees, np.arange(len(trees)) % n_groups), n_groups


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("case", ["stump", "chain_one_feature", "chain", "bushy", "multiclass",
                                  "loose_cover", "categorical"])
def test_kernel_matches_its_reference(name, case):
    rng = np.random.default_rng(sum(map(ord, case)))
    n_features = 5
    forest, n_groups = _forest(case, rng, n_features)
    X = random_rows(rng, 40, n_features, missing_rate=0.25)
    X[0] = np.nan  # missing everywhere: the default ways
    X[1] = 7.0  # a code no categorical set holds
    fast = _run(cpu, name, forest, X, n_groups)
    slow = _run(reference, name, forest, X, n_groups)
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-10)
    margin = _margin(forest, X, n_groups)
    if name == "tree_saabas":
        np.testing.assert_allclose(fast.sum(axis=2), margin, rtol=1e-10, atol=1e-10)
        return
    # rows add up to the SHAP values, the matrix to the trees' output; symmetric
    shap = np.zeros((X.shape[0], n_groups, n_features + 1))
    cpu.tree_shap(X, forest.split_feature, forest.threshold, forest.default_left,
                  forest.split_type, forest.cat_row, forest.cat_bits, forest.left_child,
                  forest.value, forest.cover, forest.tree_offsets, forest.tree_group,
                  forest.tree_depth, 1, shap)
    np.testing.assert_allclose(fast.sum(axis=3), shap, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fast.sum(axis=(2, 3)), margin, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fast, np.swapaxes(fast, 2, 3), rtol=1e-9, atol=1e-10)
    if case in ("bushy", "multiclass", "categorical"):
        assert np.abs(fast - fast[:, :, np.arange(6), np.arange(6)][..., None]
                      * np.eye(6)).max() > 1e-3  # some interaction off the diagonal


@pytest.mark.parametrize("name", KERNELS)
def test_kernel_thread_count_does_not_change_results(name):
    rng = np.random.default_rng(3)
    trees = [with_categorical_splits(rng, random_tree(rng, k % 10, 6), share=0.3)
             for k in range(20)]
    forest = Forest(trees, np.arange(20) % 2)
    X = random_rows(rng, 151, 6, missing_rate=0.1)
    one = _run(cpu, name, forest, X, 2, n_threads=1)
    for n_threads in (2, 3, 7):
        np.testing.assert_array_equal(one, _run(cpu, name, forest, X, 2, n_threads=n_threads))


# --- trained models ----------------------------------------------------------------------

def _trained(kind, missing_rate=0.1, rounds=8, n_jobs=1):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 6)).astype(np.float32)
    X[rng.random(X.shape) < missing_rate] = np.nan
    clean = np.nan_to_num(X)
    signal = clean[:, 0] + clean[:, 1] * clean[:, 2] + 0.5 * np.sin(3 * clean[:, 3])
    params = {"max_depth": 4, "learning_rate": 0.3, "n_jobs": n_jobs}
    if kind == "regression":
        y = signal + rng.normal(scale=0.1, size=signal.size)
    else:
        params.update(objective="multi:softprob", num_class=3)
        y = np.digitize(signal, [-0.5, 0.5]).astype(float)
    return gbm.train(params, X, y, rounds), X


@pytest.mark.parametrize("kind", ["regression", "multiclass"])
def test_rows_sum_to_contributions_and_the_matrix_to_the_margin(kind):
    booster, X = _trained(kind)
    interactions = booster.predict(X, pred_interactions=True)
    contribs = booster.predict(X, pred_contribs=True)
    margin = booster.predict(X, output_margin=True)
    width = X.shape[1] + 1
    assert interactions.dtype == np.float64
    assert interactions.shape == (len(X), width, width) if kind == "regression" else \
        (len(X), 3, width, width)
    np.testing.assert_allclose(interactions.sum(axis=-1), contribs, rtol=0, atol=1e-9)
    np.testing.assert_allclose(interactions.sum(axis=(-2, -1)), margin, rtol=0, atol=1e-6)
    # the bias sits alone in its corner; features 1 and 2 (a product) interact
    np.testing.assert_array_equal(interactions[..., -1, :-1], 0.0)
    np.testing.assert_allclose(interactions[..., -1, -1], contribs[..., -1], rtol=0, atol=1e-12)
    assert np.abs(interactions[..., 1, 2]).mean() > 0.01


@pytest.mark.parametrize("kind", ["regression", "multiclass"])
def test_approx_contributions_sum_to_the_margin(kind):
    booster, X = _trained(kind)
    approx = booster.predict(X, pred_contribs=True, approx_contribs=True)
    exact = booster.predict(X, pred_contribs=True)
    assert approx.shape == exact.shape
    np.testing.assert_allclose(approx.sum(axis=-1), booster.predict(X, output_margin=True),
                               rtol=0, atol=1e-6)
    np.testing.assert_allclose(approx[..., -1], exact[..., -1], rtol=0, atol=1e-12)  # same bias
    assert not np.allclose(approx, exact)
    # with pred_interactions, XGBoost puts Saabas's values on the diagonal, nothing else
    diagonal = booster.predict(X, pred_interactions=True, approx_contribs=True)
    width = X.shape[1] + 1
    np.testing.assert_array_equal(diagonal[..., np.arange(width), np.arange(width)], approx)
    assert np.count_nonzero(diagonal * (1 - np.eye(width))) == 0


def test_iteration_range():
    booster, X = _trained("regression")
    for rounds in [(0, 3), (2, 6)]:
        interactions = booster.predict(X, pred_interactions=True, iteration_range=rounds)
        np.testing.assert_allclose(interactions.sum(axis=(1, 2)),
                                   booster.predict(X, output_margin=True, iteration_range=rounds),
                                   rtol=0, atol=1e-6)


def test_categorical_model():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(12)
    n = 2000
    codes = rng.integers(0, 9, n)
    X = pd.DataFrame({"c": pd.Categorical.from_codes(codes, [f"k{i}" for i in range(9)]),
                      "x": rng.normal(size=n)})
    y = rng.normal(size=9)[codes] * (1 + X["x"].to_numpy())
    booster = gbm.train({"max_depth": 4}, X, y, 10)
    assert booster.forest().has_categorical
    interactions = booster.predict(X, pred_interactions=True)
    np.testing.assert_allclose(interactions.sum(axis=2), booster.predict(X, pred_contribs=True),
                               rtol=0, atol=1e-9)
    assert np.abs(interactions[:, 0, 1]).mean() > 0.01  # category x number: an interaction
    approx = booster.predict(X, pred_contribs=True, approx_contribs=True)
    np.testing.assert_allclose(approx.sum(axis=1), booster.predict(X, output_margin=True),
                               rtol=0, atol=1e-6)


def test_n_jobs_1_and_2_give_identical_values():
    booster, X = _trained("multiclass", rounds=6, n_jobs=2)
    X = np.tile(X, (2, 1))
    for kwargs in ({"pred_interactions": True}, {"pred_contribs": True, "approx_contribs": True}):
        np.testing.assert_array_equal(booster.predict(X, n_jobs=1, **kwargs),
                                      booster.predict(X, n_jobs=2, **kwargs))


def test_bad_arguments():
    booster, X = _trained("regression", rounds=2)
    with pytest.raises(ValueError, match="pred_interactions=True and pred_leaf=True"):
        booster.predict(X, pred_interactions=True, pred_leaf=True)
    with pytest.raises(ValueError, match="pred_contribs=True and pred_interactions=True"):
        booster.predict(X, pred_contribs=True, pred_interactions=True)
    with pytest.raises(ValueError, match="approx_contribs=True .* set one of them"):
        booster.predict(X, approx_contribs=True)
    with pytest.raises(ValueError, match="approx_contribs=True .* set one of them"):
        booster.predict(X, approx_contribs=True, pred_leaf=True)
    for name in ("pred_interactions", "approx_contribs", "strict_shape", "pred_leaf"):
        with pytest.raises(TypeError, match=f"{name} must be True or False"):
            booster.predict(X, **{name: "yes"})
    with pytest.raises(ValueError, match="base_margin"):
        booster.predict(X, pred_interactions=True, base_margin=np.zeros(len(X)))
    with pytest.raises(ValueError, match="features"):
        booster.predict(X[:, :4], pred_interactions=True)


# --- parity with XGBoost ---------------------------------------------------------------------

def _xgboost_model(xgb, kind):
    """An XGBoost model and the rows to explain: regression, binary, multiclass with
    num_parallel_tree 2 (missing values in all), or a categorical regression."""
    rng = np.random.default_rng(5)
    n = 600
    if kind == "categorical":
        pd = pytest.importorskip("pandas")
        codes = rng.integers(0, 7, n)
        X = pd.DataFrame({"c": pd.Categorical.from_codes(codes, [f"k{i}" for i in range(7)]),
                          "x": rng.normal(size=n), "z": rng.normal(size=n)})
        X.loc[rng.random(n) < 0.1, "x"] = np.nan
        y = rng.normal(size=7)[codes] * (1 + X["x"].fillna(0)) + X["z"]
        data = xgb.DMatrix(X, y, enable_categorical=True)
        params = {"max_depth": 4, "max_cat_to_onehot": 1}
        return xgb.train({**params, "nthread": 1}, data, 12), X
    X = rng.normal(size=(n, 6)).astype(np.float32)
    X[rng.random(X.shape) < 0.15] = np.nan
    clean = np.nan_to_num(X)
    signal = clean[:, 0] + clean[:, 1] * clean[:, 2]
    params = {"max_depth": 5, "eta": 0.3, "nthread": 1}
    if kind == "regression":
        y = signal + rng.normal(scale=0.1, size=n)
    elif kind == "binary":
        params["objective"], y = "binary:logistic", (signal > 0).astype(float)
    else:
        params.update(objective="multi:softprob", num_class=3, num_parallel_tree=2)
        y = np.digitize(signal, [-0.5, 0.5]).astype(float)
    return xgb.train(params, xgb.DMatrix(X, y), 10), X


PARITY = {"pred_contribs": dict(pred_contribs=True),
          "approx_contribs": dict(pred_contribs=True, approx_contribs=True),
          "pred_interactions": dict(pred_interactions=True),
          "approx_interactions": dict(pred_interactions=True, approx_contribs=True)}


@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass", "categorical"])
@pytest.mark.parametrize("what", sorted(PARITY))
def test_values_match_xgboost(kind, what):
    """XGBoost computes in float32, gbm in float64: agreement to float32 rounding."""
    xgb = pytest.importorskip("xgboost")
    theirs, X = _xgboost_model(xgb, kind)
    ours = gbm.Booster.from_xgboost(theirs)
    rows = X[:200]
    expected = theirs.predict(xgb.DMatrix(rows, enable_categorical=True), **PARITY[what])
    got = ours.predict(rows, **PARITY[what])
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=2e-5)
    assert np.abs(expected).max() > 0.1


@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
def test_strict_shapes_match_xgboost(kind):
    xgb = pytest.importorskip("xgboost")
    theirs, X = _xgboost_model(xgb, kind)
    ours = gbm.Booster.from_xgboost(theirs)
    rows = X[:7]
    data = xgb.DMatrix(rows)
    for kwargs in ({}, {"output_margin": True}, {"pred_leaf": True}, {"pred_contribs": True},
                   {"pred_interactions": True}, {"pred_contribs": True, "approx_contribs": True},
                   {"pred_leaf": True, "iteration_range": (0, 4)}):
        for strict in (False, True):
            expected = theirs.predict(data, strict_shape=strict, **kwargs)
            got = ours.predict(rows, strict_shape=strict, **kwargs)
            if kwargs.get("pred_leaf") and not strict:
                assert got.shape == (7, expected.shape[-1])  # gbm keeps (n, n_trees)
                continue
            assert got.shape == expected.shape, (kwargs, strict)
            if not kwargs.get("pred_leaf"):
                np.testing.assert_allclose(got, expected, rtol=0, atol=2e-5)
            else:  # depthwise trees keep XGBoost's node ids through the import
                np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kind", ["regression", "multiclass"])
def test_no_rows_give_empty_results_of_each_kinds_shape(kind):
    """XGBoost predicts 0 rows (always as shape (0,)); gbm gives each kind's own shape
    with 0 rows, as it gives for 7 rows, for arrays, a DMatrix and inplace_predict."""
    xgb = pytest.importorskip("xgboost")
    sparse = pytest.importorskip("scipy.sparse")
    theirs, X = _xgboost_model(xgb, kind)
    ours = gbm.Booster.from_xgboost(theirs)
    empty = X[:0]
    assert theirs.predict(xgb.DMatrix(empty)).shape[0] == 0
    for kwargs in ({}, {"output_margin": True}, {"pred_leaf": True}, {"pred_contribs": True},
                   {"pred_interactions": True}, {"pred_contribs": True, "approx_contribs": True}):
        for strict in (False, True):
            full = ours.predict(X[:7], strict_shape=strict, **kwargs)
            for rows in (empty, gbm.DMatrix(empty), sparse.csr_matrix(empty)):
                got = ours.predict(rows, strict_shape=strict, **kwargs)
                assert got.shape == (0,) + full.shape[1:], (kwargs, strict)
    for predict_type in ("value", "margin"):
        for strict in (False, True):
            got = ours.inplace_predict(empty, predict_type=predict_type, strict_shape=strict)
            full = ours.inplace_predict(X[:7], predict_type=predict_type, strict_shape=strict)
            assert got.shape == (0,) + full.shape[1:]


def test_strict_shapes_of_class_labels_match_xgboost():
    """multi:softmax predicts one label per row: (n,) or, strict, (n, 1); margins keep
    their groups."""
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 3)).astype(np.float32)
    y = np.digitize(X[:, 0], [-0.5, 0.5]).astype(float)
    theirs = xgb.train({"objective": "multi:softmax", "num_class": 3, "max_depth": 2},
                       xgb.DMatrix(X, y), 4)
    ours = gbm.Booster.from_xgboost(theirs)
    for kwargs in ({}, {"output_margin": True}):
        for strict in (False, True):
            expected = theirs.predict(xgb.DMatrix(X), strict_shape=strict, **kwargs)
            got = ours.predict(X, strict_shape=strict, **kwargs)
            assert got.shape == expected.shape
            np.testing.assert_allclose(got, expected, rtol=0, atol=2e-5)
