"""One tree of an XGBoost JSON model, checked before gbm builds anything from it.

* Per-node arrays: each a list of ``tree_param.num_nodes`` entries of its type (node
  values finite float32, flags 0 / 1).
* Structure: a walk from the root, breadth first, reaches each node at most once, through
  children inside the tree (never the root): no cycle and no shared node, so the walk
  ends. A leaf has ``-1`` for both children. Nodes the walk does not reach (XGBoost keeps
  pruned nodes as deleted ones) are not read.
* Splits the walk reaches: ``split_indices`` below ``num_feature``; a categorical split
  is listed once in ``categories_nodes`` (and marked in ``split_type`` when the tree has
  it), its set a non-empty slice of ``categories`` whose values are below
  ``MAX_CATEGORIES``.

A failure raises ``ValueError`` naming the field and the tree: ``trees[3].left_children[5]``.
"""
from dataclasses import dataclass

import numpy as np

from ..data.categorical import MAX_CATEGORIES
from . import xgboost_fields as fields

# the per-node arrays gbm reads, and their readers; base_weights and split_type are
# optional (older files), as are the four category arrays (together)
NODE_ARRAYS = {"left_children": fields.integers, "right_children": fields.integers,
               "split_indices": fields.integers, "split_conditions": fields.float32s,
               "default_left": fields.flags, "sum_hessian": fields.float32s,
               "loss_changes": fields.float32s}
OPTIONAL_ARRAYS = {"base_weights": fields.float32s, "split_type": fields.flags}
CATEGORY_ARRAYS = ("categories", "categories_nodes", "categories_segments",
                   "categories_sizes")


@dataclass
class CheckedTree:
    """A tree's arrays (XGBoost's node ids), the nodes the walk reaches in breadth-first
    order (``order``), and each categorical node's set of category values (``sets``).
    A vector-leaf tree (``size_leaf_vector`` k > 1) has ``values``: float32 (n_nodes, k),
    every node's vector (its leaves' from ``leaf_weights``); else ``values`` is None."""
    order: list
    arrays: dict
    sets: dict
    values: np.ndarray = None

    def inner(self):
        """The split nodes the walk reaches, in walk order."""
        left = self.arrays["left_children"]
        return [node for node in self.order if left[node] != -1]


def leaf_vector_size(t, name):
    """A tree's ``tree_param.size_leaf_vector`` (1 for a one-output tree)."""
    t = fields.as_object(t, name)
    param = fields.as_object(fields.get(t, "tree_param", f"{name}.tree_param"),
                             f"{name}.tree_param")
    return max(1, fields.count(param.get("size_leaf_vector", "1"),
                               f"{name}.tree_param.size_leaf_vector", 0))


def check_tree(t, name, n_features, n_outputs=1):
    """A ``CheckedTree`` of tree ``t`` (its path ``name``, ``trees[3]``); ``n_outputs``:
    the leaf vectors' size a vector-leaf model's trees must have (1: one-output trees)."""
    t = fields.as_object(t, name)
    n = _node_count(t, name, n_outputs)
    arrays = {}
    vector = n_outputs > 1
    for key, read in list(NODE_ARRAYS.items()) + list(OPTIONAL_ARRAYS.items()):
        if vector and key == "base_weights":
            continue  # n_nodes * k values: read with the leaf vectors below
        if key in NODE_ARRAYS or key in t:
            arrays[key] = _node_array(t, key, read, name, n)
    leaf_index = None
    if vector:  # XGBoost keeps a leaf's index among the leaves in right_children
        leaf_index = np.where(arrays["left_children"] == -1, arrays["right_children"], -1)
        arrays["right_children"] = np.where(leaf_index >= 0, -1, arrays["right_children"])
    order = walk(arrays["left_children"], arrays["right_children"], name)
    tree = CheckedTree(order, arrays, {})
    if vector:
        tree.values = _leaf_vectors(t, name, n, n_outputs, leaf_index, order)
    _check_split_features(tree, name, n_features)
    tree.sets = _category_sets(t, tree, name)
    return tree


def _leaf_vectors(t, name, n, k, leaf_index, order):
    """float32 (n, k): every node's vector, ``base_weights`` (n * k values, node by node)
    with each leaf's replaced by its ``leaf_weights`` vector (the leaf's index in
    ``right_children``: each leaf the walk reaches its own index, below the leaf count)."""
    path = f"{name}.base_weights"
    values = fields.float32s(fields.as_list(fields.get(t, "base_weights", path), path), path)
    if values.size != n * k:
        raise ValueError(f"{path} has {values.size} values; a tree of {n} nodes with "
                         f"vectors of {k} (tree_param.size_leaf_vector) has {n * k}")
    values = values.reshape(n, k).copy()
    path = f"{name}.leaf_weights"
    leaves = fields.float32s(fields.as_list(fields.get(t, "leaf_weights", path), path), path)
    reached = [node for node in order if leaf_index[node] >= 0]
    if leaves.size != len(reached) * k:
        raise ValueError(f"{path} has {leaves.size} values; the tree's {len(reached)} "
                         f"leaves with vectors of {k} have {len(reached) * k}")
    seen = set()
    for node in reached:
        at = int(leaf_index[node])
        if not 0 <= at < len(reached) or at in seen:
            raise ValueError(f"{name}.right_children[{node}] is {at}: a leaf of a vector-leaf "
                             f"tree holds its own index among the {len(reached)} leaves")
        seen.add(at)
        values[node] = leaves[at * k:(at + 1) * k]
    return values


