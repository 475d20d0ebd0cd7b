"""Prediction over CSR rows (twin of ``cpu/csr_predict.py``): one thread per row walks
every tree in order, each step's feature found by a binary search of the row's entries."""
import math

import numpy as np
from numba import cuda, float32

from ._device import THREADS, blocks_for, device_output, to_device
from .csr import entry_bin
from .tree_walk import binned_goes_left, tree_tables, value_goes_left


@cuda.jit(device=True)
def _entry_value(indptr, indices, data, r, f):
    lo = indptr[r]
    hi = indptr[r + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < f:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[r + 1] and indices[lo] == f:
        return data[lo]
    return float32(math.nan)


@cuda.jit(device=True)
def _leaf(indptr, indices, data, feature_offsets, binned, r, walk, thresholds, cat_bits, base,
          depth):
    node = base
    for _ in range(depth):
        at = node * 4
        feature = walk[at]
        if binned:
            first = feature_offsets[feature]
            n = feature_offsets[feature + 1] - first
            b = entry_bin(indptr, indices, r, first, n)
            go_left = binned_goes_left(walk, at, b, b == n, cat_bits)
        else:
            go_left = value_goes_left(walk, at, _entry_value(indptr, indices, data, r, feature),
                                      thresholds, cat_bits)
        node = base + walk[at + 1] + (0 if go_left else 1)
    return node


@cuda.jit
def _predict_kernel(indptr, indices, data, feature_offsets, binned, rows, use_rows, walk,
                    thresholds, cat_bits, value, tree_offsets, tree_group, tree_depth, out):
    n = rows.shape[0] if use_rows else indptr.shape[0] - 1
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        r = rows[i] if use_rows else i
        for t in range(tree_offsets.shape[0] - 1):
            leaf = _leaf(indptr, indices, data, feature_offsets, binned, r, walk, thresholds,
                         cat_bits, tree_offsets[t], tree_depth[t])
            out[r, tree_group[t]] += value[leaf]


@cuda.jit
def _leaf_index_kernel(indptr, indices, data, no_offsets, walk, thresholds, cat_bits,
                       tree_offsets, tree_depth, out):
    for r in range(cuda.grid(1), indptr.shape[0] - 1, cuda.gridsize(1)):
        for t in range(tree_offsets.shape[0] - 1):
            leaf = _leaf(indptr, indices, data, no_offsets, False, r, walk, thresholds,
                         cat_bits, tree_offsets[t], tree_depth[t])
            out[r, t] = leaf - tree_offsets[t]


def predict_binned_csr(indptr, slots, feature_offsets, rows, walk, cat_bits, value,
                       tree_offsets, tree_group, tree_depth, out):
    """Every tree's leaf value added to ``out[rows]`` for sparse binned rows (as
    ``cpu.predict_binned_csr``)."""
    if rows.shape[0] == 0 or tree_offsets.shape[0] < 2:
        return
    d_out, finish = device_output(out)
    walk, thresholds, cat_bits = tree_tables(walk, cat_bits)
    _predict_kernel[blocks_for(rows.shape[0]), THREADS](
        to_device(indptr), to_device(slots), to_device(np.zeros(1, np.float32)),
        to_device(feature_offsets), True, to_device(rows), True, walk, thresholds, cat_bits,
        to_device(value), to_device(tree_offsets), to_device(tree_group),
        to_device(tree_depth), d_out)
    finish()


def predict_csr(indptr, indices, data, walk, cat_bits, value, tree_offsets, tree_group,
                tree_depth, out):
    """Every tree's leaf value added for raw CSR rows (as ``cpu.predict_csr``)."""
    if indptr.shape[0] < 2 or tree_offsets.shape[0] < 2:
        return
    d_out, finish = device_output(out)
    walk, thresholds, cat_bits = tree_tables(walk, cat_bits)
    _predict_kernel[blocks_for(indptr.shape[0] - 1), THREADS](
        to_device(indptr), to_device(indices), to_device(data),
        to_device(np.zeros(1, np.int32)), False, to_device(np.zeros(1, np.int64)), False,
        walk, thresholds, cat_bits, to_device(value), to_device(tree_offsets),
        to_device(tree_group), to_device(tree_depth), d_out)
    finish()


def predict_leaf_csr(indptr, indices, data, walk, cat_bits, tree_offsets, tree_depth, out):
    """The leaf each raw CSR row reaches in each tree (as ``cpu.predict_leaf_csr``)."""
    if indptr.shape[0] < 2 or tree_offsets.shape[0] < 2:
        return
    d_out, finish = device_output(out)
    walk, thresholds, cat_bits = tree_tables(walk, cat_bits)
    _leaf_index_kernel[blocks_for(indptr.shape[0] - 1), THREADS](
        to_device(indptr), to_device(indices), to_device(data),
        to_device(np.zeros(1, np.int32)), walk, thresholds, cat_bits,
        to_device(tree_offsets), to_device(tree_depth), d_out)
    finish()
