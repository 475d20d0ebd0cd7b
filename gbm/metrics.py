"""Evaluation metrics on transformed predictions (probabilities for classification).

Each takes ``(y, pred, w)`` with ``pred`` of shape (n,) or (n, n_classes) and returns a
float; all are weighted means, as in XGBoost.
"""
import numpy as np

_EPS = 1e-15


def rmse(y, pred, w):
    return float(np.sqrt(np.average((pred - y) ** 2, weights=w)))


def logloss(y, pred, w):
    p = np.clip(pred, _EPS, 1 - _EPS)
    return float(np.average(-(y * np.log(p) + (1 - y) * np.log(1 - p)), weights=w))


def mlogloss(y, pred, w):
    p = np.clip(pred[np.arange(y.shape[0]), y.astype(np.int64)], _EPS, 1.0)
    return float(np.average(-np.log(p), weights=w))


METRICS = {"rmse": rmse, "logloss": logloss, "mlogloss": mlogloss}
