"""Prediction: rows walked through packed trees (``gbm.tree.structure.Forest``), on raw values or on
the training data's bins; numeric and categorical splits share one walk."""
import numpy as np
from numba import prange

from ..jit import helper, kernel
from .tree_walk import PREDICT_BLOCK, add_leaf_values_of_rows, walk_block
from .views import flat


@kernel
def predict(X, walk, cat_bits, value, tree_offsets, tree_group, tree_depth, out):
    """Add every tree's leaf value to ``out`` for raw float32 rows (NaN = missing).

    X : float32 (n_rows, n_features), C order    # IN; a row goes left when x < threshold;
                                                 #     categorical columns hold codes
    walk : int32 (4 * n_nodes_total,)            # IN  gbm.tree.structure.Forest.walk (layout.py)
    cat_bits : uint32 (n_sets, n_words)          # IN  the categorical nodes' sets
    value : float64 (n_nodes_total,)             # IN  leaf values
    tree_offsets : int64 (n_trees + 1,); tree_group, tree_depth : int32 (n_trees,)  # IN
    out : float64 (n_rows, n_groups)             # IN/OUT
    """
    n_rows, n_features = X.shape
    rows = np.arange(n_rows)
    add_leaf_values_of_rows(flat(X), rows, n_features, walk, cat_bits,
                            value, tree_offsets, tree_group, tree_depth, False,
                            np.zeros(0, dtype=np.int32), out)


@kernel
def predict_binned(bins, rows, n_bins, walk, cat_bits, value, tree_offsets, tree_group,
                   tree_depth, out):
    """Add every tree's leaf value to ``out[rows]`` for binned rows (the training data's bins).

    bins : uint8/uint16 (n_rows, n_features), C order   # IN
    rows : int32 or int64 (m,)                   # IN  the rows to predict
    n_bins : int32 (n_features,)                 # IN  bin n_bins[f] = missing
    walk : int32 (4 * n_nodes_total,)            # IN  gbm.tree.structure.Forest.walk_binned: split bins
    other arguments as in ``predict``; only ``out[rows]`` changes
    """
    n_rows, n_features = bins.shape
    add_leaf_values_of_rows(flat(bins), rows, n_features, walk,
                            cat_bits, value, tree_offsets, tree_group, tree_depth, True, n_bins,
                            out)


@kernel(parallel=True)
def predict_leaf(X, walk, cat_bits, tree_offsets, tree_depth, out):
    """The leaf each row reaches in each tree, as the node id within its tree.

    X, walk, cat_bits, tree_offsets, tree_depth as in ``predict``   # IN
    out : int32 (n_rows, n_trees)                                   # OUT
    """
    n_rows, n_features = X.shape
    values = flat(X)
    rows = np.arange(n_rows)
    n_blocks = (n_rows + PREDICT_BLOCK - 1) // PREDICT_BLOCK
    for block in prange(n_blocks):
        _leaves_of_block(np.uint64(block), values, rows, n_features, walk, cat_bits,
                         tree_offsets, tree_depth, out)


@helper
def _leaves_of_block(block, values, rows, n_features, walk, cat_bits, tree_offsets, tree_depth,
                     out):
    """One block of rows: the leaf (id within its tree) they reach in every tree."""
    lo = block * PREDICT_BLOCK
    m = min(lo + PREDICT_BLOCK, rows.shape[0]) - lo
    nodes = np.empty(PREDICT_BLOCK, dtype=np.uint64)
    row_offsets = np.empty(PREDICT_BLOCK, dtype=np.uint64)
    no_bins = np.zeros(0, dtype=np.int32)
    for t in range(tree_offsets.shape[0] - 1):
        walk_block(values, rows, n_features, lo, m, walk, cat_bits, tree_offsets, tree_depth,
                   t, False, no_bins, nodes, row_offsets)
        for i in range(m):
            out[lo + i, t] = np.int64(nodes[i]) - tree_offsets[t]
