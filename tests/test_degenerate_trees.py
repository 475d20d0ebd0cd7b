"""Models that are legal but extreme: a 100,000-level chain and inner nodes of cover 0.

They used to crash or fail (TreeSHAP's buffers grew with the square of the depth, a cover
of 0 divided by zero, ``get_dump`` recursed); each runs in a fresh interpreter so that a
crash fails its test only.
"""
from tests.support.isolated import run_isolated

CHAIN = """
import json
import numpy as np
import gbm
from gbm.kernels import reference

DEPTH = {depth}
n = 2 * DEPTH + 1
# inner node 2i (depth i) splits x < i + 0.5: left to leaf 2i + 1 (value i), right on
split_feature, threshold, left, value, cover = [], [], [], [], []
for i in range(DEPTH):
    split_feature += [0, -1]
    threshold += [i + 0.5, 0.0]
    left += [2 * i + 2 - 1, -1]
    value += [0.0, float(i)]
    cover += [float(DEPTH - i + 1), 1.0]
split_feature.append(-1); threshold.append(0.0); left.append(-1)
value.append(float(DEPTH)); cover.append(1.0)
left = [2 * (k // 2) + 1 if k % 2 == 0 and k < n - 1 else -1 for k in range(n)]
tree = {{"split_feature": split_feature, "split_bin": [0] * n, "threshold": threshold,
        "default_left": [1] * n, "left_child": left,
        "right_child": [c + 1 if c >= 0 else -1 for c in left], "value": value,
        "gain": [0.0] * n, "cover": cover, "group": 0}}
params = json.loads(gbm.train({{}}, np.arange(8.0)[:, None], np.arange(8.0), 1).to_json())["params"]
model = {{"format": "gbm-model", "version": 3, "params": params, "n_features": 1,
         "feature_names": None, "base_margin": [0.5], "cuts": [[]], "best_iteration": None,
         "best_score": None, "iteration_indptr": [0, 1], "trees": [tree]}}
booster = gbm.Booster.from_json(json.dumps(model))
assert booster.trees[0].depth() == DEPTH

X = np.array([[3.0], [0.0], [np.nan], [1e6], [DEPTH - 1.0], [DEPTH - 0.2]], dtype=np.float32)
expected_leaf = np.array([7, 1, 1, n - 1, 2 * DEPTH - 1, n - 1])
expected = np.array([3.0, 0.0, 0.0, DEPTH, DEPTH - 1, DEPTH]) + 0.5
np.testing.assert_array_equal(booster.predict(X, pred_leaf=True)[:, 0], expected_leaf)
np.testing.assert_array_equal(booster.predict(X), expected)

contribs = booster.predict(X, pred_contribs=True)
np.testing.assert_allclose(contribs.sum(axis=1), expected, rtol=0, atol=1e-9 * DEPTH)
forest = booster.forest()
twin = np.zeros((X.shape[0], 1, 2))
twin[:, :, 1] = 0.5
reference.tree_shap(X, forest.split_feature, forest.threshold, forest.default_left,
                    forest.split_type, forest.cat_row, forest.cat_bits, forest.left_child,
                    forest.value, forest.cover, forest.tree_offsets, forest.tree_group,
                    forest.tree_depth, 1, twin)
np.testing.assert_allclose(contribs, twin[:, 0, :], rtol=0, atol=1e-9 * DEPTH)

dumped = booster.get_dump(dump_format="json")[0]
assert dumped.count('"nodeid"') == n and dumped.endswith("]}}" * DEPTH)
if DEPTH <= 5000:  # the text form indents each line by its depth: quadratic in size
    text = booster.get_dump(with_stats=True)[0].splitlines()
    assert len(text) == n and text[-1].startswith("\\t" * DEPTH)
    assert len(booster.trees_to_dataframe()) == n
    assert gbm.Booster.from_json(booster.to_json()).to_json() == booster.to_json()
print("ok")
"""


