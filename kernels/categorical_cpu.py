"""Numba CPU kernels for categorical splits: split finding, partition and prediction.

Re-exported by ``cpu.py`` (``gbm.kernels.cpu.evaluate_categorical_splits`` and so on);
NumPy twins in ``categorical_reference.py``, re-exported by ``reference.py``.

A categorical feature's bin is its code: the index of the row's category among those seen
at fit (see gbm.categorical); bin ``n_bins[f]`` is missing. A categorical split holds a
set of codes as a bitset of ``CAT_WORDS`` uint32 words (code ``c`` is bit ``c & 31`` of
word ``c >> 5``). As in XGBoost, rows whose category is in the set go to the RIGHT child,
the others (categories outside the set) to the left, missing values the node's default
way. ``categorical_goes_left`` is that rule, in one place.

Numeric models never reach these kernels: they run today's kernels in ``cpu.py``.
"""
import numpy as np
from numba import njit, prange

from .split_math import cpu as _split_math

bounded_gain = _split_math.bounded_gain
leaf_weight = _split_math.leaf_weight

CAT_WORDS = 8  # 256 bits: every code a uint8 bin can hold
_PARTITION_CHUNK = 16384  # as in cpu.py
_PREDICT_BLOCK = 64  # as in cpu.py


@njit(nogil=True, cache=True, inline="always")
def categorical_goes_left(x, default_left, cat_bits, row):
    """Does a row go left at a categorical node?

    x : float, the row's code (NaN = missing, or a category not seen at fit)
    default_left : bool, where missing values go
    cat_bits : uint32 (n_sets, CAT_WORDS); row : int, the node's set
    A code in the set goes right, any other code left; NaN (or a value outside the codes'
    range) goes the default way. Used by the partition and prediction kernels, and meant
    for any other walk over the trees (TreeSHAP).
    """
    if not (x >= 0.0 and x < 32.0 * CAT_WORDS):
        return default_left
    code = np.int64(x)
    word = np.int64(cat_bits[row, code >> 5])
    return ((word >> (code & 31)) & 1) == 0


@njit(nogil=True, cache=True)
def _split_gain(left_g, left_h, right_g, right_h, parent, scales, reg_lambda, reg_alpha,
                max_delta_step, min_child_weight, lower, upper):
    """Gain of one candidate from integer sums; -inf when a child is empty or too light."""
    if left_h <= 0 or right_h <= 0:
        return -np.inf
    hl, hr = left_h / scales[1], right_h / scales[1]
    if hl < min_child_weight or hr < min_child_weight:
        return -np.inf
    return (bounded_gain(left_g / scales[0], hl, reg_lambda, reg_alpha, max_delta_step, lower,
                         upper)
            + bounded_gain(right_g / scales[0], hr, reg_lambda, reg_alpha, max_delta_step,
                           lower, upper) - parent)


@njit(nogil=True, cache=True)
def _order_by_weight(h, n, scales, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                     order):
    """Codes ``0 .. n-1`` into ``order`` by increasing leaf weight of their own (G, H),
    a stable insertion sort (ties keep code order). A category lighter than
    min_child_weight counts as weight 0, as in XGBoost's ``CalcWeight``."""
    weight = np.empty(n)
    for c in range(n):
        hess = h[c, 1] / scales[1]
        w = 0.0
        if hess > 0.0 and hess >= min_child_weight:
            w = leaf_weight(h[c, 0] / scales[0], hess, reg_lambda, reg_alpha, max_delta_step)
        j = c
        while j > 0 and weight[j - 1] > w:
            weight[j] = weight[j - 1]
            order[j] = order[j - 1]
            j -= 1
        weight[j] = w
        order[j] = c


