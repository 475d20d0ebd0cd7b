"""Kernels over a bundled bin matrix (twin of ``cpu/bundled.py``): histograms with each
row's codes placed by the code table (64-bit integer atomics in global memory), the
partition (``partition.py``'s scan, each row's bin decoded from its bundle's code), the
last level's values and prediction."""
from numba import cuda, int32, int64

from ._device import (THREADS, MAX_BLOCKS, blocks_for, device_output, segment_tasks,
                      to_device)
from .partition_steps import goes_left, partition_by_flags
from .tree_walk import binned_goes_left, tree_tables


@cuda.jit(device=True)
def bundle_bin(by_bundle, feature_bundle, feature_code, feature_offsets, r, f):
    """Row ``r``'s bin of feature ``f``, or its ``n_bins`` (missing)."""
    n = feature_offsets[f + 1] - feature_offsets[f]
    b = int64(by_bundle[feature_bundle[f], r]) - feature_code[f]
    if b < 0 or b >= n:
        return int32(n)
    return int32(b)


@cuda.jit
def _histogram_kernel(bins, code_slot, code_base, gpair, rows, task_node, task_lo, task_hi,
                      hist):
    for piece in range(cuda.blockIdx.x, task_node.shape[0], cuda.gridDim.x):
        k = task_node[piece]
        for p in range(task_lo[piece] + cuda.threadIdx.x, task_hi[piece], cuda.blockDim.x):
            r = rows[p]
            g = gpair[r, 0]
            h = gpair[r, 1]
            for j in range(bins.shape[1]):
                code = int64(bins[r, j])
                if code != 0:
                    slot = int64(code_slot[code_base[j] + code])
                    if slot >= 0:
                        cuda.atomic.add(hist, (k, slot, 0), g)
                        cuda.atomic.add(hist, (k, slot, 1), h)


def build_histograms_bundled(bins, code_slot, code_base, feature_offsets, gpair, rows,
                             node_starts, node_ends, hist, n_threads=1):
    """Each node's histogram over its rows' bundle codes (as
    ``cpu.build_histograms_bundled``; ``n_threads`` is ignored)."""
    d_hist, finish = device_output(hist)
    d_hist[...] = 0
    task_node, task_lo, task_hi = segment_tasks(node_starts, node_ends)
    if task_node.shape[0]:
        _histogram_kernel[min(MAX_BLOCKS, task_node.shape[0]), THREADS](
            to_device(bins), to_device(code_slot), to_device(code_base), to_device(gpair),
            to_device(rows), task_node, task_lo, task_hi, d_hist)
    finish()


@cuda.jit
def _flag_kernel(by_bundle, feature_bundle, feature_code, feature_offsets, rows, task_node,
                 task_lo, task_hi, split_feature, split_bin, default_left, split_type,
                 cat_bits, flags):
    for piece in range(cuda.blockIdx.x, task_node.shape[0], cuda.gridDim.x):
        k = task_node[piece]
        f = split_feature[k]
        n = feature_offsets[f + 1] - feature_offsets[f]
        for p in range(task_lo[piece] + cuda.threadIdx.x, task_hi[piece], cuda.blockDim.x):
            b = bundle_bin(by_bundle, feature_bundle, feature_code, feature_offsets, rows[p], f)
            flags[p] = 1 if goes_left(b, n, split_bin[k], default_left[k] == 1,
                                      split_type[k] == 1, cat_bits, k) else 0


def partition_rows_bundled(bins_by_bundle, feature_bundle, feature_code, feature_offsets, rows,
                           node_starts, node_ends, split_feature, split_bin, default_left,
                           split_type, cat_bits, scratch, out_n_left):
    """Each node's segment of ``rows`` reordered, left rows first (as
    ``cpu.partition_rows_bundled``)."""
    def flag(blocks, d_rows, task_node, task_lo, task_hi, flags):
        _flag_kernel[blocks, THREADS](
            to_device(bins_by_bundle), to_device(feature_bundle), to_device(feature_code),
            to_device(feature_offsets), d_rows, task_node, task_lo, task_hi,
            to_device(split_feature), to_device(split_bin), to_device(default_left),
            to_device(split_type), to_device(cat_bits), flags)

    partition_by_flags(rows, node_starts, node_ends, scratch, out_n_left, flag)


