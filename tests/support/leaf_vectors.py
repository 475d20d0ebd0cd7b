"""Random inputs of ``add_leaf_vectors`` (``kernels/*/vector_predict.py``): packed trees of
1..``max_nodes`` nodes each, about 60% of them leaves (every tree's root one, so every tree
has a leaf), each row's leaf in each tree, leaf vectors spread over eight decades."""
import numpy as np


def leaf_vector_inputs(rng, n_rows, n_trees, k, max_nodes):
    """``(leaves, tree_offsets, leaf_row, leaf_values, start)``: int32 (n_rows, n_trees),
    int64 (n_trees + 1,), int32 (n_nodes,), float64 (n_leaves, k), float64 (n_rows, k)."""
    sizes = rng.integers(1, max_nodes + 1, n_trees)
    tree_offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    is_leaf = rng.random(int(tree_offsets[-1])) < 0.6
    is_leaf[tree_offsets[:-1]] = True
    leaf_row = np.where(is_leaf, np.cumsum(is_leaf) - 1, -1).astype(np.int32)
    leaf_values = rng.normal(size=(int(is_leaf.sum()), k)) * 10.0 ** rng.integers(-4, 4, k)
    leaves = np.empty((n_rows, n_trees), dtype=np.int32)
    for t in range(n_trees):
        own = np.flatnonzero(is_leaf[tree_offsets[t]:tree_offsets[t + 1]])
        leaves[:, t] = rng.choice(own, n_rows)
    return leaves, tree_offsets, leaf_row, leaf_values, rng.normal(size=(n_rows, k))
