"""Exact TreeSHAP feature contributions (``pred_contribs``); the NumPy twin, a
brute-force Shapley oracle, is ``reference/shap.py``.
"""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from .tree_walk import categorical_goes_left

# IEEE division (inf/NaN) instead of Python's ZeroDivisionError: a model file may hold any
# finite covers, and an exception must not escape a parallel region.
_ERRORS = "numpy"

# --- TreeSHAP: exact feature contributions (Lundberg, Erion & Lee 2018, Algorithm 2) ---

_NO_PRUNING = np.ones(1, dtype=np.uint8)  # ``reaches`` of a walk without a condition


@helper(error_model=_ERRORS)
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


@helper(error_model=_ERRORS)
def cover_share(child_cover, node_cover):
    """The share of a node's rows that a child holds when the split feature is unknown:
    ``child_cover / node_cover``, and an even split (0.5) under a node of cover 0 (a
    model may hold one: hessians of 0 with ``min_child_weight=0``)."""
    if node_cover == 0.0:
        return 0.5
    return child_cover / node_cover


@helper(error_model=_ERRORS)
def _node_expectations(left_child, value, cover, tree_offsets, out):
    """Each node's expected value over the training rows: its leaves' values weighted by
    their cover (hessian sums), ``E(node) = (c_l E(l) + c_r E(r)) / c_node`` (an even mix
    under a node of cover 0, as ``cover_share`` says).

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
                if cover[node] == 0.0:
                    out[node] = 0.5 * (out[l] + out[r])
                else:
                    out[node] = (cover[l] * out[l] + cover[r] * out[r]) / cover[node]


@helper(error_model=_ERRORS)
def _path_weights(zero, one, weight, length):
    """EXTEND of Algorithm 2, applied to the path elements ``1 .. length`` in turn, from
    the root's element (0, fractions 1): ``weight[i]`` becomes the share of subsets of size
    ``i`` of the path's features that reach the leaf, given each element's zero/one
    fractions."""
    weight[0] = 1.0
    for size in range(1, length + 1):
        zero_fraction, one_fraction = zero[size], one[size]
        weight[size] = 0.0
        for i in range(size - 1, -1, -1):
            weight[i + 1] += one_fraction * weight[i] * (i + 1) / (size + 1)
            weight[i] = zero_fraction * weight[i] * (size - i) / (size + 1)


@helper(error_model=_ERRORS)
def _unwound_path_sum(zero, one, weight, last, i):
    """Sum of the weights left after undoing (UNWIND of Algorithm 2) element ``i`` of a
    path whose last element is ``last``: the share of subsets without feature ``i``."""
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


@helper(error_model=_ERRORS)
def _leaf_shares(zero, one, weight, n_elements, element_feature, leaf_value, phi):
    """Add a leaf's share of each path feature's SHAP value to ``phi``."""
    _path_weights(zero, one, weight, n_elements)
    for i in range(1, n_elements + 1):
        w = _unwound_path_sum(zero, one, weight, n_elements, i)
        phi[element_feature[i]] += w * (one[i] - zero[i]) * leaf_value


@helper(error_model=_ERRORS)
def _undo_edges(applied, level, undo_new, undo_slot, undo_zero, undo_one, zero, one,
                element_feature, slot_of_feature, n_elements):
    """Undo the path's edges from ``applied`` down to ``level`` (exclusive of levels below
    it); returns the number of path elements left. ``undo_new``: 1 the edge added an
    element, 0 it multiplied an element's fractions, 2 it changed nothing (an edge out of
    a split on the conditioned feature)."""
    while applied >= level and applied > 0:
        slot = undo_slot[applied]
        if undo_new[applied] == 1:
            slot_of_feature[element_feature[slot]] = -1
            n_elements -= 1
        elif undo_new[applied] == 0:
            zero[slot], one[slot] = undo_zero[applied], undo_one[applied]
        applied -= 1
    return n_elements


@helper(error_model=_ERRORS)
def _add_edge(top, level, condition, condition_feature, int_buffers, float_buffers,
              slot_of_feature, n_elements):
    """The path's edge into the node of stack entry ``top`` (at depth ``level`` > 0): its
    feature's element added, or (the feature split before on this path) its fractions
    multiplied, or nothing (the conditioned feature stays off the path), with what undoes
    it at ``level`` (``_undo_edges``); returns the number of path elements."""
    stack_feature, undo_slot, undo_new = int_buffers[2], int_buffers[3], int_buffers[4]
    element_feature = int_buffers[5]
    stack_zero, stack_one = float_buffers[0], float_buffers[1]
    undo_zero, undo_one = float_buffers[2], float_buffers[3]
    zero, one = float_buffers[4], float_buffers[5]
    feature = stack_feature[top]
    if condition != 0 and feature == condition_feature:
        undo_new[level] = 2  # the conditioned feature stays off the path
        return n_elements
    slot = slot_of_feature[feature]
    if slot < 0:
        n_elements += 1
        slot = n_elements
        slot_of_feature[feature] = slot
        element_feature[slot] = feature
        zero[slot], one[slot] = stack_zero[top], stack_one[top]
        undo_new[level] = 1
    else:  # the feature split before on this path: fractions multiplied
        undo_zero[level], undo_one[level] = zero[slot], one[slot]
        zero[slot] *= stack_zero[top]
        one[slot] *= stack_one[top]
        undo_new[level] = 0
    undo_slot[level] = slot
    return n_elements


@helper(error_model=_ERRORS)
def _add_leaf(zero, one, weight, n_elements, element_feature, leaf_value, condition, on, off,
              phi):
    """A leaf's shares of ``leaf_value`` times its condition fraction (``condition``: on,
    off, or on minus off) added to ``phi``, unless no subset of features reaches it (a
    child of cover 0 the row does not take): then it adds nothing, and UNWIND of that
    element would divide 0 by 0."""
    for i in range(1, n_elements + 1):
        if zero[i] == 0.0 and one[i] == 0.0:
            return
    if condition == 0 or condition == 1:
        fraction = on
    elif condition == -1:
        fraction = off
    else:
        fraction = on - off
    _leaf_shares(zero, one, weight, n_elements, element_feature, leaf_value * fraction, phi)


@helper(error_model=_ERRORS)
def _tree_shap_row(x, base, max_depth, split_feature, threshold, default_left, split_type,
                   cat_row, cat_bits, left_child, value, cover, int_buffers, float_buffers,
                   slot_of_feature, condition, condition_feature, reaches, phi):
    """Add one tree's SHAP values for row ``x`` to ``phi``; False if the tree is deeper
    than ``max_depth`` (then nothing is added).

    Algorithm 2's sums, leaf by leaf: at a leaf, the path from the root holds one element
    per distinct feature split on the way, with the product of that feature's zero
    fractions (cover shares) and of its one fractions (1 where the row went, else 0);
    EXTEND over those elements and one UNWIND sum per element give the leaf's share of
    each feature's SHAP value. The walk is depth-first on an explicit stack, and the
    elements change by one edge at a time (an edge either adds an element or multiplies
    its feature's fractions, and is undone on the way back), so memory is linear in the
    depth: ``int_buffers`` (int64, 7 rows) and ``float_buffers`` (float64, 9 rows) hold
    ``max_depth + 2`` entries per row, ``slot_of_feature`` (-1 for a feature not on the
    path) one per feature.

    ``condition`` 0: plain SHAP values. 1 / -1: the SHAP values of the game in which
    feature ``condition_feature`` is always known (1, "on") or never known (-1, "off"),
    as XGBoost's ``TreeShap(condition, condition_feature)`` (Lundberg et al. 2018,
    interaction values): that feature never enters the path; at its splits the row
    follows its value (on) or both children count by cover share (off), a weight carried
    down as the node's condition fraction. 2: on minus off, in one walk: the path
    elements are the same in both games, only the fractions differ, so each leaf adds
    its share times (on fraction - off fraction). A leaf with no split on that feature
    above it adds the same to the on and the off values, so it is skipped (its share
    cancels in their difference, the only use of conditioned values); for the same
    reason a child is not entered when no split above it is on that feature and
    ``reaches`` (uint8, per node of the tree, ``_reaches_feature``) says no split below
    it is either. ``phi[condition_feature]`` is left alone.
    """
    stack_node, stack_level, stack_feature = int_buffers[0], int_buffers[1], int_buffers[2]
    undo_slot, undo_new, element_feature = int_buffers[3], int_buffers[4], int_buffers[5]
    stack_crossed = int_buffers[6]  # 1: a split on the conditioned feature is above
    stack_zero, stack_one = float_buffers[0], float_buffers[1]
    undo_zero, undo_one = float_buffers[2], float_buffers[3]
    zero, one, weight = float_buffers[4], float_buffers[5], float_buffers[6]
    stack_on, stack_off = float_buffers[7], float_buffers[8]  # condition fractions
    top, applied, n_elements = 0, 0, 0
    stack_node[0], stack_level[0], stack_crossed[0] = 0, 0, 0
    stack_on[0], stack_off[0] = 1.0, 1.0
    while top >= 0:
        node, level = stack_node[top], stack_level[top]
        crossed, on, off = stack_crossed[top], stack_on[top], stack_off[top]
        n_elements = _undo_edges(applied, level, undo_new, undo_slot, undo_zero, undo_one,
                                 zero, one, element_feature, slot_of_feature, n_elements)
        applied = min(applied, level - 1) if level > 0 else 0
        if level > 0:  # the edge into this node
            n_elements = _add_edge(top, level, condition, condition_feature, int_buffers,
                                   float_buffers, slot_of_feature, n_elements)
            applied = level
        top -= 1
        at = base + node
        left = left_child[at]
        if left < 0:
            if condition == 0 or crossed != 0:  # else the same share with it on and off
                _add_leaf(zero, one, weight, n_elements, element_feature, value[at],
                          condition, on, off, phi)
            continue
        if level >= max_depth:
            _undo_edges(applied, 1, undo_new, undo_slot, undo_zero, undo_one, zero, one,
                        element_feature, slot_of_feature, n_elements)
            return False
        split = split_feature[at]
        goes_left = row_goes_left(x[split], at, threshold, default_left, split_type, cat_row,
                                  cat_bits)
        conditioned = condition != 0 and split == condition_feature
        for side in range(2):
            child = left + side
            hot = (child == left) == goes_left
            share = cover_share(cover[base + child], cover[at])
            child_on, child_off = on, off
            if conditioned:  # on: only the row's way; off: both, by cover share
                child_on = on if hot else 0.0
                child_off = off * share
                if ((condition == 1 and child_on == 0.0) or (condition == -1 and child_off == 0.0)
                        or (child_on == 0.0 and child_off == 0.0)):
                    continue  # no weight reaches the child
            elif condition != 0 and crossed == 0 and reaches[child] == 0:
                continue  # only leaves that add the same with the feature on and off
            top += 1
            stack_node[top], stack_level[top], stack_feature[top] = child, level + 1, split
            stack_zero[top] = share
            stack_one[top] = 1.0 if hot else 0.0
            stack_crossed[top] = 1 if conditioned else crossed
            stack_on[top], stack_off[top] = child_on, child_off
    _undo_edges(applied, 1, undo_new, undo_slot, undo_zero, undo_one, zero, one,
                element_feature, slot_of_feature, n_elements)
    return True


@kernel(parallel=True, error_model=_ERRORS)
def tree_shap(X, split_feature, threshold, default_left, split_type, cat_row, cat_bits,
              left_child, value, cover, tree_offsets, tree_group, tree_depth, n_threads, out):
    """Add exact SHAP values (TreeSHAP, Algorithm 2 of Lundberg, Erion & Lee 2018) to ``out``.

    X : float32 (n_rows, n_features), C order    # IN  NaN = missing; category codes
    split_feature, threshold, default_left, split_type, cat_row, left_child, value, cover :
        per node of all trees (gbm.tree.structure.Forest); children ids within the tree, right =
        left + 1; ``cat_row`` a categorical node's row of ``cat_bits``   # IN
    cat_bits : uint32 (n_sets, n_words), the categorical nodes' sets    # IN
    tree_offsets : int64 (n_trees + 1,); tree_group, tree_depth : int32 (n_trees,)  # IN
    n_threads : int, the rows are cut into this many parts, one per task
    out : float64 (n_rows, n_groups, n_features + 1)   # IN/OUT
        ``out[r, g, f]`` += feature ``f``'s contribution to row ``r``'s margin of group
        ``g``; ``out[r, g, n_features]`` += each tree's expected value (cover-weighted).

    Returns True; False when a tree is deeper than its ``tree_depth`` (``out`` is then
    incomplete): the buffers are sized from it, and never overrun.

    Node weights are the covers: a feature left out of a subset sends the row to both
    children in proportion to their covers. Each row is handled by one task and sums its
    trees in order, so results do not depend on the thread count. Memory per task is
    linear in the deepest tree's depth (plus one slot per feature).
    """
    n_rows, n_features = X.shape
    n_trees = tree_offsets.shape[0] - 1
    expectation = np.empty(value.shape[0], dtype=np.float64)
    _node_expectations(left_child, value, cover, tree_offsets, expectation)
    max_depth = _max_depth(tree_depth)
    n_parts = max(1, min(n_threads, n_rows))
    failed = np.zeros(n_parts, dtype=np.uint8)
    for part in prange(n_parts):
        int_buffers = np.zeros((7, max_depth + 2), dtype=np.int64)
        float_buffers = np.zeros((9, max_depth + 2), dtype=np.float64)
        slot_of_feature = np.full(n_features, -1, dtype=np.int64)
        for r in range(n_rows * part // n_parts, n_rows * (part + 1) // n_parts):
            for t in range(n_trees):
                phi = out[r, tree_group[t]]
                phi[n_features] += expectation[tree_offsets[t]]
                if not _tree_shap_row(X[r], tree_offsets[t], tree_depth[t], split_feature,
                                      threshold, default_left, split_type, cat_row, cat_bits,
                                      left_child, value, cover, int_buffers, float_buffers,
                                      slot_of_feature, 0, -1, _NO_PRUNING, phi):
                    failed[part] = 1
    return not failed.any()


@helper(error_model=_ERRORS)
def _max_depth(tree_depth):
    deepest = 0
    for t in range(tree_depth.shape[0]):
        deepest = max(deepest, tree_depth[t])
    return deepest


@helper(error_model=_ERRORS)
def _tree_features(split_feature, left_child, tree_offsets, n_features, offsets, features):
    """The distinct features each tree splits on, in order of first use: tree ``t``'s are
    ``features[offsets[t]:offsets[t + 1]]``. Only they can interact within the tree.

    offsets : int64 (n_trees + 1,)   # OUT
    features : int64 (n_nodes_total,), the first ``offsets[-1]`` entries written   # OUT
    """
    seen = np.full(n_features, -1, dtype=np.int64)  # the last tree that used the feature
    count = 0
    offsets[0] = 0
    for t in range(tree_offsets.shape[0] - 1):
        for node in range(tree_offsets[t], tree_offsets[t + 1]):
            f = split_feature[node]
            if left_child[node] >= 0 and seen[f] != t:
                seen[f] = t
                features[count] = f
                count += 1
        offsets[t + 1] = count


@helper(error_model=_ERRORS)
def _reaches_feature(split_feature, left_child, tree_offsets, feature_offsets, features,
                     reach_offsets, reach):
    """For each tree ``t`` and each feature it splits on (the ``k``-th of
    ``_tree_features``), whether each node's subtree (the node included) holds a split on
    that feature: ``reach[reach_offsets[t] + k * n_nodes + node]`` (1 or 0, ``node``
    within the tree). Children come after parents: one backward sweep per pair.

    reach : uint8 (reach_offsets[-1],)   # OUT
    """
    for t in range(tree_offsets.shape[0] - 1):
        base = tree_offsets[t]
        n_nodes = tree_offsets[t + 1] - base
        for k in range(feature_offsets[t + 1] - feature_offsets[t]):
            feature = features[feature_offsets[t] + k]
            start = reach_offsets[t] + k * n_nodes
            for node in range(n_nodes - 1, -1, -1):
                left = left_child[base + node]
                if left < 0:
                    reach[start + node] = 0
                elif split_feature[base + node] == feature:
                    reach[start + node] = 1
                else:
                    reach[start + node] = reach[start + left] | reach[start + left + 1]


@kernel(parallel=True, error_model=_ERRORS)
def tree_shap_interactions(X, split_feature, threshold, default_left, split_type, cat_row,
                           cat_bits, left_child, value, cover, tree_offsets, tree_group,
                           tree_depth, n_threads, out):
    """Add exact SHAP interaction values (Lundberg, Erion & Lee 2018; XGBoost's
    ``pred_interactions``) to ``out``.

    Inputs as ``tree_shap``'s. out : float64 (n_rows, n_groups, n_features + 1,
    n_features + 1)   # IN/OUT
        For features ``i != j``: ``out[r, g, i, j]`` += half the change in feature ``j``'s
        SHAP value when feature ``i`` is made known (on) rather than unknown (off),
        ``(phi_j | i on - phi_j | i off) / 2``, the Shapley interaction index. The
        diagonal ``out[r, g, i, i]`` += feature ``i``'s SHAP value minus the row's other
        entries added here, so each row of the matrix adds up to ``tree_shap``'s
        contributions; ``out[r, g, n_features, n_features]`` += the trees' expected
        values (the bias), the rest of the bias row and column stay 0.

    Returns True; False when a tree is deeper than its ``tree_depth`` (``out`` is then
    incomplete).

    Per row and tree: one plain TreeSHAP walk, then for each feature ``i`` the tree splits
    on one walk for the change between ``i`` on and ``i`` off (``condition`` 2 of
    ``_tree_shap_row``: XGBoost runs the two games as two walks over every tree, for
    every feature), entering only the subtrees with a split on ``i`` on their paths
    (features a tree does not use do not interact in it). Each row is handled by one
    task and sums its trees in order, so the results do not depend on the thread count.
    """
    n_rows, n_features = X.shape
    n_groups = out.shape[1]
    n_trees = tree_offsets.shape[0] - 1
    expectation = np.empty(value.shape[0], dtype=np.float64)
    _node_expectations(left_child, value, cover, tree_offsets, expectation)
    feature_offsets = np.empty(n_trees + 1, dtype=np.int64)
    features = np.empty(value.shape[0], dtype=np.int64)
    _tree_features(split_feature, left_child, tree_offsets, n_features, feature_offsets, features)
    reach_offsets = np.zeros(n_trees + 1, dtype=np.int64)
    for t in range(n_trees):
        reach_offsets[t + 1] = reach_offsets[t] + (
            (feature_offsets[t + 1] - feature_offsets[t]) * (tree_offsets[t + 1] - tree_offsets[t]))
    reach = np.empty(reach_offsets[n_trees], dtype=np.uint8)
    _reaches_feature(split_feature, left_child, tree_offsets, feature_offsets, features,
                     reach_offsets, reach)
    max_depth = _max_depth(tree_depth)
    n_parts = max(1, min(n_threads, n_rows))
    failed = np.zeros(n_parts, dtype=np.uint8)
    for part in prange(n_parts):
        int_buffers = np.zeros((7, max_depth + 2), dtype=np.int64)
        float_buffers = np.zeros((9, max_depth + 2), dtype=np.float64)
        slot_of_feature = np.full(n_features, -1, dtype=np.int64)
        phi = np.zeros((n_groups, n_features + 1))  # the row's plain SHAP values
        off_diagonal = np.zeros((n_groups, n_features + 1))  # its row sums off the diagonal
        change = np.zeros(n_features + 1)  # phi with a feature on minus phi with it off
        for r in range(n_rows * part // n_parts, n_rows * (part + 1) // n_parts):
            phi[:] = 0.0
            off_diagonal[:] = 0.0
            for t in range(n_trees):
                g, base = tree_group[t], tree_offsets[t]
                phi[g, n_features] += expectation[base]
                args = (X[r], base, tree_depth[t], split_feature, threshold, default_left,
                        split_type, cat_row, cat_bits, left_child, value, cover, int_buffers,
                        float_buffers, slot_of_feature)
                if not _tree_shap_row(*args, 0, -1, _NO_PRUNING, phi[g]):
                    failed[part] = 1
                    continue
                used = features[feature_offsets[t]:feature_offsets[t + 1]]
                n_nodes = tree_offsets[t + 1] - base
                for k in range(used.shape[0]):
                    i = used[k]
                    start = reach_offsets[t] + k * n_nodes
                    reaches = reach[start:start + n_nodes]
                    for j in used:
                        change[j] = 0.0
                    _tree_shap_row(*args, 2, i, reaches, change)
                    for j in used:
                        if j != i:
                            half = change[j] / 2.0
                            out[r, g, i, j] += half
                            off_diagonal[g, i] += half
            for g in range(n_groups):
                for i in range(n_features + 1):
                    out[r, g, i, i] += phi[g, i] - off_diagonal[g, i]
    return not failed.any()


@kernel(parallel=True, error_model=_ERRORS)
def tree_saabas(X, split_feature, threshold, default_left, split_type, cat_row, cat_bits,
                left_child, value, cover, tree_offsets, tree_group, tree_depth, n_threads,
                out):
    """Add approximate contributions (Saabas; XGBoost's ``approx_contribs``) to ``out``.

    Inputs and ``out`` as ``tree_shap``'s. Along the row's path through each tree, the
    split feature of every node gets the change of the expected value (cover-weighted,
    ``_node_expectations``) from the node to the child the row takes; the bias column
    gets the root's expected value. A tree's shares add up to the leaf the row reaches.

    Returns True; False when a tree is deeper than its ``tree_depth``.
    """
    n_rows, n_features = X.shape
    n_trees = tree_offsets.shape[0] - 1
    expectation = np.empty(value.shape[0], dtype=np.float64)
    _node_expectations(left_child, value, cover, tree_offsets, expectation)
    n_parts = max(1, min(n_threads, n_rows))
    failed = np.zeros(n_parts, dtype=np.uint8)
    for part in prange(n_parts):
        for r in range(n_rows * part // n_parts, n_rows * (part + 1) // n_parts):
            x = X[r]
            for t in range(n_trees):
                phi = out[r, tree_group[t]]
                base = tree_offsets[t]
                at = base
                phi[n_features] += expectation[at]
                for _ in range(tree_depth[t]):
                    if left_child[at] < 0:
                        break
                    f = split_feature[at]
                    goes_left = row_goes_left(x[f], at, threshold, default_left, split_type,
                                              cat_row, cat_bits)
                    child = base + left_child[at] + (0 if goes_left else 1)
                    phi[f] += expectation[child] - expectation[at]
                    at = child
                if left_child[at] >= 0:
                    failed[part] = 1
    return not failed.any()
