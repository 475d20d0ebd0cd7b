"""Prediction: one thread per row walks every tree in order (twin of ``cpu/predict.py``:
the same walk table, the same decisions, each row's leaf values summed in tree order)."""
import numpy as np
from numba import cuda, int32

from ._device import THREADS, blocks_for, device_output, to_device
from .tree_walk import binned_goes_left, tree_tables, value_goes_left


@cuda.jit(device=True)
def _leaf(values, r, binned, n_bins, walk, thresholds, cat_bits, base, depth):
    """Global node id of row ``r``'s leaf in the tree whose root is ``base``."""
    node = base
    for _ in range(depth):
        at = node * 4
        feature = walk[at]
        if binned:
            b = int32(values[r, feature])
            go_left = binned_goes_left(walk, at, b, b == n_bins[feature], cat_bits)
        else:
            go_left = value_goes_left(walk, at, values[r, feature], thresholds, cat_bits)
        node = base + walk[at + 1] + (0 if go_left else 1)
    return node


@cuda.jit
def _predict_kernel(values, rows, use_rows, binned, n_bins, walk, thresholds, cat_bits, value,
                    tree_offsets, tree_group, tree_depth, out):
    n = rows.shape[0] if use_rows else values.shape[0]
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        r = rows[i] if use_rows else i
        for t in range(tree_offsets.shape[0] - 1):
            leaf = _leaf(values, r, binned, n_bins, walk, thresholds, cat_bits, tree_offsets[t],
                         tree_depth[t])
            out[r, tree_group[t]] += value[leaf]


@cuda.jit
def _leaf_index_kernel(X, walk, thresholds, cat_bits, tree_offsets, tree_depth, n_bins, out):
    for r in range(cuda.grid(1), X.shape[0], cuda.gridsize(1)):
        for t in range(tree_offsets.shape[0] - 1):
            leaf = _leaf(X, r, False, n_bins, walk, thresholds, cat_bits, tree_offsets[t],
                         tree_depth[t])
            out[r, t] = leaf - tree_offsets[t]


def predict(X, walk, cat_bits, value, tree_offsets, tree_group, tree_depth, out):
    """Add every tree's leaf value to ``out`` for raw float32 rows (as ``cpu.predict``)."""
    if X.shape[0] == 0 or tree_offsets.shape[0] < 2:
        return
    d_out, finish = device_output(out)
    walk, thresholds, cat_bits = tree_tables(walk, cat_bits)
    no_rows = to_device(np.zeros(1, dtype=np.int64))
    no_bins = to_device(np.zeros(1, dtype=np.int32))
    _predict_kernel[blocks_for(X.shape[0]), THREADS](
        to_device(X), no_rows, False, False, no_bins, walk, thresholds, cat_bits,
        to_device(value), to_device(tree_offsets), to_device(tree_group), to_device(tree_depth),
        d_out)
    finish()


def predict_binned(bins, rows, n_bins, walk, cat_bits, value, tree_offsets, tree_group,
                   tree_depth, out):
    """Add every tree's leaf value to ``out[rows]`` for binned rows (as
    ``cpu.predict_binned``)."""
    if rows.shape[0] == 0 or tree_offsets.shape[0] < 2:
        return
    d_out, finish = device_output(out)
    walk, thresholds, cat_bits = tree_tables(walk, cat_bits)
    _predict_kernel[blocks_for(rows.shape[0]), THREADS](
        to_device(bins), to_device(rows), True, True, to_device(n_bins), walk, thresholds,
        cat_bits, to_device(value), to_device(tree_offsets), to_device(tree_group),
        to_device(tree_depth), d_out)
    finish()


def predict_leaf(X, walk, cat_bits, tree_offsets, tree_depth, out):
    """The leaf each row reaches in each tree, as the node id within its tree (as
    ``cpu.predict_leaf``)."""
    if X.shape[0] == 0 or tree_offsets.shape[0] < 2:
        return
    d_out, finish = device_output(out)
    walk, thresholds, cat_bits = tree_tables(walk, cat_bits)
    _leaf_index_kernel[blocks_for(X.shape[0]), THREADS](
        to_device(X), walk, thresholds, cat_bits, to_device(tree_offsets),
        to_device(tree_depth), to_device(np.zeros(1, dtype=np.int32)), d_out)
    finish()
