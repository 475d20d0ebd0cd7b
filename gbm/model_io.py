"""Model files: versioned JSON that loads without executing code (no pickle).

The schema is documented in ``docs/model_format.md``. Every float is written with
Python's shortest round-tripping repr, so a loaded model predicts bit for bit the same.
"""
import json

import numpy as np

from .categorical import MAX_CATEGORIES
from .objectives import get_objective
from .params import RUN_SETTINGS, validate_params
from .tree import CAT_WORDS, NODE_FIELDS, Tree

FORMAT = "gbm-model"
# 1: the first format; 2 added iteration_indptr (rounds of num_parallel_tree trees per
# group); 3 added categorical features ("categories", trees' "split_type" / "cat_bits");
# 4 leaves the run settings n_jobs and device out of "params".
VERSION = 4
READABLE = (1, 2, 3, 4)


def to_dict(booster):
    d = {
        "format": FORMAT,
        "version": VERSION,
        "params": {k: v for k, v in booster.params.items() if k not in RUN_SETTINGS},
        "n_features": booster.n_features,
        "feature_names": booster.feature_names,
        "base_margin": booster.base_margin.tolist(),
        "cuts": [c.tolist() for c in booster.cuts],
        "best_iteration": booster.best_iteration,
        "best_score": booster.best_score,
        "iteration_indptr": list(booster.iteration_indptr),
        "trees": [dict(t.to_dict(), group=g) for t, g in zip(booster.trees, booster.tree_group)],
    }
    if booster.categories is not None:
        d["categories"] = booster.categories
    return d


def dumps(booster):
    return json.dumps(to_dict(booster), allow_nan=False)


def save(booster, path):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(dumps(booster))


def load(cls, path):
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a gbm model file: it is not UTF-8 text") from None
    return loads(cls, text, source=str(path))


class _NonFinite(Exception):
    pass


def _reject_constant(name):
    raise _NonFinite(name)  # NaN, Infinity, -Infinity: never written by save_model


def _fail(source, why):
    raise ValueError(f"{source} is not a valid gbm model file: {why}")


def loads(cls, text, source="model text"):
    try:
        d = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as err:
        _fail(source, f"invalid or truncated JSON ({err})")
    except _NonFinite as err:
        _fail(source, f"it holds the non-finite number {err}")
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        _fail(source, f"'format' is not {FORMAT!r} (a model from another library?)")
    if d.get("version") not in READABLE:
        _fail(source, f"version {d.get('version')!r} is not supported (this gbm reads "
                      f"{', '.join(map(str, READABLE))})")
    if d["version"] < 3 and ("categories" in d or any(
            isinstance(t, dict) and ("split_type" in t or "cat_bits" in t) for t in d.get("trees", []))):
        _fail(source, f"categorical fields in a version {d['version']} file (they came in version 3)")
    missing = {"params", "n_features", "feature_names", "base_margin", "cuts", "trees"} - set(d)
    if missing:
        _fail(source, f"missing fields {sorted(missing)}")
    try:
        # run settings are not model fields; files older than version 4 recorded them
        params = validate_params({k: v for k, v in d["params"].items() if k not in RUN_SETTINGS})
        n_features = int(d["n_features"])
        categories = _check_categories(d.get("categories"), n_features, source)
        booster = cls(params, n_features, d["feature_names"], d["base_margin"],
                      [np.asarray(c, dtype=np.float32) for c in d["cuts"]], categories)
        n_categories = np.array([-1 if c is None else len(c) for c in categories or
                                 [None] * n_features], dtype=np.int64)
        booster.best_iteration = d.get("best_iteration")
        booster.best_score = d.get("best_score")
        n_groups = get_objective(params).n_groups  # one source for the group count
        if booster.base_margin.shape != (n_groups,):
            _fail(source, f"base_margin has {booster.base_margin.size} values, expected {n_groups}")
        for i, td in enumerate(d["trees"]):
            tree = Tree.from_dict(td)
            _check_tree(tree, n_features, booster.n_groups, td.get("group"), i, source)
            _check_categorical_nodes(tree, n_categories, i, source)
            booster.add_tree(tree, int(td["group"]))
    except (KeyError, TypeError, ValueError) as err:
        if isinstance(err, ValueError) and "not a valid gbm model file" in str(err):
            raise
        _fail(source, f"{type(err).__name__}: {err}")
    names = booster.feature_names
    if names is not None and (not isinstance(names, list) or len(names) != n_features
                              or not all(isinstance(n, str) for n in names)):
        _fail(source, f"feature_names must be null or {n_features} strings")
    if len(booster.cuts) != n_features:
        _fail(source, f"{len(booster.cuts)} cut lists for {n_features} features")
    if len(booster.trees) % booster.n_groups:
        _fail(source, f"{len(booster.trees)} trees is not a multiple of {booster.n_groups} groups")
    if d["version"] == 1:
        indptr = list(range(0, len(booster.trees) + 1, booster.n_groups))
    elif "iteration_indptr" not in d:
        _fail(source, "missing fields ['iteration_indptr']")
    else:
        indptr = d["iteration_indptr"]
    _check_indptr(indptr, len(booster.trees), booster.n_groups, source)
    booster.iteration_indptr = [int(i) for i in indptr]
    return booster


