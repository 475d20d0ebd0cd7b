"""Interaction constraints: no root-to-leaf path mixes features that may not interact."""
import numpy as np
import pytest

import gbm
from gbm.tree.constraints import allowed_features, interaction_matrix

rng = np.random.default_rng(0)
X = rng.normal(size=(5000, 6))
y = X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] + X[:, 4] * X[:, 5] + 0.1 * rng.normal(size=5000)
SETS = [[0, 1], [2, 3, 4]]  # feature 5 is in no set


def _paths(tree, node=0, used=()):
    if tree.left_child[node] < 0:
        yield set(used)
        return
    used = used + (int(tree.split_feature[node]),)
    yield from _paths(tree, tree.left_child[node], used)
    yield from _paths(tree, tree.right_child[node], used)


@pytest.mark.parametrize("constraints", [SETS, "[[0, 1], [2, 3, 4]]"])
def test_no_path_mixes_forbidden_features(constraints):
    b = gbm.train({"max_depth": 5, "interaction_constraints": constraints}, X, y, 20)
    paths = [p for t in b.trees for p in _paths(t)]
    for path in paths:
        assert len(path) <= 1 or any(path <= set(s) for s in SETS), path
    unconstrained = gbm.train({"max_depth": 5}, X, y, 20)
    mixed = [p for t in unconstrained.trees for p in _paths(t)
             if len(p) > 1 and not any(p <= set(s) for s in SETS)]
    assert mixed  # the data invite forbidden interactions; only the constraint stops them


def test_allowed_features_follow_xgboosts_rule():
    matrix = interaction_matrix([frozenset({0, 1}), frozenset({1, 2, 3})], 5)
    paths = np.zeros((5, 5), dtype=bool)  # the root, then paths {1}, {2}, {4}, {1, 2}
    for row, used in ((1, [1]), (2, [2]), (3, [4]), (4, [1, 2])):
        paths[row, used] = True
    assert allowed_features(matrix, paths).astype(int).tolist() == [
        [1, 1, 1, 1, 1], [1, 1, 1, 1, 0], [0, 1, 1, 1, 0], [0, 0, 0, 0, 1], [0, 1, 1, 1, 0]]


def test_constraints_by_feature_name_in_the_estimator():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=list("abcdef"))
    model = gbm.GBMRegressor(n_estimators=10, interaction_constraints=[["a", "b"], ["c", "d", "e"]])
    model.fit(df, y)
    for t in model.get_booster().trees:
        for path in _paths(t):
            assert len(path) <= 1 or path <= {0, 1} or path <= {2, 3, 4}


@pytest.mark.parametrize("value, message", [
    ([[0, 9]], r"features are indices in \[0, 6\)"),
    ([["zz"]], "names feature 'zz'"),
    ("[[0, 1]", "not a JSON list of lists"),
    ([0, 1], "must be a list of lists"),
])
def test_bad_constraints(value, message):
    with pytest.raises(ValueError, match=message):
        gbm.train({"interaction_constraints": value}, X, y, 1)


def _grid_predictions(booster, feature, base_rows):
    grid = np.linspace(-3, 3, 41)
    out = []
    for value in grid:
        rows = base_rows.copy()
        rows[:, feature] = value
        out.append(booster.predict(rows))
    return np.array(out)  # (grid, rows)


@pytest.mark.parametrize("constraints", [[1, -1, 0, 0, 0, 0], "(1,-1,0,0,0,0)", {0: 1, 1: -1}])
def test_monotone_constraints_hold_on_a_grid(constraints):
    Xm = rng.normal(size=(4000, 6))
    ym = np.sin(2 * Xm[:, 0]) + Xm[:, 0] - np.cos(3 * Xm[:, 1]) - Xm[:, 1] + Xm[:, 2] ** 2 \
        + 0.3 * rng.normal(size=4000)
    b = gbm.train({"max_depth": 5, "monotone_constraints": constraints}, Xm, ym, 40)
    up = _grid_predictions(b, 0, Xm[:50])
    down = _grid_predictions(b, 1, Xm[:50])
    assert (np.diff(up, axis=0) >= 0).all()
    assert (np.diff(down, axis=0) <= 0).all()
    free = gbm.train({"max_depth": 5}, Xm, ym, 40)
    assert (np.diff(_grid_predictions(free, 0, Xm[:50]), axis=0) < 0).any()  # sin wiggles


def test_monotone_by_name_in_the_estimator_and_bad_values():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=list("abcdef"))
    model = gbm.GBMRegressor(n_estimators=10, monotone_constraints={"a": 1}).fit(df, y)
    grid = _grid_predictions(model.get_booster(), 0, X[:20])
    assert (np.diff(grid, axis=0) >= 0).all()
    for value, message in [([1, 0], "has 2 entries but X has 6"), ([2, 0, 0, 0, 0, 0], "-1, 0 or 1"),
                           ({"zz": 1}, "names feature 'zz'"), ("1,0", "not of the form")]:
        with pytest.raises(ValueError, match=message):
            gbm.train({"monotone_constraints": value}, X, y, 1)
