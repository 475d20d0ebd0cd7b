"""Numba CPU kernels. Same names, signatures and results as ``reference.py``.

Conventions (see DESIGN.md, "Kernel contract"):

* kernels are stateless functions that write into ``out`` arrays the caller owns;
* ``bins`` is uint8 (n_rows, n_features), C order; ``gpair`` is int64 (n_rows, 2);
* a batch of nodes is given as segments of one ``rows`` array (int32):
  node ``k`` owns ``rows[node_starts[k]:node_ends[k]]``;
* histograms are int64 (n_nodes, n_features, n_slots, 2), slot ``n_bins[f]`` = missing;
* ``n_threads`` is passed in, never read inside a cached kernel.

Every sum here is an integer sum, so the thread count cannot change any result.
"""
import numpy as np
from numba import njit, prange

from .split_math import cpu as _split_math

# module-level names: Numba resolves globals, not attributes
bounded_gain = _split_math.bounded_gain
bounded_weight = _split_math.bounded_weight
gain_given_weight = _split_math.gain_given_weight

_PARTITION_CHUNK = 16384  # rows per partition task: small enough to balance, big enough to amortise


@njit(nogil=True, cache=True)
def _segment_of(position, node_starts, node_ends, cumulative):
    """Index of the node whose segment holds the ``position``-th row of the batch."""
    lo, hi = 0, cumulative.shape[0] - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cumulative[mid] <= position:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit(nogil=True, cache=True, inline="always")
def _accumulate(flat_bins, flat_gpair, rows, lo, hi, n_features, slots2, h):
    """Add the gradient pairs of ``rows[lo:hi]`` into one flat histogram ``h``.

    Flat inputs and unsigned indices: Numba then skips the negative-index wrap-around
    test on every access (measured 9% faster).
    """
    for p in range(lo, hi):
        r = np.uint64(rows[p])
        g = flat_gpair[np.uint64(2) * r]
        hess = flat_gpair[np.uint64(2) * r + np.uint64(1)]
        row = r * n_features
        for f in range(n_features):
            at = np.uint64(f) * slots2 + np.uint64(2) * np.uint64(flat_bins[row + np.uint64(f)])
            h[at] += g
            h[at + np.uint64(1)] += hess