@njit(parallel=True, nogil=True, cache=True)
def evaluate_categorical_splits(hist, node_sums, n_bins, cat_features, feature_mask, node_bounds,
                                scales, reg_lambda, reg_alpha, max_delta_step, min_child_weight,
                                max_cat_to_onehot, max_cat_threshold, out_gain, out_feature,
                                out_default_left, out_left_sum, out_cat_bits):
    """Best categorical split of each node over its allowed categorical features.

    Parameters
    ----------
    hist : int64 (n_nodes, n_features, n_slots, 2)     # IN  bins = codes, n_bins[f] = missing
    node_sums : int64 (n_nodes, 2)                     # IN
    n_bins : int32 (n_features,)                       # IN  categories seen at fit (>= 1)
    cat_features : int32 (n_cat,)                      # IN  categorical features, increasing
    feature_mask : uint8 (n_nodes, n_features)         # IN  1 = may split on it
    node_bounds : float64 (n_nodes, 2)                 # IN  weight bounds (monotone
                                                       #     constraints of other features)
    scales : float64 (2,)                              # IN
    max_cat_to_onehot, max_cat_threshold : int
    out_gain : float64 (n_nodes,)                      # OUT -inf = no split
    out_feature : int32 (n_nodes,)                     # OUT -1 = no split
    out_default_left : uint8 (n_nodes,)                # OUT
    out_left_sum : int64 (n_nodes, 2)                  # OUT (G, H) of the left child
    out_cat_bits : uint32 (n_nodes, CAT_WORDS)         # OUT the set (goes right)

    The candidates are XGBoost's (``hist`` evaluator):

    * fewer than ``max_cat_to_onehot`` categories: one-hot, each category alone on the
      right, missing values first with the other categories (left), then, when the node
      has any, with the category (right);
    * otherwise, partitions: categories sorted by the weight of their own (G, H); then
      for ``j = 1 .. min(max_cat_threshold, n) - 1`` the ``j`` lowest, and then the ``j``
      highest, form the set (right), missing values with the others (left). Sorted this
      way the best split of the categories into two groups is a prefix of the order
      (Fisher 1958), and missing values are tried with either end of it.

    A candidate replaces the best only if strictly better, so the first in this order
    wins ties, and among features the lowest index.
    """
    n_nodes = hist.shape[0]
    n_cat = cat_features.shape[0]
    n_tasks = n_nodes * n_cat
    task_gain = np.full(n_tasks, -np.inf)
    task_left = np.zeros(n_tasks, dtype=np.uint8)
    task_sum = np.zeros((n_tasks, 2), dtype=np.int64)
    task_bits = np.zeros((n_tasks, CAT_WORDS), dtype=np.uint32)
    for task in prange(n_tasks):
        k = task // n_cat
        f = cat_features[task % n_cat]
        if feature_mask[k, f] == 0:
            continue
        n = n_bins[f]
        h = hist[k, f]
        total_g, total_h = node_sums[k, 0], node_sums[k, 1]
        lower, upper = node_bounds[k, 0], node_bounds[k, 1]
        parent = bounded_gain(total_g / scales[0], total_h / scales[1], reg_lambda, reg_alpha,
                              max_delta_step, lower, upper)
        miss_g, miss_h = h[n, 0], h[n, 1]
        n_directions = 2 if (miss_g != 0 or miss_h != 0) else 1
        best = -np.inf
        if n < max_cat_to_onehot:
            best_code = -1
            for c in range(n):
                for direction in range(n_directions):  # 0: missing left, 1: missing right
                    right_g = h[c, 0] + (miss_g if direction == 1 else 0)
                    right_h = h[c, 1] + (miss_h if direction == 1 else 0)
                    gain = _split_gain(total_g - right_g, total_h - right_h, right_g, right_h,
                                       parent, scales, reg_lambda, reg_alpha, max_delta_step,
                                       min_child_weight, lower, upper)
                    if gain > best:
                        best = gain
                        best_code = c
                        task_left[task] = 1 - direction
                        task_sum[task, 0] = total_g - right_g
                        task_sum[task, 1] = total_h - right_h
            if best_code >= 0:
                task_bits[task, best_code >> 5] = np.uint32(1 << (best_code & 31))
        else:
            order = np.empty(n, dtype=np.int64)
            _order_by_weight(h, n, scales, reg_lambda, reg_alpha, max_delta_step,
                             min_child_weight, order)
            limit = min(max_cat_threshold, n)
            best_end, best_size = -1, 0
            for end in range(2):  # 0: the lowest weights go right, 1: the highest
                right_g = 0
                right_h = 0
                for j in range(limit - 1):
                    c = order[j] if end == 0 else order[n - 1 - j]
                    right_g += h[c, 0]
                    right_h += h[c, 1]
                    gain = _split_gain(total_g - right_g, total_h - right_h, right_g, right_h,
                                       parent, scales, reg_lambda, reg_alpha, max_delta_step,
                                       min_child_weight, lower, upper)
                    if gain > best:
                        best = gain
                        best_end, best_size = end, j + 1
                        task_sum[task, 0] = total_g - right_g
                        task_sum[task, 1] = total_h - right_h
            if best_end >= 0:
                task_left[task] = 1  # missing values stay with the categories outside the set
                for j in range(best_size):
                    c = order[j] if best_end == 0 else order[n - 1 - j]
                    task_bits[task, c >> 5] |= np.uint32(1 << (c & 31))
        task_gain[task] = best
    for k in prange(n_nodes):
        out_gain[k] = -np.inf
        out_feature[k] = -1
        out_default_left[k] = 0
        out_left_sum[k, 0] = 0
        out_left_sum[k, 1] = 0
        out_cat_bits[k, :] = 0
        for i in range(n_cat):
            task = k * n_cat + i
            if task_gain[task] > out_gain[k]:
                out_gain[k] = task_gain[task]
                out_feature[k] = cat_features[i]
                out_default_left[k] = task_left[task]
                out_left_sum[k, 0] = task_sum[task, 0]
                out_left_sum[k, 1] = task_sum[task, 1]
                out_cat_bits[k, :] = task_bits[task]