def _check_indptr(indptr, n_trees, n_groups, source):
    """Round boundaries: from 0 to the tree count, each round a positive multiple of the
    group count (num_parallel_tree trees per group)."""
    ok = (isinstance(indptr, list) and indptr and all(type(i) is int for i in indptr)
          and indptr[0] == 0 and indptr[-1] == n_trees
          and all(b > a and (b - a) % n_groups == 0 for a, b in zip(indptr, indptr[1:])))
    if not ok:
        _fail(source, f"iteration_indptr must rise from 0 to the tree count {n_trees} in "
                      f"steps that are multiples of {n_groups} groups")


def _check_tree(tree, n_features, n_groups, group, i, source):
    n = tree.n_nodes
    if n == 0 or any(getattr(tree, name).shape != (n,) for name in NODE_FIELDS):
        _fail(source, f"tree {i} has node arrays of different lengths or none")
    if not isinstance(group, int) or not 0 <= group < n_groups:
        _fail(source, f"tree {i} has group {group!r}, expected an int in [0, {n_groups})")
    inner = tree.left_child >= 0
    ids = np.arange(n)
    for child in (tree.left_child, tree.right_child):
        # children come after their parent: no cycles, every walk ends at a leaf
        if ((child[inner] <= ids[inner]) | (child[inner] >= n)).any():
            _fail(source, f"tree {i} has a child index out of order or out of range")
    if (tree.right_child[~inner] != -1).any() or \
            (tree.right_child[inner] != tree.left_child[inner] + 1).any():
        _fail(source, f"tree {i} has inconsistent children: a right child must be its left "
                      "sibling + 1, and -1 at leaves")
    f = tree.split_feature[inner]
    if ((f < 0) | (f >= n_features)).any():
        _fail(source, f"tree {i} splits on a feature outside [0, {n_features})")


def _check_categories(categories, n_features, source):
    """``categories``: absent/null, or one entry per feature: null or distinct labels."""
    if categories is None:
        return None
    if not isinstance(categories, list) or len(categories) != n_features:
        _fail(source, f"categories must be null or a list of {n_features} entries")
    for f, labels in enumerate(categories):
        if labels is None:
            continue
        if not isinstance(labels, list) or len(labels) > MAX_CATEGORIES or not all(
                isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in labels) \
                or len(set(labels)) != len(labels):
            _fail(source, f"categories of feature {f} must be null or a list of at most "
                          f"{MAX_CATEGORIES} distinct strings or numbers")
    if all(c is None for c in categories):
        _fail(source, "categories lists no categorical feature; write null instead")
    return categories


def _check_categorical_nodes(tree, n_categories, i, source):
    """``split_type`` 0/1 at inner nodes only, on categorical features; one non-empty
    bitset per categorical node, with no code beyond its feature's categories."""
    if tree.split_type.shape != (tree.n_nodes,) or not np.isin(tree.split_type, (0, 1)).all():
        _fail(source, f"tree {i} has a split_type that is not 0 or 1 per node")
    is_cat = tree.split_type == 1
    if (is_cat & (tree.left_child < 0)).any():
        _fail(source, f"tree {i} has a leaf marked as a categorical split")
    if tree.cat_bits.ndim != 2 or tree.cat_bits.shape != (int(is_cat.sum()), CAT_WORDS):
        _fail(source, f"tree {i} has cat_bits of shape {tree.cat_bits.shape}, expected "
                      f"({int(is_cat.sum())}, {CAT_WORDS}): one set per categorical node")
    for row, node in enumerate(np.flatnonzero(is_cat)):
        n = n_categories[tree.split_feature[node]]
        if n < 0:
            _fail(source, f"tree {i} node {node} is a categorical split on numeric feature "
                          f"{tree.split_feature[node]}")
        bits = np.unpackbits(tree.cat_bits[row].view(np.uint8), bitorder="little")
        if not bits.any() or bits[n:].any():
            _fail(source, f"tree {i} node {node} has a bad category set: it must be non-empty "
                          f"and hold only codes below {n}")
