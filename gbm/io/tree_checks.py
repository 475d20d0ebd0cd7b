"""A model file's trees checked (a part of ``gbm.io.validation``): each a tree whose walk
from the root ends at a leaf (children after their parent, right = left + 1, one parent
per node), split features and category sets in range, at most ``MAX_TREE_DEPTH`` levels;
and leaf values whose sums cannot overflow a prediction."""
import math

import numpy as np

from ..data.categorical import MAX_CATEGORIES
from ..kernels.layout import cat_words
from ..tree.structure import CAT_WORDS, NODE_FIELDS, Tree
from .typed_json import InvalidModel, json_float32, json_integers, json_kind, json_numbers

MAX_TREE_DEPTH = 1 << 20  # levels; a chain that deep is 2 million nodes
CATEGORICAL_TREE_FIELDS = {"split_type", "cat_bits"}


def check_prediction_range(trees, base_margin, weights=None):
    """No sum of leaf values can overflow: the largest of every tree (times its weight,
    for a dart model) and the base margin add up to a finite float64."""
    total = float(np.abs(base_margin).max(initial=0.0))
    for i, tree in enumerate(trees):
        scale = 1.0 if weights is None else weights[i]
        total += float(np.abs(tree.value[tree.left_child < 0]).max()) * scale
        if not math.isfinite(total):
            raise InvalidModel("leaf values so large that a prediction overflows: the largest "
                               "leaf value of every tree and the base margin sum beyond "
                               f"float64's range (at trees[{i}].value, with base_margin and "
                               "the trees before)")


# --- trees -------------------------------------------------------------------------------

def check_trees(trees, version, n_features, n_groups, n_categories, n_outputs=None):
    """The trees as ``Tree`` objects and their groups. ``n_outputs``: a vector-leaf
    model's (``multi_strategy="multi_output_tree"``) outputs, each tree's ``value`` a list
    of ``n_outputs`` numbers per node and its group 0 (``n_groups`` is then 1)."""
    if type(trees) is not list:
        raise InvalidModel(f"trees must be a list of tree objects, got {json_kind(trees)}")
    checked = [check_tree(td, i, version, n_features, n_groups, n_categories, n_outputs)
               for i, td in enumerate(trees)]
    if len(checked) % n_groups:
        raise InvalidModel(f"{len(checked)} trees is not a multiple of {n_groups} groups")
    return [t for t, _ in checked], [g for _, g in checked]


def _vector_values(rows, path, k):
    """A vector-leaf tree's ``value``: one list of ``k`` numbers per node."""
    if type(rows) is not list or not all(type(r) is list and len(r) == k for r in rows):
        raise InvalidModel(f"{path} must be a list of lists of {k} numbers (one value per "
                           "output at each node of a multi_output_tree model)")
    values = np.array([json_numbers(r, path) for r in rows], dtype=np.float64)
    return values.reshape(len(rows), k)


def check_tree(td, i, version, n_features, n_groups, n_categories, n_outputs=None):
    name = f"trees[{i}]"
    if type(td) is not dict:
        raise InvalidModel(f"{name} must be an object, got {json_kind(td)}")
    missing = (set(NODE_FIELDS) | {"group"}) - td.keys()
    if missing:
        raise InvalidModel(f"{name} misses fields {sorted(missing)}")
    unknown = td.keys() - set(NODE_FIELDS) - {"group"} - (
        CATEGORICAL_TREE_FIELDS if version >= 3 else set())
    if unknown:
        raise InvalidModel(f"{name} has unknown fields {sorted(unknown)}")
    if len(CATEGORICAL_TREE_FIELDS & td.keys()) == 1:
        raise InvalidModel(f"{name} has one of split_type and cat_bits without the other")
    arrays = {}
    for field, dtype in NODE_FIELDS.items():
        path = f"{name}.{field}"
        if field == "value" and n_outputs is not None:
            arrays[field] = _vector_values(td[field], path, n_outputs)
        elif dtype == np.float64:
            arrays[field] = json_numbers(td[field], path)
        elif dtype == np.float32:
            arrays[field] = json_float32(td[field], path)
        else:
            arrays[field] = json_integers(td[field], path, dtype)
    if "split_type" in td:
        arrays["split_type"] = json_integers(td["split_type"], f"{name}.split_type", np.uint8)
    n = arrays["split_feature"].size
    for field, arr in arrays.items():
        if arr.shape[0] != n:
            raise InvalidModel(f"{name} has node arrays of different lengths: {field} has "
                               f"{arr.size} entries, split_feature {n}")
    if n == 0:
        raise InvalidModel(f"{name} has no nodes")
    group = td["group"]
    if type(group) is not int or not 0 <= group < n_groups:
        raise InvalidModel(f"{name} has group {group!r}, expected an int in [0, {n_groups})")
    _check_structure(arrays["left_child"], arrays["right_child"], name)
    _check_node_values(arrays, name, n_features)
    if "cat_bits" in td:
        arrays["cat_bits"] = _cat_bits(td["cat_bits"], f"{name}.cat_bits")
    tree = Tree(**arrays)
    _check_categorical_nodes(tree, n_categories, name)
    depth = tree.depth()
    if depth > MAX_TREE_DEPTH:
        raise InvalidModel(f"{name} is {depth} levels deep; at most {MAX_TREE_DEPTH}")
    return tree, group


