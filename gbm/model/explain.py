"""Explaining predictions: each feature's share of each row's margin (``pred_contribs``:
exact TreeSHAP, or Saabas's path attribution with ``approx_contribs``) and the SHAP
interaction values of each pair of features (``pred_interactions``)."""
import numpy as np

from ..data.sparse import SparseMatrix

_DENSE_BLOCK_BYTES = 16 << 20  # a sparse matrix's rows are explained a block of rows at a time


def _run(kernel, X, forest, backend, out, work):
    """Add ``kernel``'s values (a ``gbm.kernels`` explanation kernel) for ``forest`` to
    ``out``, with the threads ``work`` (an estimate of the cost) deserves. A
    ``SparseMatrix`` goes through in blocks of rows, each made dense (NaN where entries
    are absent) only for its turn: the output, a value per row and feature, is larger
    than a block."""
    if isinstance(X, SparseMatrix):
        step = max(1, _DENSE_BLOCK_BYTES // (4 * max(1, X.shape[1])))
        for lo in range(0, X.shape[0], step):
            hi = min(lo + step, X.shape[0])
            _run(kernel, X.dense_rows(lo, hi), forest, backend, out[lo:hi],
                 work * (hi - lo) // max(1, X.shape[0]))
        return
    with backend.threads(work) as n_threads:
        complete = kernel(
            X, forest.split_feature, forest.threshold, forest.default_left, forest.split_type,
            forest.cat_row, forest.cat_bits, forest.left_child, forest.value, forest.cover,
            forest.tree_offsets, forest.tree_group, forest.tree_depth, n_threads, out)
    if not complete:  # cannot happen for a Forest: its depths come from the trees themselves
        raise RuntimeError("explaining predictions: a tree is deeper than the forest's "
                           "tree_depth says")


def predict_contributions(booster, X, forest, backend, approximate=False):
    """Each feature's contribution to each row's margin, and the bias, as XGBoost's
    ``predict(..., pred_contribs=True, approx_contribs=approximate)`` gives them.

    Parameters
    ----------
    booster : gbm.Booster
    X : float32 (n_rows, n_features), C order, or a ``SparseMatrix``; already checked
    forest : gbm.tree.structure.Forest, the trees to explain (an iteration range's)
    backend : gbm.runtime.backend.Backend, where it runs (kernels and threads)
    approximate : bool
        False: exact SHAP values (Lundberg, Erion & Lee 2018, TreeSHAP with node covers
        as weights). True: Saabas's attribution, XGBoost's ``approx_contribs``: along the
        row's path, each split's feature gets the change of the cover-weighted expected
        value from the node to the child the row takes.

    Returns
    -------
    float64 (n_rows, n_groups, n_features + 1). Column ``f`` is feature ``f``'s share;
    the last column is the bias: the base margin plus every tree's cover-weighted mean
    leaf value. Every row's columns sum to its margin (``output_margin=True``), up to
    rounding.
    """
    n_rows, n_features = X.shape
    out = np.zeros((n_rows, booster.n_groups, n_features + 1), dtype=np.float64)
    out[:, :, n_features] = booster.base_margin
    n_nodes = max(1, forest.split_feature.shape[0])
    if approximate:
        _run(backend.kernels.tree_saabas, X, forest, backend, out, n_rows * n_nodes)
    else:
        # a row costs about (leaves x path length^2) per tree: far more than a prediction
        _run(backend.kernels.tree_shap, X, forest, backend, out, n_rows * n_nodes * 4)
    return out


def predict_interactions(booster, X, forest, backend, approximate=False):
    """SHAP interaction values, as XGBoost's ``predict(..., pred_interactions=True,
    approx_contribs=approximate)`` gives them.

    Parameters as ``predict_contributions``'s.

    Returns
    -------
    float64 (n_rows, n_groups, n_features + 1, n_features + 1). Off the diagonal,
    ``[r, g, i, j]`` is the Shapley interaction index of features ``i`` and ``j``
    (Lundberg, Erion & Lee 2018), half their joint effect: ``[r, g, i, j]`` and
    ``[r, g, j, i]`` together make it whole. The diagonal ``[r, g, i, i]`` is feature
    ``i``'s SHAP value less its interactions, so that ``[r, g, i, :]`` sums to
    ``pred_contribs``'s ``[r, g, i]``; ``[r, g, n_features, n_features]`` is the bias, and
    the matrix sums to the row's margin. With ``approximate`` (as XGBoost), there are no
    interactions: the diagonal holds Saabas's contributions.
    """
    n_rows, n_features = X.shape
    width = n_features + 1
    if approximate:
        contributions = predict_contributions(booster, X, forest, backend, approximate=True)
        out = np.zeros((n_rows, booster.n_groups, width, width), dtype=np.float64)
        diagonal = np.arange(width)
        out[:, :, diagonal, diagonal] = contributions
        return out
    out = np.zeros((n_rows, booster.n_groups, width, width), dtype=np.float64)
    out[:, :, n_features, n_features] = booster.base_margin
    # per tree, one TreeSHAP walk and two per feature the tree splits on
    n_nodes = max(1, forest.split_feature.shape[0])
    _run(backend.kernels.tree_shap_interactions, X, forest, backend, out,
         n_rows * n_nodes * 4 * (1 + 2 * min(n_features, 32)))
    return out
