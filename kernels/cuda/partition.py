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
Steps (2)-(4) are every bin layout's (``partition_steps.partition_by_flags``).
"""
from numba import cuda, int32

from ._device import THREADS, MAX_BLOCKS, device_output, segment_tasks, to_device
from .partition_steps import goes_left, partition_by_flags


@cuda.jit
def _flag_kernel(bins_by_feature, rows, task_node, task_lo, task_hi, split_feature, split_bin,
                 default_left, split_type, cat_bits, n_bins, flags):
    for piece in range(cuda.blockIdx.x, task_node.shape[0], cuda.gridDim.x):
        k = task_node[piece]
        f = split_feature[k]
        missing_bin = n_bins[f]
        for p in range(task_lo[piece] + cuda.threadIdx.x, task_hi[piece], cuda.blockDim.x):
            b = int32(bins_by_feature[f, rows[p]])
            flags[p] = 1 if goes_left(b, missing_bin, split_bin[k], default_left[k] == 1,
                                      split_type[k] == 1, cat_bits, k) else 0


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
            if goes_left(b, missing_bin, split_bin[k], default_left[k] == 1,
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
