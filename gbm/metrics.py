"""Evaluation metrics on transformed predictions (probabilities for classification).

Each takes ``(y, pred, w)`` with ``pred`` of shape (n,) or (n, n_classes) and returns a
float; all are weighted means, as in XGBoost.
"""
import numpy as np
from scipy.special import gammaln

from . import ranking_metrics
from .params import validate_params

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


def mae(y, pred, w):
    return float(np.average(np.abs(pred - y), weights=w))


def error(y, pred, w):
    """Binary error rate: a probability above 0.5 predicts 1."""
    return float(np.average((pred > 0.5) != (y > 0.5), weights=w))


def auc(y, pred, w):
    """Area under the ROC curve (binary), or one-vs-rest weighted by prevalence (multiclass)."""
    from sklearn.metrics import roc_auc_score

    if pred.ndim == 2:
        return float(roc_auc_score(y, pred, sample_weight=w, multi_class="ovr", average="weighted",
                                   labels=np.arange(pred.shape[1])))
    return float(roc_auc_score(y, pred, sample_weight=w))


def aucpr(y, pred, w):
    """Area under the precision-recall curve (binary), as average precision."""
    from sklearn.metrics import average_precision_score

    return float(average_precision_score(y, pred, sample_weight=w))


def quantile_loss(alphas):
    """Mean pinball loss over rows and quantile levels (XGBoost's ``quantile``)."""
    def metric(y, pred, w):
        pred = pred.reshape(y.shape[0], -1)
        d = y[:, None] - pred
        a = np.asarray(alphas, dtype=np.float64)[None, :]
        loss = np.where(d >= 0, a * d, (a - 1.0) * d).mean(axis=1)
        return float(np.average(loss, weights=w))

    return metric


def pseudo_huber_error(slope):
    """Mean pseudo-Huber error ``s^2 (sqrt(1 + ((p - y) / s)^2) - 1)`` (XGBoost's ``mphe``)."""
    def metric(y, pred, w):
        z = (pred - y) / slope
        return float(np.average(slope * slope * (np.sqrt(1.0 + z * z) - 1.0), weights=w))

    return metric


# Metrics whose formula takes a training parameter: name -> (factory, parameter).
_PARAMETRIC = {"quantile": (quantile_loss, "quantile_alpha"), "mphe": (pseudo_huber_error, "huber_slope")}

METRICS = {"rmse": rmse, "mae": mae, "error": error, "auc": auc, "aucpr": aucpr, "logloss": logloss, "mlogloss": mlogloss, "merror": merror,
           "poisson-nloglik": poisson_nloglik, "gamma-nloglik": gamma_nloglik}


_MAXIMIZED = ("auc", "aucpr")


def maximizes(name):
    """Whether larger values of metric ``name`` are better."""
    return name in _MAXIMIZED or ranking_metrics.parse(name) is not None


def check_metric_name(name):
    """``name`` if it names a metric, else a ValueError listing the known ones."""
    if isinstance(name, str):
        if name in METRICS or name in _PARAMETRIC or ranking_metrics.parse(name) is not None:
            return name
        if name.startswith("tweedie-nloglik@"):
            try:
                rho = float(name.split("@", 1)[1])
            except ValueError:
                rho = None
            if rho is not None and 1.0 <= rho < 2.0:
                return name
    raise ValueError(f"eval_metric {name!r} is not a known metric; known: "
                     f"{sorted(METRICS) + sorted(_PARAMETRIC)}, "
                     "tweedie-nloglik@rho with rho in [1, 2), and the ranking metrics "
                     "ndcg, map, ndcg@k, map@k (each also with a '-' suffix)")


def get_metric(name, params=None):
    """The metric function called ``name`` (``tweedie-nloglik@rho`` carries its power;
    ``quantile`` and ``mphe`` take ``quantile_alpha`` / ``huber_slope`` from ``params``).

    Ranking metrics (``ndcg``, ``map@k``, ... see gbm.ranking_metrics) are
    ``RankingMetric`` objects, called with the eval set's query groups as well; they read
    ``ndcg_exp_gain`` from ``params``."""
    if name in _PARAMETRIC:
        factory, key = _PARAMETRIC[name]
        return factory((params or validate_params({}))[key])
    if ranking_metrics.parse(name) is not None:
        exp_gain = True if params is None else params["ndcg_exp_gain"]
        return ranking_metrics.RankingMetric(name, exp_gain)
    if name.startswith("tweedie-nloglik@"):
        return tweedie_nloglik(float(name.split("@", 1)[1]))
    return METRICS[name]
