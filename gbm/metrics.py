"""Evaluation metrics on transformed predictions (probabilities for classification).

Each takes ``(y, pred, w)`` with ``pred`` of shape (n,) or (n, n_classes) and returns a
float; all are weighted means, as in XGBoost.
"""
import numpy as np
from scipy.special import gammaln

_EPS = 1e-15


def rmse(y, pred, w):
    return float(np.sqrt(np.average((pred - y) ** 2, weights=w)))


def logloss(y, pred, w):
    p = np.clip(pred, _EPS, 1 - _EPS)
    return float(np.average(-(y * np.log(p) + (1 - y) * np.log(1 - p)), weights=w))


def mlogloss(y, pred, w):
    p = np.clip(pred[np.arange(y.shape[0]), y.astype(np.int64)], _EPS, 1.0)
    return float(np.average(-np.log(p), weights=w))


def merror(y, pred, w):
    """Share of rows whose predicted class (index, or argmax of probabilities) is wrong."""
    label = pred if pred.ndim == 1 else np.argmax(pred, axis=1)
    return float(np.average(label != y, weights=w))


def poisson_nloglik(y, pred, w):
    p = np.maximum(pred, _EPS)
    return float(np.average(p - y * np.log(p) + gammaln(y + 1.0), weights=w))


def gamma_nloglik(y, pred, w):
    p = np.maximum(pred, _EPS)
    return float(np.average(y / p + np.log(p), weights=w))


def tweedie_nloglik(rho):
    def metric(y, pred, w):
        p = np.maximum(pred, _EPS)
        a = y * np.exp((1.0 - rho) * np.log(p)) / (1.0 - rho)
        b = np.exp((2.0 - rho) * np.log(p)) / (2.0 - rho)
        return float(np.average(-a + b, weights=w))

    return metric


METRICS = {"rmse": rmse, "logloss": logloss, "mlogloss": mlogloss, "merror": merror,
           "poisson-nloglik": poisson_nloglik, "gamma-nloglik": gamma_nloglik}


def get_metric(name):
    """The metric function called ``name`` (``tweedie-nloglik@rho`` carries its power)."""
    if name.startswith("tweedie-nloglik@"):
        return tweedie_nloglik(float(name.split("@", 1)[1]))
    return METRICS[name]
