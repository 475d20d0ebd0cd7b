"""Histograms of gradient pairs per node and feature bin (twin of ``cpu/histogram.py``).

One launch builds every node of a batch. The batch's rows are cut into tasks of at most
``TASK_ROWS`` rows of one node, times the feature groups (consecutive features whose
slots fit in one block's shared memory); a block takes a task, sums its rows' pairs into
a private shared-memory histogram with 64-bit integer atomics, and adds that histogram to
the node's in global memory with integer atomics. A feature whose slots alone exceed
shared memory (uint16 bins) is summed with global atomics directly. Integer addition is
associative: the order in which threads and blocks add cannot change a bit (no float
atomics anywhere).
"""
import numpy as np
from numba import cuda, int32, int64

from ._device import (THREADS, MAX_BLOCKS, blocks_for, device_output, segment_tasks,
                      to_device, to_host)

SHARED_SLOTS = 3072  # (g, h) int64 pairs per block: 48 KiB, the static shared-memory limit
SHARED_CELLS = 6144  # 2 * SHARED_SLOTS: a shared array's size must be a constant


def feature_groups(feature_offsets, capacity=SHARED_SLOTS):
    """int64 (n_groups + 1,): group ``i`` is features ``groups[i] .. groups[i+1]-1``, the
    longest runs whose slots fit in ``capacity`` (a feature wider than that alone)."""
    offsets = to_host(feature_offsets).astype(np.int64)
    groups = [0]
    for f in range(1, offsets.shape[0] - 1):
        if offsets[f + 1] - offsets[groups[-1]] > capacity:
            groups.append(f)
    groups.append(offsets.shape[0] - 1)
    return np.array(groups, dtype=np.int64)


@cuda.jit
def _histogram_kernel(bins, gpair, rows, task_node, task_lo, task_hi, groups, feature_offsets,
                      hist):
    shared = cuda.shared.array(SHARED_CELLS, int64)
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    n_groups = groups.shape[0] - 1
    n_tasks = task_node.shape[0] * n_groups
    for task in range(cuda.blockIdx.x, n_tasks, cuda.gridDim.x):
        piece = task // n_groups
        group = task - piece * n_groups
        k = task_node[piece]
        f0, f1 = groups[group], groups[group + 1]
        first = feature_offsets[f0]
        n_cells = 2 * (feature_offsets[f1] - first)
        in_shared = n_cells <= SHARED_CELLS
        if in_shared:
            for c in range(tid, n_cells, step):
                shared[c] = 0
            cuda.syncthreads()
        for p in range(task_lo[piece] + tid, task_hi[piece], step):
            r = rows[p]
            g = gpair[r, 0]
            h = gpair[r, 1]
            for f in range(f0, f1):
                slot = feature_offsets[f] + int32(bins[r, f])  # uint8 cast before arithmetic
                if in_shared:
                    at = 2 * (slot - first)
                    cuda.atomic.add(shared, at, g)
                    cuda.atomic.add(shared, at + 1, h)
                else:
                    cuda.atomic.add(hist, (k, slot, 0), g)
                    cuda.atomic.add(hist, (k, slot, 1), h)
        if in_shared:
            cuda.syncthreads()
            for c in range(tid, n_cells, step):
                value = shared[c]
                if value != 0:
                    cuda.atomic.add(hist, (k, first + c // 2, c % 2), value)
            cuda.syncthreads()  # the next task clears ``shared`` only after every flush


@cuda.jit
def _subtract_kernel(parent, child, out):
    n_nodes, n_slots, _ = parent.shape
    for cell in range(cuda.grid(1), n_nodes * n_slots, cuda.gridsize(1)):
        k = cell // n_slots
        s = cell - k * n_slots
        out[k, s, 0] = parent[k, s, 0] - child[k, s, 0]
        out[k, s, 1] = parent[k, s, 1] - child[k, s, 1]


def build_histograms(bins, gpair, rows, node_starts, node_ends, feature_offsets, hist,
                     n_threads=1):
    """Sum the gradient pairs of each node's rows into per-feature bin histograms.

    Arguments as in ``cpu.build_histograms`` (``n_threads`` is ignored); ``bins``,
    ``gpair``, ``rows`` and ``hist`` live on the device, the nodes' segment bounds and
    ``feature_offsets`` may be host arrays (the plan of the launch is made from them).
    """
    d_hist, finish = device_output(hist)
    d_hist[...] = 0
    task_node, task_lo, task_hi = segment_tasks(node_starts, node_ends)
    groups = feature_groups(feature_offsets)
    n_tasks = task_node.shape[0] * (groups.shape[0] - 1)
    if n_tasks:
        _histogram_kernel[min(MAX_BLOCKS, n_tasks), THREADS](
            to_device(bins), to_device(gpair), to_device(rows), task_node, task_lo, task_hi,
            to_device(groups), to_device(feature_offsets), d_hist)
    finish()


def subtract_histograms(parent, child, out):
    """``out = parent - child`` (int64 (n_nodes, n_slots, 2)), one thread per slot."""
    d_out, finish = device_output(out)
    if parent.shape[0] * parent.shape[1]:
        _subtract_kernel[blocks_for(parent.shape[0] * parent.shape[1]), THREADS](
            to_device(parent), to_device(child), d_out)
    finish()
