"""Plain NumPy twins of the kernels in ``cpu.py``: obviously correct, slow, the test oracle.

Same names and signatures as ``cpu.py`` (``n_threads`` is accepted and ignored).
"""

import numpy as np

from .split_math import python as _split_math

bounded_gain = _split_math.bounded_gain
bounded_weight = _split_math.bounded_weight
gain_given_weight = _split_math.gain_given_weight


def build_histograms(bins, gpair, rows, node_starts, node_ends, hist, n_threads=1):
    hist[...] = 0
    for k in range(node_starts.shape[0]):
        seg = rows[node_starts[k]:node_ends[k]]
        for f in range(bins.shape[1]):
            b = bins[seg, f].astype(np.int64)
            np.add.at(hist[k, f, :, 0], b, gpair[seg, 0])
            np.add.at(hist[k, f, :, 1], b, gpair[seg, 1])


def subtract_histograms(parent, child, out):
    out[...] = parent - child


def evaluate_splits(hist, node_sums, n_bins, feature_mask, monotone, node_bounds, scales,
                    reg_lambda, reg_alpha, max_delta_step, min_child_weight, out_gain,
                    out_feature, out_bin, out_default_left, out_left_sum):
    reg = (reg_lambda, reg_alpha, max_delta_step)
    for k in range(hist.shape[0]):
        out_gain[k], out_feature[k], out_bin[k], out_default_left[k] = -np.inf, -1, 0, 0
        out_left_sum[k] = 0
        total = node_sums[k]
        bounds = tuple(node_bounds[k])
        parent = bounded_gain(total[0] / scales[0], total[1] / scales[1], *reg, *bounds)
        for f in range(hist.shape[1]):
            if not feature_mask[k, f] or n_bins[f] < 2:
                continue
            missing = hist[k, f, n_bins[f]]
            directions = (0, 1) if missing.any() else (0,)
            for direction in directions:
                for b in range(n_bins[f] - 1):
                    left = hist[k, f, :b + 1].sum(axis=0) + (missing if direction else 0)
                    right = total - left
                    if left[1] <= 0 or right[1] <= 0:
                        continue
                    hl, hr = left[1] / scales[1], right[1] / scales[1]
                    if hl < min_child_weight or hr < min_child_weight:
                        continue
                    gl, gr = left[0] / scales[0], right[0] / scales[0]
                    if monotone[f] == 0:
                        gain = (bounded_gain(gl, hl, *reg, *bounds)
                                + bounded_gain(gr, hr, *reg, *bounds) - parent)
                    else:
                        wl = bounded_weight(gl, hl, *reg, *bounds)
                        wr = bounded_weight(gr, hr, *reg, *bounds)
                        if (monotone[f] > 0 and wl > wr) or (monotone[f] < 0 and wl < wr):
                            continue
                        gain = (gain_given_weight(gl, hl, reg_lambda, reg_alpha, wl)
                                + gain_given_weight(gr, hr, reg_lambda, reg_alpha, wr) - parent)
                    if gain > out_gain[k]:
                        out_gain[k], out_feature[k], out_bin[k] = gain, f, b
                        out_default_left[k] = direction
                        out_left_sum[k] = left


def partition_rows(bins_by_feature, rows, node_starts, node_ends, split_feature, split_bin,
                   default_left, n_bins, scratch, out_n_left):
    for k in range(node_starts.shape[0]):
        seg = rows[node_starts[k]:node_ends[k]].copy()
        f = split_feature[k]
        b = bins_by_feature[f, seg].astype(np.int32)
        left = np.where(b == n_bins[f], default_left[k] == 1, b <= split_bin[k])
        rows[node_starts[k]:node_ends[k]] = np.concatenate([seg[left], seg[~left]])
        out_n_left[k] = left.sum()


def add_leaf_values(rows, leaf_starts, leaf_ends, leaf_values, out):
    for k in range(leaf_starts.shape[0]):
        out[rows[leaf_starts[k]:leaf_ends[k]]] += leaf_values[k]


def _leaves(go_left_of, walk, tree_offsets, tree_depth, t, n_rows):
    """Each row's leaf in tree ``t``, by ``tree_depth[t]`` steps through the walk table."""
    table = walk.reshape(-1, 4)
    base = tree_offsets[t]
    node = np.full(n_rows, base, dtype=np.int64)
    for _ in range(tree_depth[t]):
        entry = table[node]
        node = np.where(go_left_of(entry), base + entry[:, 1], base + entry[:, 1] + 1)
    return node


def predict_binned(bins, n_bins, walk, value, tree_offsets, tree_group, tree_depth, out):
    rows = np.arange(bins.shape[0])

    def go_left_of(entry):
        b = bins[rows, entry[:, 0]].astype(np.int32)
        missing = b == n_bins[entry[:, 0]]
        return np.where(missing, entry[:, 2] == 1, b <= entry[:, 3])

    for t in range(tree_offsets.shape[0] - 1):
        leaf = _leaves(go_left_of, walk, tree_offsets, tree_depth, t, bins.shape[0])
        out[:, tree_group[t]] += value[leaf]


