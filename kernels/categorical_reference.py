"""Plain NumPy twins of ``categorical_cpu.py``: obviously correct, slow, the test oracle.

Re-exported by ``reference.py``; same names and signatures as the Numba kernels.
"""
import numpy as np

from .split_math import python as _split_math

CAT_WORDS = 8


def categorical_goes_left(x, default_left, cat_bits, row):
    if not (x >= 0 and x < 32 * CAT_WORDS):
        return bool(default_left)
    code = int(x)
    return not (int(cat_bits[row, code // 32]) >> (code % 32)) & 1


def _codes_of(bits):
    """The set of codes in one bitset row."""
    return {c for c in range(32 * CAT_WORDS) if (int(bits[c // 32]) >> (c % 32)) & 1}


def _bits_of(codes):
    bits = np.zeros(CAT_WORDS, dtype=np.uint32)
    for c in codes:
        bits[c // 32] |= np.uint32(1 << (c % 32))
    return bits


def evaluate_categorical_splits(hist, node_sums, n_bins, cat_features, feature_mask, node_bounds,
                                scales, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                                max_cat_to_onehot, max_cat_threshold, out_gain, out_feature,
                                out_default_left, out_left_sum, out_cat_bits):
    reg = (reg_lambda, reg_alpha, max_delta_step)
    for k in range(hist.shape[0]):
        out_gain[k], out_feature[k], out_default_left[k] = -np.inf, -1, 0
        out_left_sum[k] = 0
        out_cat_bits[k] = 0
        total = node_sums[k]
        bounds = tuple(node_bounds[k])
        parent = _split_math.bounded_gain(total[0] / scales[0], total[1] / scales[1], *reg, *bounds)

        def gain_of(right):
            left = total - right
            if left[1] <= 0 or right[1] <= 0:
                return -np.inf
            hl, hr = left[1] / scales[1], right[1] / scales[1]
            if hl < min_child_weight or hr < min_child_weight:
                return -np.inf
            return (_split_math.bounded_gain(left[0] / scales[0], hl, *reg, *bounds)
                    + _split_math.bounded_gain(right[0] / scales[0], hr, *reg, *bounds) - parent)

        for f in cat_features:
            if not feature_mask[k, f]:
                continue
            n = n_bins[f]
            h = hist[k, f, :n]
            missing = hist[k, f, n]
            # candidates in the kernel's order: (right sums, default left, set)
            candidates = []
            if n < max_cat_to_onehot:
                for c in range(n):
                    candidates.append((h[c], 1, [c]))
                    if missing.any():
                        candidates.append((h[c] + missing, 0, [c]))
            else:
                hess = h[:, 1] / scales[1]
                weight = [_split_math.leaf_weight(h[c, 0] / scales[0], hess[c], *reg)
                          if hess[c] > 0 and hess[c] >= min_child_weight else 0.0
                          for c in range(n)]
                order = sorted(range(n), key=lambda c: weight[c])  # stable
                limit = min(max_cat_threshold, n)
                for ranked in (order, order[::-1]):
                    for size in range(1, limit):
                        chosen = ranked[:size]
                        candidates.append((h[chosen].sum(axis=0), 1, chosen))
            for right, default_left, chosen in candidates:
                gain = gain_of(right)
                if gain > out_gain[k]:
                    out_gain[k], out_feature[k], out_default_left[k] = gain, f, default_left
                    out_left_sum[k] = total - right
                    out_cat_bits[k] = _bits_of(chosen)


def partition_rows_categorical(bins_by_feature, rows, node_starts, node_ends, split_feature,
                               cat_bits, default_left, n_bins, scratch, out_n_left):
    for k in range(node_starts.shape[0]):
        seg = rows[node_starts[k]:node_ends[k]].copy()
        f = split_feature[k]
        b = bins_by_feature[f, seg].astype(np.int64)
        in_set = np.isin(b, sorted(_codes_of(cat_bits[k])))
        left = np.where(b == n_bins[f], default_left[k] == 1, ~in_set)
        rows[node_starts[k]:node_ends[k]] = np.concatenate([seg[left], seg[~left]])
        out_n_left[k] = left.sum()


def _leaves(values, binned, n_bins, walk, split_type, cat_bits, tree_offsets, tree_depth, t):
    """Each row's leaf (global node id) in tree ``t``, one row at a time, by
    ``tree_depth[t]`` steps (a leaf's entry sends every row back to the leaf itself)."""
    table = walk.reshape(-1, 4)
    thresholds = walk.view(np.float32).reshape(-1, 4)[:, 3]
    out = np.empty(values.shape[0], dtype=np.int64)
    for r in range(values.shape[0]):
        node = tree_offsets[t]
        for _ in range(tree_depth[t]):
            feature, left, default_left, test = table[node]
            v = values[r, feature]
            missing = v == n_bins[feature] if binned else np.isnan(v)
            if split_type[node] == 1:
                x = np.nan if missing else float(v)
                go_left = categorical_goes_left(x, default_left == 1, cat_bits, test)
            elif missing:
                go_left = default_left == 1
            else:
                go_left = v <= test if binned else v < thresholds[node]
            node = tree_offsets[t] + left + (0 if go_left else 1)
        out[r] = node
    return out


def predict_categorical(X, walk, split_type, cat_bits, value, tree_offsets, tree_group,
                        tree_depth, out):
    for t in range(tree_offsets.shape[0] - 1):
        leaf = _leaves(X, False, None, walk, split_type, cat_bits, tree_offsets, tree_depth, t)
        out[:, tree_group[t]] += value[leaf]


def predict_binned_categorical(bins, n_bins, walk, split_type, cat_bits, value, tree_offsets,
                               tree_group, tree_depth, out):
    for t in range(tree_offsets.shape[0] - 1):
        leaf = _leaves(bins.astype(np.int64), True, n_bins, walk, split_type, cat_bits,
                       tree_offsets, tree_depth, t)
        out[:, tree_group[t]] += value[leaf]


def predict_leaf_categorical(X, walk, split_type, cat_bits, tree_offsets, tree_depth, out):
    for t in range(tree_offsets.shape[0] - 1):
        leaf = _leaves(X, False, None, walk, split_type, cat_bits, tree_offsets, tree_depth, t)
        out[:, t] = leaf - tree_offsets[t]