def _check_structure(left, right, name):
    """A tree: children after their parent and inside the tree, right = left + 1, -1 at
    leaves, and every node but the root the child of exactly one node."""
    n = left.size
    inner = left != -1
    ids = np.arange(n)
    bad = inner & ((left <= ids) | (left >= n - 1))  # the right child, left + 1, is < n too
    if bad.any():
        node = int(np.flatnonzero(bad)[0])
        raise InvalidModel(f"{name}.left_child[{node}] is {int(left[node])}: a child index must "
                           f"be above its parent's and both children inside the tree's {n} nodes "
                           "(-1 at leaves)")
    if (right[~inner] != -1).any() or (right[inner] != left[inner] + 1).any():
        node = int(np.flatnonzero(np.where(inner, right != left + 1, right != -1))[0])
        raise InvalidModel(f"{name} has inconsistent children: a right child must be its left "
                           f"sibling + 1, and -1 at leaves (right_child[{node}] is "
                           f"{int(right[node])}, left_child[{node}] is {int(left[node])})")
    parents = np.bincount(np.concatenate([left[inner], left[inner] + 1]), minlength=n)
    shared = np.flatnonzero(parents > 1)
    if shared.size:
        raise InvalidModel(f"{name}: node {int(shared[0])} is the child of "
                           f"{int(parents[shared[0]])} nodes; in a tree every node but the root "
                           "has one parent (left_child, and right_child = left_child + 1)")
    orphans = np.flatnonzero(parents[1:] == 0) + 1
    if orphans.size:
        raise InvalidModel(f"{name}: node {int(orphans[0])} is no node's child, so the root "
                           "does not reach it (left_child, and right_child = left_child + 1)")


def _check_node_values(arrays, name, n_features):
    inner = arrays["left_child"] >= 0
    feature = arrays["split_feature"]
    outside = inner & ((feature < 0) | (feature >= n_features))
    if outside.any():
        node = int(np.flatnonzero(outside)[0])
        raise InvalidModel(f"{name} splits on a feature outside [0, {n_features}) "
                           f"(split_feature[{node}] is {int(feature[node])}; n_features is "
                           f"{n_features})")
    if (feature[~inner] != -1).any():
        node = int(np.flatnonzero(~inner & (feature != -1))[0])
        raise InvalidModel(f"{name}.split_feature must be -1 at leaves (split_feature[{node}] "
                           f"is {int(feature[node])}, left_child[{node}] is -1)")
    if (arrays["default_left"] > 1).any():
        raise InvalidModel(f"{name}.default_left must hold 0 or 1")


def _cat_bits(rows, path):
    """Rows of one width: ``CAT_WORDS`` words, or more (up to the words of
    ``MAX_CATEGORIES`` codes) in a tree that splits features with more categories."""
    most = cat_words(MAX_CATEGORIES)
    width = len(rows[0]) if type(rows) is list and rows and type(rows[0]) is list else CAT_WORDS
    if type(rows) is not list or not CAT_WORDS <= width <= most or any(
            type(r) is not list or len(r) != width for r in rows):
        raise InvalidModel(f"{path} must be a list of lists of integers, all of one length "
                           f"from {CAT_WORDS} to {most}")
    words = json_integers([w for r in rows for w in r], path, np.uint32)
    return words.reshape(len(rows), width)


def _check_categorical_nodes(tree, n_categories, name):
    """``split_type`` 0/1, 1 at inner nodes on categorical features only; one non-empty
    set per categorical node, with no code beyond its feature's categories."""
    if (tree.split_type > 1).any():
        raise InvalidModel(f"{name} has a split_type that is not 0 or 1 per node")
    is_cat = tree.split_type == 1
    if (is_cat & (tree.left_child < 0)).any():
        node = int(np.flatnonzero(is_cat & (tree.left_child < 0))[0])
        raise InvalidModel(f"{name} has a leaf marked as a categorical split (split_type[{node}] "
                           f"is 1, left_child[{node}] is -1)")
    numeric = np.flatnonzero(~is_cat & (tree.left_child >= 0))
    on_cat = numeric[n_categories[tree.split_feature[numeric]] >= 0]
    if on_cat.size:
        node = int(on_cat[0])
        feature = int(tree.split_feature[node])
        raise InvalidModel(f"{name} node {node} is a numeric split on categorical feature "
                           f"{feature} (split_type[{node}] is 0, split_feature[{node}] is "
                           f"{feature}, categories[{feature}] has {n_categories[feature]} "
                           "labels)")
    if tree.cat_bits.shape[0] != int(is_cat.sum()):
        raise InvalidModel(f"{name} has {tree.cat_bits.shape[0]} rows of cat_bits, expected "
                           f"{int(is_cat.sum())}: one set per categorical node (split_type 1)")
    for row, node in enumerate(np.flatnonzero(is_cat)):
        feature = int(tree.split_feature[node])
        n = int(n_categories[feature])
        if n < 0:
            raise InvalidModel(f"{name} node {node} is a categorical split on numeric feature "
                               f"{feature} (split_type[{node}] is 1, split_feature[{node}] is "
                               f"{feature}; categories has no labels for it)")
        bits = np.unpackbits(tree.cat_bits[row].view(np.uint8), bitorder="little")
        if not bits.any():
            raise InvalidModel(f"{name} node {node} has a bad category set: it is empty "
                               f"(cat_bits row {row})")
        if bits[n:].any():
            code = n + int(np.flatnonzero(bits[n:])[0])
            raise InvalidModel(f"{name} node {node} has a bad category set: it holds code "
                               f"{code}, beyond the feature's {n} categories (cat_bits row "
                               f"{row}; split_feature[{node}] is {feature}, whose "
                               f"categories[{feature}] has {n} labels)")
