"""The partition's steps that every bin layout's CUDA partition shares (``partition.py``,
``csr.py``, ``bundled.py``): a row's way at a split, and steps (2)-(4) of the prefix-scan
partition (``partition.py``'s module text) after a layout's kernel has flagged its rows."""
import numpy as np
from numba import cuda, uint32

from ._device import (MAX_BLOCKS, THREADS, array_module, device_output, segment_tasks,
                      to_device, to_host)


@cuda.jit(device=True)
def goes_left(b, missing_bin, threshold, missing_left, categorical, cat_bits, k):
    if b == missing_bin:
        return missing_left
    if categorical:
        return ((cat_bits[k, b >> 5] >> uint32(b & 31)) & uint32(1)) == 0
    return b <= threshold


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