@njit(parallel=True, nogil=True, cache=True)
def build_histograms(bins, gpair, rows, node_starts, node_ends, hist, n_threads):
    """Sum the gradient pairs of each node's rows into per-feature bin histograms.

    Parameters
    ----------
    bins : uint8 (n_rows, n_features)              # IN
    gpair : int64 (n_rows, 2)                      # IN
    rows : int32 (m,)                              # IN  row ids grouped by node
    node_starts, node_ends : int64 (n_nodes,)      # IN  each node's segment of ``rows``
    hist : int64 (n_nodes, n_features, n_slots, 2) # OUT overwritten
    n_threads : int

    The batch's rows, all nodes together, are cut into ``n_threads`` equal pieces; each
    thread sums its piece into a private histogram, and the private histograms are added
    (integers: the order does not matter). With many nodes, each thread instead takes the
    whole nodes that start in its piece.
    """
    n_nodes = node_starts.shape[0]
    n_features = bins.shape[1]
    n_slots = hist.shape[2]
    cumulative = np.zeros(n_nodes + 1, dtype=np.int64)
    for k in range(n_nodes):
        cumulative[k + 1] = cumulative[k] + (node_ends[k] - node_starts[k])
    total = cumulative[n_nodes]
    n_parts = max(1, min(n_threads, total // 4096 + 1))
    flat_bins = bins.reshape(bins.size)
    flat_gpair = gpair.reshape(gpair.size)
    n_f = np.uint64(n_features)
    slots2 = np.uint64(2 * n_slots)
    if n_parts > 1 and n_nodes >= 4 * n_parts:
        # Many nodes: each thread sums whole nodes (those whose rows start in its share of
        # the batch) straight into ``hist``; no private copies to clear and add up.
        flat_hist = hist.reshape(n_nodes, n_features * n_slots * 2)
        for t in prange(n_parts):
            lo = total * t // n_parts
            hi = total * (t + 1) // n_parts
            for k in range(n_nodes):
                h = flat_hist[k]
                if not (lo <= cumulative[k] < hi or (t == n_parts - 1 and cumulative[k] == total)):
                    continue
                h[:] = 0
                _accumulate(flat_bins, flat_gpair, rows, node_starts[k], node_ends[k], n_f,
                            slots2, h)
        return
    # One flat histogram per (thread, node): bin b of feature f at 2 * (f * n_slots + b).
    private = np.zeros((n_parts, n_nodes, n_features * n_slots * 2), dtype=np.int64)
    for t in prange(n_parts):
        lo = total * t // n_parts
        hi = total * (t + 1) // n_parts
        if lo >= hi:
            continue
        k = _segment_of(lo, node_starts, node_ends, cumulative)
        position = lo
        while position < hi:
            seg_end = min(hi, cumulative[k + 1])
            offset = node_starts[k] - cumulative[k]
            _accumulate(flat_bins, flat_gpair, rows, position + offset, seg_end + offset, n_f,
                        slots2, private[t, k])
            position = seg_end
            k += 1
    for task in prange(n_nodes * n_features):
        k = task // n_features
        f = task % n_features
        for b in range(n_slots):
            at = 2 * (f * n_slots + b)
            g_ = private[0, k, at]
            h_ = private[0, k, at + 1]
            for t in range(1, n_parts):
                g_ += private[t, k, at]
                h_ += private[t, k, at + 1]
            hist[k, f, b, 0] = g_
            hist[k, f, b, 1] = h_


@njit(parallel=True, nogil=True, cache=True)
def subtract_histograms(parent, child, out):
    """``out = parent - child``: the sibling's histogram without touching its rows.

    parent, child : int64 (n_nodes, n_features, n_slots, 2)  # IN
    out : int64, same shape                                  # OUT
    """
    n_nodes, n_features = parent.shape[0], parent.shape[1]
    for task in prange(n_nodes * n_features):
        k = task // n_features
        f = task % n_features
        for b in range(parent.shape[2]):
            out[k, f, b, 0] = parent[k, f, b, 0] - child[k, f, b, 0]
            out[k, f, b, 1] = parent[k, f, b, 1] - child[k, f, b, 1]


@njit(parallel=True, nogil=True, cache=True)
def evaluate_splits(hist, node_sums, n_bins, feature_mask, monotone, node_bounds, scales,
                    reg_lambda, reg_alpha, max_delta_step, min_child_weight, out_gain,
                    out_feature, out_bin, out_default_left, out_left_sum):
    """Best split of each node over its allowed features, missing values tried both ways.

    Parameters
    ----------
    hist : int64 (n_nodes, n_features, n_slots, 2)      # IN
    node_sums : int64 (n_nodes, 2)                      # IN  (G, H) of each node
    n_bins : int32 (n_features,)                        # IN  value bins; slot n_bins[f] = missing
    feature_mask : uint8 (n_nodes, n_features)          # IN  1 = may split on it
    monotone : int8 (n_features,)                       # IN  +1 increasing, -1 decreasing, 0 free
    node_bounds : float64 (n_nodes, 2)                  # IN  [lower, upper] on each node's
                                                        #     weight (monotone constraints)
    scales : float64 (2,)                               # IN  fixed-point scales of g and h
    out_gain : float64 (n_nodes,)                       # OUT loss reduction; -inf = no split
    out_feature, out_bin : int32 (n_nodes,)             # OUT bins <= out_bin go left
    out_default_left : uint8 (n_nodes,)                 # OUT where missing values go
    out_left_sum : int64 (n_nodes, 2)                   # OUT (G, H) of the left child

    Thresholds are scanned from the lowest bin up, first with missing values right, then
    (only if the node has missing values) with them left; a candidate replaces the best
    only if strictly better. So among equal gains the lowest feature wins, and within a
    feature any missing-right threshold beats a missing-left one, then the lowest bin.
    On a monotone feature, a split whose (bounded) child weights go the wrong way is
    skipped, as in XGBoost.
    """
    n_nodes, n_features = hist.shape[0], hist.shape[1]
    task_gain = np.full(n_nodes * n_features, -np.inf)
    task_bin = np.zeros(n_nodes * n_features, dtype=np.int32)
    task_left = np.zeros(n_nodes * n_features, dtype=np.uint8)
    task_sum = np.zeros((n_nodes * n_features, 2), dtype=np.int64)
    for task in prange(n_nodes * n_features):
        k = task // n_features
        f = task % n_features
        if feature_mask[k, f] == 0 or n_bins[f] < 2:
            continue
        total_g, total_h = node_sums[k, 0], node_sums[k, 1]
        lower, upper = node_bounds[k, 0], node_bounds[k, 1]
        parent = bounded_gain(total_g / scales[0], total_h / scales[1], reg_lambda,
                              reg_alpha, max_delta_step, lower, upper)
        direction_sign = monotone[f]
        miss_g, miss_h = hist[k, f, n_bins[f], 0], hist[k, f, n_bins[f], 1]
        n_directions = 2 if (miss_g != 0 or miss_h != 0) else 1
        best = -np.inf
        for direction in range(n_directions):
            left_g = miss_g if direction == 1 else 0
            left_h = miss_h if direction == 1 else 0
            for b in range(n_bins[f] - 1):
                left_g += hist[k, f, b, 0]
                left_h += hist[k, f, b, 1]
                right_g = total_g - left_g
                right_h = total_h - left_h
                if left_h <= 0 or right_h <= 0:
                    continue
                hl = left_h / scales[1]
                hr = right_h / scales[1]
                if hl < min_child_weight or hr < min_child_weight:
                    continue
                gl, gr = left_g / scales[0], right_g / scales[0]
                if direction_sign == 0:
                    gain = (bounded_gain(gl, hl, reg_lambda, reg_alpha, max_delta_step, lower, upper)
                            + bounded_gain(gr, hr, reg_lambda, reg_alpha, max_delta_step, lower,
                                           upper) - parent)
                else:
                    wl = bounded_weight(gl, hl, reg_lambda, reg_alpha, max_delta_step, lower, upper)
                    wr = bounded_weight(gr, hr, reg_lambda, reg_alpha, max_delta_step, lower, upper)
                    if (direction_sign > 0 and wl > wr) or (direction_sign < 0 and wl < wr):
                        continue
                    gain = (gain_given_weight(gl, hl, reg_lambda, reg_alpha, wl)
                            + gain_given_weight(gr, hr, reg_lambda, reg_alpha, wr) - parent)
                if gain > best:
                    best = gain
                    task_gain[task] = gain
                    task_bin[task] = b
                    task_left[task] = direction
                    task_sum[task, 0] = left_g
                    task_sum[task, 1] = left_h
    for k in prange(n_nodes):
        out_gain[k] = -np.inf
        out_feature[k] = -1
        out_bin[k] = 0
        out_default_left[k] = 0
        out_left_sum[k, 0] = 0
        out_left_sum[k, 1] = 0
        for f in range(n_features):
            task = k * n_features + f
            if task_gain[task] > out_gain[k]:
                out_gain[k] = task_gain[task]
                out_feature[k] = f
                out_bin[k] = task_bin[task]
                out_default_left[k] = task_left[task]
                out_left_sum[k, 0] = task_sum[task, 0]
                out_left_sum[k, 1] = task_sum[task, 1]


@njit(parallel=True, nogil=True, cache=True)
def partition_rows(bins_by_feature, rows, node_starts, node_ends, split_feature, split_bin,
                   default_left, n_bins, scratch, out_n_left):
    """Reorder each node's segment of ``rows`` so that its left child's rows come first.

    bins_by_feature : uint8 (n_features, n_rows)  # IN  the bins, feature-major: one split
                                                  #     reads one feature, and a column fits
                                                  #     in cache (measured 2.2x faster)
    rows : int32 (m,)                      # IN/OUT reordered in place, stable
    node_starts, node_ends : int64 (n_nodes,)
    split_feature, split_bin : int32 (n_nodes,); default_left : uint8 (n_nodes,)
    n_bins : int32 (n_features,)           # a row with bin n_bins[f] is missing
    scratch : int32 (m,)                   # work space: the rows' new order, then copied back
    out_n_left : int64 (n_nodes,)          # OUT rows sent left per node

    Two passes over chunks of every segment (in parallel): count the rows going left,
    then scatter them into ``scratch``, each chunk to its place given by a prefix sum of
    the counts; then copy back::

        segment before:  [a b c d e f g h]     chunk 0 = a b c d, chunk 1 = e f g h
        go left:          1 0 1 0 0 1 1 0
        segment after:   [a c f g | b d e h]   left rows, then right rows, order kept
    """
    n_nodes = node_starts.shape[0]
    n_chunks = np.empty(n_nodes, dtype=np.int64)
    for k in range(n_nodes):
        n_chunks[k] = (node_ends[k] - node_starts[k] + _PARTITION_CHUNK - 1) // _PARTITION_CHUNK
    first_chunk = np.zeros(n_nodes + 1, dtype=np.int64)
    for k in range(n_nodes):
        first_chunk[k + 1] = first_chunk[k] + n_chunks[k]
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
        threshold = split_bin[k]
        missing_left = default_left[k] == 1
        lo = node_starts[k] + (task - first_chunk[k]) * _PARTITION_CHUNK
        hi = min(lo + _PARTITION_CHUNK, node_ends[k])
        count = 0
        for p in range(lo, hi):
            b = np.int32(column[np.uint64(rows[p])])  # unsigned: no wrap-around test
            count += missing_left if b == missing_bin else b <= threshold
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
        threshold = split_bin[k]
        missing_left = default_left[k] == 1
        lo = node_starts[k] + (task - first_chunk[k]) * _PARTITION_CHUNK
        hi = min(lo + _PARTITION_CHUNK, node_ends[k])
        left_pos = node_starts[k] + left_before[task]
        right_pos = node_starts[k] + out_n_left[k] + (lo - node_starts[k]) - left_before[task]
        for p in range(lo, hi):  # the decision again (cheaper than storing it), no branch
            r = rows[p]
            b = np.int32(column[np.uint64(r)])
            go_left = missing_left if b == missing_bin else b <= threshold
            scratch[np.uint64(left_pos if go_left else right_pos)] = r
            left_pos += go_left
            right_pos += 1 - go_left
    for task in prange(n_tasks):
        k = task_node[task]
        lo = node_starts[k] + (task - first_chunk[k]) * _PARTITION_CHUNK
        hi = min(lo + _PARTITION_CHUNK, node_ends[k])
        for p in range(lo, hi):
            rows[p] = scratch[p]


@njit(parallel=True, nogil=True, cache=True)
def add_leaf_values(rows, leaf_starts, leaf_ends, leaf_values, out):
    """``out[r] += leaf_values[k]`` for every row ``r`` in leaf ``k``'s segment.

    rows : int32 (m,); leaf_starts, leaf_ends : int64 (n_leaves,); leaf_values : float64
    out : float64 (n_rows,)   # IN/OUT
    """
    for k in prange(leaf_starts.shape[0]):
        value = leaf_values[k]
        for p in range(leaf_starts[k], leaf_ends[k]):
            out[rows[p]] += value


_PREDICT_BLOCK = 64  # rows walked through one tree together, so the tree stays in cache


@njit(nogil=True, cache=True)
def _walk_block(values, n_features, lo, m, walk, tree_offsets, tree_depth, t, binned, n_bins,
                nodes, row_offsets):
    """Move rows ``lo .. lo+m`` from tree ``t``'s root to their leaves (into ``nodes``).

    Level by level, all rows one step at a time; the step has no branch (see ``predict``).
    Indices are unsigned: Numba then skips the negative-index wrap-around test on every
    access (measured 2.2x faster).
    """
    base = np.uint64(tree_offsets[t])
    thresholds = walk.view(np.float32)
    for i in range(m):
        nodes[i] = base
        row_offsets[i] = np.uint64((lo + i) * n_features)
    for _ in range(tree_depth[t]):
        for i in range(m):
            at = nodes[i] * np.uint64(4)
            feature = np.uint64(walk[at])
            if binned:
                b = np.int32(values[row_offsets[i] + feature])
                missing = b == n_bins[feature]
                go_left = (~missing & (b <= walk[at + np.uint64(3)])) | \
                    (missing & (walk[at + np.uint64(2)] == 1))
            else:
                x = values[row_offsets[i] + feature]
                go_left = (x < thresholds[at + np.uint64(3)]) | \
                    (np.isnan(x) & (walk[at + np.uint64(2)] == 1))
            nodes[i] = base + np.uint64(walk[at + np.uint64(1)] + 1) - np.uint64(go_left)


@njit(parallel=True, nogil=True, cache=True)
def _add_leaf_values_of_rows(values, n_rows, n_features, walk, value, tree_offsets, tree_group,
                             tree_depth, binned, n_bins, out):
    """The prediction loop shared by ``predict`` and ``predict_binned``: blocks of rows in
    parallel, each block through every tree in order (so each row sums its trees in the
    same order on any thread count)."""
    n_blocks = (n_rows + _PREDICT_BLOCK - 1) // _PREDICT_BLOCK
    for block in prange(n_blocks):
        lo = block * _PREDICT_BLOCK
        m = min(lo + _PREDICT_BLOCK, n_rows) - lo
        nodes = np.empty(_PREDICT_BLOCK, dtype=np.uint64)
        row_offsets = np.empty(_PREDICT_BLOCK, dtype=np.uint64)
        for t in range(tree_offsets.shape[0] - 1):
            _walk_block(values, n_features, lo, m, walk, tree_offsets, tree_depth, t, binned,
                        n_bins, nodes, row_offsets)
            for i in range(m):
                out[lo + i, tree_group[t]] += value[nodes[i]]


@njit(parallel=True, nogil=True, cache=True)
def predict_leaf(X, walk, tree_offsets, tree_depth, out):
    """The leaf each row reaches in each tree, as the node id within its tree.

    X : float32 (n_rows, n_features), C order; walk, tree_offsets, tree_depth as in
    ``predict``                                   # IN
    out : int32 (n_rows, n_trees)                 # OUT
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
            _walk_block(values, n_features, lo, m, walk, tree_offsets, tree_depth, t, False,
                        no_bins, nodes, row_offsets)
            for i in range(m):
                out[lo + i, t] = np.int64(nodes[i]) - tree_offsets[t]


@njit(nogil=True, cache=True)
def predict_binned(bins, n_bins, walk, value, tree_offsets, tree_group, tree_depth, out):
    """Add every tree's leaf value to ``out`` for binned rows (the training data's bins).

    bins : uint8 (n_rows, n_features), C order   # IN
    n_bins : int32 (n_features,)                 # IN  bin n_bins[f] = missing
    walk : int32 (4 * n_nodes_total,)            # IN  gbm.tree.Forest.walk_binned: per node
                                                 #     feature, left child, default left,
                                                 #     split bin (see Forest)
    value : float64 (n_nodes_total,)             # IN  leaf values
    tree_offsets : int64 (n_trees + 1,); tree_group, tree_depth : int32 (n_trees,)  # IN
    out : float64 (n_rows, n_groups)             # IN/OUT
    """
    n_rows, n_features = bins.shape
    _add_leaf_values_of_rows(bins.reshape(n_rows * n_features), n_rows, n_features, walk, value,
                             tree_offsets, tree_group, tree_depth, True, n_bins, out)


@njit(nogil=True, cache=True)
def predict(X, walk, value, tree_offsets, tree_group, tree_depth, out):
    """Add every tree's leaf value to ``out`` for raw float32 rows (NaN = missing).

    X : float32 (n_rows, n_features), C order    # IN; a row goes left when x < threshold
    walk : int32 (4 * n_nodes_total,)            # IN  gbm.tree.Forest.walk: per node
                                                 #     feature, left child, default left,
                                                 #     threshold's float32 bits
    other arguments as in ``predict_binned``

    A block of rows walks each tree level by level, all rows one step at a time
    (``tree_depth[t]`` steps). The step is branch-free: the right child is ``left + 1``,
    and a leaf's entry sends every row back to the leaf itself (threshold NaN, left child
    = its own id - 1). Unpredictable split decisions then cost no branch mispredictions
    and the rows' walks overlap.
    """
    n_rows, n_features = X.shape
    _add_leaf_values_of_rows(X.reshape(n_rows * n_features), n_rows, n_features, walk, value,
                             tree_offsets, tree_group, tree_depth, False,
                             np.zeros(0, dtype=np.int32), out)


@njit(parallel=True, nogil=True, cache=True)
def bin_values(X, padded_cuts, n_bins, out):
    """Map raw values to bins: the number of a feature's cuts <= x; NaN -> n_bins[f].

    X : float32 (n_rows, n_features)              # IN  finite or NaN
    padded_cuts : float32 (n_features, 256)       # IN  each feature's cuts, then +inf
    n_bins : int32 (n_features,)                  # IN
    out : uint8 (n_rows, n_features)              # OUT

    A fixed 8-step binary search over the padded row of cuts: no data-dependent branch,
    which measured 8x faster than a classic binary search (or np.searchsorted) here.
    """
    n_rows, n_features = X.shape
    for r in prange(n_rows):
        for f in range(n_features):
            x = X[r, f]
            if np.isnan(x):
                out[r, f] = n_bins[f]
                continue
            cuts = padded_cuts[f]
            position = 0
            step = 128
            while step > 0:
                position += step * np.int64(cuts[position + step - 1] <= x)
                step >>= 1
            out[r, f] = position


@njit(parallel=True, nogil=True, cache=True)
def max_abs(values):
    """Largest |value| of a float64 array (0 for an empty one). Order-free: a maximum."""
    n = values.shape[0]
    n_parts = max(1, min(64, n // 4096))
    part = np.zeros(n_parts)
    for t in prange(n_parts):
        best = 0.0
        for i in range(n * t // n_parts, n * (t + 1) // n_parts):
            v = abs(values[i])
            if v > best:
                best = v
        part[t] = best
    return part.max() if n else 0.0


@njit(parallel=True, nogil=True, cache=True)
def quantize_gradients(grad, hess, scales, out):
    """Fixed-point gradient pairs: ``out[i] = (rint(grad[i] * scales[0]), rint(hess[i] * scales[1]))``.

    grad, hess : float64 (n,)   # IN
    scales : float64 (2,)       # IN  powers of two (see gbm.quantize)
    out : int64 (n, 2)          # OUT
    """
    for i in prange(grad.shape[0]):
        out[i, 0] = np.int64(np.rint(grad[i] * scales[0]))
        out[i, 1] = np.int64(np.rint(hess[i] * scales[1]))


# Categorical splits: kernels of their own module, part of this one's namespace.
from .categorical_cpu import (  # noqa: E402,F401
    CAT_WORDS,
    categorical_goes_left,
    evaluate_categorical_splits,
    partition_rows_categorical,
    predict_binned_categorical,
    predict_categorical,
    predict_leaf_categorical,
)
from .rank_cpu import lambdarank_gradients  # noqa: E402,F401  (its own module: ranking only)
from .shap_cpu import tree_shap  # noqa: E402,F401  (its own module: pred_contribs only)
