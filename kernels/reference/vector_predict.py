"""Vector-leaf margins from leaf indices (twin of ``cpu/vector_predict.py``): each tree's
leaf vector added to its row's margins, tree after tree."""


def add_leaf_vectors(leaves, tree_offsets, leaf_row, leaf_values, out):
    """``cpu/vector_predict.py``'s ``add_leaf_vectors`` (the same arguments), a tree at a
    time over every row."""
    for t in range(leaves.shape[1]):
        out += leaf_values[leaf_row[tree_offsets[t] + leaves[:, t]]]
