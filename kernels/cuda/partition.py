"""Row partition by the nodes' splits, and leaf values added to margins (twin of
``cpu/partition.py``).

The partition is a prefix scan: (1) one thread per row of the batch writes its go-left
flag; (2) an inclusive scan of the flags over the whole ``rows`` array (integer, so the
same on any grid) gives every row the number of left-going rows before it in its
segment, ``E[p] - E[start]``; (3) each row is scattered to its place in ``scratch``::

    segment before:  [a b c d e f g h]
    go left:          1 0 1 0 0 1 1 0      scan -> left rows before each: 0 1 1 2 2 2 3 4
    segment after:   [a c f g | b d e h]   left rows, then right rows, order kept

and (4) copied back. Stable, like the CPU kernel: the same rows in the same order.
"""
import numpy as np
from numba import cuda, int32, uint32

from ._device import (THREADS, MAX_BLOCKS, array_module, device_output, segment_tasks,
                      to_device, to_host)


@cuda.jit(device=True)
def _goes_left(b, missing_bin, threshold, missing_left, categorical, cat_bits, k):
    if b == missing_bin:
        return missing_left
    if categorical:
        return ((cat_bits[k, b >> 5] >> uint32(b & 31)) & uint32(1)) == 0
    return b <= threshold


@cuda.jit
def _flag_kernel(bins_by_feature, rows, task_node, task_lo, task_hi, split_feature, split_bin,
                 default_left, split_type, cat_bits, n_bins, flags):
    for piece in range(cuda.blockIdx.x, task_node.shape[0], cuda.gridDim.x):
        k = task_node[piece]
        f = split_feature[k]
        missing_bin = n_bins[f]
        for p in range(task_lo[piece] + cuda.threadIdx.x, task_hi[piece], cuda.blockDim.x):
            b = int32(bins_by_feature[f, rows[p]])
            flags[p] = 1 if _goes_left(b, missing_bin, split_bin[k], default_left[k] == 1,
                                       split_type[k] == 1, cat_bits, k) else 0


@cuda.jit
def _scatter_kernel(rows, task_node, task_lo, task_hi, node_starts, n_left, flags, before,
                    scratch):
    for piece in range(cuda.blockIdx.x, task_node.shape[0], cuda.gridDim.x):
        k = task_node[piece]
        start = node_starts[k]
        for p in range(task_lo[piece] + cuda.threadIdx.x, task_hi[piece], cuda.blockDim.x):
            left_before = before[p] - before[start]
            if flags[p] == 1:
                scratch[start + left_before] = rows[p]
            else:
                scratch[start + n_left[k] + (p - start) - left_before] = rows[p]


@cuda.jit
def _copy_kernel(task_lo, task_hi, scratch, rows):
    for piece in range(cuda.blockIdx.x, task_lo.shape[0], cuda.gridDim.x):
        for p in range(task_lo[piece] + cuda.threadIdx.x, task_hi[piece], cuda.blockDim.x):
            rows[p] = scratch[p]


def partition_rows(bins_by_feature, rows, node_starts, node_ends, split_feature, split_bin,
                   default_left, split_type, cat_bits, n_bins, scratch, out_n_left):
    """Reorder each node's segment of ``rows`` so that its left child's rows come first.

    Arguments as in ``cpu.partition_rows``; ``bins_by_feature``, ``rows`` and ``scratch``
    live on the device, the per-node arrays may be host arrays (``out_n_left`` is then
    copied back).
    """
    def flag(blocks, d_rows, task_node, task_lo, task_hi, flags):
        _flag_kernel[blocks, THREADS](
            to_device(bins_by_feature), d_rows, task_node, task_lo, task_hi,
            to_device(split_feature), to_device(split_bin), to_device(default_left),
            to_device(split_type), to_device(cat_bits), to_device(n_bins), flags)

    partition_by_flags(rows, node_starts, node_ends, scratch, out_n_left, flag)


