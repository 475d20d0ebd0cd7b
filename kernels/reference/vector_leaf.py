"""Twins of ``cpu/vector_leaf.py``: plain NumPy and Python, written from the rules in its
docstring (the scalar formulas are ``split_math``'s Python build)."""
import numpy as np

from ..split_math import python as _math


def build_vector_histograms(bins_by_feature, gpair, rows, node_starts, node_ends,
                            feature_offsets, hist):
    hist[...] = 0
    for node in range(node_starts.shape[0]):
        seg = rows[node_starts[node]:node_ends[node]]
        for f in range(bins_by_feature.shape[0]):
            slots = feature_offsets[f] + bins_by_feature[f, seg].astype(np.int64)
            np.add.at(hist[node], slots, gpair[seg])


def _counted(h, mcw):
    # XGBoost 3.2 weighs an output 0 (gain 0) in a node whose hessian there is not
    # positive or is below min_child_weight
    return h > 0 and h >= mcw


def _gain_of(left, total, scales, lam, alpha, mds, mcw, parent):
    right = total - left
    gain = 0.0
    for j in range(left.shape[0]):
        gl, hl = left[j, 0] * (1.0 / scales[j, 0]), left[j, 1] * (1.0 / scales[j, 1])
        gr, hr = right[j, 0] * (1.0 / scales[j, 0]), right[j, 1] * (1.0 / scales[j, 1])
        gain += _math.node_gain(gl, hl, lam, alpha, mds) if _counted(hl, mcw) else 0.0
        gain += _math.node_gain(gr, hr, lam, alpha, mds) if _counted(hr, mcw) else 0.0
    return gain - parent


def evaluate_vector_splits(hist, feature_offsets, node_sums, mask, scales, split_params,
                           out_gain, out_feature, out_bin, out_left, out_left_sums):
    lam, alpha, mds, mcw = (float(v) for v in split_params)
    n_features = feature_offsets.shape[0] - 1
    for node in range(hist.shape[0]):
        total = node_sums[node]
        parent = 0.0
        for j in range(total.shape[0]):
            g, h = total[j, 0] / scales[j, 0], total[j, 1] / scales[j, 1]
            parent += _math.node_gain(g, h, lam, alpha, mds) if _counted(h, mcw) else 0.0
        best = (-np.inf, -1, 0, 0, np.zeros_like(total))
        for f in range(n_features):
            if not mask[node, f]:
                continue
            lo, hi = feature_offsets[f], feature_offsets[f + 1]
            h = hist[node, lo:hi]
            n, miss = hi - lo - 1, h[-1]
            directions = (0, 1) if miss.any() else (0,)
            for d in directions:
                left = miss.copy() if d == 1 else np.zeros_like(total)
                bins = [-1] if n == 1 else range(n - 1)
                for b in bins:
                    if b > 0 and not h[b].any():
                        continue
                    if b >= 0:
                        left = left + h[b]
                    gain = _gain_of(left, total, scales, lam, alpha, mds, mcw, parent)
                    if gain > best[0]:
                        best = (gain, f, b, d, left.copy())
        out_gain[node], out_feature[node] = best[0], best[1]
        out_bin[node] = best[2] if best[1] >= 0 else 0
        out_left[node] = best[3] if best[1] >= 0 else 0
        out_left_sums[node] = best[4]


def vector_node_weights(node_sums, scales, split_params, out):
    lam, alpha, mds, mcw = (float(v) for v in split_params)
    for node in range(node_sums.shape[0]):
        for j in range(node_sums.shape[1]):
            g, h = node_sums[node, j, 0] / scales[j, 0], node_sums[node, j, 1] / scales[j, 1]
            out[node, j] = _math.leaf_weight(g, h, lam, alpha, mds) if _counted(h, mcw) else 0.0


def vector_children_histograms(parent_hist, built, small_is_right, out):
    for i in range(built.shape[0]):
        small = 2 * i + int(small_is_right[i])
        out[small] = built[i]
        out[4 * i + 1 - small] = parent_hist[i] - built[i]


def vector_segment_sums(gpair, rows, starts, ends, out):
    for s in range(starts.shape[0]):
        out[s] = gpair[:, rows[starts[s]:ends[s]]].sum(axis=1)
