"""Explaining predictions: exact TreeSHAP feature contributions (``pred_contribs``)."""
import numpy as np


def predict_contributions(booster, X, forest, backend):
    """Each feature's contribution to each row's margin, and the bias, as XGBoost's
    ``predict(..., pred_contribs=True)`` gives them.

    Parameters
    ----------
    booster : gbm.Booster
    X : float32 (n_rows, n_features), C order, already checked
    forest : gbm.tree.structure.Forest, the trees to explain (an iteration range's)
    backend : gbm.runtime.backend.Backend, where it runs (kernels and threads)

    Returns
    -------
    float64 (n_rows, n_features + 1) for one output group, else
    (n_rows, n_groups, n_features + 1). Column ``f`` is feature ``f``'s SHAP value
    (Lundberg, Erion & Lee 2018, exact TreeSHAP with node covers as weights); the last
    column is the bias: the base margin plus every tree's cover-weighted mean leaf value.
    Every row's columns sum to its margin (``output_margin=True``), up to rounding.
    """
    n_rows, n_features = X.shape
    out = np.zeros((n_rows, booster.n_groups, n_features + 1), dtype=np.float64)
    out[:, :, n_features] = booster.base_margin
    # a row costs about (leaves x path length^2) per tree: far more than a plain prediction
    with backend.threads(n_rows * max(1, forest.split_feature.shape[0]) * 4) as n_threads:
        complete = backend.kernels.tree_shap(
            X, forest.split_feature, forest.threshold, forest.default_left, forest.split_type,
            forest.cat_row, forest.cat_bits, forest.left_child, forest.value, forest.cover,
            forest.tree_offsets, forest.tree_group, forest.tree_depth, n_threads, out)
    if not complete:  # cannot happen for a Forest: its depths come from the trees themselves
        raise RuntimeError("pred_contribs: a tree is deeper than the forest's tree_depth says")
    return out[:, 0, :].copy() if booster.n_groups == 1 else out