def partition_by_flags(rows, node_starts, node_ends, scratch, out_n_left, flag):
    """The partition of any bin layout: ``flag(blocks, rows, task_node, task_lo, task_hi,
    flags)`` launches the layout's kernel of step (1), a go-left flag per row of the
    pieces; steps (2)-(4) are the same for every layout."""
    xp = array_module()
    d_rows, finish_rows = device_output(rows)
    d_scratch = to_device(scratch)
    task_node, task_lo, task_hi = segment_tasks(node_starts, node_ends)
    m = d_rows.shape[0]
    flags = xp.zeros(m, dtype=np.int64)
    starts, ends = to_device(np.asarray(to_host(node_starts), dtype=np.int64)), \
        to_device(np.asarray(to_host(node_ends), dtype=np.int64))
    n_pieces = task_node.shape[0]
    if n_pieces:
        flag(min(MAX_BLOCKS, n_pieces), d_rows, task_node, task_lo, task_hi, flags)
    before = xp.zeros(m + 1, dtype=np.int64)  # before[p]: left-going rows at positions < p
    xp.cumsum(flags, out=before[1:])
    n_left = before[ends] - before[starts]
    if n_pieces:
        _scatter_kernel[min(MAX_BLOCKS, n_pieces), THREADS](
            d_rows, task_node, task_lo, task_hi, starts, n_left, flags, before, d_scratch)
        _copy_kernel[min(MAX_BLOCKS, n_pieces), THREADS](task_lo, task_hi, d_scratch, d_rows)
    out_n_left[...] = to_host(n_left) if not hasattr(out_n_left, "__cuda_array_interface__") \
        else n_left
    finish_rows()


@cuda.jit
def _leaf_kernel(rows, task_leaf, task_lo, task_hi, leaf_values, out):
    for piece in range(cuda.blockIdx.x, task_leaf.shape[0], cuda.gridDim.x):
        value = leaf_values[task_leaf[piece]]
        for p in range(task_lo[piece] + cuda.threadIdx.x, task_hi[piece], cuda.blockDim.x):
            out[rows[p]] += value  # every row is in one leaf: no two threads share it


def add_leaf_values(rows, leaf_starts, leaf_ends, leaf_values, out):
    """``out[r] += leaf_values[k]`` for every row ``r`` in leaf ``k``'s segment (as
    ``cpu.add_leaf_values``)."""
    d_out, finish = device_output(out)
    task_leaf, task_lo, task_hi = segment_tasks(leaf_starts, leaf_ends)
    if task_leaf.shape[0]:
        _leaf_kernel[min(MAX_BLOCKS, task_leaf.shape[0]), THREADS](
            to_device(rows), task_leaf, task_lo, task_hi, to_device(leaf_values), d_out)
    finish()


@cuda.jit
def _split_values_kernel(bins_by_feature, rows, task_node, task_lo, task_hi, split_feature,
                         split_bin, default_left, split_type, cat_bits, n_bins, left_values,
                         right_values, out):
    for piece in range(cuda.blockIdx.x, task_node.shape[0], cuda.gridDim.x):
        k = task_node[piece]
        f = split_feature[k]
        missing_bin = n_bins[f]
        for p in range(task_lo[piece] + cuda.threadIdx.x, task_hi[piece], cuda.blockDim.x):
            r = rows[p]
            b = int32(bins_by_feature[f, r])
            if _goes_left(b, missing_bin, split_bin[k], default_left[k] == 1,
                          split_type[k] == 1, cat_bits, k):
                out[r] += left_values[k]  # every row is in one segment: no two threads share it
            else:
                out[r] += right_values[k]


def add_split_values(bins_by_feature, rows, node_starts, node_ends, split_feature, split_bin,
                     default_left, split_type, cat_bits, n_bins, left_values, right_values, out):
    """Each row's child value by its node's split, added to ``out`` (as
    ``cpu.add_split_values``; the rows are not moved)."""
    d_out, finish = device_output(out)
    task_node, task_lo, task_hi = segment_tasks(node_starts, node_ends)
    if task_node.shape[0]:
        _split_values_kernel[min(MAX_BLOCKS, task_node.shape[0]), THREADS](
            to_device(bins_by_feature), to_device(rows), task_node, task_lo, task_hi,
            to_device(split_feature), to_device(split_bin), to_device(default_left),
            to_device(split_type), to_device(cat_bits), to_device(n_bins),
            to_device(left_values), to_device(right_values), d_out)
    finish()
