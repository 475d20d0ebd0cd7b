"""Row partition by the nodes' splits (numeric thresholds or category sets), and the
leaf values added to the rows' margins."""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from .partition_steps import (PARTITION_CHUNK, chunk_tasks, goes_left, lefts_before,
                              place_chunk, split_chunk)
from .prefetch import DISTANCE, prefetch, sparse


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
    first_chunk, task_node = chunk_tasks(node_starts, node_ends)
    n_tasks = task_node.shape[0]
    left_count = np.zeros(n_tasks, dtype=np.int64)
    # parallel loops whose bodies are one call: Numba's parallel passes then compile fast
    # (the index cast to uint64, its type in the parallel code: the callee compiles once,
    # not for the int64 of the typing pass as well)
    for task in prange(n_tasks):
        left_count[task] = split_chunk(np.uint64(task), task_node, first_chunk, bins_by_feature,
                                       rows, node_starts, node_ends, split_feature, split_bin,
                                       default_left, split_type, cat_bits, n_bins, scratch)
    left_before = lefts_before(n_nodes, first_chunk, left_count, out_n_left)
    for task in prange(n_tasks):
        place_chunk(np.uint64(task), task_node, first_chunk, rows, node_starts, node_ends,
                    scratch, left_count, left_before, out_n_left)


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
    first_chunk, task_node = chunk_tasks(node_starts, node_ends)
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
    lo = node_starts[k] + (task - first_chunk[k]) * PARTITION_CHUNK
    hi = min(lo + PARTITION_CHUNK, node_ends[k])
    far = sparse(node_ends[k] - node_starts[k], out.shape[0], out.itemsize)
    for p in range(lo, hi):
        if far and p + DISTANCE < hi:
            ahead = np.uint64(rows[p + DISTANCE])
            prefetch(column, ahead)
            prefetch(out, ahead)
        r = np.uint64(rows[p])
        b = np.int32(column[r])
        go = np.int64(goes_left(b, missing_bin, threshold, missing_left, categorical,
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
