"""Exact TreeSHAP feature contributions (``pred_contribs``); the NumPy twin, a
brute-force Shapley oracle, is ``reference/shap.py``.
"""
import numpy as np
from numba import prange

from ..jit import kernel
from .predict import categorical_goes_left

# --- TreeSHAP: exact feature contributions (Lundberg, Erion & Lee 2018, Algorithm 2) ---


@kernel
def row_goes_left(x, node, threshold, default_left, split_type, cat_row, cat_bits):
    """Whether a row whose split-feature value is ``x`` goes to node ``node``'s left child.

    The one place the SHAP kernel decides a split. Numeric: ``x < threshold``, missing
    (NaN) follows ``default_left``. Categorical (``split_type`` 1): the node's category
    set ``cat_bits[cat_row[node]]`` decides (see ``categorical_goes_left``).
    """
    if split_type[node] == 1:
        return categorical_goes_left(x, default_left[node] == 1, cat_bits, cat_row[node])
    if np.isnan(x):
        return default_left[node] == 1
    return x < threshold[node]


@kernel
def _node_expectations(left_child, value, cover, tree_offsets, out):
    """Each node's expected value over the training rows: its leaves' values weighted by
    their cover (hessian sums), ``E(node) = (c_l E(l) + c_r E(r)) / c_node``.

    Children come after parents, so one backward sweep per tree suffices.
    out : float64 (n_nodes_total,)               # OUT
    """
    for t in range(tree_offsets.shape[0] - 1):
        base = tree_offsets[t]
        for node in range(tree_offsets[t + 1] - 1, base - 1, -1):
            left = left_child[node]
            if left < 0:
                out[node] = value[node]
            else:
                l, r = base + left, base + left + 1
                out[node] = (cover[l] * out[l] + cover[r] * out[r]) / cover[node]


@kernel
def _extend_path(feature, zero, one, weight, length, zero_fraction, one_fraction, feature_index):
    """EXTEND of Algorithm 2: append a split on ``feature_index`` to a path of ``length``
    elements; ``weight[i]`` becomes the share of subsets of size ``i`` (of the path's
    features) that reach this point, given each element's zero/one fractions."""
    feature[length] = feature_index
    zero[length] = zero_fraction
    one[length] = one_fraction
    weight[length] = 1.0 if length == 0 else 0.0
    for i in range(length - 1, -1, -1):
        weight[i + 1] += one_fraction * weight[i] * (i + 1) / (length + 1)
        weight[i] = zero_fraction * weight[i] * (length - i) / (length + 1)


@kernel
def _unwind_path(feature, zero, one, weight, last, i):
    """UNWIND of Algorithm 2: undo the EXTEND of element ``i`` of a path whose last
    element is ``last``; the path then ends at ``last - 1``."""
    one_fraction, zero_fraction = one[i], zero[i]
    carry = weight[last]
    for j in range(last - 1, -1, -1):
        if one_fraction != 0:
            kept = weight[j]
            weight[j] = carry * (last + 1) / ((j + 1) * one_fraction)
            carry = kept - weight[j] * zero_fraction * (last - j) / (last + 1)
        else:
            weight[j] = weight[j] * (last + 1) / (zero_fraction * (last - j))
    for j in range(i, last):
        feature[j] = feature[j + 1]
        zero[j] = zero[j + 1]
        one[j] = one[j + 1]


@kernel
def _unwound_path_sum(zero, one, weight, last, i):
    """Sum of the weights ``_unwind_path(..., last, i)`` would leave, without unwinding."""
    one_fraction, zero_fraction = one[i], zero[i]
    carry = weight[last]
    total = 0.0
    for j in range(last - 1, -1, -1):
        if one_fraction != 0:
            share = carry * (last + 1) / ((j + 1) * one_fraction)
            total += share
            carry = weight[j] - share * zero_fraction * (last - j) / (last + 1)
        else:
            total += weight[j] / (zero_fraction * (last - j) / (last + 1))
    return total


