"""What the statistics tests of model files share (``tests/test_oracles_node_stats.py``,
``tests/test_vector_leaf_stats.py``): xgboost's trees as parsed JSON, the pairs of nodes
of a gbm tree and of xgboost's tree of the same round walked side by side, and each
node's training rows from ``pred_leaf`` (the oracle of a node's cover)."""
import json

import numpy as np


def xgboost_trees(booster):
    """The parsed trees of an ``xgboost.Booster``, in order."""
    model = json.loads(booster.save_raw("json"))["learner"]["gradient_booster"]["model"]
    return model["trees"]


def paired_nodes(tree, theirs):
    """``[(ours, theirs)]``: the node ids of gbm's ``Tree`` and of xgboost's parsed tree
    reached by the same path from the root (left, right), breadth first; AssertionError
    where one is a leaf and the other splits, or the splits differ (feature; a numeric
    threshold ``t`` of gbm's, halfway between integer values, is xgboost's ``t + 0.5``)."""
    pairs, queue = [], [(0, 0)]
    left, right = theirs["left_children"], theirs["right_children"]
    while queue:
        a, b = queue.pop(0)
        pairs.append((a, b))
        inner = tree.left_child[a] >= 0
        assert inner == (left[b] != -1), f"node {a}: leaf in one tree only"
        if not inner:
            continue
        assert tree.split_feature[a] == theirs["split_indices"][b], f"node {a}: feature"
        assert tree.split_type[a] == theirs["split_type"][b], f"node {a}: split type"
        if tree.split_type[a] == 0:
            assert float(tree.threshold[a]) + 0.5 == theirs["split_conditions"][b], \
                f"node {a}: threshold"
        assert tree.default_left[a] == theirs["default_left"][b], f"node {a}: default_left"
        queue += [(int(tree.left_child[a]), left[b]), (int(tree.right_child[a]), right[b])]
    return pairs


def xgboost_categories(theirs, node):
    """The sorted category codes of xgboost's categorical split ``node`` (those that go
    right)."""
    at = theirs["categories_nodes"].index(node)
    start, size = theirs["categories_segments"][at], theirs["categories_sizes"][at]
    return sorted(theirs["categories"][start:start + size])


def node_rows(tree, leaves):
    """bool (n_nodes, n_rows): the rows each node of ``tree`` holds, from each row's leaf
    (``leaves``: int (n_rows,), a column of ``predict(pred_leaf=True)``) and its
    ancestors."""
    n = tree.left_child.shape[0]
    parent = np.full(n, -1)
    inner = np.flatnonzero(tree.left_child >= 0)
    parent[tree.left_child[inner]] = inner
    parent[tree.right_child[inner]] = inner
    held = np.zeros((n, leaves.shape[0]), dtype=bool)
    held[leaves, np.arange(leaves.shape[0])] = True
    for node in range(n - 1, 0, -1):  # children after their parents in creation order
        held[parent[node]] |= held[node]
    return held
