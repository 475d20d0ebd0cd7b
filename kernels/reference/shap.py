"""Twin of ``cpu/shap.py``'s ``tree_shap``: exact SHAP values by brute force over feature
subsets (an oracle independent of TreeSHAP's Algorithm 2)."""
from math import factorial

import numpy as np

from .predict import categorical_goes_left


def _goes_left(x, at, threshold, default_left, split_type, cat_row, cat_bits):
    """Per row: does it go left at node ``at`` (numeric threshold or category set)."""
    if split_type[at] == 1:
        return np.array([categorical_goes_left(v, default_left[at], cat_bits, cat_row[at])
                         for v in x], dtype=bool)
    return np.where(np.isnan(x), default_left[at] == 1, x < threshold[at])


def _expected_output(X, base, end, known, split_feature, threshold, default_left, split_type,
                     cat_row, cat_bits, left_child, value, cover):
    """The output of the tree at nodes ``[base, end)`` for every row when only the
    features in ``known`` are known: the row follows its value at their splits, and both
    children's outputs weighted by cover at the others (evenly under a node of cover 0).

    One backward sweep over the nodes (children come after their parents), so any depth
    works: out[node] is the output of the subtree below ``node``.
    """
    out = np.empty((end - base, X.shape[0]))
    for at in range(end - 1, base - 1, -1):
        if left_child[at] < 0:
            out[at - base] = value[at]
            continue
        v_left, v_right = out[left_child[at]], out[left_child[at] + 1]
        f = split_feature[at]
        if f in known:
            goes_left = _goes_left(X[:, f], at, threshold, default_left, split_type, cat_row,
                                   cat_bits)
            out[at - base] = np.where(goes_left, v_left, v_right)
        elif cover[at] == 0.0:
            out[at - base] = 0.5 * (v_left + v_right)
        else:
            left = base + left_child[at]
            out[at - base] = (cover[left] * v_left + cover[left + 1] * v_right) / cover[at]
    return out[0]


def tree_shap(X, split_feature, threshold, default_left, split_type, cat_row, cat_bits,
              left_child, value, cover, tree_offsets, tree_group, tree_depth, n_threads, out):
    """Exact SHAP values by brute force, an oracle independent of Algorithm 2.

    For each tree, the game is ``v(S)`` = the tree's expected output for the row when only
    the features in ``S`` are known: at a split on a known feature the row follows its
    value (NaN: ``default_left``); on an unknown one, both children count in proportion to
    their covers, ``v = (c_l v_l + c_r v_r) / c_node``. Shapley values are the weighted
    sums over all subsets of the tree's features (so at most 12 per tree),
    ``phi_i = sum_S |S|! (M - |S| - 1)! / M! (v(S + i) - v(S))``; the last column gets
    ``v({})``. Same signature and result as ``cpu.tree_shap`` (True: complete).
    """
    n_features = X.shape[1]
    tree = (split_feature, threshold, default_left, split_type, cat_row, cat_bits, left_child,
            value, cover)
    for t in range(tree_offsets.shape[0] - 1):
        base = tree_offsets[t]
        inner = left_child[base:tree_offsets[t + 1]] >= 0
        used = np.unique(split_feature[base:tree_offsets[t + 1]][inner])
        m = used.size
        if m > 12:
            raise ValueError(f"tree {t} splits on {m} features; the brute force handles <= 12")
        v = [_expected_output(X, base, tree_offsets[t + 1],
                              {int(used[i]) for i in range(m) if mask >> i & 1}, *tree)
             for mask in range(1 << m)]
        g = tree_group[t]
        out[:, g, n_features] += v[0]
        for i in range(m):
            phi = np.zeros(X.shape[0])
            for mask in range(1 << m):
                if mask >> i & 1:
                    continue
                size = mask.bit_count()
                share = factorial(size) * factorial(m - size - 1) / factorial(m)
                phi += share * (v[mask | 1 << i] - v[mask])
            out[:, g, used[i]] += phi
    return True
