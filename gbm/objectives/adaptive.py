"""Leaf values refreshed to quantiles of residuals (XGBoost's "adaptive trees").

For the absolute and quantile losses the Newton step of a leaf is a poor estimate of the
loss's minimiser (the hessian is constant and the gradient only a sign), so, as XGBoost
does, each new leaf's value is replaced by the alpha-quantile of ``y - margin`` over the
training rows that reach it, times the learning rate. Rows left out by ``subsample`` do
not count; a leaf that no sampled row reaches keeps its Newton value.
"""
import numpy as np

from ..collective import LOCAL


def quantile(values, alpha, weights=None):
    """The alpha-quantile of ``values`` as XGBoost computes it.

    Without weights: linear interpolation between order statistics at position
    ``alpha * (n + 1)`` (NIST's definition; NumPy's ``method="weibull"``), clamped to the
    smallest and largest value. With weights: the first sorted value whose cumulative
    weight reaches ``alpha`` times the total (a step function, no interpolation); equal
    values are ordered by weight, so the result does not depend on the input order.
    NaN for no values.
    """
    n = values.shape[0]
    if n == 0:
        return np.nan
    order = np.argsort(values, kind="stable") if weights is None else np.lexsort((weights, values))
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


def gathered_quantile(values, alpha, weights=None, collective=LOCAL):
    """``quantile`` of every rank's values (gathered: the exact quantile of the whole)."""
    if collective.world_size > 1:
        parts = collective.allgather((values, weights))
        values = np.concatenate([p[0] for p in parts])
        weights = None if weights is None else np.concatenate([p[1] for p in parts])
    return quantile(values, alpha, weights)


def refresh_leaves(values, rows, starts, ends, residual, alpha, learning_rate, weights=None,
                   collective=LOCAL):
    """New leaf values: ``learning_rate`` times the alpha-quantile of ``residual`` in each
    leaf, over the leaf's rows on every rank.

    Parameters
    ----------
    values : float64 (n_leaves,), the leaves' Newton values (kept for empty leaves)
    rows, starts, ends : the grower's rows (the tree's row sample) and each leaf's segment
    residual : float64 (n_rows,), ``y - margin`` before this tree
    alpha : float in (0, 1)
    weights : float64 (n_rows,) or None (unweighted quantiles, as XGBoost without weights)

    Returns
    -------
    float64 (n_leaves,)
    """
    leaf = np.repeat(np.arange(len(starts)), np.asarray(ends) - np.asarray(starts))
    taken = np.concatenate([rows[s:e] for s, e in zip(starts, ends)]) if len(starts) else rows[:0]
    parts = [(leaf, residual[taken], None if weights is None else weights[taken])]
    if collective.world_size > 1:  # the leaves' rows of every rank
        parts = collective.allgather(parts[0])
    leaf = np.concatenate([p[0] for p in parts])
    res = np.concatenate([p[1] for p in parts])
    w = None if weights is None else np.concatenate([p[2] for p in parts])
    out = np.array(values, dtype=np.float64)
    order = np.argsort(leaf, kind="stable")
    bounds = np.searchsorted(leaf[order], np.arange(len(starts) + 1))
    for i in range(len(starts)):
        at = order[bounds[i]:bounds[i + 1]]
        if at.shape[0]:
            out[i] = learning_rate * quantile(res[at], alpha, None if w is None else w[at])
    return out
