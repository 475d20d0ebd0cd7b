"""Vector-leaf margins from leaf indices: each row's leaf vectors (one per tree) added to
its row of margins, tree after tree.

Rows in parallel, each row's trees in order, so every output's margin gets the same float
additions in the same order on any thread count (and as NumPy's ``out += values[leaves]``
tree by tree). A row's margins (``k`` float64) stay in cache while all its trees add to
them: one pass over ``out``, and no ``(n_rows, k)`` temporary per tree.
"""
import numpy as np
from numba import prange

from ..jit import helper, kernel

_ROWS_PER_TASK = 64  # rows per parallel task: few tasks, each long enough to pay its start


@kernel(parallel=True)
def add_leaf_vectors(leaves, tree_offsets, leaf_row, leaf_values, out):
    """``out[i] += leaf_values[leaf_row[tree_offsets[t] + leaves[i, t]]]`` for every tree
    ``t`` in order.

    leaves : int32 (n_rows, n_trees)             # IN  each row's leaf, node id within tree t
                                                 #     (``predict_leaf``'s output)
    tree_offsets : int64 (n_trees + 1,)          # IN  tree t's root in the packed nodes
    leaf_row : int32 (n_nodes_total,)            # IN  a leaf's row of ``leaf_values``
    leaf_values : float64 (n_leaves_total, k)    # IN  the leaves' vectors, C order
    out : float64 (n_rows, k), C order           # IN/OUT
    """
    n_rows = leaves.shape[0]
    n_tasks = (n_rows + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK
    for task in prange(n_tasks):
        lo = task * _ROWS_PER_TASK
        _add_rows(leaves, tree_offsets, leaf_row, leaf_values, out, lo,
                  min(lo + _ROWS_PER_TASK, n_rows))


@helper
def _add_rows(leaves, tree_offsets, leaf_row, leaf_values, out, lo, hi):
    """Rows ``lo .. hi``: each row's trees added in order."""
    k = np.uint64(out.shape[1])
    for i in range(lo, hi):
        row = out[i]
        for t in range(leaves.shape[1]):
            vector = leaf_values[np.uint64(leaf_row[tree_offsets[t] + leaves[i, t]])]
            for j in range(k):  # unsigned: no wrap-around test, the loop vectorises
                row[j] += vector[j]
