"""Kernels over a sparse bin matrix (twin of ``cpu/csr.py``): histograms, the row
partition, the last level's leaf values and raw values to bins.

Histograms: the batch's rows are cut into tasks of at most ``TASK_ROWS`` rows of one
node; a block takes a task and adds each stored entry's gradient pair to the node's
histogram in global memory with 64-bit integer atomics (a sparse histogram is too wide
for shared memory, and each row touches few of its slots). The partition is
``partition.py``'s prefix scan, each row's way read by a binary search of its entries.
"""
import numpy as np
from numba import cuda, int32, int64

from ._device import (THREADS, MAX_BLOCKS, blocks_for, device_output, segment_tasks,
                      to_device)
from .partition_steps import goes_left, partition_by_flags


@cuda.jit(device=True)
def entry_bin(indptr, slots, r, first, n):
    """Row ``r``'s bin of the feature with slots ``first .. first + n - 1``, or ``n``."""
    lo = indptr[r]
    end = indptr[r + 1]
    hi = end
    while lo < hi:
        mid = (lo + hi) // 2
        if slots[mid] < first:
            lo = mid + 1
        else:
            hi = mid
    if lo < end and slots[lo] < first + n:
        return int32(slots[lo] - first)
    return int32(n)


@cuda.jit
def _histogram_kernel(indptr, slots, slot_map, mapped, gpair, rows, task_node, task_lo, task_hi,
                      hist):
    for piece in range(cuda.blockIdx.x, task_node.shape[0], cuda.gridDim.x):
        k = task_node[piece]
        for p in range(task_lo[piece] + cuda.threadIdx.x, task_hi[piece], cuda.blockDim.x):
            r = rows[p]
            g = gpair[r, 0]
            h = gpair[r, 1]
            for j in range(indptr[r], indptr[r + 1]):
                slot = int64(slots[j])
                if mapped:
                    slot = int64(slot_map[slot])
                if slot >= 0:
                    cuda.atomic.add(hist, (k, slot, 0), g)
                    cuda.atomic.add(hist, (k, slot, 1), h)


def build_histograms_csr(indptr, slots, slot_map, gpair, rows, node_starts, node_ends, hist,
                         n_threads=1):
    """Each node's histogram over its rows' stored entries (as
    ``cpu.build_histograms_csr``; ``n_threads`` is ignored)."""
    d_hist, finish = device_output(hist)
    d_hist[...] = 0
    task_node, task_lo, task_hi = segment_tasks(node_starts, node_ends)
    mapped = slot_map.shape[0] > 0
    if not mapped:  # a launch needs a non-empty array of the right type
        slot_map = np.zeros(1, dtype=np.int32)
    if task_node.shape[0]:
        _histogram_kernel[min(MAX_BLOCKS, task_node.shape[0]), THREADS](
            to_device(indptr), to_device(slots), to_device(slot_map), mapped, to_device(gpair),
            to_device(rows), task_node, task_lo, task_hi, d_hist)
    finish()


@cuda.jit
def _flag_kernel(indptr, slots, feature_offsets, rows, task_node, task_lo, task_hi,
                 split_feature, split_bin, default_left, split_type, cat_bits, flags):
    for piece in range(cuda.blockIdx.x, task_node.shape[0], cuda.gridDim.x):
        k = task_node[piece]
        f = split_feature[k]
        first = feature_offsets[f]
        n = feature_offsets[f + 1] - first
        for p in range(task_lo[piece] + cuda.threadIdx.x, task_hi[piece], cuda.blockDim.x):
            b = entry_bin(indptr, slots, rows[p], first, n)
            flags[p] = 1 if goes_left(b, n, split_bin[k], default_left[k] == 1,
                                      split_type[k] == 1, cat_bits, k) else 0


def partition_rows_csr(indptr, slots, feature_offsets, rows, node_starts, node_ends,
                       split_feature, split_bin, default_left, split_type, cat_bits, scratch,
                       out_n_left):
    """Each node's segment of ``rows`` reordered, left rows first (as
    ``cpu.partition_rows_csr``): ``partition_rows``'s scan on the sparse rows' ways."""
    def flag(blocks, d_rows, task_node, task_lo, task_hi, flags):
        _flag_kernel[blocks, THREADS](
            to_device(indptr), to_device(slots), to_device(feature_offsets), d_rows, task_node,
            task_lo, task_hi, to_device(split_feature), to_device(split_bin),
            to_device(default_left), to_device(split_type), to_device(cat_bits), flags)

    partition_by_flags(rows, node_starts, node_ends, scratch, out_n_left, flag)


@cuda.jit
def _split_values_kernel(indptr, slots, feature_offsets, rows, task_node, task_lo, task_hi,
                         split_feature, split_bin, default_left, split_type, cat_bits,
                         left_values, right_values, out):
    for piece in range(cuda.blockIdx.x, task_node.shape[0], cuda.gridDim.x):
        k = task_node[piece]
        f = split_feature[k]
        first = feature_offsets[f]
        n = feature_offsets[f + 1] - first
        for p in range(task_lo[piece] + cuda.threadIdx.x, task_hi[piece], cuda.blockDim.x):
            r = rows[p]
            b = entry_bin(indptr, slots, r, first, n)
            if goes_left(b, n, split_bin[k], default_left[k] == 1, split_type[k] == 1,
                         cat_bits, k):
                out[r] += left_values[k]  # every row is in one segment
            else:
                out[r] += right_values[k]


def add_split_values_csr(indptr, slots, feature_offsets, rows, node_starts, node_ends,
                         split_feature, split_bin, default_left, split_type, cat_bits,
                         left_values, right_values, out):
    """Each row's child value by its node's split, added to ``out`` (as
    ``cpu.add_split_values_csr``; the rows are not moved)."""
    d_out, finish = device_output(out)
    task_node, task_lo, task_hi = segment_tasks(node_starts, node_ends)
    if task_node.shape[0]:
        _split_values_kernel[min(MAX_BLOCKS, task_node.shape[0]), THREADS](
            to_device(indptr), to_device(slots), to_device(feature_offsets), to_device(rows),
            task_node, task_lo, task_hi, to_device(split_feature), to_device(split_bin),
            to_device(default_left), to_device(split_type), to_device(cat_bits),
            to_device(left_values), to_device(right_values), d_out)
    finish()


@cuda.jit
def _bin_kernel(indices, data, cut_values, cut_offsets, feature_offsets, out):
    for j in range(cuda.grid(1), data.shape[0], cuda.gridsize(1)):
        f = indices[j]
        lo = cut_offsets[f]
        first = lo
        hi = cut_offsets[f + 1]
        x = data[j]
        while lo < hi:  # how many of the feature's cuts are <= x
            mid = (lo + hi) // 2
            if cut_values[mid] <= x:
                lo = mid + 1
            else:
                hi = mid
        out[j] = feature_offsets[f] + int32(lo - first)


def bin_values_csr(indptr, indices, data, cut_values, cut_offsets, feature_offsets, out):
    """Each stored value's histogram slot (as ``cpu.bin_values_csr``), one thread per
    entry."""
    if data.shape[0] == 0:
        return
    d_out, finish = device_output(out)
    _bin_kernel[blocks_for(data.shape[0]), THREADS](
        to_device(indices), to_device(data), to_device(cut_values), to_device(cut_offsets),
        to_device(feature_offsets), d_out)
    finish()
