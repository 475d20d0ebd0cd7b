"""Interaction constraints: no root-to-leaf path mixes features that may not interact."""
import numpy as np
import pytest

import gbm
from gbm.constraints import allowed_features

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
    sets = [frozenset({0, 1}), frozenset({1, 2, 3})]
    assert allowed_features(sets, frozenset(), 5).tolist() == [1, 1, 1, 1, 1]
    assert allowed_features(sets, frozenset({1}), 5).tolist() == [1, 1, 1, 1, 0]
    assert allowed_features(sets, frozenset({2}), 5).tolist() == [0, 1, 1, 1, 0]
    assert allowed_features(sets, frozenset({4}), 5).tolist() == [0, 0, 0, 0, 1]


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
