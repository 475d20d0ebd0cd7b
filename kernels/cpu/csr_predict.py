"""Prediction over sparse rows: on the training data's sparse bins (``predict_binned_csr``;
``predict_binned_of`` for any sparse layout) and on raw CSR values (``predict_csr``,
``predict_leaf_csr``), never densified.

Each step of a walk reads the row's entry of the node's feature (``sparse_rows.row_bin``
for bins: a binary search of a CSR row's entries, or a bundle's code decoded;
``entry_value`` for raw rows); an absent entry is missing and goes the node's default
way. The decisions are ``predict.py``'s, so a sparse row reaches the leaf its dense form
(NaN where entries are absent) reaches.
"""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from .tree_walk import categorical_goes_left
from .sparse_rows import feature_offsets_of, row_bin

_PREDICT_BLOCK = 64  # rows walked through one tree together (tree_walk.py's block)


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
def _binned_leaf(matrix, r, walk, cat_bits, base, depth):
    """Global node id of binned row ``r``'s leaf in the tree whose root is ``base``."""
    offsets = feature_offsets_of(matrix)
    node = base
    for _ in range(depth):
        at = node * 4
        feature = walk[at]
        flags = walk[at + 2]
        default_left = (flags & 1) == 1
        b = row_bin(matrix, r, feature)
        missing = b == offsets[feature + 1] - offsets[feature]
        if flags & 2:
            x = np.float32(np.nan) if missing else np.float32(b)
            go_left = categorical_goes_left(x, default_left, cat_bits, walk[at + 3])
        elif missing:
            go_left = default_left
        else:
            go_left = b <= walk[at + 3]
        node = base + walk[at + 1] + (0 if go_left else 1)
    return node


@helper
def _raw_leaf(indptr, indices, data, r, walk, cat_bits, base, depth):
    """Global node id of raw CSR row ``r``'s leaf in the tree whose root is ``base``."""
    thresholds = walk.view(np.float32)
    node = base
    for _ in range(depth):
        at = node * 4
        flags = walk[at + 2]
        default_left = (flags & 1) == 1
        x = entry_value(indptr, indices, data, r, walk[at])
        if flags & 2:
            go_left = categorical_goes_left(x, default_left, cat_bits, walk[at + 3])
        elif np.isnan(x):
            go_left = default_left
        else:
            go_left = x < thresholds[at + 3]
        node = base + walk[at + 1] + (0 if go_left else 1)
    return node


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
    predict_binned_of((indptr, slots, feature_offsets), rows, walk, cat_bits, value,
                      tree_offsets, tree_group, tree_depth, out)


@helper(parallel=True)
def predict_binned_of(matrix, rows, walk, cat_bits, value, tree_offsets, tree_group,
                      tree_depth, out):
    """``predict_binned_csr`` over any sparse layout: blocks of rows in parallel, each row
    through every tree in order (its sum in the same order on any thread count)."""
    n_blocks = (rows.shape[0] + _PREDICT_BLOCK - 1) // _PREDICT_BLOCK
    for block in prange(n_blocks):
        _binned_block(np.uint64(block), matrix, rows, walk, cat_bits, value, tree_offsets,
                      tree_group, tree_depth, out)


@helper
def _binned_block(block, matrix, rows, walk, cat_bits, value, tree_offsets, tree_group,
                  tree_depth, out):
    lo = block * _PREDICT_BLOCK
    hi = min(lo + _PREDICT_BLOCK, rows.shape[0])
    for t in range(tree_offsets.shape[0] - 1):
        for i in range(lo, hi):
            r = rows[i]
            leaf = _binned_leaf(matrix, r, walk, cat_bits, tree_offsets[t], tree_depth[t])
            out[r, tree_group[t]] += value[leaf]


@kernel(parallel=True)
def predict_csr(indptr, indices, data, walk, cat_bits, value, tree_offsets, tree_group,
                tree_depth, out):
    """``predict`` on raw CSR rows (absent entries missing): every tree's leaf value added.

    indptr : int64 (n_rows + 1,); indices : int32 (nnz,), each row's increasing
    data : float32 (nnz,)                           # IN  finite values
    walk ... tree_depth : as in ``predict`` (``Forest.walk``)
    out : float64 (n_rows, n_groups)                # IN/OUT
    """
    n_blocks = (indptr.shape[0] - 1 + _PREDICT_BLOCK - 1) // _PREDICT_BLOCK
    for block in prange(n_blocks):
        _raw_block(np.uint64(block), indptr, indices, data, walk, cat_bits, value,
                   tree_offsets, tree_group, tree_depth, out)


@helper
def _raw_block(block, indptr, indices, data, walk, cat_bits, value, tree_offsets, tree_group,
               tree_depth, out):
    lo = block * _PREDICT_BLOCK
    hi = min(lo + _PREDICT_BLOCK, indptr.shape[0] - 1)
    for t in range(tree_offsets.shape[0] - 1):
        for r in range(lo, hi):
            leaf = _raw_leaf(indptr, indices, data, r, walk, cat_bits, tree_offsets[t],
                             tree_depth[t])
            out[r, tree_group[t]] += value[leaf]


@kernel(parallel=True)
def predict_leaf_csr(indptr, indices, data, walk, cat_bits, tree_offsets, tree_depth, out):
    """``predict_leaf`` on raw CSR rows: the leaf each row reaches in each tree.

    indptr, indices, data : as in ``predict_csr``   # IN
    out : int32 (n_rows, n_trees)                   # OUT node ids within each tree
    """
    for r in prange(indptr.shape[0] - 1):
        _leaves_of_row(r, indptr, indices, data, walk, cat_bits, tree_offsets, tree_depth, out)


@helper
def _leaves_of_row(r, indptr, indices, data, walk, cat_bits, tree_offsets, tree_depth, out):
    for t in range(tree_offsets.shape[0] - 1):
        leaf = _raw_leaf(indptr, indices, data, r, walk, cat_bits, tree_offsets[t],
                         tree_depth[t])
        out[r, t] = leaf - tree_offsets[t]
