"""Twins of ``cpu/vector_leaf.py``: plain NumPy and Python, written from the rules in its
docstring (the scalar formulas are ``split_math``'s Python build)."""
import numpy as np

from ..split_math import python as _math
from .vector_split import (bounded_output_gain, bounded_split_gain, clip, counted,
                           output_weight, split_gain, split_weights)


def build_vector_histograms(bins_by_feature, gpair, rows, node_starts, node_ends,
                            feature_offsets, hist):
    hist[...] = 0
    for node in range(node_starts.shape[0]):
        seg = rows[node_starts[node]:node_ends[node]]
        for f in range(bins_by_feature.shape[0]):
            slots = feature_offsets[f] + bins_by_feature[f, seg].astype(np.int64)
            np.add.at(hist[node], slots, gpair[seg])


def evaluate_vector_splits(hist, feature_offsets, node_sums, mask, scales, split_params,
                           out_gain, out_feature, out_bin, out_left, out_left_sums):
    lam, alpha, mds, mcw = (float(v) for v in split_params)
    n_features = feature_offsets.shape[0] - 1
    for node in range(hist.shape[0]):
        total = node_sums[node]
        parent = 0.0
        for j in range(total.shape[0]):
            g, h = total[j, 0] / scales[j, 0], total[j, 1] / scales[j, 1]
            parent += _math.node_gain(g, h, lam, alpha, mds) if counted(h, mcw) else 0.0
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
                    gain = split_gain(left, total, scales, lam, alpha, mds, mcw, parent)
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
            out[node, j] = _math.leaf_weight(g, h, lam, alpha, mds) if counted(h, mcw) else 0.0


def vector_children_histograms(parent_hist, built, small_is_right, out):
    for i in range(built.shape[0]):
        small = 2 * i + int(small_is_right[i])
        out[small] = built[i]
        out[4 * i + 1 - small] = parent_hist[i] - built[i]


def vector_segment_sums(gpair, rows, starts, ends, out):
    for s in range(starts.shape[0]):
        out[s] = gpair[:, rows[starts[s]:ends[s]]].sum(axis=1)


# -- monotone constraints (XGBoost 3.4's vector rule) ---------------------------------------
def evaluate_vector_splits_monotone(hist, feature_offsets, node_sums, mask, node_bounds,
                                    monotone, scales, split_params, out_gain, out_feature,
                                    out_bin, out_left, out_left_sums):
    params = tuple(float(v) for v in split_params)
    for node in range(hist.shape[0]):
        total, bounds = node_sums[node], node_bounds[node]
        parent = sum(bounded_output_gain(total[j, 0] / scales[j, 0], total[j, 1] / scales[j, 1],
                                         bounds[j], params) for j in range(total.shape[0]))
        best = (-np.inf, -1, 0, 0, np.zeros_like(total))
        for f in range(feature_offsets.shape[0] - 1):
            if not mask[node, f]:
                continue
            h = hist[node, feature_offsets[f]:feature_offsets[f + 1]]
            n = h.shape[0] - 1
            for d in ((0, 1) if h[-1].any() else (0,)):
                left = h[-1].copy() if d == 1 else np.zeros_like(total)
                for b in ([-1] if n == 1 else range(n - 1)):
                    if b > 0 and not h[b].any():
                        continue
                    if b >= 0:
                        left = left + h[b]
                    gain = bounded_split_gain(left, total, bounds, int(monotone[f]), scales,
                                              params, parent)
                    if gain > best[0]:
                        best = (gain, f, b, d, left.copy())
        out_gain[node], out_feature[node] = best[0], best[1]
        out_bin[node] = best[2] if best[1] >= 0 else 0
        out_left[node] = best[3] if best[1] >= 0 else 0
        out_left_sums[node] = best[4]


def vector_bounded_weights(node_sums, node_bounds, scales, split_params, out):
    lam, alpha, mds, mcw = (float(v) for v in split_params)
    for node in range(node_sums.shape[0]):
        for j in range(node_sums.shape[1]):
            g, h = node_sums[node, j, 0] / scales[j, 0], node_sums[node, j, 1] / scales[j, 1]
            out[node, j] = clip(output_weight(g, h, lam, alpha, mds, mcw), node_bounds[node, j])


def vector_child_bounds(node_sums, left_sums, node_bounds, signs, scales, split_params,
                        out_left, out_right):
    params = tuple(float(v) for v in split_params)
    out_left[...] = node_bounds
    out_right[...] = node_bounds
    for i in range(node_sums.shape[0]):
        sign = int(signs[i])
        if sign == 0:
            continue
        for j in range(node_sums.shape[1]):
            wl, wr, _ = split_weights(left_sums[i, j, 0], left_sums[i, j, 1], node_sums[i, j, 0],
                                      node_sums[i, j, 1], scales[j], node_bounds[i, j], sign,
                                      params)
            mid = wl + 0.5 * (wr - wl)
            lower_side, upper_side = (out_right, out_left) if sign > 0 else (out_left, out_right)
            upper_side[i, j, 1] = mid
            lower_side[i, j, 0] = mid


def build_vector_feature_histograms(bins_by_feature, gpair, rows, node_starts, node_ends,
                                    features, hist):
    hist[...] = 0
    for node in range(hist.shape[0]):
        for r in rows[node_starts[node]:node_ends[node]]:
            hist[node, int(bins_by_feature[features[node], r])] += gpair[:, r]


def quantize_vector_pairs(grad, hess, scales, out):
    out[:, :, 0] = np.rint(grad.T * scales[:, 0]).astype(np.int64)
    out[:, :, 1] = np.rint(hess.T * scales[:, 1]).astype(np.int64)
