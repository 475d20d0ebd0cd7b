"""Kernels over a sparse bin matrix (``gbm.bins.csr.CsrBins``): histograms, the row
partition, the last level's leaf values, and raw values to bins; and those loops for any
sparse layout (``*_of``, which ``bundled.py`` calls too), written over ``sparse_rows``'
row access.

The matrix is CSR over the stored entries only: row ``r``'s entries are
``slots[indptr[r]:indptr[r + 1]]``, each the histogram slot of its (feature, value bin),
``feature_offsets[f] + bin``, strictly increasing along the row (features in order). An
absent entry is a missing value: it is never visited, and a histogram has no missing slot
(``evaluate_splits`` with ``missing_slots=0`` takes a feature's missing sums as the
node's less its value bins'). Every sum is an integer sum, so the thread count cannot
change a result; a row's bin for a split's feature is found by a binary search of its
entries (``sparse_rows.entry_bin``).
"""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from .histogram_steps import segment_of
from .partition_steps import (PARTITION_CHUNK, chunk_tasks, goes_left, lefts_before,
                              place_chunk)
from .sparse_rows import add_row, feature_offsets_of, row_bin
from .views import flat


@kernel
def build_histograms_csr(indptr, slots, slot_map, gpair, rows, node_starts, node_ends, hist,
                         n_threads):
    """Sum the gradient pairs of each node's rows into its histogram, over their stored
    entries.

    indptr : int64 (n_rows + 1,); slots : int32 (nnz,)   # IN  the sparse bin matrix
    slot_map : int32 (n_slots_all,) or (0,)        # IN  an entry's slot in ``hist``
                                                   #     (negative: left out); empty:
                                                   #     its own slot (every feature)
    gpair : int64 (n_rows, 2)                      # IN  fixed-point (g, h)
    rows : int32 (m,)                              # IN  row ids grouped by node
    node_starts, node_ends : int64 (n_nodes,)      # IN  each node's segment of ``rows``
    hist : int64 (n_nodes, n_slots, 2)             # OUT overwritten (no missing slots)
    n_threads : int

    The work is cut as in ``build_histograms``: with many nodes each thread sums whole
    nodes; with few, each sums its share of the rows into a private histogram, added up
    after (integers: the order does not matter).
    """
    no_offsets = np.zeros(0, dtype=np.int32)
    if slot_map.shape[0] == 0:
        build_histograms_of((indptr, slots, no_offsets), gpair, rows, node_starts, node_ends,
                            hist, n_threads)
    else:
        build_histograms_of((indptr, slots, slot_map, no_offsets), gpair, rows, node_starts,
                            node_ends, hist, n_threads)


