"""Margins of vector-leaf trees (``multi_strategy="multi_output_tree"``) for raw rows:
each tree walked once per row (its leaf index), then the leaf's vector added to the row's
margins, tree after tree. Each output's margin gets the same additions in the same order
as walking the tree once per output (``Forest``'s one-output trees), so the bits are the
same; the walk costs one tree instead of ``k``."""
import numpy as np

from ..data.sparse import SparseMatrix
from ..tree.structure import Forest


def add_vector_margins(kernels, X, trees, out):
    """``out`` (float64 (n_rows, k)) += the leaf vectors of ``trees`` (vector-leaf
    ``Tree``s) for raw rows ``X`` (a float32 matrix or a ``SparseMatrix``)."""
    if not trees:
        return
    shapes = Forest([tree.output(0) for tree in trees], [0] * len(trees))
    leaves = np.empty((X.shape[0], len(trees)), dtype=np.int32)
    if isinstance(X, SparseMatrix):
        kernels.predict_leaf_csr(X.indptr, X.indices, X.data, shapes.walk, shapes.cat_bits,
                                 shapes.tree_offsets, shapes.tree_depth, leaves)
    else:
        kernels.predict_leaf(X, shapes.walk, shapes.cat_bits, shapes.tree_offsets,
                             shapes.tree_depth, leaves)
    for t, tree in enumerate(trees):
        out += tree.value[leaves[:, t]]
