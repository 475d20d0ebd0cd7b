"""Twins of ``cpu/shap.py``'s kernels: exact SHAP values and SHAP interaction values by
brute force over feature subsets (oracles independent of TreeSHAP's Algorithm 2 and of
its conditioned walks), and Saabas's contributions from each node's expected value
written as a sum over the leaves below it."""
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


def _games(X, t, tree_offsets, tree):
    """Tree ``t``'s features (sorted) and its game: ``v[mask]`` = the expected output
    (per row) when the features whose bits are set in ``mask`` are known."""
    split_feature, left_child = tree[0], tree[6]
    base, end = tree_offsets[t], tree_offsets[t + 1]
    used = np.unique(split_feature[base:end][left_child[base:end] >= 0])
    if used.size > 12:
        raise ValueError(f"tree {t} splits on {used.size} features; the brute force handles "
                         "<= 12")
    v = [_expected_output(X, base, end, {int(used[i]) for i in range(used.size) if mask >> i & 1},
                          *tree)
         for mask in range(1 << used.size)]
    return used, v


def tree_shap_interactions(X, split_feature, threshold, default_left, split_type, cat_row,
                           cat_bits, left_child, value, cover, tree_offsets, tree_group,
                           tree_depth, n_threads, out):
    """SHAP interaction values by brute force (Lundberg, Erion & Lee 2018, eq. 2, the
    Shapley interaction index of Fujimoto, Kojadinov & Marichal 2006).

    For each tree, with ``v`` its game (see ``tree_shap``) over its ``m`` features and
    ``i != j`` two of them::

        phi_ij = sum over S without i, j of |S|! (m - |S| - 2)! / (2 (m - 1)!)
                 * (v(S + i + j) - v(S + i) - v(S + j) + v(S))

    and ``phi_ii`` = the Shapley value of ``i`` minus ``sum_j phi_ij``; ``v({})`` goes to
    ``out[:, g, n_features, n_features]``. Same signature and result as
    ``cpu.tree_shap_interactions`` (True: complete).
    """
    n_features = X.shape[1]
    tree = (split_feature, threshold, default_left, split_type, cat_row, cat_bits, left_child,
            value, cover)
    for t in range(tree_offsets.shape[0] - 1):
        used, v = _games(X, t, tree_offsets, tree)
        m, g = used.size, tree_group[t]
        out[:, g, n_features, n_features] += v[0]
        for a in range(m):
            shapley = np.zeros(X.shape[0])
            for mask in range(1 << m):
                if not mask >> a & 1:
                    size = mask.bit_count()
                    share = factorial(size) * factorial(m - size - 1) / factorial(m)
                    shapley += share * (v[mask | 1 << a] - v[mask])
            total = np.zeros(X.shape[0])
            for b in range(m):
                if b == a:
                    continue
                pair = np.zeros(X.shape[0])
                for mask in range(1 << m):
                    if mask >> a & 1 or mask >> b & 1:
                        continue
                    size = mask.bit_count()
                    share = factorial(size) * factorial(m - size - 2) / (2 * factorial(m - 1))
                    pair += share * (v[mask | 1 << a | 1 << b] - v[mask | 1 << a]
                                     - v[mask | 1 << b] + v[mask])
                out[:, g, used[a], used[b]] += pair
                total += pair
            out[:, g, used[a], used[a]] += shapley - total
    return True


def _subtree_mean(at, base, left_child, value, cover):
    """A node's expected output over the training rows: the sum over the leaves below it
    of leaf value times the product of the cover shares on the way down (an even split
    under a node of cover 0)."""
    total, stack = 0.0, [(at, 1.0)]
    while stack:
        node, weight = stack.pop()
        if left_child[node] < 0:
            total += weight * value[node]
            continue
        for child in (base + left_child[node], base + left_child[node] + 1):
            share = 0.5 if cover[node] == 0.0 else cover[child] / cover[node]
            stack.append((child, weight * share))
    return total


def tree_saabas(X, split_feature, threshold, default_left, split_type, cat_row, cat_bits,
                left_child, value, cover, tree_offsets, tree_group, tree_depth, n_threads,
                out):
    """Saabas's contributions: along each row's path, the split feature gets the change of
    the expected output from a node to the child taken; the bias gets the root's. Same
    signature and result as ``cpu.tree_saabas`` (True: complete)."""
    n_features = X.shape[1]
    for t in range(tree_offsets.shape[0] - 1):
        base, g = tree_offsets[t], tree_group[t]
        mean = {}
        for r in range(X.shape[0]):
            at = base
            if at not in mean:
                mean[at] = _subtree_mean(at, base, left_child, value, cover)
            out[r, g, n_features] += mean[at]
            while left_child[at] >= 0:
                f = split_feature[at]
                goes_left = _goes_left(X[r:r + 1, f], at, threshold, default_left, split_type,
                                       cat_row, cat_bits)[0]
                child = base + left_child[at] + (0 if goes_left else 1)
                if child not in mean:
                    mean[child] = _subtree_mean(child, base, left_child, value, cover)
                out[r, g, f] += mean[child] - mean[at]
                at = child
    return True