@njit(parallel=True, nogil=True, cache=True)
def partition_rows_categorical(bins_by_feature, rows, node_starts, node_ends, split_feature,
                               cat_bits, default_left, n_bins, scratch, out_n_left):
    """``partition_rows`` (cpu.py) for categorical splits: each node's segment of ``rows``
    reordered, stable, its left child's rows first.

    bins_by_feature : uint8 (n_features, n_rows)   # IN
    rows : int32 (m,)                              # IN/OUT
    node_starts, node_ends : int64 (n_nodes,)      # IN
    split_feature : int32 (n_nodes,)               # IN
    cat_bits : uint32 (n_nodes, CAT_WORDS)         # IN  each node's set (goes right)
    default_left : uint8 (n_nodes,)                # IN
    n_bins : int32 (n_features,)                   # IN  bin n_bins[f] = missing
    scratch : int32 (m,)                           # work space
    out_n_left : int64 (n_nodes,)                  # OUT

    The same two passes over chunks as ``partition_rows`` (count, then scatter by the
    prefix sums of the counts); the decision is ``categorical_goes_left``.
    """
    n_nodes = node_starts.shape[0]
    first_chunk = np.zeros(n_nodes + 1, dtype=np.int64)
    for k in range(n_nodes):
        size = node_ends[k] - node_starts[k]
        first_chunk[k + 1] = first_chunk[k] + (size + _PARTITION_CHUNK - 1) // _PARTITION_CHUNK
    n_tasks = first_chunk[n_nodes]
    task_node = np.empty(n_tasks, dtype=np.int64)
    for k in range(n_nodes):
        for c in range(first_chunk[k], first_chunk[k + 1]):
            task_node[c] = k
    left_count = np.zeros(n_tasks, dtype=np.int64)
    for task in prange(n_tasks):
        k = task_node[task]
        column = bins_by_feature[split_feature[k]]
        missing_bin = n_bins[split_feature[k]]
        missing_left = default_left[k] == 1
        lo = node_starts[k] + (task - first_chunk[k]) * _PARTITION_CHUNK
        hi = min(lo + _PARTITION_CHUNK, node_ends[k])
        count = 0
        for p in range(lo, hi):
            b = np.int32(column[np.uint64(rows[p])])
            x = np.float32(np.nan) if b == missing_bin else np.float32(b)
            count += categorical_goes_left(x, missing_left, cat_bits, k)
        left_count[task] = count
    left_before = np.zeros(n_tasks, dtype=np.int64)
    for k in range(n_nodes):
        running = 0
        for task in range(first_chunk[k], first_chunk[k + 1]):
            left_before[task] = running
            running += left_count[task]
        out_n_left[k] = running
    for task in prange(n_tasks):
        k = task_node[task]
        column = bins_by_feature[split_feature[k]]
        missing_bin = n_bins[split_feature[k]]
        missing_left = default_left[k] == 1
        lo = node_starts[k] + (task - first_chunk[k]) * _PARTITION_CHUNK
        hi = min(lo + _PARTITION_CHUNK, node_ends[k])
        left_pos = node_starts[k] + left_before[task]
        right_pos = node_starts[k] + out_n_left[k] + (lo - node_starts[k]) - left_before[task]
        for p in range(lo, hi):
            r = rows[p]
            b = np.int32(column[np.uint64(r)])
            x = np.float32(np.nan) if b == missing_bin else np.float32(b)
            go_left = categorical_goes_left(x, missing_left, cat_bits, k)
            if go_left:
                scratch[left_pos] = r
                left_pos += 1
            else:
                scratch[right_pos] = r
                right_pos += 1
    for task in prange(n_tasks):
        k = task_node[task]
        lo = node_starts[k] + (task - first_chunk[k]) * _PARTITION_CHUNK
        hi = min(lo + _PARTITION_CHUNK, node_ends[k])
        for p in range(lo, hi):
            rows[p] = scratch[p]