def _raw_go_left(X):
    rows = np.arange(X.shape[0])

    def go_left_of(entry):
        x = X[rows, entry[:, 0]]
        threshold = entry[:, 3].astype(np.int32).view(np.float32)
        return np.where(np.isnan(x), entry[:, 2] == 1, x < threshold)

    return go_left_of


def predict_leaf(X, walk, tree_offsets, tree_depth, out):
    for t in range(tree_offsets.shape[0] - 1):
        leaf = _leaves(_raw_go_left(X), walk, tree_offsets, tree_depth, t, X.shape[0])
        out[:, t] = leaf - tree_offsets[t]


def predict(X, walk, value, tree_offsets, tree_group, tree_depth, out):
    for t in range(tree_offsets.shape[0] - 1):
        leaf = _leaves(_raw_go_left(X), walk, tree_offsets, tree_depth, t, X.shape[0])
        out[:, tree_group[t]] += value[leaf]


def bin_values(X, padded_cuts, n_bins, out):
    for f in range(X.shape[1]):
        col = X[:, f]
        b = np.searchsorted(padded_cuts[f, :n_bins[f] - 1], col, side="right")
        out[:, f] = np.where(np.isnan(col), n_bins[f], b)


def max_abs(values):
    return float(np.max(np.abs(values), initial=0.0))


def quantize_gradients(grad, hess, scales, out):
    out[:, 0] = np.rint(grad * scales[0])
    out[:, 1] = np.rint(hess * scales[1])


def _mix(z):
    """splitmix64 on a Python int, modulo 2**64."""
    mask = (1 << 64) - 1
    z = (z + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def _rank_pairs(labels, order, first_row, topk, num_pair, key):
    """The (rank, rank) pairs one group's lambdas are summed over, in kernel order."""
    n = labels.shape[0]
    if topk:
        return [(a, b) for a in range(min(n, num_pair)) for b in range(a + 1, n)]
    ranked = labels[order]
    by_label = sorted(range(n), key=lambda r: -ranked[r])  # Python's sort is stable
    pairs, i = [], 0
    while i < n:
        j = i + 1
        while j < n and ranked[by_label[j]] == ranked[by_label[i]]:
            j += 1
        others = n - (j - i)
        for k in range(num_pair if others else 0):
            for p in range(i, j):
                u = _mix(_mix(int(key) ^ (int(first_row) + int(order[by_label[p]]))) ^ k)
                pick = min(int(float(u >> 11) * (others / 2.0**53)), others - 1)
                pairs.append((by_label[p], by_label[pick + (j - i if pick >= i else 0)]))
        i = j
    return pairs


def lambdarank_gradients(margin, labels, group_ptr, group_scale, delta_kind, exp_gain, topk,
                         num_pair, score_normalization, normalization, key, grad, hess,
                         n_threads=1):
    gain = (lambda y: 2.0 ** y - 1.0) if exp_gain else (lambda y: y)
    for g in range(group_ptr.shape[0] - 1):
        lo, hi = group_ptr[g], group_ptr[g + 1]
        s, y = margin[lo:hi], labels[lo:hi]
        n = hi - lo
        order = np.argsort(-s, kind="stable")
        ideal = np.sort(y)[::-1][:num_pair if topk else n]
        idcg = float(np.sum(gain(ideal) / np.log2(np.arange(ideal.shape[0]) + 2.0)))
        inv_idcg = 1.0 / idcg if idcg != 0.0 else 0.0
        by_gap = score_normalization and n > 0 and s[order[0]] != s[order[-1]]
        g_grad, g_hess, total = np.zeros(n), np.zeros(n), 0.0
        for a, b in _rank_pairs(y, order, lo, topk, num_pair, key) if n > 1 else []:
            i, j = order[a], order[b]
            if y[i] == y[j]:
                continue
            if y[i] < y[j]:
                i, j, a, b = j, i, b, a
            delta = 1.0
            if delta_kind == 1:
                dcg = gain(y[i]) / np.log2(a + 2.0) + gain(y[j]) / np.log2(b + 2.0)
                swapped = gain(y[j]) / np.log2(a + 2.0) + gain(y[i]) / np.log2(b + 2.0)
                delta = abs((dcg - swapped) * inv_idcg)
            if by_gap:
                delta /= abs(s[i] - s[j]) + 0.01
            p = 1.0 / (1.0 + np.exp(-(s[i] - s[j])))
            g_grad[i] += (p - 1.0) * delta
            g_grad[j] -= (p - 1.0) * delta
            g_hess[[i, j]] += 2.0 * max(p * (1.0 - p), 1e-16) * delta
            total -= 2.0 * (p - 1.0) * delta
        norm = 1.0
        if normalization:
            norm = 1.0 / num_pair if not topk else (np.log2(1.0 + total) / total if total > 0 else 1.0)
        grad[lo:hi] = g_grad * norm * group_scale[g]
        hess[lo:hi] = g_hess * norm * group_scale[g]

# Categorical splits and TreeSHAP: twins in modules of their own, part of this namespace.
from .categorical_reference import (  # noqa: E402,F401
    CAT_WORDS,
    categorical_goes_left,
    evaluate_categorical_splits,
    partition_rows_categorical,
    predict_binned_categorical,
    predict_categorical,
    predict_leaf_categorical,
)
from .shap_reference import tree_shap  # noqa: E402,F401
