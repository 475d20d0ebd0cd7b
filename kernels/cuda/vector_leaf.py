"""Vector-leaf trees' kernels (``multi_strategy="multi_output_tree"``) on CUDA: twins of
``cpu/vector_leaf.py``, with its names, arguments and results, bit for bit.

* ``build_vector_histograms``: the single-output histogram's plan (``histogram.py``) with
  ``k`` pairs a slot: a node's rows are cut into pieces, times the feature groups whose
  ``k``-pair slots fit in one block's shared memory; a block sums its piece's pairs there
  with 64-bit integer atomics and adds the result to the node's histogram with integer
  atomics (a feature too wide for shared memory goes to global memory directly). Integer
  addition is associative: no order of threads or blocks changes a bit.
* ``evaluate_vector_splits``: one thread per (node, feature) scans the candidates in the
  CPU's order with the same formulas (``split_math`` compiled as device functions, every
  product through ``mul``: never fused into an FMA), each output's terms added in output
  order; one thread per node then takes the best feature in feature order with a strict
  ``>`` (ties: the lowest feature, as on the CPU).
* ``vector_node_weights``, ``vector_children_histograms``, ``vector_segment_sums``: one
  thread per output cell; the segment sums are integer sums of one thread each.
* ``evaluate_vector_splits_monotone``: the plain search's threads with the CPU's bounded
  gain (the pooled weight, the clamped gains) as device functions; the other monotone
  kernels, which use them, are in ``vector_monotone.py``. The search's formulas and its
  kernels are in ``vector_split.py``.
"""
import math

import numpy as np
from numba import cuda, int32, int64

from ._device import (MAX_BLOCKS, THREADS, array_module, blocks_for, device_output,
                      segment_tasks, to_device)
from .histogram import SHARED_CELLS, SHARED_SLOTS, feature_groups
from .vector_split import feature_kernel, output_weight, parent_kernel


# -- histograms ---------------------------------------------------------------------------
@cuda.jit
def _vector_histogram_kernel(bins_by_feature, gpair, rows, task_node, task_lo, task_hi, groups,
                             feature_offsets, hist):
    shared = cuda.shared.array(SHARED_CELLS, int64)
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    k = gpair.shape[1]
    n_groups = groups.shape[0] - 1
    n_tasks = task_node.shape[0] * n_groups
    for task in range(cuda.blockIdx.x, n_tasks, cuda.gridDim.x):
        piece = task // n_groups
        group = task - piece * n_groups
        node = task_node[piece]
        f0, f1 = groups[group], groups[group + 1]
        first = feature_offsets[f0]
        n_cells = 2 * k * (feature_offsets[f1] - first)
        in_shared = n_cells <= SHARED_CELLS  # the same for every thread of the block
        if in_shared:
            for c in range(tid, n_cells, step):
                shared[c] = 0
            cuda.syncthreads()
        for p in range(task_lo[piece] + tid, task_hi[piece], step):
            r = rows[p]
            for f in range(f0, f1):
                slot = feature_offsets[f] + int32(bins_by_feature[f, r])  # uint8 cast first
                for j in range(k):
                    g = gpair[r, j, 0]
                    h = gpair[r, j, 1]
                    if in_shared:
                        at = 2 * (k * (slot - first) + j)
                        cuda.atomic.add(shared, at, g)
                        cuda.atomic.add(shared, at + 1, h)
                    else:
                        cuda.atomic.add(hist, (node, slot, j, 0), g)
                        cuda.atomic.add(hist, (node, slot, j, 1), h)
        if in_shared:
            cuda.syncthreads()
            for c in range(tid, n_cells, step):
                value = shared[c]
                if value != 0:
                    cell = c // 2
                    s = cell // k
                    cuda.atomic.add(hist, (node, first + s, cell - s * k, c % 2), value)
            cuda.syncthreads()  # the next task clears ``shared`` only after every flush