@kernel
def _tree_shap_row(x, base, split_feature, threshold, default_left, split_type, cat_row,
                   cat_bits, left_child, value, cover, path_feature, path_zero, path_one, path_weight, stack_int, stack_float, phi):
    """Add one tree's SHAP values for row ``x`` to ``phi`` (RECURSE of Algorithm 2).

    The recursion runs on an explicit stack. Path ``level`` (row ``level`` of the
    ``path_*`` buffers) is the unique path at a node of that depth; a child copies its
    parent's path (row ``level - 1``) before extending it. Depth-first order keeps the
    parent's row intact until both children have copied it.
    stack_int rows: (node, level, unique depth, feature); stack_float rows: (zero, one).
    """
    top = 0
    stack_int[0, 0], stack_int[0, 1], stack_int[0, 2], stack_int[0, 3] = 0, 0, 0, -1
    stack_float[0, 0], stack_float[0, 1] = 1.0, 1.0
    while top >= 0:
        node, level, depth, from_feature = (stack_int[top, 0], stack_int[top, 1],
                                            stack_int[top, 2], stack_int[top, 3])
        zero_fraction, one_fraction = stack_float[top, 0], stack_float[top, 1]
        top -= 1
        feature, zero = path_feature[level], path_zero[level]
        one, weight = path_one[level], path_weight[level]
        if level > 0:
            for i in range(depth):
                feature[i] = path_feature[level - 1, i]
                zero[i] = path_zero[level - 1, i]
                one[i] = path_one[level - 1, i]
                weight[i] = path_weight[level - 1, i]
        _extend_path(feature, zero, one, weight, depth, zero_fraction, one_fraction, from_feature)
        at = base + node
        left = left_child[at]
        if left < 0:
            for i in range(1, depth + 1):
                w = _unwound_path_sum(zero, one, weight, depth, i)
                phi[feature[i]] += w * (one[i] - zero[i]) * value[at]
            continue
        split = split_feature[at]
        goes_left = row_goes_left(x[split], at, threshold, default_left, split_type, cat_row,
                                  cat_bits)
        hot = left if goes_left else left + 1
        cold = left + left + 1 - hot
        incoming_zero, incoming_one = 1.0, 1.0
        for k in range(1, depth + 1):
            if feature[k] == split:  # the feature split before on this path: undo that
                incoming_zero, incoming_one = zero[k], one[k]
                _unwind_path(feature, zero, one, weight, depth, k)
                depth -= 1
                break
        for child, one_child in ((cold, 0.0), (hot, incoming_one)):  # hot is popped first
            top += 1
            stack_int[top, 0], stack_int[top, 1] = child, level + 1
            stack_int[top, 2], stack_int[top, 3] = depth + 1, split
            stack_float[top, 0] = cover[base + child] / cover[at] * incoming_zero
            stack_float[top, 1] = one_child


@kernel(parallel=True)
def tree_shap(X, split_feature, threshold, default_left, split_type, cat_row, cat_bits,
              left_child, value, cover, tree_offsets, tree_group, tree_depth, n_threads, out):
    """Add exact SHAP values (TreeSHAP, Algorithm 2 of Lundberg, Erion & Lee 2018) to ``out``.

    X : float32 (n_rows, n_features), C order    # IN  NaN = missing; category codes
    split_feature, threshold, default_left, split_type, cat_row, left_child, value, cover :
        per node of all trees (gbm.tree.Forest); children ids within the tree, right =
        left + 1; ``cat_row`` a categorical node's row of ``cat_bits``   # IN
    cat_bits : uint32 (n_sets, CAT_WORDS), the categorical nodes' sets  # IN
    tree_offsets : int64 (n_trees + 1,); tree_group, tree_depth : int32 (n_trees,)  # IN
    n_threads : int, the rows are cut into this many parts, one per task
    out : float64 (n_rows, n_groups, n_features + 1)   # IN/OUT
        ``out[r, g, f]`` += feature ``f``'s contribution to row ``r``'s margin of group
        ``g``; ``out[r, g, n_features]`` += each tree's expected value (cover-weighted).

    Node weights are the covers: a feature left out of a subset sends the row to both
    children in proportion to their covers. Each row is handled by one task and sums its
    trees in order, so results do not depend on the thread count.
    """
    n_rows, n_features = X.shape
    n_trees = tree_offsets.shape[0] - 1
    expectation = np.empty(value.shape[0], dtype=np.float64)
    _node_expectations(left_child, value, cover, tree_offsets, expectation)
    max_depth = 0
    for t in range(n_trees):
        max_depth = max(max_depth, tree_depth[t])
    n_parts = max(1, min(n_threads, n_rows))
    for part in prange(n_parts):
        path_feature = np.empty((max_depth + 1, max_depth + 2), dtype=np.int64)
        path_zero = np.empty((max_depth + 1, max_depth + 2), dtype=np.float64)
        path_one = np.empty((max_depth + 1, max_depth + 2), dtype=np.float64)
        path_weight = np.empty((max_depth + 1, max_depth + 2), dtype=np.float64)
        stack_int = np.empty((2 * max_depth + 2, 4), dtype=np.int64)
        stack_float = np.empty((2 * max_depth + 2, 2), dtype=np.float64)
        for r in range(n_rows * part // n_parts, n_rows * (part + 1) // n_parts):
            for t in range(n_trees):
                phi = out[r, tree_group[t]]
                phi[n_features] += expectation[tree_offsets[t]]
                _tree_shap_row(X[r], tree_offsets[t], split_feature, threshold, default_left,
                               split_type, cat_row, cat_bits, left_child, value, cover, path_feature, path_zero, path_one,
                               path_weight, stack_int, stack_float, phi)
