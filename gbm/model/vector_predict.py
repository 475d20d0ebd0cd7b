"""Margins and leaf indices of vector-leaf trees (``multi_strategy="multi_output_tree"``)
for raw rows, each tree walked once per row.

``predict_leaf`` (or ``predict_leaf_csr``) finds each row's leaf in each tree, walking the
trees' shapes (``Forest`` of output 0: the structure is every output's); then
``add_leaf_vectors`` adds each row's leaf vectors to its margins, tree after tree. Each
output's margin gets the same additions in the same order as walking the tree once per
output (``Forest``'s one-output trees), so the bits are the same; the walk costs one tree
instead of ``k``, and no ``(n_rows, k)`` temporary is made per tree.
"""
import numpy as np

from ..data.sparse import SparseMatrix
from ..tree.structure import Forest


class VectorTrees:
    """Vector-leaf trees packed for ``predict_leaf`` and ``add_leaf_vectors``.

    Attributes
    ----------
    shapes : Forest of the trees' output 0 (the walk tables: every output's structure)
    n_trees : int
    leaf_row : int32 (n_nodes_total,), a leaf's row of ``leaf_values`` (-1 at inner nodes)
    leaf_values : float64 (n_leaves_total, k), the leaves' vectors tree after tree, C order
    """

    def __init__(self, trees):
        self.shapes = Forest([tree.output(0) for tree in trees], [0] * len(trees))
        self.n_trees = len(trees)
        is_leaf = self.shapes.left_child < 0
        self.leaf_row = np.full(is_leaf.shape[0], -1, dtype=np.int32)
        self.leaf_row[is_leaf] = np.arange(int(is_leaf.sum()), dtype=np.int32)
        k = trees[0].n_outputs if trees else 1
        self.leaf_values = np.ascontiguousarray(np.concatenate(
            [tree.value[tree.left_child < 0] for tree in trees])
            if trees else np.empty((0, k)), dtype=np.float64)


def vector_leaves(kernels, X, packed):
    """int32 (n_rows, n_trees): each row's leaf in each tree (node id within the tree) for
    raw rows ``X`` (a float32 matrix or a ``SparseMatrix``); ``packed`` a ``VectorTrees``."""
    shapes = packed.shapes
    leaves = np.empty((X.shape[0], packed.n_trees), dtype=np.int32)
    if isinstance(X, SparseMatrix):
        kernels.predict_leaf_csr(X.indptr, X.indices, X.data, shapes.walk, shapes.cat_bits,
                                 shapes.tree_offsets, shapes.tree_depth, leaves)
    else:
        kernels.predict_leaf(X, shapes.walk, shapes.cat_bits, shapes.tree_offsets,
                             shapes.tree_depth, leaves)
    return leaves


def add_packed_margins(kernels, X, packed, out):
    """``out`` (float64 (n_rows, k), C order) += the leaf vectors of ``packed`` (a
    ``VectorTrees``) for raw rows ``X`` (a float32 matrix or a ``SparseMatrix``)."""
    if packed.n_trees == 0:
        return
    leaves = vector_leaves(kernels, X, packed)
    kernels.add_leaf_vectors(leaves, packed.shapes.tree_offsets, packed.leaf_row,
                             packed.leaf_values, out)


def add_vector_margins(kernels, X, trees, out):
    """``out`` (float64 (n_rows, k), C order) += the leaf vectors of ``trees`` (vector-leaf
    ``Tree``s) for raw rows ``X`` (a float32 matrix or a ``SparseMatrix``)."""
    if trees:
        add_packed_margins(kernels, X, VectorTrees(trees), out)


def add_binned_vector_margins(backend, bins, rows, trees, out):
    """``out[rows]`` (float64 (n_rows, k), C order, on ``backend``) += the leaf vectors of
    ``trees`` for binned rows: ``bins`` a bin matrix of any layout (its ``predict_binned``,
    e.g. an eval set's bins during training), ``rows`` int (m,) the rows to add to.

    The leaves come from ``predict_binned`` itself, with each node's value its id within
    its tree and tree ``t`` adding to column ``t`` of a zero matrix (0 + id is exact), so
    every bin layout and backend that predicts binned rows finds them; then each row's
    leaf vectors are added tree after tree, as the per-output trees would add them.
    """
    if not trees or rows.shape[0] == 0:
        return
    xp = backend.xp
    packed = VectorTrees(trees)
    shapes = packed.shapes
    sizes = np.diff(shapes.tree_offsets)
    node_ids = (np.arange(shapes.tree_offsets[-1]) - np.repeat(shapes.tree_offsets[:-1], sizes)
                ).astype(np.float64)
    found = xp.zeros((out.shape[0], packed.n_trees), dtype=np.float64)
    bins.predict_binned(backend.kernels, rows, shapes.walk_binned, shapes.cat_bits,
                        xp.asarray(node_ids), shapes.tree_offsets,
                        np.arange(packed.n_trees, dtype=np.int32), shapes.tree_depth, found)
    leaves = xp.ascontiguousarray(found[rows].astype(np.int32))
    every_row = rows.shape[0] == out.shape[0] and bool(
        (backend.to_host(rows) == np.arange(out.shape[0])).all())
    part = out if every_row else xp.ascontiguousarray(out[rows])
    backend.kernels.add_leaf_vectors(leaves, shapes.tree_offsets, packed.leaf_row,
                                     packed.leaf_values, part)
    if not every_row:
        out[rows] = part
