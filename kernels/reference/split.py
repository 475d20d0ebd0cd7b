"""Twins of ``cpu/split.py``: every candidate listed in the kernel's order, then the best."""
import numpy as np

from ..split_math import python as split_math


def _bits_of(codes, n_words):
    bits = np.zeros(n_words, dtype=np.uint32)
    for c in codes:
        bits[c // 32] |= np.uint32(1 << (c % 32))
    return bits


def _numeric_candidates(h, n, missing, monotone):
    """(left sums, default left, bin) in scan order: missing right, then missing left; a
    feature of one value bin: the missing rows alone on the left (bin -1)."""
    if n == 1:
        if missing.any():
            yield missing, 1, -1, None
        return
    for direction in ((0, 1) if missing.any() else (0,)):
        for b in range(n - 1):
            yield h[:b + 1].sum(axis=0) + (missing if direction else 0), direction, b, None


def _categorical_candidates(h, n, missing, total, scales, reg, min_child_weight, onehot,
                            threshold):
    """(left sums, default left, bin 0, set) in the kernel's order."""
    if n < onehot:
        for c in range(n):
            yield total - h[c], 1, 0, [c]
            if missing.any():
                yield total - h[c] - missing, 0, 0, [c]
        return
    hess = h[:n, 1] / scales[1]
    weight = [split_math.leaf_weight(h[c, 0] / scales[0], hess[c], *reg)
              if hess[c] > 0 and hess[c] >= min_child_weight else 0.0 for c in range(n)]
    order = sorted(range(n), key=lambda c: weight[c])  # stable
    for ranked in (order, order[::-1]):
        for size in range(1, min(threshold, n)):
            chosen = ranked[:size]
            yield total - h[chosen].sum(axis=0), 1, 0, chosen


def evaluate_splits(hist, feature_offsets, missing_slots, is_categorical, node_sums,
                    feature_mask, monotone, node_bounds, scales, split_params,
                    max_cat_to_onehot, max_cat_threshold, out_gain, out_feature, out_bin,
                    out_default_left, out_left_sum, out_cat_bits):
    reg, min_child_weight = tuple(split_params[:3]), split_params[3]
    for k in range(hist.shape[0]):
        out_gain[k], out_feature[k], out_bin[k], out_default_left[k] = -np.inf, -1, 0, 0
        out_left_sum[k] = 0
        out_cat_bits[k] = 0
        total = node_sums[k]
        bounds = tuple(node_bounds[k])
        scales_k = scales[k]
        parent = split_math.bounded_gain(total[0] / scales_k[0], total[1] / scales_k[1], *reg,
                                         *bounds)
        for f in range(feature_offsets.shape[0] - 1):
            h = hist[k, feature_offsets[f]:feature_offsets[f + 1]]
            n = h.shape[0] - missing_slots
            if not feature_mask[k, f] or n < 1:
                continue
            # the missing rows' sums: their slot, or (no slot) what the value bins lack
            missing = h[n] if missing_slots else total - h[:n].sum(axis=0)
            if is_categorical[f]:
                candidates = _categorical_candidates(h, n, missing, total, scales_k, reg,
                                                     min_child_weight, max_cat_to_onehot,
                                                     max_cat_threshold)
            else:
                candidates = _numeric_candidates(h, n, missing, monotone[f])
            for left, default_left, b, chosen in candidates:
                right = total - left
                if left[1] <= 0 or right[1] <= 0:
                    continue
                hl, hr = left[1] / scales_k[1], right[1] / scales_k[1]
                if hl < min_child_weight or hr < min_child_weight:
                    continue
                gl, gr = left[0] / scales_k[0], right[0] / scales_k[0]
                if is_categorical[f] or monotone[f] == 0:
                    gain = (split_math.bounded_gain(gl, hl, *reg, *bounds)
                            + split_math.bounded_gain(gr, hr, *reg, *bounds) - parent)
                else:
                    wl = split_math.bounded_weight(gl, hl, *reg, *bounds)
                    wr = split_math.bounded_weight(gr, hr, *reg, *bounds)
                    if (monotone[f] > 0 and wl > wr) or (monotone[f] < 0 and wl < wr):
                        continue
                    gain = (split_math.gain_given_weight(gl, hl, reg[0], reg[1], wl)
                            + split_math.gain_given_weight(gr, hr, reg[0], reg[1], wr) - parent)
                if gain > out_gain[k]:
                    out_gain[k], out_feature[k], out_bin[k] = gain, f, b
                    out_default_left[k] = default_left
                    out_left_sum[k] = left
                    out_cat_bits[k] = 0 if chosen is None else _bits_of(chosen,
                                                                        out_cat_bits.shape[1])


def node_weights(node_sums, node_bounds, scales, split_params, out):
    for k in range(node_sums.shape[0]):
        out[k] = split_math.bounded_weight(node_sums[k, 0] / scales[k, 0],
                                           node_sums[k, 1] / scales[k, 1], *split_params[:3],
                                           *node_bounds[k])
