"""Row partition by the nodes' splits (numeric thresholds or category sets), and the
leaf values added to the rows' margins."""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from .prefetch import DISTANCE, prefetch, sparse

_PARTITION_CHUNK = 16384  # rows per partition task: small enough to balance, big enough to amortise


@helper
def _chunk_tasks(node_starts, node_ends):
    """Cut every node's segment into chunks: ``(first_chunk, task_node)``."""
    n_nodes = node_starts.shape[0]
    first_chunk = np.zeros(n_nodes + 1, dtype=np.int64)
    for k in range(n_nodes):
        size = node_ends[k] - node_starts[k]
        first_chunk[k + 1] = first_chunk[k] + (size + _PARTITION_CHUNK - 1) // _PARTITION_CHUNK
    task_node = np.empty(first_chunk[n_nodes], dtype=np.int64)
    for k in range(n_nodes):
        for c in range(first_chunk[k], first_chunk[k + 1]):
            task_node[c] = k
    return first_chunk, task_node


@helper
def _goes_left(b, missing_bin, threshold, missing_left, categorical, cat_bits, k):
    """One row's way at node ``k``: missing values the default way; numeric, bins up to
    the threshold left; categorical, codes outside the set left (see layout.py)."""
    if b == missing_bin:
        return missing_left
    if categorical:
        return ((cat_bits[k, b >> 5] >> np.uint32(b & 31)) & np.uint32(1)) == 0
    return b <= threshold


@kernel(parallel=True)
def partition_rows(bins_by_feature, rows, node_starts, node_ends, split_feature, split_bin,
                   default_left, split_type, cat_bits, n_bins, scratch, out_n_left):
    """Reorder each node's segment of ``rows`` so that its left child's rows come first.

    bins_by_feature : uint8/uint16 (n_features, n_rows)  # IN  the bins, feature-major: one
                                                         #     split reads one feature, and a
                                                         #     column fits in cache (measured
                                                         #     2.2x faster)
    rows : int32 (m,)                      # IN/OUT reordered in place, stable
    node_starts, node_ends : int64 (n_nodes,)
    split_feature, split_bin : int32 (n_nodes,); default_left : uint8 (n_nodes,)
    split_type : uint8 (n_nodes,)          # 1: categorical, ``cat_bits[k]`` its set
    cat_bits : uint32 (n_nodes, n_words)
    n_bins : int32 (n_features,)           # a row with bin n_bins[f] is missing
    scratch : int32 (m,)                   # work space
    out_n_left : int64 (n_nodes,)          # OUT rows sent left per node

    Two passes over chunks of every segment (in parallel). The first reads each chunk's
    rows once and writes them into the chunk's own stretch of ``scratch``: left rows
    forward from its start, right rows backward from its end. The second copies each
    chunk's two runs to their places in ``rows`` (given by prefix sums of the chunks'
    counts), the right run read backward, so the order is kept::

        chunk rows:        a b c d e f g h      go left: 1 0 1 0 0 1 1 0
        scratch:           a c f g | h e d b    (right rows backward from the end)
        segment after:     a c f g | b d e h    left rows, then right rows, order kept
    """
    n_nodes = node_starts.shape[0]
    first_chunk, task_node = _chunk_tasks(node_starts, node_ends)
    n_tasks = task_node.shape[0]
    left_count = np.zeros(n_tasks, dtype=np.int64)
    # parallel loops whose bodies are one call: Numba's parallel passes then compile fast
    # (the index cast to uint64, its type in the parallel code: the callee compiles once,
    # not for the int64 of the typing pass as well)
    for task in prange(n_tasks):
        left_count[task] = _split_chunk(np.uint64(task), task_node, first_chunk, bins_by_feature,
                                        rows, node_starts, node_ends, split_feature, split_bin,
                                        default_left, split_type, cat_bits, n_bins, scratch)
    left_before = _left_before(n_nodes, first_chunk, left_count, out_n_left)
    for task in prange(n_tasks):
        _place_chunk(np.uint64(task), task_node, first_chunk, rows, node_starts, node_ends,
                     scratch, left_count, left_before, out_n_left)


@helper
def _left_before(n_nodes, first_chunk, left_count, out_n_left):
    """int64 (n_tasks,): each chunk's left rows before it in its node, a running sum over
    the node's chunks in order; each node's left rows into ``out_n_left``."""
    left_before = np.zeros(left_count.shape[0], dtype=np.int64)
    for k in range(n_nodes):
        running = 0
        for task in range(first_chunk[k], first_chunk[k + 1]):
            left_before[task] = running
            running += left_count[task]
        out_n_left[k] = running
    return left_before


