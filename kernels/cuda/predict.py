"""Prediction: one thread per row walks every tree in order (twin of ``cpu/predict.py``:
the same walk table, the same decisions, each row's leaf values summed in tree order)."""
import math

import numpy as np
from numba import cuda, float32, int32, int64

from ..layout import CAT_WORDS
from ._device import THREADS, blocks_for, device_output, to_device


@cuda.jit(device=True)
def _categorical_goes_left(x, default_left, cat_bits, row):
    if not (x >= 0.0 and x < 32.0 * cat_bits.shape[1]):
        return default_left
    code = int64(x)
    word = int64(cat_bits[row, code >> 5])
    return ((word >> (code & 31)) & 1) == 0


@cuda.jit(device=True)
def binned_goes_left(walk, at, b, missing, cat_bits):
    """Whether a row goes left at the walk-table node at ``at``, from its bin ``b`` of the
    node's feature (``missing``: ``b`` is the missing bin); every bin layout's walk."""
    flags = walk[at + 2]
    default_left = (flags & 1) == 1
    if flags & 2:
        x = float32(math.nan) if missing else float32(b)
        return _categorical_goes_left(x, default_left, cat_bits, walk[at + 3])
    if missing:
        return default_left
    return b <= walk[at + 3]


@cuda.jit(device=True)
def value_goes_left(walk, at, x, thresholds, cat_bits):
    """Whether a row goes left at the walk-table node at ``at``, from its raw value ``x``
    of the node's feature (NaN: missing)."""
    flags = walk[at + 2]
    default_left = (flags & 1) == 1
    if flags & 2:
        return _categorical_goes_left(x, default_left, cat_bits, walk[at + 3])
    if math.isnan(x):
        return default_left
    return x < thresholds[at + 3]


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


def _tables(walk, cat_bits):
    walk = to_device(walk)
    cat_bits = to_device(cat_bits)
    if cat_bits.shape[0] == 0:  # a launch needs a non-empty array of the right type
        cat_bits = to_device(np.zeros((1, CAT_WORDS), dtype=np.uint32))
    return walk, walk.view(np.float32), cat_bits


def predict(X, walk, cat_bits, value, tree_offsets, tree_group, tree_depth, out):
    """Add every tree's leaf value to ``out`` for raw float32 rows (as ``cpu.predict``)."""
    if X.shape[0] == 0 or tree_offsets.shape[0] < 2:
        return
    d_out, finish = device_output(out)
    walk, thresholds, cat_bits = _tables(walk, cat_bits)
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
    walk, thresholds, cat_bits = _tables(walk, cat_bits)
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
    walk, thresholds, cat_bits = _tables(walk, cat_bits)
    _leaf_index_kernel[blocks_for(X.shape[0]), THREADS](
        to_device(X), walk, thresholds, cat_bits, to_device(tree_offsets),
        to_device(tree_depth), to_device(np.zeros(1, dtype=np.int32)), d_out)
    finish()