@njit(nogil=True, cache=True)
def _walk_block(values, n_features, lo, m, walk, split_type, cat_bits, tree_offsets, tree_depth,
                t, binned, n_bins, nodes, row_offsets):
    """``_walk_block`` of cpu.py with categorical nodes (``split_type`` 1): rows ``lo ..
    lo+m`` from tree ``t``'s root to their leaves, into ``nodes`` (global node ids). At a
    categorical node the walk entry's test is the node's row of ``cat_bits``."""
    base = np.uint64(tree_offsets[t])
    thresholds = walk.view(np.float32)
    for i in range(m):
        nodes[i] = base
        row_offsets[i] = np.uint64((lo + i) * n_features)
    for _ in range(tree_depth[t]):
        for i in range(m):
            at = nodes[i] * np.uint64(4)
            feature = np.uint64(walk[at])
            default_left = walk[at + np.uint64(2)] == 1
            if binned:
                b = np.int32(values[row_offsets[i] + feature])
                missing = b == n_bins[feature]
                if split_type[nodes[i]] == 1:
                    x = np.float32(np.nan) if missing else np.float32(b)
                    go_left = categorical_goes_left(x, default_left, cat_bits,
                                                    walk[at + np.uint64(3)])
                else:
                    go_left = (not missing and b <= walk[at + np.uint64(3)]) or \
                        (missing and default_left)
            else:
                x = values[row_offsets[i] + feature]
                if split_type[nodes[i]] == 1:
                    go_left = categorical_goes_left(x, default_left, cat_bits,
                                                    walk[at + np.uint64(3)])
                else:
                    go_left = x < thresholds[at + np.uint64(3)] or (np.isnan(x) and default_left)
            nodes[i] = base + np.uint64(walk[at + np.uint64(1)] + 1) - np.uint64(go_left)


