"""Margins updated by a new tree on the binned training rows: the rows a tree's growth
did not place (those left out of its row sample), and the index of every row; and the
margins of weighted trees (DART) computed again from their start."""
import numpy as np

from .structure import Forest


def add_tree(backend, data, tree, rows, column):
    """``column[rows] +=`` the tree's leaf values for those binned rows (``data``: the
    fit's ``TreeData``; ``column``: float64 (n_rows,), one output group's margins)."""
    forest = Forest([tree], [0])
    data.matrix.predict_binned(backend.kernels, rows, forest.walk_binned, forest.cat_bits,
                               forest.value, forest.tree_offsets, forest.tree_group,
                               forest.tree_depth, column.reshape(-1, 1))


def weighted_margins(backend, data, trees, groups, weights, start, margins):
    """``margins = start +`` each tree's leaf values times its weight, on the binned rows.

    trees, groups, weights : sequences (n_trees,): the trees, their output groups, weights
    start : float64 (n_groups, n_rows), on the device: each row's margin before any tree
    margins : float64 (n_groups, n_rows), C order, on the device   # OUT

    Each output group's column sums its trees in their order, one row at a time, as the
    trees' growth adds them (``predict_binned``), so trees of weight 1 added one round
    after another give these bits too. The cost: every row walks every tree once.
    """
    margins[...] = start
    add_weighted(backend, data, trees, groups, weights, margins)


def add_weighted(backend, data, trees, groups, weights, margins):
    """``margins +=`` each tree's leaf values times its weight, on the binned rows, tree by
    tree in order (``weighted_margins`` without the start): calls one after another add
    the trees as one call would, the same bits."""
    rows = all_rows(backend, margins.shape[1])
    for group in range(margins.shape[0]):
        ids = [i for i, g in enumerate(groups) if g == group]
        if not ids:
            continue
        forest = Forest([trees[i] for i in ids], [0] * len(ids), [weights[i] for i in ids])
        work = data.matrix.n_rows * data.matrix.row_cost * max(1, len(ids) // 8)
        with backend.threads(work):
            data.matrix.predict_binned(backend.kernels, rows, forest.walk_binned,
                                       forest.cat_bits, forest.value, forest.tree_offsets,
                                       forest.tree_group, forest.tree_depth,
                                       margins[group].reshape(-1, 1))


def all_rows(backend, n):
    """int32 ``0 .. n - 1`` on the device, made once per backend (read, never written)."""
    if backend.workspace is None:
        return backend.xp.arange(n, dtype=np.int32)
    held = backend.workspace.get("all_rows")
    if held is None or held.shape[0] != n:
        held = backend.workspace["all_rows"] = backend.xp.arange(n, dtype=np.int32)
    return held