def build_vector_histograms(bins_by_feature, gpair, rows, node_starts, node_ends,
                            feature_offsets, hist):
    """Sum each node's rows' gradient pairs, one pair per output, per feature bin.

    Arguments as in ``cpu.build_vector_histograms``: ``bins_by_feature`` (n_features,
    n_rows), ``gpair`` int64 (n_rows, k, 2), ``rows`` and ``hist`` int64 (n_nodes,
    n_slots, k, 2) on the device or the host (copied over; ``hist`` copied back); the
    nodes' segment bounds and ``feature_offsets`` plan the launch.
    """
    d_hist, finish = device_output(hist)
    d_hist[...] = 0
    k = int(gpair.shape[1])
    task_node, task_lo, task_hi = segment_tasks(node_starts, node_ends)
    # a group's k pairs a slot must fit in shared memory (a wider feature goes alone, global)
    groups = feature_groups(feature_offsets, capacity=max(1, SHARED_SLOTS // max(k, 1)))
    n_tasks = task_node.shape[0] * (groups.shape[0] - 1)
    if n_tasks and k:
        _vector_histogram_kernel[min(MAX_BLOCKS, n_tasks), THREADS](
            to_device(bins_by_feature), to_device(gpair), to_device(rows), task_node, task_lo,
            task_hi, to_device(groups), to_device(feature_offsets), d_hist)
    finish()


# -- split search -------------------------------------------------------------------------
@cuda.jit
def _best_kernel(n_features, task_gain, task_bin, task_left, task_sums, out_gain, out_feature,
                 out_bin, out_left, out_left_sums):
    k = task_sums.shape[1]
    for node in range(cuda.grid(1), out_gain.shape[0], cuda.gridsize(1)):
        best, at = -math.inf, -1
        for f in range(n_features):
            if task_gain[node * n_features + f] > best:
                best, at = task_gain[node * n_features + f], f
        out_gain[node] = best
        out_feature[node] = at
        task = node * n_features + at
        out_bin[node] = task_bin[task] if at >= 0 else 0
        out_left[node] = task_left[task] if at >= 0 else 0
        for j in range(k):
            out_left_sums[node, j, 0] = task_sums[task, j, 0] if at >= 0 else 0
            out_left_sums[node, j, 1] = task_sums[task, j, 1] if at >= 0 else 0


def _no_bounds(n_features):
    """The bounds and constraints arguments of an unbounded search (``bounded`` False:
    the bounds are never read, the constraints all 0)."""
    return to_device(np.zeros((1, 1, 2))), to_device(np.zeros(n_features, np.int8))


def evaluate_vector_splits(hist, feature_offsets, node_sums, mask, scales, split_params,
                           out_gain, out_feature, out_bin, out_left, out_left_sums):
    """Best split of every node of a dense layout's vector histograms; arguments and
    results as in ``cpu.evaluate_vector_splits`` (host or device arrays; host outputs are
    copied back)."""
    bounds, monotone = _no_bounds(int(feature_offsets.shape[0]) - 1)
    _evaluate(hist, feature_offsets, node_sums, mask, bounds, monotone, False, scales,
              split_params, out_gain, out_feature, out_bin, out_left, out_left_sums)


def evaluate_vector_splits_monotone(hist, feature_offsets, node_sums, mask, node_bounds,
                                    monotone, scales, split_params, out_gain, out_feature,
                                    out_bin, out_left, out_left_sums):
    """``evaluate_vector_splits`` under monotone constraints; as
    ``cpu.evaluate_vector_splits_monotone``."""
    _evaluate(hist, feature_offsets, node_sums, mask, to_device(node_bounds),
              to_device(monotone), True, scales, split_params, out_gain, out_feature, out_bin,
              out_left, out_left_sums)


def _evaluate(hist, feature_offsets, node_sums, mask, node_bounds, monotone, bounded, scales,
              split_params, out_gain, out_feature, out_bin, out_left, out_left_sums):
    xp = array_module()
    n_nodes, _, k, _ = hist.shape
    n_features = int(feature_offsets.shape[0]) - 1
    n_tasks = n_nodes * n_features
    d_sums, d_scales = to_device(node_sums), to_device(scales)
    d_params = to_device(np.asarray(split_params, dtype=np.float64))
    parents = xp.empty(n_nodes, dtype=np.float64)
    task_gain = xp.empty(max(n_tasks, 1), dtype=np.float64)
    task_bin = xp.empty(max(n_tasks, 1), dtype=np.int32)
    task_left = xp.empty(max(n_tasks, 1), dtype=np.uint8)
    task_sums = xp.empty((max(n_tasks, 1), k, 2), dtype=np.int64)
    left = xp.empty((max(n_tasks, 1), k, 2), dtype=np.int64)  # each task's running sums
    outs = [device_output(a) for a in (out_gain, out_feature, out_bin, out_left,
                                       out_left_sums)]
    if n_nodes:
        parent_kernel[blocks_for(n_nodes), THREADS](d_sums, node_bounds, bounded, d_scales,
                                                    d_params, parents)
    if n_tasks:
        feature_kernel[blocks_for(n_tasks), THREADS](
            to_device(hist), to_device(feature_offsets), d_sums, to_device(mask), node_bounds,
            monotone, bounded, d_scales, d_params, parents, left, task_gain, task_bin,
            task_left, task_sums)
    if n_nodes:
        _best_kernel[blocks_for(n_nodes), THREADS](n_features, task_gain, task_bin, task_left,
                                                   task_sums, *(d for d, _ in outs))
    for _, finish in outs:
        finish()


# -- node weights, children's histograms, segment sums -------------------------------------
@cuda.jit
def _weights_kernel(node_sums, scales, split_params, out):
    n_nodes, k = out.shape
    for cell in range(cuda.grid(1), n_nodes * k, cuda.gridsize(1)):
        node = cell // k
        j = cell - node * k
        out[node, j] = output_weight(node_sums[node, j, 0] / scales[j, 0],
                                     node_sums[node, j, 1] / scales[j, 1], split_params[0],
                                     split_params[1], split_params[2], split_params[3])


def vector_node_weights(node_sums, scales, split_params, out):
    """Each node's weight per output; as ``cpu.vector_node_weights``."""
    d_out, finish = device_output(out)
    n_cells = int(out.shape[0]) * int(out.shape[1])
    if n_cells:
        _weights_kernel[blocks_for(n_cells), THREADS](
            to_device(node_sums), to_device(scales),
            to_device(np.asarray(split_params, dtype=np.float64)), d_out)
    finish()


@cuda.jit
def _children_kernel(parent_hist, built, small_is_right, out):
    n_pairs, n_slots, k, _ = built.shape
    per_pair = n_slots * k * 2
    for cell in range(cuda.grid(1), n_pairs * per_pair, cuda.gridsize(1)):
        i = cell // per_pair
        rest = cell - i * per_pair
        s = rest // (2 * k)
        rest -= s * 2 * k
        j = rest // 2
        c = rest - 2 * j
        small = 2 * i + int64(small_is_right[i])
        other = 2 * i + 1 - int64(small_is_right[i])
        value = built[i, s, j, c]
        out[small, s, j, c] = value
        out[other, s, j, c] = parent_hist[i, s, j, c] - value


def vector_children_histograms(parent_hist, built, small_is_right, out):
    """The histograms of a level's children, pair by pair; as
    ``cpu.vector_children_histograms``."""
    d_out, finish = device_output(out)
    n_cells = int(np.prod(built.shape))
    if n_cells:
        _children_kernel[blocks_for(n_cells), THREADS](
            to_device(parent_hist), to_device(built), to_device(small_is_right), d_out)
    finish()


@cuda.jit
def _segment_kernel(gpair, rows, starts, ends, out):
    n_segments, k, _ = out.shape
    for task in range(cuda.grid(1), n_segments * k, cuda.gridsize(1)):
        s = task // k
        j = task - s * k
        g, h = int64(0), int64(0)
        for p in range(starts[s], ends[s]):
            r = rows[p]
            g += gpair[j, r, 0]
            h += gpair[j, r, 1]
        out[s, j, 0] = g
        out[s, j, 1] = h


def vector_segment_sums(gpair, rows, starts, ends, out):
    """Each segment's gradient-pair sums per output (``gpair`` output-major, int64 (k,
    n_rows, 2)); as ``cpu.vector_segment_sums``."""
    d_out, finish = device_output(out)
    n_tasks = int(out.shape[0]) * int(out.shape[1])
    if n_tasks:
        _segment_kernel[blocks_for(n_tasks), THREADS](
            to_device(gpair), to_device(rows), to_device(np.asarray(starts, dtype=np.int64)),
            to_device(np.asarray(ends, dtype=np.int64)), d_out)
    finish()

