"""Twin of ``cpu/vector_categorical.py``: plain NumPy and Python, written from the rules in
its docstring (numeric features: ``vector_leaf.evaluate_vector_splits_monotone``)."""
import numpy as np

from .vector_leaf import evaluate_vector_splits_monotone
from .vector_split import bounded_output_gain, bounded_split_gain, output_weight


def _order(h, n, total, scales, params):
    """Category codes by increasing score ``sum_t f32(w_p[t]) * f32(w_c[t])`` (float32
    products summed in float64), ties in code order."""
    def weights(sums):
        return [np.float32(output_weight(sums[j, 0] / scales[j, 0], sums[j, 1] / scales[j, 1],
                                         *params)) for j in range(sums.shape[0])]

    parent = weights(total)
    scores = [sum(float(p * w) for p, w in zip(parent, weights(h[c]))) for c in range(n)]
    return np.argsort(np.array(scores), kind="stable")


def _candidates(h, n, total, scales, params, max_cat_to_onehot, max_cat_threshold):
    """Every candidate of one categorical feature in the kernel's order: (left sums,
    missing left, the set going right)."""
    miss = h[n]
    if n < max_cat_to_onehot:
        for c in range(n):
            yield total - h[c], 1, [c]
            yield total - h[c] - miss, 0, [c]
        return
    order = _order(h, n, total, scales, params)
    limit = min(max_cat_threshold, n)
    for size in range(1, limit):
        yield total - h[order[:size]].sum(axis=0), 1, order[:size].tolist()
    for size in range(1, limit):
        yield h[order[n - size:]].sum(axis=0), 0, order[:n - size].tolist()


def evaluate_vector_splits_categorical(hist, feature_offsets, node_sums, mask, node_bounds,
                                       monotone, is_categorical, scales, split_params,
                                       max_cat_to_onehot, max_cat_threshold, out_gain,
                                       out_feature, out_bin, out_left, out_left_sums,
                                       out_cat_bits):
    params = tuple(float(v) for v in split_params)
    numeric = mask * (np.asarray(is_categorical) == 0)[None, :].astype(np.uint8)
    evaluate_vector_splits_monotone(hist, feature_offsets, node_sums, numeric, node_bounds,
                                    monotone, scales, split_params, out_gain, out_feature,
                                    out_bin, out_left, out_left_sums)
    out_cat_bits[...] = 0
    for node in range(hist.shape[0]):
        total, bounds = node_sums[node], node_bounds[node]
        parent = sum(bounded_output_gain(total[j, 0] / scales[j, 0], total[j, 1] / scales[j, 1],
                                         bounds[j], params) for j in range(total.shape[0]))
        for f in np.flatnonzero(np.asarray(is_categorical) != 0):
            if not mask[node, f]:
                continue
            h = hist[node, feature_offsets[f]:feature_offsets[f + 1]]
            for left, missing_left, codes in _candidates(
                    h, h.shape[0] - 1, total, scales, params, max_cat_to_onehot,
                    max_cat_threshold):
                gain = bounded_split_gain(left, total, bounds, 0, scales, params, parent)
                # strictly better, or as good from a lower feature than the numeric best
                if gain > out_gain[node] or (gain == out_gain[node] and f < out_feature[node]):
                    out_gain[node], out_feature[node], out_bin[node] = gain, f, 0
                    out_left[node], out_left_sums[node] = missing_left, left
                    out_cat_bits[node] = 0
                    for c in codes:
                        out_cat_bits[node, c >> 5] |= np.uint32(1 << (c & 31))
