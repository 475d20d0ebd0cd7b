"""The linear models' all-zero solutions in closed form, from the objectives' definitions
(docs/linear.md), independently of gbm: the least penalty at which no coefficient
survives, and the optimal intercept and objective then.

With every coefficient 0 the margins are the intercepts alone: the squared loss is
minimised by the weighted mean of y, the logistic loss by the weighted log-odds (binary)
or the log weighted class frequencies (multinomial, up to a common shift). The
coefficients are 0 at the optimum exactly when the loss gradient there is within the L1
penalty (``|G_j| <= l1`` for every column), which gives the thresholds below.
"""
import numpy as np


def least_squares_null(y, w):
    """(intercept, objective) of ``1/(2 sum w) sum_i w_i |y_i - b|^2`` (Lasso, ElasticNet)
    at its optimum ``b``: float for a 1-d ``y``, (n_targets,) for a 2-d one."""
    mean = w @ y / w.sum()
    residual = y - mean
    squares = residual * residual if y.ndim == 1 else (residual * residual).sum(axis=1)
    return mean, float(w @ squares / (2.0 * w.sum()))


def least_squares_alpha_max(X, y, w):
    """The least ``alpha * l1_ratio`` at which Lasso / ElasticNet keep no coefficient."""
    mean, _ = least_squares_null(y, w)
    gradient = X.T @ (w[:, None] * np.reshape(y - mean, (y.shape[0], -1)))
    return float(np.abs(gradient).max() / w.sum())


def class_weights_of(y, w):
    """(classes, summed weight of each class)."""
    classes, index = np.unique(y, return_inverse=True)
    return classes, np.bincount(index, weights=w)


def logistic_null(y, w, C):
    """(intercept_, objective) of ``C sum_i w_i loss_i`` at the intercepts' optimum:
    intercept_ (1,) for two classes (the log-odds), else (n_classes,) centred."""
    _, totals = class_weights_of(y, w)
    share = totals / totals.sum()
    objective = -C * float(totals @ np.log(share))
    if totals.shape[0] == 2:
        return np.array([np.log(totals[1] / totals[0])]), objective
    logs = np.log(totals)
    return logs - logs.mean(), objective


def logistic_C_max(X, y, w, l1_ratio):
    """The largest C at which LogisticRegression with an L1 part ``l1_ratio`` keeps no
    coefficient: ``C |G_j| <= l1_ratio`` with G the loss gradient per unit C."""
    classes, totals = class_weights_of(y, w)
    onehot = (y[:, None] == classes[None, :]).astype(np.float64)
    residual = w[:, None] * (totals / totals.sum() - onehot)
    gradient = X.T @ (residual[:, 1:] if classes.shape[0] == 2 else residual)
    return l1_ratio / float(np.abs(gradient).max())