@helper
def build_histograms_of(matrix, gpair, rows, node_starts, node_ends, hist, n_threads):
    """``build_histograms_csr`` over any sparse layout (``matrix``: see sparse_rows.py)."""
    n_nodes = node_starts.shape[0]
    n_slots = hist.shape[1]
    cumulative = np.zeros(n_nodes + 1, dtype=np.int64)
    for k in range(n_nodes):
        cumulative[k + 1] = cumulative[k] + (node_ends[k] - node_starts[k])
    total = cumulative[n_nodes]
    n_parts = max(1, min(n_threads, total // 4096 + 1))
    flat_gpair = flat(gpair)
    if n_parts == 1:
        for k in range(n_nodes):
            h = flat(hist[k])
            for i in range(h.shape[0]):
                h[i] = 0
            _accumulate(matrix, flat_gpair, rows, node_starts[k], node_ends[k], h)
        return
    whole_nodes = n_nodes >= 4 * n_parts
    # few nodes: thread 0 sums into ``hist`` itself, the others into private copies (a
    # sparse histogram can be megabytes: one copy fewer)
    private = np.zeros((0 if whole_nodes else n_parts - 1, n_nodes, 2 * n_slots),
                       dtype=np.int64)
    if not whole_nodes:
        for k in range(n_nodes):
            h = flat(hist[k])
            for i in range(h.shape[0]):
                h[i] = 0
    _accumulate_parts(n_parts, whole_nodes, total, cumulative, matrix, flat_gpair, rows,
                      node_starts, node_ends, hist, private)
    for t in range(private.shape[0]):  # integers: the order of the additions is free
        for k in range(n_nodes):
            h = flat(hist[k])
            part = private[t, k]
            for i in range(h.shape[0]):
                h[i] += part[i]


@helper
def _accumulate(matrix, flat_gpair, rows, lo, hi, h):
    """Add the gradient pairs of ``rows[lo:hi]`` into one flat histogram ``h``, at each
    row's stored entries."""
    for p in range(lo, hi):
        r = np.uint64(rows[p])
        add_row(matrix, r, flat_gpair[np.uint64(2) * r],
                flat_gpair[np.uint64(2) * r + np.uint64(1)], h)


@helper(parallel=True)
def _accumulate_parts(n_parts, whole_nodes, total, cumulative, matrix, flat_gpair, rows,
                      node_starts, node_ends, hist, private):
    for t in prange(n_parts):
        _accumulate_part(np.uint64(t), n_parts, whole_nodes, total, cumulative, matrix,
                         flat_gpair, rows, node_starts, node_ends, hist, private)


@helper
def _accumulate_part(t, n_parts, whole_nodes, total, cumulative, matrix, flat_gpair, rows,
                     node_starts, node_ends, hist, private):
    """Thread ``t``'s share: its whole nodes into ``hist``, or its rows into ``hist``
    (thread 0) or ``private[t - 1]``."""
    lo = total * t // n_parts
    hi = total * (t + 1) // n_parts
    n_nodes = node_starts.shape[0]
    if whole_nodes:
        for k in range(n_nodes):
            if not (lo <= cumulative[k] < hi or (t == n_parts - 1 and cumulative[k] == total)):
                continue
            h = flat(hist[k])
            for i in range(h.shape[0]):
                h[i] = 0
            _accumulate(matrix, flat_gpair, rows, node_starts[k], node_ends[k], h)
        return
    if lo >= hi:
        return
    k = segment_of(lo, cumulative)
    position = lo
    while position < hi:
        seg_end = min(hi, cumulative[k + 1])
        offset = node_starts[k] - cumulative[k]
        _accumulate(matrix, flat_gpair, rows, position + offset, seg_end + offset,
                    flat(hist[k]) if t == 0 else private[t - 1, k])
        position = seg_end
        k += 1


@kernel
def partition_rows_csr(indptr, slots, feature_offsets, rows, node_starts, node_ends,
                       split_feature, split_bin, default_left, split_type, cat_bits, scratch,
                       out_n_left):
    """``partition_rows`` on a sparse bin matrix: each node's segment of ``rows``
    reordered, its left child's rows first (stable), a row without an entry of the split
    feature going the missing way (``default_left``).

    indptr, slots : the sparse bin matrix         # IN
    feature_offsets : int32 (n_features + 1,)     # IN  feature f's slots (value bins only)
    rows ... cat_bits, scratch, out_n_left : as in ``partition_rows``
    """
    partition_rows_of((indptr, slots, feature_offsets), rows, node_starts, node_ends,
                      split_feature, split_bin, default_left, split_type, cat_bits, scratch,
                      out_n_left)


@helper(parallel=True)
def partition_rows_of(matrix, rows, node_starts, node_ends, split_feature, split_bin,
                      default_left, split_type, cat_bits, scratch, out_n_left):
    """``partition_rows_csr`` over any sparse layout (``matrix``: see sparse_rows.py)."""
    n_nodes = node_starts.shape[0]
    first_chunk, task_node = chunk_tasks(node_starts, node_ends)
    n_tasks = task_node.shape[0]
    left_count = np.zeros(n_tasks, dtype=np.int64)
    for task in prange(n_tasks):
        left_count[task] = _split_chunk(np.uint64(task), task_node, first_chunk, matrix, rows,
                                        node_starts, node_ends, split_feature, split_bin,
                                        default_left, split_type, cat_bits, scratch)
    left_before = lefts_before(n_nodes, first_chunk, left_count, out_n_left)
    for task in prange(n_tasks):
        place_chunk(np.uint64(task), task_node, first_chunk, rows, node_starts, node_ends,
                    scratch, left_count, left_before, out_n_left)


@helper
def _chunk_split(task, task_node, first_chunk, matrix, node_starts, node_ends, split_feature,
                 split_bin, default_left, split_type):
    """Chunk ``task``'s node ``k``, the split's feature, its value bins, threshold bin,
    missing direction and kind, and the chunk's positions ``lo .. hi`` in ``rows``."""
    k = task_node[task]
    f = split_feature[k]
    offsets = feature_offsets_of(matrix)
    lo = node_starts[k] + (task - first_chunk[k]) * PARTITION_CHUNK
    return (k, f, offsets[f + 1] - offsets[f], split_bin[k], default_left[k] == 1,
            split_type[k] == 1, lo, min(lo + PARTITION_CHUNK, node_ends[k]))


@helper
def _split_chunk(task, task_node, first_chunk, matrix, rows, node_starts, node_ends,
                 split_feature, split_bin, default_left, split_type, cat_bits, scratch):
    """One chunk's rows into its stretch of ``scratch`` (as ``partition_steps.split_chunk``:
    left rows forward from the start, right rows backward from the end)."""
    k, f, n, threshold, missing_left, categorical, lo, hi = _chunk_split(
        task, task_node, first_chunk, matrix, node_starts, node_ends, split_feature, split_bin,
        default_left, split_type)
    left = lo
    right = hi - 1
    for p in range(lo, hi):
        r = rows[p]
        go = np.int64(goes_left(row_bin(matrix, r, f), n, threshold, missing_left,
                                categorical, cat_bits, k))
        scratch[np.uint64(left)] = r
        scratch[np.uint64(right)] = r
        left += go
        right -= 1 - go
    return left - lo


@kernel
def add_split_values_csr(indptr, slots, feature_offsets, rows, node_starts, node_ends,
                         split_feature, split_bin, default_left, split_type, cat_bits,
                         left_values, right_values, out):
    """``add_split_values`` on a sparse bin matrix: ``out[r] +=`` the value of the child
    node ``k``'s split sends row ``r`` to, for the rows of each node's segment (not moved).

    indptr, slots, feature_offsets : as in ``partition_rows_csr``   # IN
    left_values, right_values : float64 (n_nodes,)                 # IN
    out : float64 (n_rows,)                                        # IN/OUT
    """
    add_split_values_of((indptr, slots, feature_offsets), rows, node_starts, node_ends,
                        split_feature, split_bin, default_left, split_type, cat_bits,
                        left_values, right_values, out)


@helper(parallel=True)
def add_split_values_of(matrix, rows, node_starts, node_ends, split_feature, split_bin,
                        default_left, split_type, cat_bits, left_values, right_values, out):
    """``add_split_values_csr`` over any sparse layout (``matrix``: see sparse_rows.py)."""
    first_chunk, task_node = chunk_tasks(node_starts, node_ends)
    for task in prange(task_node.shape[0]):
        _add_chunk(np.uint64(task), task_node, first_chunk, matrix, rows, node_starts,
                   node_ends, split_feature, split_bin, default_left, split_type, cat_bits,
                   left_values, right_values, out)


@helper
def _add_chunk(task, task_node, first_chunk, matrix, rows, node_starts, node_ends,
               split_feature, split_bin, default_left, split_type, cat_bits, left_values,
               right_values, out):
    k, f, n, threshold, missing_left, categorical, lo, hi = _chunk_split(
        task, task_node, first_chunk, matrix, node_starts, node_ends, split_feature, split_bin,
        default_left, split_type)
    for p in range(lo, hi):
        r = rows[p]
        if goes_left(row_bin(matrix, r, f), n, threshold, missing_left, categorical,
                     cat_bits, k):
            out[r] += left_values[k]
        else:
            out[r] += right_values[k]


@kernel(parallel=True)
def bin_values_csr(indptr, indices, data, cut_values, cut_offsets, feature_offsets, out):
    """Map stored raw values to histogram slots: ``feature_offsets[f]`` plus the number of
    feature ``f``'s cuts <= x (the bin ``bin_values`` gives).

    indptr : int64 (n_rows + 1,); indices : int32 (nnz,)   # IN  a canonical CSR matrix
    data : float32 (nnz,)                                  # IN  finite values
    cut_values : float32 (n_cuts,); cut_offsets : int64 (n_features + 1,)
                                                           # IN  feature f's cuts, increasing
    feature_offsets : int32 (n_features + 1,)              # IN  feature f's slots
    out : int32 (nnz,)                                     # OUT each entry's slot
    """
    for r in prange(indptr.shape[0] - 1):
        for j in range(indptr[r], indptr[r + 1]):
            f = indices[j]
            out[j] = feature_offsets[f] + _count_at_most(cut_values, cut_offsets[f],
                                                         cut_offsets[f + 1], data[j])


@helper
def _count_at_most(values, lo, hi, x):
    """How many of ``values[lo:hi]`` (increasing) are <= x."""
    first = lo
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return np.int32(lo - first)