def test_100000_level_chain():
    """Load, predict, leaf indices, TreeSHAP (linear memory: 100,000 levels used to ask
    for 100,000^2 path entries) and the JSON dump of a 100,000-level tree."""
    assert run_isolated(CHAIN.format(depth=100_000), timeout=300).strip() == "ok"


def test_5000_level_json_dump_matches_nested_json():
    """get_dump no longer recurses (5,000 levels failed); its JSON form is the nested
    objects' text; the text dump, the DataFrame and a save/load round trip work too."""
    out = run_isolated(CHAIN.format(depth=5000) + """
import sys
sys.setrecursionlimit(20000)  # only for json.loads of the 5,000-level dump below
root = json.loads(dumped)
node, depth = root, 0
while "children" in node:
    assert node["depth"] == depth and node["split_condition"] == depth + 0.5
    node, depth = node["children"][1], depth + 1
assert depth == DEPTH and node["leaf"] == DEPTH
""")
    assert out.strip() == "ok"


ZERO_COVER = """
import json
import numpy as np
import gbm
from gbm.kernels import reference

rng = np.random.default_rng(0)
X = rng.normal(size=(300, 3))
booster = gbm.train({"max_depth": 3}, X, X[:, 0] + X[:, 1] ** 2, 2)
d = json.loads(booster.to_json())
for tree in d["trees"]:  # every node's cover 0: hessians of 0 (min_child_weight=0)
    tree["cover"] = [0.0] * len(tree["cover"])
zero = gbm.Booster.from_json(json.dumps(d))
contribs = zero.predict(X[:50], pred_contribs=True)
assert np.isfinite(contribs).all()
np.testing.assert_allclose(contribs.sum(axis=1), zero.predict(X[:50], output_margin=True),
                           rtol=1e-9, atol=1e-9)
forest = zero.forest()
twin = np.zeros((50, 1, 4))
twin[:, :, 3] = zero.base_margin
reference.tree_shap(X[:50].astype(np.float32), forest.split_feature, forest.threshold,
                    forest.default_left, forest.split_type, forest.cat_row, forest.cat_bits,
                    forest.left_child, forest.value, forest.cover, forest.tree_offsets,
                    forest.tree_group, forest.tree_depth, 1, twin)
np.testing.assert_allclose(contribs, twin[:, 0, :], rtol=1e-9, atol=1e-9)

# a leaf of cover 0 under a node that has some: no subset reaches it when the row goes the
# other way (that element's fractions are both 0), which UNWIND used to divide by
d = json.loads(booster.to_json())
for tree in d["trees"]:
    tree["cover"] = [0.0 if c < 0 and k % 4 == 1 else cover for k, (c, cover)
                     in enumerate(zip(tree["left_child"], tree["cover"]))]
some_zero = gbm.Booster.from_json(json.dumps(d))
assert any((t.cover == 0).any() for t in some_zero.trees)
contribs = some_zero.predict(X[:50], pred_contribs=True)
np.testing.assert_allclose(contribs.sum(axis=1), some_zero.predict(X[:50], output_margin=True),
                           rtol=1e-9, atol=1e-9)
forest = some_zero.forest()
twin = np.zeros((50, 1, 4))
twin[:, :, 3] = some_zero.base_margin
reference.tree_shap(X[:50].astype(np.float32), forest.split_feature, forest.threshold,
                    forest.default_left, forest.split_type, forest.cat_row, forest.cat_bits,
                    forest.left_child, forest.value, forest.cover, forest.tree_offsets,
                    forest.tree_group, forest.tree_depth, 1, twin)
np.testing.assert_allclose(contribs, twin[:, 0, :], rtol=1e-9, atol=1e-9)
print("ok")
"""


def test_inner_nodes_of_cover_zero():
    """A cover of 0 at an inner node (legal: hessians of 0) used to divide by zero in
    pred_contribs; both children now count evenly there, in the kernel and its twin. A
    leaf of cover 0 the row does not reach divided by zero too; it now adds nothing."""
    assert run_isolated(ZERO_COVER).strip() == "ok"