@njit(parallel=True, nogil=True, cache=True)
def _add_leaf_values_of_rows(values, n_rows, n_features, walk, split_type, cat_bits, value,
                             tree_offsets, tree_group, tree_depth, binned, n_bins, out):
    n_blocks = (n_rows + _PREDICT_BLOCK - 1) // _PREDICT_BLOCK
    for block in prange(n_blocks):
        lo = block * _PREDICT_BLOCK
        m = min(lo + _PREDICT_BLOCK, n_rows) - lo
        nodes = np.empty(_PREDICT_BLOCK, dtype=np.uint64)
        row_offsets = np.empty(_PREDICT_BLOCK, dtype=np.uint64)
        for t in range(tree_offsets.shape[0] - 1):
            _walk_block(values, n_features, lo, m, walk, split_type, cat_bits, tree_offsets,
                        tree_depth, t, binned, n_bins, nodes, row_offsets)
            for i in range(m):
                out[lo + i, tree_group[t]] += value[nodes[i]]


@njit(nogil=True, cache=True)
def predict_categorical(X, walk, split_type, cat_bits, value, tree_offsets, tree_group,
                        tree_depth, out):
    """``predict`` (cpu.py) for forests with categorical splits.

    X : float32 (n_rows, n_features); categorical columns hold codes (NaN = missing)  # IN
    walk : int32 (4 * n_nodes_total,)    # IN  gbm.tree.Forest.walk
    split_type : uint8 (n_nodes_total,)  # IN  1 = categorical node
    cat_bits : uint32 (n_sets, CAT_WORDS)  # IN  gbm.tree.Forest.cat_bits
    value, tree_offsets, tree_group, tree_depth, out: as in ``predict``
    """
    n_rows, n_features = X.shape
    _add_leaf_values_of_rows(X.reshape(n_rows * n_features), n_rows, n_features, walk,
                             split_type, cat_bits, value, tree_offsets, tree_group, tree_depth,
                             False, np.zeros(0, dtype=np.int32), out)


@njit(nogil=True, cache=True)
def predict_binned_categorical(bins, n_bins, walk, split_type, cat_bits, value, tree_offsets,
                               tree_group, tree_depth, out):
    """``predict_binned`` (cpu.py) for forests with categorical splits; ``walk`` is
    gbm.tree.Forest.walk_binned, the other arguments as in ``predict_categorical``."""
    n_rows, n_features = bins.shape
    _add_leaf_values_of_rows(bins.reshape(n_rows * n_features), n_rows, n_features, walk,
                             split_type, cat_bits, value, tree_offsets, tree_group, tree_depth,
                             True, n_bins, out)


@njit(parallel=True, nogil=True, cache=True)
def predict_leaf_categorical(X, walk, split_type, cat_bits, tree_offsets, tree_depth, out):
    """``predict_leaf`` (cpu.py) for forests with categorical splits.

    out : int32 (n_rows, n_trees)   # OUT leaf node id within each tree
    """
    n_rows, n_features = X.shape
    values = X.reshape(n_rows * n_features)
    no_bins = np.zeros(0, dtype=np.int32)
    n_blocks = (n_rows + _PREDICT_BLOCK - 1) // _PREDICT_BLOCK
    for block in prange(n_blocks):
        lo = block * _PREDICT_BLOCK
        m = min(lo + _PREDICT_BLOCK, n_rows) - lo
        nodes = np.empty(_PREDICT_BLOCK, dtype=np.uint64)
        row_offsets = np.empty(_PREDICT_BLOCK, dtype=np.uint64)
        for t in range(tree_offsets.shape[0] - 1):
            _walk_block(values, n_features, lo, m, walk, split_type, cat_bits, tree_offsets,
                        tree_depth, t, False, no_bins, nodes, row_offsets)
            for i in range(m):
                out[lo + i, t] = np.int64(nodes[i]) - tree_offsets[t]
