"""Prediction over CSR rows: on the training data's sparse bins (``predict_binned_csr``) and
on raw sparse values (``predict_csr``, ``predict_leaf_csr``), never densified.

Each step of a walk finds the row's entry of the node's feature by a binary search of the
row's sorted entries (``csr.entry_bin``, ``entry_value``); an absent entry is missing and
goes the node's default way. The decisions are ``predict.py``'s, so a sparse row reaches
the leaf its dense form (NaN where entries are absent) reaches.
"""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from .csr import entry_bin
from .predict import categorical_goes_left

_PREDICT_BLOCK = 64  # rows walked through one tree together (predict.py's block)


@helper
def entry_value(indptr, indices, data, r, f):
    """Row ``r``'s stored value of feature ``f``, or NaN (missing) when absent."""
    lo = indptr[r]
    hi = indptr[r + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < f:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[r + 1] and indices[lo] == f:
        return data[lo]
    return np.float32(np.nan)


@helper
def _leaf(indptr, indices, data, feature_offsets, binned, r, walk, cat_bits, base, depth):
    """Global node id of row ``r``'s leaf in the tree whose root is ``base``."""
    thresholds = walk.view(np.float32)
    node = base
    for _ in range(depth):
        at = node * 4
        feature = walk[at]
        flags = walk[at + 2]
        default_left = (flags & 1) == 1
        if binned:
            first = feature_offsets[feature]
            n = feature_offsets[feature + 1] - first
            b = entry_bin(indptr, indices, r, first, n)
            missing = b == n
            if flags & 2:
                x = np.float32(np.nan) if missing else np.float32(b)
                go_left = categorical_goes_left(x, default_left, cat_bits, walk[at + 3])
            elif missing:
                go_left = default_left
            else:
                go_left = b <= walk[at + 3]
        else:
            x = entry_value(indptr, indices, data, r, feature)
            if flags & 2:
                go_left = categorical_goes_left(x, default_left, cat_bits, walk[at + 3])
            elif np.isnan(x):
                go_left = default_left
            else:
                go_left = x < thresholds[at + 3]
        node = base + walk[at + 1] + (0 if go_left else 1)
    return node


@helper(parallel=True)
def _add_leaf_values(indptr, indices, data, feature_offsets, binned, rows, walk, cat_bits,
                     value, tree_offsets, tree_group, tree_depth, out):
    """Blocks of rows in parallel, each row through every tree in order (its sum in the
    same order on any thread count)."""
    n_blocks = (rows.shape[0] + _PREDICT_BLOCK - 1) // _PREDICT_BLOCK
    for block in prange(n_blocks):
        _predict_block(np.uint64(block), indptr, indices, data, feature_offsets, binned, rows,
                       walk, cat_bits, value, tree_offsets, tree_group, tree_depth, out)


@helper
def _predict_block(block, indptr, indices, data, feature_offsets, binned, rows, walk, cat_bits,
                   value, tree_offsets, tree_group, tree_depth, out):
    lo = block * _PREDICT_BLOCK
    hi = min(lo + _PREDICT_BLOCK, rows.shape[0])
    for t in range(tree_offsets.shape[0] - 1):
        for i in range(lo, hi):
            r = rows[i]
            leaf = _leaf(indptr, indices, data, feature_offsets, binned, r, walk, cat_bits,
                         tree_offsets[t], tree_depth[t])
            out[r, tree_group[t]] += value[leaf]


@kernel
def predict_binned_csr(indptr, slots, feature_offsets, rows, walk, cat_bits, value,
                       tree_offsets, tree_group, tree_depth, out):
    """``predict_binned`` on a sparse bin matrix: every tree's leaf value added to
    ``out[rows]``.

    indptr : int64 (n_rows + 1,); slots : int32 (nnz,)   # IN  the sparse bin matrix
    feature_offsets : int32 (n_features + 1,)       # IN  feature f's slots (value bins)
    rows : int32 or int64 (m,)                      # IN  the rows to predict
    walk ... tree_depth : as in ``predict_binned`` (``Forest.walk_binned``)
    out : float64 (n_rows, n_groups)                # IN/OUT only ``out[rows]`` changes
    """
    _add_leaf_values(indptr, slots, np.zeros(0, dtype=np.float32), feature_offsets, True,
                     rows, walk, cat_bits, value, tree_offsets, tree_group, tree_depth, out)


@kernel
def predict_csr(indptr, indices, data, walk, cat_bits, value, tree_offsets, tree_group,
                tree_depth, out):
    """``predict`` on raw CSR rows (absent entries missing): every tree's leaf value added.

    indptr : int64 (n_rows + 1,); indices : int32 (nnz,), each row's increasing
    data : float32 (nnz,)                           # IN  finite values
    walk ... tree_depth : as in ``predict`` (``Forest.walk``)
    out : float64 (n_rows, n_groups)                # IN/OUT
    """
    rows = np.arange(indptr.shape[0] - 1)
    _add_leaf_values(indptr, indices, data, np.zeros(0, dtype=np.int32), False, rows, walk,
                     cat_bits, value, tree_offsets, tree_group, tree_depth, out)


@kernel(parallel=True)
def predict_leaf_csr(indptr, indices, data, walk, cat_bits, tree_offsets, tree_depth, out):
    """``predict_leaf`` on raw CSR rows: the leaf each row reaches in each tree.

    indptr, indices, data : as in ``predict_csr``   # IN
    out : int32 (n_rows, n_trees)                   # OUT node ids within each tree
    """
    no_offsets = np.zeros(0, dtype=np.int32)
    for r in prange(indptr.shape[0] - 1):
        for t in range(tree_offsets.shape[0] - 1):
            leaf = _leaf(indptr, indices, data, no_offsets, False, r, walk, cat_bits,
                         tree_offsets[t], tree_depth[t])
            out[r, t] = leaf - tree_offsets[t]
