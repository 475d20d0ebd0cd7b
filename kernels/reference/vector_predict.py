"""Vector-leaf margins from leaf indices (twin of ``cpu/vector_predict.py``): each tree's
leaf vector added to its row's margins, tree after tree."""


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
    for t in range(leaves.shape[1]):
        out += leaf_values[leaf_row[tree_offsets[t] + leaves[:, t]]]
