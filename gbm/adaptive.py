"""Leaf values refreshed to quantiles of residuals (XGBoost's "adaptive trees").

For the absolute and quantile losses the Newton step of a leaf is a poor estimate of the
loss's minimiser (the hessian is constant and the gradient only a sign), so, as XGBoost
does, each new leaf's value is replaced by the alpha-quantile of ``y - margin`` over the
training rows that reach it, times the learning rate. Rows left out by ``subsample`` do
not count; a leaf that no sampled row reaches keeps its Newton value.
"""
import numpy as np


def quantile(values, alpha, weights=None):
    """The alpha-quantile of ``values`` as XGBoost computes it.

    Without weights: linear interpolation between order statistics at position
    ``alpha * (n + 1)`` (NIST's definition; NumPy's ``method="weibull"``), clamped to the
    smallest and largest value. With weights: the first sorted value whose cumulative
    weight reaches ``alpha`` times the total (a step function, no interpolation).
    NaN for no values.
    """
    n = values.shape[0]
    if n == 0:
        return np.nan
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    if weights is None:
        if alpha <= 1.0 / (n + 1):
            return float(ordered[0])
        if alpha >= n / (n + 1):
            return float(ordered[-1])
        x = alpha * (n + 1)
        k = int(np.floor(x)) - 1
        d = x - 1 - k
        return float(ordered[k] + d * (ordered[k + 1] - ordered[k]))
    cdf = np.cumsum(weights[order])
    idx = min(int(np.searchsorted(cdf, cdf[-1] * alpha, side="left")), n - 1)
    return float(ordered[idx])


def refresh_leaves(values, rows, starts, ends, residual, alpha, learning_rate, weights=None,
                   kept=None):
    """New leaf values: ``learning_rate`` times the alpha-quantile of ``residual`` in each leaf.

    Parameters
    ----------
    values : float64 (n_leaves,), the leaves' Newton values (kept for empty leaves)
    rows, starts, ends : the grower's row order and each leaf's segment of it
    residual : float64 (n_rows,), ``y - margin`` before this tree
    alpha : float in (0, 1)
    weights : float64 (n_rows,) or None (unweighted quantiles, as XGBoost without weights)
    kept : bool (n_rows,) or None, the rows ``subsample`` drew for this tree

    Returns
    -------
    float64 (n_leaves,)
    """
    out = np.array(values, dtype=np.float64)
    for i, (start, end) in enumerate(zip(starts, ends)):
        leaf_rows = rows[start:end]
        if kept is not None:
            leaf_rows = leaf_rows[kept[leaf_rows]]
        if leaf_rows.shape[0] == 0:
            continue
        w = None if weights is None else weights[leaf_rows]
        out[i] = learning_rate * quantile(residual[leaf_rows], alpha, w)
    return out