def _node_count(t, name, n_outputs=1):
    param = fields.as_object(fields.get(t, "tree_param", f"{name}.tree_param"),
                             f"{name}.tree_param")
    leaf_size = max(1, fields.count(param.get("size_leaf_vector", "1"),
                                    f"{name}.tree_param.size_leaf_vector", 0))
    if leaf_size != n_outputs:
        raise ValueError(f"{name}.tree_param.size_leaf_vector is {leaf_size}, but the "
                         f"model's trees have {n_outputs} value(s) per leaf (its outputs "
                         "when it is a vector-leaf model, else 1)")
    return fields.count(fields.get(param, "num_nodes", f"{name}.tree_param.num_nodes"),
                        f"{name}.tree_param.num_nodes", 1)


def _node_array(t, key, read, name, n):
    path = f"{name}.{key}"
    values = fields.as_list(fields.get(t, key, path), path)
    if len(values) != n:  # before anything is read from it
        raise ValueError(f"{path} has {len(values)} entries, but {name}.tree_param.num_nodes "
                         f"is {n}")
    return read(values, path)


def walk(left, right, name):
    """The nodes reached from the root, breadth first (left child, then right): each at
    most once, or a ``ValueError`` naming the child index that breaks the tree."""
    left, right = left.tolist(), right.tolist()
    n = len(left)
    parent_of = {0: "the root"}  # node -> the child index that reached it
    order = [0]
    for node in order:  # grows while walked: a queue
        children = (("left_children", left[node]), ("right_children", right[node]))
        if children[0][1] == -1 and children[1][1] == -1:
            continue
        if children[0][1] == -1 or children[1][1] == -1:
            raise ValueError(f"{name}.left_children[{node}] is {left[node]} and "
                             f"{name}.right_children[{node}] is {right[node]}: a leaf has -1 "
                             "for both children, a split node two children")
        for key, child in children:
            where = f"{name}.{key}[{node}]"
            if not 1 <= child < n:
                raise ValueError(f"{where} is {child}: a child must be a node of the tree's "
                                 f"{n} other than the root (1 to {n - 1})")
            if child in parent_of:
                raise ValueError(f"{where} is {child}, which {parent_of[child]} already is: "
                                 "a node of a tree is reached once (this is a cycle or a "
                                 "shared node)")
            parent_of[child] = where
            order.append(child)
    return order


def _check_split_features(tree, name, n_features):
    feature = tree.arrays["split_indices"]
    for node in tree.inner():
        if not 0 <= feature[node] < n_features:
            raise ValueError(f"{name}.split_indices[{node}] is {int(feature[node])}, outside "
                             f"[0, {n_features}): learner_model_param.num_feature is "
                             f"{n_features}")


def _category_sets(t, tree, name):
    """{categorical node: its category values (int64)}: every listed node a split the walk
    reaches, listed once, its set a non-empty slice of ``categories``; ``split_type``
    (when the tree has it) 1 exactly at those splits."""
    present = [key for key in CATEGORY_ARRAYS if key in t]
    if present and len(present) < len(CATEGORY_ARRAYS):
        missing = next(key for key in CATEGORY_ARRAYS if key not in t)
        raise ValueError(f"{name}.{missing} is missing (the tree has {present[0]})")
    sets = _sets(t, tree, name) if present else {}
    split_type = tree.arrays.get("split_type")
    if split_type is not None:
        for node in tree.inner():
            if split_type[node] != (node in sets):
                listed = "is" if node in sets else "is not"
                raise ValueError(f"{name}.split_type[{node}] is {int(split_type[node])}, but "
                                 f"node {node} {listed} in {name}.categories_nodes")
    return sets


def _sets(t, tree, name):
    values = fields.integers(t["categories"], f"{name}.categories")
    out = (values < 0) | (values >= MAX_CATEGORIES)
    if out.any():
        k = int(np.flatnonzero(out)[0])
        raise ValueError(f"{name}.categories[{k}] is {int(values[k])}, outside [0, "
                         f"{MAX_CATEGORIES}): gbm holds at most {MAX_CATEGORIES} categories "
                         "per feature")
    nodes, starts, sizes = (fields.integers(t[key], f"{name}.{key}").tolist()
                            for key in CATEGORY_ARRAYS[1:])
    for key, arr in (("categories_segments", starts), ("categories_sizes", sizes)):
        if len(arr) != len(nodes):
            raise ValueError(f"{name}.{key} has {len(arr)} entries, but "
                             f"{name}.categories_nodes has {len(nodes)}")
    inner, sets = set(tree.inner()), {}
    for k, (node, start, size) in enumerate(zip(nodes, starts, sizes)):
        if node not in inner or node in sets:
            raise ValueError(f"{name}.categories_nodes[{k}] is {node}: "
                             + ("listed twice" if node in sets else
                                "not a split node that the walk from the root reaches "
                                "(through left_children and right_children)"))
        if not (0 <= start and 1 <= size and start + size <= values.size):
            raise ValueError(f"{name}.categories_segments[{k}] is {start} and "
                             f"categories_sizes[{k}] is {size}: a categorical split's set is "
                             f"a non-empty slice of {name}.categories ({values.size} values)")
        sets[node] = values[start:start + size]
    return sets