@cuda.jit
def _split_values_kernel(by_bundle, feature_bundle, feature_code, feature_offsets, rows,
                         task_node, task_lo, task_hi, split_feature, split_bin, default_left,
                         split_type, cat_bits, left_values, right_values, out):
    for piece in range(cuda.blockIdx.x, task_node.shape[0], cuda.gridDim.x):
        k = task_node[piece]
        f = split_feature[k]
        n = feature_offsets[f + 1] - feature_offsets[f]
        for p in range(task_lo[piece] + cuda.threadIdx.x, task_hi[piece], cuda.blockDim.x):
            r = rows[p]
            b = bundle_bin(by_bundle, feature_bundle, feature_code, feature_offsets, r, f)
            if goes_left(b, n, split_bin[k], default_left[k] == 1, split_type[k] == 1,
                         cat_bits, k):
                out[r] += left_values[k]  # every row is in one segment
            else:
                out[r] += right_values[k]


def add_split_values_bundled(bins_by_bundle, feature_bundle, feature_code, feature_offsets,
                             rows, node_starts, node_ends, split_feature, split_bin,
                             default_left, split_type, cat_bits, left_values, right_values,
                             out):
    """Each row's child value by its node's split, added to ``out`` (as
    ``cpu.add_split_values_bundled``; the rows are not moved)."""
    d_out, finish = device_output(out)
    task_node, task_lo, task_hi = segment_tasks(node_starts, node_ends)
    if task_node.shape[0]:
        _split_values_kernel[min(MAX_BLOCKS, task_node.shape[0]), THREADS](
            to_device(bins_by_bundle), to_device(feature_bundle), to_device(feature_code),
            to_device(feature_offsets), to_device(rows), task_node, task_lo, task_hi,
            to_device(split_feature), to_device(split_bin), to_device(default_left),
            to_device(split_type), to_device(cat_bits), to_device(left_values),
            to_device(right_values), d_out)
    finish()


@cuda.jit
def _predict_kernel(by_bundle, feature_bundle, feature_code, feature_offsets, rows, walk,
                    cat_bits, value, tree_offsets, tree_group, tree_depth, out):
    for i in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        r = rows[i]
        for t in range(tree_offsets.shape[0] - 1):
            node = tree_offsets[t]
            for _ in range(tree_depth[t]):
                at = node * 4
                f = walk[at]
                b = bundle_bin(by_bundle, feature_bundle, feature_code, feature_offsets, r, f)
                go_left = binned_goes_left(walk, at, b,
                                           b == feature_offsets[f + 1] - feature_offsets[f],
                                           cat_bits)
                node = tree_offsets[t] + walk[at + 1] + (0 if go_left else 1)
            out[r, tree_group[t]] += value[node]


def predict_binned_bundled(bins_by_bundle, feature_bundle, feature_code, feature_offsets, rows,
                           walk, cat_bits, value, tree_offsets, tree_group, tree_depth, out):
    """Every tree's leaf value added to ``out[rows]`` for bundled binned rows (as
    ``cpu.predict_binned_bundled``)."""
    if rows.shape[0] == 0 or tree_offsets.shape[0] < 2:
        return
    d_out, finish = device_output(out)
    walk, _, cat_bits = tree_tables(walk, cat_bits)
    _predict_kernel[blocks_for(rows.shape[0]), THREADS](
        to_device(bins_by_bundle), to_device(feature_bundle), to_device(feature_code),
        to_device(feature_offsets), to_device(rows), walk, cat_bits, to_device(value),
        to_device(tree_offsets), to_device(tree_group), to_device(tree_depth), d_out)
    finish()
