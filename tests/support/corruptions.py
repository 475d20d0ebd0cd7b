"""Corrupted model files, one per check the loader makes (``CHECKS``: id, model, kind,
mutation, the message pattern), and the two models they corrupt (``models()``): shared by
tests/test_model_validation.py and tests/test_model_corruption.py."""
import json

import numpy as np
import pytest

import gbm
from gbm import Booster


def numeric_model():
    """Multiclass (3 groups), 2 rounds, numeric features."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5]).astype(float)
    return gbm.train({"objective": "multi:softprob", "num_class": 3, "max_depth": 3}, X, y, 2)


def categorical_model():
    import pandas as pd

    rng = np.random.default_rng(1)
    n = 600
    codes = rng.integers(0, 6, n)
    X = pd.DataFrame({"c": pd.Categorical.from_codes(codes, list("abcdef")),
                      "x": rng.normal(size=n), "z": rng.normal(size=n)})
    y = (codes % 3) * 2.0 + X["x"].to_numpy() + rng.normal(scale=0.1, size=n)
    booster = gbm.train({"max_depth": 3, "max_cat_to_onehot": 1}, X, y, 3)
    assert any(t.has_categorical for t in booster.trees)
    return booster


def models():
    """The models the corruptions expect: "num" and "cat"."""
    return {"num": numeric_model(), "cat": categorical_model()}


def reject(text):
    with pytest.raises(ValueError, match="is not a valid gbm model file") as err:
        Booster.from_json(text)
    return str(err.value)


def first_cat(d):
    """(tree index, node) of the first categorical split."""
    for t, tree in enumerate(d["trees"]):
        if "split_type" in tree:
            return t, tree["split_type"].index(1)
    raise AssertionError("no categorical split")


def _numeric_split_on(feature):
    """Mutation: the first numeric split of any tree moved to ``feature``."""
    def mutate(d):
        for tree in d["trees"]:
            kinds = tree.get("split_type", [0] * len(tree["left_child"]))
            for node, (left, kind) in enumerate(zip(tree["left_child"], kinds)):
                if left >= 0 and kind == 0:
                    tree["split_feature"][node] = feature
                    return
        raise AssertionError("no numeric split")
    return mutate


def _set(path, value):
    """Mutation: set the value at a key path, e.g. ("trees", 0, "group")."""
    def mutate(d):
        target = d
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _dart(weights):
    """Mutation: the model made a dart model with these tree weights."""
    def mutate(d):
        d["params"]["booster"] = "dart"
        d["weight_drop"] = weights
    return mutate


def _node(field, node, value, tree=0):
    def mutate(d):
        d["trees"][tree][field][node] = value
    return mutate


def _first_inner(d, tree=0):
    return d["trees"][tree]["left_child"].index(next(c for c in d["trees"][tree]["left_child"]
                                                     if c >= 0))


def _deeper_leaf_to_second_parent(d):
    """Make a second inner node point at the children of the first: a DAG whose walk from
    the root reaches nodes 1 and 2 twice (the heap-corruption case of issue 12)."""
    tree = d["trees"][0]
    left = tree["left_child"]
    inner = [i for i, c in enumerate(left) if c >= 0]
    b, target = inner[1], inner[-1]  # b takes the last inner node's children (after b)
    left[b], tree["right_child"][b] = left[target], left[target] + 1


def _orphans(d):
    """A root whose children are 1 and 2, then two nodes nobody points at."""
    tree = d["trees"][0]
    n = 5
    tree.update(split_feature=[0, -1, -1, -1, -1], split_bin=[0] * n, threshold=[0.0] * n,
                default_left=[0] * n, left_child=[1, -1, -1, -1, -1],
                right_child=[2, -1, -1, -1, -1], value=[0.0] * n, gain=[0.0] * n,
                cover=[1.0] * n)


def _text_replace(old, new, count=1):
    def mutate(text):
        assert old in text
        return text.replace(old, new, count)
    return mutate


def _nested(depth):
    value = 0
    for _ in range(depth):
        value = [value]
    return value


def _huge_leaves(d):
    for tree in d["trees"]:
        tree["value"] = [1e308] * len(tree["value"])


def _drop_tree(d):
    d["trees"].pop()
    d["iteration_indptr"] = [0, 3, 5]


def _cat_set(words):
    def mutate(d):
        t, _ = first_cat(d)
        d["trees"][t]["cat_bits"][0] = words
    return mutate


def _cat_tree(mutate_tree):
    def mutate(d):
        t, node = first_cat(d)
        mutate_tree(d["trees"][t], node, d)
    return mutate


# (id, model, kind, mutation, message pattern): kind "dict" mutates the parsed file,
# "text" its text.
CHECKS = [
    ("json_nesting", "num", "dict", _set(("params", "interaction_constraints"), _nested(20)),
     r"its JSON nests 2\d levels deep; a model file nests at most 16"),
    ("json_syntax", "num", "text", lambda text: text[: len(text) // 2],
     r"invalid or truncated JSON \("),
    ("json_non_finite_constant", "num", "text", _text_replace('"best_score": null',
                                                              '"best_score": NaN'),
     r"it holds the non-finite number NaN \(at best_score\)"),
    ("json_float_overflow", "num", "text", _text_replace('"best_score": null',
                                                         '"best_score": 1e400'),
     r"it holds the number 1e400, beyond float64's range \(at best_score\)"),
    ("json_int_overflow", "num", "text", _text_replace('"n_features": 6',
                                                       '"n_features": ' + "9" * 400),
     r"it holds the integer 9{20}\.\.\. \(400 digits\), outside the 64-bit range "
     r"\(at n_features\)"),
    ("json_duplicate_key", "num", "text", _text_replace('"n_features": 6',
                                                        '"n_features": 6, "n_features": 7'),
     r"it holds the key 'n_features' twice in one object$"),
    ("format", "num", "dict", _set(("format",), "xgboost"),
     r"'format' is not 'gbm-model' \(a model from another library\?\)"),
    ("version", "num", "dict", _set(("version",), 99), r"version 99 is not supported"),
    ("categorical_in_old_version", "cat", "dict", _set(("version",), 2),
     r"categorical fields in a version 2 file"),
    ("missing_field", "num", "dict", lambda d: d.pop("cuts"), r"missing fields \['cuts'\]"),
    ("unknown_field", "num", "dict", _set(("extra",), 1),
     r"unknown fields \['extra'\] in a version 4 file"),
    ("run_settings", "num", "dict", _set(("params", "n_jobs"), 2),
     r"params holds the run settings \['n_jobs'\], which version 4 files leave out"),
    ("params_object", "num", "dict", _set(("params",), []),
     r"params must be an object, got list"),
    ("params_names", "num", "dict", _set(("params", "eta"), 0.3),
     r"params holds \['eta'\], which are not canonical parameter names"),
    ("params_values", "num", "dict", _set(("params", "max_bin"), 2000),
     r"params: max_bin must be <= 1024, got 2000"),
    ("params_canonical_form", "num", "dict", _set(("params", "max_depth"), 3.0),
     r"params\.max_depth is 3\.0, not in the form gbm writes \(3\)"),
    ("n_features", "num", "dict", _set(("n_features",), "6"),
     r"n_features must be an integer in \[1, 2147483647\], got '6'"),
    ("feature_names", "num", "dict", _set(("feature_names",), ["a"]),
     r"feature_names must be null or 6 strings"),
    ("feature_types", "num", "dict", _set(("feature_types",), ["q"] * 5 + ["x"]),
     r"feature_types must be null or 6 of the codes \['q', 'i', 'int', 'float', 'c'\]"),
    ("attributes", "num", "dict", _set(("attributes",), {"a": 1}),
     r"attributes must be an object whose values are strings"),
    ("base_margin_numbers", "num", "dict", _set(("base_margin",), ["0.5", 0.0, 0.0]),
     r"base_margin holds '0\.5'; expected numbers"),
    ("base_margin_groups", "num", "dict", _set(("base_margin",), [0.0]),
     r"base_margin has 1 values, expected 3, one per output group \(params\.num_class is 3\)"),
    ("cuts_per_feature", "num", "dict", lambda d: d["cuts"].pop(),
     r"cuts must be a list of 6 lists \(one per feature\); n_features is 6"),
    ("float32_range", "num", "dict", lambda d: d["cuts"][0].append(1e39),
     r"cuts\[0\] holds 1e\+39, beyond float32's range"),
    ("cuts_count", "num", "dict", _set(("cuts", 0), [float(i) for i in range(1100)]),
     r"cuts\[0\] has 1100 bin edges; at most 1023"),
    ("cuts_count_categorical", "cat", "dict", _set(("cuts", 0), [float(i) for i in range(1, 7)]),
     r"cuts\[0\] has 6 bin edges; a categorical feature with 6 categories has at most 5 "
     r"\(categories\[0\] has 6 labels\)"),
    ("cuts_increasing", "num", "dict", lambda d: d["cuts"][0].reverse(),
     r"cuts\[0\] is not strictly increasing \(as float32\)"),
    ("categories_per_feature", "cat", "dict", lambda d: d["categories"].pop(),
     r"categories must be null or a list of 3 entries"),
    ("categories_entry", "cat", "dict", _set(("categories", 0), "abcdef"),
     r"categories\[0\] must be null or a list of labels, got str"),
    ("categories_labels", "cat", "dict", _set(("categories", 0), ["a", True]),
     r"categories\[0\] holds True; labels are strings or numbers"),
    ("categories_count", "cat", "dict", _set(("categories", 0), list(range(65537))),
     r"categories\[0\] has 65537 labels; at most 65536"),
    ("categories_distinct", "cat", "dict", _set(("categories", 0), list("abcdea")),
     r"categories\[0\] holds the label 'a' twice"),
    ("categories_some", "cat", "dict", _set(("categories",), [None, None, None]),
     r"categories lists no categorical feature; write null instead"),
    ("trees_list", "num", "dict", _set(("trees",), {}),
     r"trees must be a list of tree objects, got dict"),
    ("tree_object", "num", "dict", _set(("trees", 0), []), r"trees\[0\] must be an object"),
    ("tree_missing_field", "num", "dict", lambda d: d["trees"][0].pop("gain"),
     r"trees\[0\] misses fields \['gain'\]"),
    ("tree_unknown_field", "num", "dict", _set(("trees", 0, "extra"), 1),
     r"trees\[0\] has unknown fields \['extra'\]"),
    ("tree_categorical_pair", "cat", "dict",
     _cat_tree(lambda tree, node, d: tree.pop("cat_bits")),
     r"trees\[\d+\] has one of split_type and cat_bits without the other"),
    ("integer_list", "num", "dict", _set(("trees", 0, "left_child"), 1),
     r"trees\[0\]\.left_child must be a list of integers, got int"),
    ("integer_items", "num", "dict", _node("left_child", 0, "1"),
     r"trees\[0\]\.left_child holds '1'; expected integers"),
    ("number_list", "num", "dict", _set(("trees", 0, "value"), {"a": 1}),
     r"trees\[0\]\.value must be a list of numbers, got dict"),
    ("integer_range", "num", "dict", _node("split_bin", 0, 1 << 32),
     r"trees\[0\]\.split_bin holds 4294967296, outside \[-2147483648, 2147483647\]"),
    ("node_array_lengths", "num", "dict", lambda d: d["trees"][0]["gain"].pop(),
     r"trees\[0\] has node arrays of different lengths: gain has \d+ entries"),
    ("tree_nodes", "num", "dict",
     lambda d: d["trees"][0].update({f: [] for f in gbm.tree.structure.NODE_FIELDS}),
     r"trees\[0\] has no nodes"),
    ("tree_group", "num", "dict", _set(("trees", 1, "group"), 7),
     r"trees\[1\] has group 7, expected an int in \[0, 3\)"),
    ("children_order", "num", "dict", _node("left_child", 0, 0),
     r"trees\[0\]\.left_child\[0\] is 0: a child index must be above its parent's"),
    ("right_child", "num", "dict", _node("right_child", 0, 5),
     r"trees\[0\] has inconsistent children: a right child must be its left sibling \+ 1, "
     r"and -1 at leaves \(right_child\[0\] is 5, left_child\[0\] is \d+\)"),
    ("one_parent", "num", "dict", _deeper_leaf_to_second_parent,
     r"trees\[0\]: node \d+ is the child of 2 nodes; in a tree every node but the root has "
     r"one parent \(left_child, and right_child = left_child \+ 1\)"),
    ("reachable", "num", "dict", _orphans,
     r"trees\[0\]: node 3 is no node's child, so the root does not reach it \(left_child, "
     r"and right_child = left_child \+ 1\)"),
    ("split_feature_range", "num", "dict",
     lambda d: _node("split_feature", _first_inner(d), 6)(d),
     r"trees\[0\] splits on a feature outside \[0, 6\) \(split_feature\[\d+\] is 6; n_features "
     r"is 6\)"),
    ("split_feature_leaves", "num", "dict", lambda d: _node("split_feature", -1, 0)(d),
     r"trees\[0\]\.split_feature must be -1 at leaves \(split_feature\[\d+\] is 0, "
     r"left_child\[\d+\] is -1\)"),
    ("default_left", "num", "dict", _node("default_left", 0, 2),
     r"trees\[0\]\.default_left must hold 0 or 1"),
    ("cat_bits_rows", "cat", "dict", _cat_set([1, 2]),
     r"trees\[\d+\]\.cat_bits must be a list of lists of integers, all of one length from 8 "
     r"to 2048"),
    ("cat_bits_count", "cat", "dict", _cat_tree(lambda tree, node, d: tree["cat_bits"].pop()),
     r"trees\[\d+\] has \d+ rows of cat_bits, expected \d+: one set per categorical node "
     r"\(split_type 1\)"),
    ("split_type_values", "cat", "dict",
     _cat_tree(lambda tree, node, d: tree["split_type"].__setitem__(node, 2)),
     r"trees\[\d+\] has a split_type that is not 0 or 1 per node"),
    ("split_type_leaves", "cat", "dict",
     _cat_tree(lambda tree, node, d: tree["split_type"].__setitem__(-1, 1)),
     r"trees\[\d+\] has a leaf marked as a categorical split \(split_type\[\d+\] is 1, "
     r"left_child\[\d+\] is -1\)"),
    ("categorical_feature", "cat", "dict",
     _cat_tree(lambda tree, node, d: tree["split_feature"].__setitem__(node, 1)),
     r"trees\[\d+\] node \d+ is a categorical split on numeric feature 1 \(split_type\[\d+\] is "
     r"1, split_feature\[\d+\] is 1; categories has no labels for it\)"),
    ("numeric_split_on_categorical", "cat", "dict", _numeric_split_on(0),
     r"trees\[\d+\] node \d+ is a numeric split on categorical feature 0 \(split_type\[\d+\] is "
     r"0, split_feature\[\d+\] is 0, categories\[0\] has 6 labels\)"),
    ("category_set_empty", "cat", "dict", _cat_set([0] * 8),
     r"trees\[\d+\] node \d+ has a bad category set: it is empty \(cat_bits row 0\)"),
    ("category_set_codes", "cat", "dict", _cat_set([0, 0, 0, 0, 0, 0, 0, 1 << 31]),
     r"trees\[\d+\] node \d+ has a bad category set: it holds code 255, beyond the "
     r"feature's 6 categories \(cat_bits row 0; split_feature\[\d+\] is 0, whose "
     r"categories\[0\] has 6 labels\)"),
    ("tree_count", "num", "dict", _drop_tree, r"5 trees is not a multiple of 3 groups"),
    ("iteration_indptr", "num", "dict", _set(("iteration_indptr",), [0, 4, 6]),
     r"iteration_indptr must rise from 0 to the tree count 6 in steps that are multiples of "
     r"3 groups \(trees holds 6\)"),
    ("best_iteration", "num", "dict", _set(("best_iteration",), 5),
     r"best_iteration must be null or a round in \[0, 2\), got 5 \(iteration_indptr has 2 "
     r"rounds\)"),
    ("best_score", "num", "dict", _set(("best_score",), "0.5"),
     r"best_score must be null or a number, got '0\.5'"),
    ("weight_drop_not_dart", "num", "dict", _set(("weight_drop",), [1.0] * 6),
     r"weight_drop is given, but params\.booster is 'gbtree'; only a dart model has tree "
     r"weights"),
    ("weight_drop_missing", "num", "dict", _set(("params", "booster"), "dart"),
     r"weight_drop is missing: a dart model \(params\.booster 'dart'\) has one weight per "
     r"tree"),
    ("weight_drop_count", "num", "dict", _dart([1.0] * 5),
     r"weight_drop has 5 weights, expected 6, one per tree \(trees holds 6\)"),
    ("weight_drop_negative", "num", "dict", _dart([1.0, 0.5, -0.25, 1.0, 1.0, 1.0]),
     r"weight_drop\[2\] is -0\.25; a tree weight is a number from 0 to 3\.402823e\+38"),
    ("prediction_range", "num", "dict", _huge_leaves,
     r"leaf values so large that a prediction overflows: .* \(at trees\[1\]\.value, with "
     r"base_margin and the trees before\)"),
]
IDS = [c[0] for c in CHECKS]
assert len(set(IDS)) == len(IDS) and len({c[4] for c in CHECKS}) == len(CHECKS)


def corrupted(case, models):
    _, model, kind, mutate, _ = case
    text = models[model].to_json()
    if kind == "text":
        return mutate(text)
    d = json.loads(text)
    mutate(d)
    return json.dumps(d)
