"""Margins updated by a new tree on the binned training rows: the rows a tree's growth
did not place (those left out of its row sample), and the index of every row."""
import numpy as np

from .structure import Forest


def add_tree(backend, data, tree, rows, column):
    """``column[rows] +=`` the tree's leaf values for those binned rows (``data``: the
    fit's ``TreeData``; ``column``: float64 (n_rows,), one output group's margins)."""
    forest = Forest([tree], [0])
    backend.kernels.predict_binned(data.bins, rows, data.n_bins, forest.walk_binned,
                                   forest.cat_bits, forest.value, forest.tree_offsets,
                                   forest.tree_group, forest.tree_depth, column.reshape(-1, 1))


def all_rows(backend, n):
    """int32 ``0 .. n - 1`` on the device, made once per backend (read, never written)."""
    if backend.workspace is None:
        return backend.xp.arange(n, dtype=np.int32)
    held = backend.workspace.get("all_rows")
    if held is None or held.shape[0] != n:
        held = backend.workspace["all_rows"] = backend.xp.arange(n, dtype=np.int32)
    return held