@helper
def _split_chunk(task, task_node, first_chunk, bins_by_feature, rows, node_starts, node_ends,
                 split_feature, split_bin, default_left, split_type, cat_bits, n_bins, scratch):
    """One chunk's rows into its stretch of ``scratch``: left rows forward from the start,
    right rows backward from the end; returns the rows going left. No branch on the way:
    each row is written at both free ends and only the end it belongs to moves on (the
    other write lands on a free place, overwritten later)."""
    k = task_node[task]
    column = bins_by_feature[split_feature[k]]
    missing_bin = n_bins[split_feature[k]]
    threshold = split_bin[k]
    missing_left = default_left[k] == 1
    categorical = split_type[k] == 1
    lo = node_starts[k] + (task - first_chunk[k]) * _PARTITION_CHUNK
    hi = min(lo + _PARTITION_CHUNK, node_ends[k])
    far = sparse(node_ends[k] - node_starts[k], column.shape[0], column.itemsize)
    left = lo
    right = hi - 1
    for p in range(lo, hi):
        if far and p + DISTANCE < hi:
            prefetch(column, np.uint64(rows[p + DISTANCE]))
        r = rows[p]
        b = np.int32(column[np.uint64(r)])  # unsigned: no wrap-around test
        go = np.int64(_goes_left(b, missing_bin, threshold, missing_left, categorical,
                                 cat_bits, k))
        scratch[np.uint64(left)] = r
        scratch[np.uint64(right)] = r
        left += go
        right -= 1 - go
    return left - lo


@helper
def _place_chunk(task, task_node, first_chunk, rows, node_starts, node_ends, scratch,
                 left_count, left_before, n_left):
    """One chunk's left run after the left rows of the chunks before it, its right run
    (read backward) after all the node's left rows and the right rows before it."""
    k = task_node[task]
    lo = node_starts[k] + (task - first_chunk[k]) * _PARTITION_CHUNK
    hi = min(lo + _PARTITION_CHUNK, node_ends[k])
    n = left_count[task]
    at = node_starts[k] + left_before[task]
    for i in range(n):
        rows[np.uint64(at + i)] = scratch[np.uint64(lo + i)]
    at = node_starts[k] + n_left[k] + (lo - node_starts[k]) - left_before[task]
    for i in range(hi - lo - n):
        rows[np.uint64(at + i)] = scratch[np.uint64(hi - 1 - i)]


@kernel(parallel=True)
def add_split_values(bins_by_feature, rows, node_starts, node_ends, split_feature, split_bin,
                     default_left, split_type, cat_bits, n_bins, left_values, right_values, out):
    """``out[r] +=`` ``left_values[k]`` or ``right_values[k]`` for every row ``r`` of node
    ``k``'s segment, by the way node ``k``'s split sends it: the last level of a tree,
    whose children are leaves, partitioned and added in one pass (the rows are not moved).

    bins_by_feature ... n_bins : as in ``partition_rows``    # IN
    left_values, right_values : float64 (n_nodes,)          # IN  the children's leaf values
    out : float64 (n_rows,)                                 # IN/OUT
    """
    first_chunk, task_node = _chunk_tasks(node_starts, node_ends)
    # node k's right value at 2k, its left at 2k + 1: a row's value is read, not branched
    # to (the way a row goes is data, and a mispredicted branch costs more than the row)
    values = np.empty(2 * node_starts.shape[0])
    for k in range(node_starts.shape[0]):
        values[2 * k] = right_values[k]
        values[2 * k + 1] = left_values[k]
    for task in prange(task_node.shape[0]):
        _add_chunk(np.uint64(task), task_node, first_chunk, bins_by_feature, rows, node_starts,
                   node_ends, split_feature, split_bin, default_left, split_type, cat_bits,
                   n_bins, values, out)


@helper
def _add_chunk(task, task_node, first_chunk, bins_by_feature, rows, node_starts, node_ends,
               split_feature, split_bin, default_left, split_type, cat_bits, n_bins,
               values, out):
    """One chunk of ``add_split_values``."""
    k = task_node[task]
    column = bins_by_feature[split_feature[k]]
    missing_bin = n_bins[split_feature[k]]
    threshold = split_bin[k]
    missing_left = default_left[k] == 1
    categorical = split_type[k] == 1
    pair = values[2 * k:2 * k + 2]
    lo = node_starts[k] + (task - first_chunk[k]) * _PARTITION_CHUNK
    hi = min(lo + _PARTITION_CHUNK, node_ends[k])
    far = sparse(node_ends[k] - node_starts[k], out.shape[0], out.itemsize)
    for p in range(lo, hi):
        if far and p + DISTANCE < hi:
            ahead = np.uint64(rows[p + DISTANCE])
            prefetch(column, ahead)
            prefetch(out, ahead)
        r = np.uint64(rows[p])
        b = np.int32(column[r])
        go = np.int64(_goes_left(b, missing_bin, threshold, missing_left, categorical,
                                 cat_bits, k))
        out[r] += pair[go]


@kernel
def add_leaf_values(rows, leaf_starts, leaf_ends, leaf_values, out):
    """``out[r] += leaf_values[k]`` for every row ``r`` in leaf ``k``'s segment.

    rows : int32 (m,); leaf_starts, leaf_ends : int64 (n_leaves,); leaf_values : float64
    out : float64 (n_rows,)   # IN/OUT

    One thread: a depthwise tree's last level is added by ``add_split_values``, so this
    sees the leaves above it (and lossguide's, and refreshed leaves): little enough work
    not to pay for a parallel loop's compile time.
    """
    for k in range(leaf_starts.shape[0]):
        value = leaf_values[k]
        for p in range(leaf_starts[k], leaf_ends[k]):
            out[rows[p]] += value
