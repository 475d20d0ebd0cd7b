"""Twins of ``cpu/predict.py``: one row at a time through the walk table."""
import numpy as np

from ..layout import FLAG_CATEGORICAL, FLAG_DEFAULT_LEFT


def codes_of(bits):
    """The set of codes in one bitset row."""
    return {c for c in range(32 * len(bits)) if (int(bits[c // 32]) >> (c % 32)) & 1}


def categorical_goes_left(x, default_left, cat_bits, row):
    if not (x >= 0 and x < 32 * cat_bits.shape[1]):
        return bool(default_left)
    code = int(x)
    return not (int(cat_bits[row, code // 32]) >> (code % 32)) & 1


def _leaves(values, rows, binned, n_bins, walk, cat_bits, tree_offsets, tree_depth, t):
    """Each row's leaf (global node id) in tree ``t``, by ``tree_depth[t]`` steps (a
    leaf's entry sends every row back to the leaf itself)."""
    table = walk.reshape(-1, 4)
    thresholds = walk.view(np.float32).reshape(-1, 4)[:, 3]
    out = np.empty(len(rows), dtype=np.int64)
    for i, r in enumerate(rows):
        node = tree_offsets[t]
        for _ in range(tree_depth[t]):
            feature, left, flags, test = table[node]
            default_left = bool(flags & FLAG_DEFAULT_LEFT)
            v = values[r, feature]
            missing = v == n_bins[feature] if binned else np.isnan(v)
            if flags & FLAG_CATEGORICAL:
                go_left = categorical_goes_left(np.nan if missing else float(v), default_left,
                                                cat_bits, test)
            elif missing:
                go_left = default_left
            else:
                go_left = v <= test if binned else v < thresholds[node]
            node = tree_offsets[t] + left + (0 if go_left else 1)
        out[i] = node
    return out


def predict(X, walk, cat_bits, value, tree_offsets, tree_group, tree_depth, out):
    rows = np.arange(X.shape[0])
    for t in range(tree_offsets.shape[0] - 1):
        leaf = _leaves(X, rows, False, None, walk, cat_bits, tree_offsets, tree_depth, t)
        out[:, tree_group[t]] += value[leaf]


def predict_binned(bins, rows, n_bins, walk, cat_bits, value, tree_offsets, tree_group,
                   tree_depth, out):
    for t in range(tree_offsets.shape[0] - 1):
        leaf = _leaves(bins.astype(np.int64), rows, True, n_bins, walk, cat_bits, tree_offsets,
                       tree_depth, t)
        out[rows, tree_group[t]] += value[leaf]


def predict_leaf(X, walk, cat_bits, tree_offsets, tree_depth, out):
    rows = np.arange(X.shape[0])
    for t in range(tree_offsets.shape[0] - 1):
        leaf = _leaves(X, rows, False, None, walk, cat_bits, tree_offsets, tree_depth, t)
        out[:, t] = leaf - tree_offsets[t]
