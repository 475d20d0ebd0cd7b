"""A model's trees tested on bins of given edges: the margins of a model being continued
on rows binned before the fit (a ``QuantileDMatrix``), which hold no raw values.

A numeric split sends ``x < threshold`` left, and a row's bin is the number of its
feature's cuts ``<= x`` (``gbm.bins.binning``), so when the threshold is the cut
``cuts[f][b]``, "bin ``<= b`` goes left" is the same test, row for row::

    bin:    ... | b: c[b-1] <= x < c[b] | b+1: c[b] <= x < ... |
    split:                 left         |     right (x >= threshold = c[b])

A threshold between two cuts falls inside a bin whose rows lie on both sides of it: the
bins cannot say which way they go, so such a model is refused, never approximated. A
split of split bin -1 (threshold float32's lowest value: no finite value goes left) stays
-1; categorical splits test the category codes, which are their bins.
"""
import numpy as np

from ..data.inputs import check_base_margin
from .structure import Forest, Tree


def rebinned_forest(trees, groups, weights, cuts, feature_names=None, what="init_model"):
    """A ``Forest`` of ``trees`` whose ``walk_binned`` tests bins of the edges ``cuts``.

    Parameters
    ----------
    trees, groups : sequences (n_trees,) of ``Tree`` and int: the trees and their output
        groups
    weights : sequence of float (n_trees,) or None: DART's tree weights
    cuts : sequence of float32 arrays (n_features,), the bins' edges (``RaggedCuts``)
    feature_names : list of str, optional, for the message
    what : str, the model's name in the message

    Raises ``ValueError`` when a numeric split's threshold is not one of its feature's
    cuts (the bins cannot tell its rows apart).
    """
    return Forest([rebinned_tree(t, i, cuts, feature_names, what) for i, t in enumerate(trees)],
                  groups, weights)


def rebinned_trees(trees, cuts, feature_names=None, what="init_model"):
    """``trees`` (a list of ``Tree``, vector leaves or not) with each numeric split's
    ``split_bin`` the index of its threshold among the cuts ``cuts``, unpacked (e.g. for
    ``gbm.model.vector_predict``, which walks a vector-leaf tree once for all outputs).
    Raises ``ValueError`` as ``rebinned_forest`` does."""
    return [rebinned_tree(t, i, cuts, feature_names, what) for i, t in enumerate(trees)]


def rebinned_tree(tree, index, cuts, feature_names=None, what="init_model"):
    """``tree`` (tree ``index`` of ``what``) with each numeric split's ``split_bin`` the
    index of its threshold among its feature's cuts (``tree`` itself when they are);
    raises ``ValueError`` as ``rebinned_forest`` does."""
    split_bin = tree.split_bin.copy()
    lowest = np.finfo(np.float32).min
    for node in np.flatnonzero((tree.left_child >= 0) & (tree.split_type == 0)).tolist():
        f = int(tree.split_feature[node])
        t = np.float32(tree.threshold[node])
        edges = cuts[f]
        b = int(np.searchsorted(edges, t, side="left"))
        if b < edges.shape[0] and edges[b] == t:
            split_bin[node] = b
        elif t == lowest:  # no finite value goes left: no bin either
            split_bin[node] = -1
        else:
            name = feature_names[f] if feature_names is not None else f"f{f}"
            raise ValueError(
                f"{what}'s tree {index} splits feature {name!r} at {float(t)!r} (node {node}), "
                "which is not one of the QuantileDMatrix's bin edges for that feature: its "
                "rows hold bins, not values, and a bin holding values on both sides of the "
                "threshold cannot be sent left or right exactly. Continue on the raw data "
                "(a DMatrix or arrays), or give the rows their starting margins as "
                f"base_margin (the {what}'s predict(X, output_margin=True)) and train "
                f"without {what}; a QuantileDMatrix binned with the edges the model was "
                "trained on (the same data and max_bin) continues it exactly")
    if np.array_equal(split_bin, tree.split_bin):
        return tree
    fields = {name: getattr(tree, name) for name in
              ("split_feature", "threshold", "default_left", "left_child", "right_child",
               "value", "gain", "cover")}
    return Tree(split_bin=split_bin, split_type=tree.split_type, cat_bits=tree.cat_bits,
                **fields)


def binned_margins(backend, matrix, forest, base, rows_start, n_groups):
    """float64 (n_rows, n_groups) on the device: each row's start plus the trees of
    ``forest`` (from ``rebinned_forest``) walked on the bin matrix ``matrix``, tree by tree
    in order as ``predict`` adds them on raw values, so the same bits.

    base : float64 (n_groups,), the model's base margin; rows_start : the rows' own
    starts (anything ``check_base_margin`` takes), or None
    """
    xp = backend.xp
    n_rows = matrix.n_rows
    out = start_margins(backend, n_rows, base, rows_start, n_groups)
    with backend.threads(n_rows * matrix.row_cost * max(1, forest.n_trees // 8)):
        matrix.predict_binned(backend.kernels, xp.arange(n_rows, dtype=np.int32),
                              forest.walk_binned, forest.cat_bits, forest.value,
                              forest.tree_offsets, forest.tree_group, forest.tree_depth, out)
    return out


def start_margins(backend, n_rows, base, rows_start, n_groups):
    """float64 (n_rows, n_groups), C order, on the device: each row's margin before any
    tree, ``base`` (float64 (n_groups,), the model's base margin) on every row, or the
    rows' own starts ``rows_start`` (anything ``check_base_margin`` takes) when given."""
    xp = backend.xp
    if rows_start is None:
        return xp.tile(xp.asarray(base, dtype=np.float64), (n_rows, 1))
    start = check_base_margin(backend.to_host(rows_start), n_rows, n_groups)
    return xp.ascontiguousarray(xp.asarray(start, dtype=np.float64).T)
