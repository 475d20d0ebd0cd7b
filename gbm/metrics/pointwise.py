"""Evaluation metrics on transformed predictions (probabilities for classification).

Each is called ``metric(y, pred, w, collective=LOCAL)`` with ``pred`` of shape (n,) or
(n, n_classes) and returns a float. The pointwise metrics are weighted means, as in
XGBoost, summed exactly (``gbm.numerics.exact``): a metric that drives early stopping does not
depend on how the rows are split among threads, chunks or workers. AUC and AUCPR
(``gbm.metrics.curves``) rank all rows. Logarithms
and exponentials are ``gbm.numerics.elementwise``'s (NumPy's differ between CPUs).
"""
import numpy as np

from ..numerics import elementwise
from ..collective import LOCAL
from ..numerics.exact import exact_mean
from .curves import auc, aucpr

# the floor of the probabilities whose log logloss and mlogloss take: XGBoost's 1e-16, so
# that predictions at or beyond 0 and 1 (binary:logitraw's margins) score as in XGBoost
_EPS = 1e-16
# gamma-deviance's shift of labels and predictions (XGBoost's kRtEps)
_GAMMA_SHIFT = 1e-6


def rmse(y, pred, w, collective=LOCAL):
    return float(np.sqrt(exact_mean((pred - y) ** 2, w, collective)))


def _first_row(bad):
    return int(np.flatnonzero(bad)[0])


def rmsle(y, pred, w, collective=LOCAL):
    """Root mean squared error of ``log(1 + pred)`` against ``log(1 + y)``: labels and
    predictions must be > -1 (XGBoost returns NaN; gbm names the first row instead)."""
    for name, values in (("y", y), ("prediction", pred)):
        bad = ~(values > -1.0)
        if bad.any():
            row = _first_row(bad)
            raise ValueError(f"eval_metric 'rmsle' needs values > -1: {name}[{row}] = "
                             f"{values[row]} (log(1 + x) is undefined)")
    d = elementwise.log(1.0 + pred) - elementwise.log(1.0 + y)
    return float(np.sqrt(exact_mean(d * d, w, collective)))


def mape(y, pred, w, collective=LOCAL):
    """Mean absolute percentage error ``|(y - pred) / y|``: labels must be non-zero
    (XGBoost returns inf; gbm names the first zero label instead)."""
    bad = y == 0.0
    if bad.any():
        raise ValueError(f"eval_metric 'mape' divides by the label: y[{_first_row(bad)}] = 0")
    return float(exact_mean(np.abs((y - pred) / y), w, collective))


def logloss(y, pred, w, collective=LOCAL):
    """``-(y log p + (1 - y) log(1 - p))``, each log's argument floored at ``_EPS`` and not
    capped (XGBoost's: a prediction above 1, e.g. a binary:logitraw margin, makes the
    positive class's term negative)."""
    pos, neg = np.maximum(pred, _EPS), np.maximum(1.0 - pred, _EPS)
    log = elementwise.log
    if np.all((y == 0.0) | (y == 1.0)):
        # 0/1 labels: one log per row, the same bits as the general form (the other
        # term is 0 * a finite log, and x + 0.0 is x)
        return float(exact_mean(-log(np.where(y == 1.0, pos, neg)), w, collective))
    return float(exact_mean(-(y * log(pos) + (1 - y) * log(neg)), w, collective))


def mlogloss(y, pred, w, collective=LOCAL):
    p = np.clip(pred[np.arange(y.shape[0]), y.astype(np.int64)], _EPS, 1.0)
    return float(exact_mean(-elementwise.log(p), w, collective))


def merror(y, pred, w, collective=LOCAL):
    """Share of rows whose predicted class (index, or argmax of probabilities) is wrong."""
    label = pred if pred.ndim == 1 else np.argmax(pred, axis=1)
    return float(exact_mean((label != y).astype(np.float64), w, collective))


def poisson_nloglik(y, pred, w, collective=LOCAL):
    from scipy.special import gammaln  # SciPy only when this metric is used

    p = np.maximum(pred, _EPS)
    return float(exact_mean(p - y * elementwise.log(p) + gammaln(y + 1.0), w, collective))


def gamma_nloglik(y, pred, w, collective=LOCAL):
    p = np.maximum(pred, _EPS)
    return float(exact_mean(y / p + elementwise.log(p), w, collective))


def gamma_deviance(y, pred, w, collective=LOCAL):
    """Twice the mean gamma deviance ``log(p / y) + y / p - 1`` (scikit-learn's
    ``mean_gamma_deviance``), each of ``y`` and ``p`` shifted by XGBoost's 1e-6 (so a zero
    label scores); both must be > -1e-6 (XGBoost returns NaN; gbm names the row)."""
    for name, values in (("y", y), ("prediction", pred)):
        bad = ~(values + _GAMMA_SHIFT > 0.0)
        if bad.any():
            row = _first_row(bad)
            raise ValueError(f"eval_metric 'gamma-deviance' needs values > -1e-6: "
                             f"{name}[{row}] = {values[row]}")
    p, t = pred + _GAMMA_SHIFT, y + _GAMMA_SHIFT
    return float(2.0 * exact_mean(elementwise.log(p / t) + t / p - 1.0, w, collective))


def error_at(threshold):
    """Binary error rate at ``threshold`` (XGBoost's ``error@t``): a probability above it
    predicts 1."""
    def metric(y, pred, w, collective=LOCAL):
        wrong = (pred > threshold) != (y > 0.5)
        return float(exact_mean(wrong.astype(np.float64), w, collective))

    return metric


def tweedie_nloglik(rho):
    def metric(y, pred, w, collective=LOCAL):
        p = np.maximum(pred, _EPS)
        a = y * elementwise.exp((1.0 - rho) * elementwise.log(p)) / (1.0 - rho)
        b = elementwise.exp((2.0 - rho) * elementwise.log(p)) / (2.0 - rho)
        return float(exact_mean(-a + b, w, collective))

    return metric


def mae(y, pred, w, collective=LOCAL):
    return float(exact_mean(np.abs(pred - y), w, collective))


def error(y, pred, w, collective=LOCAL):
    """Binary error rate: a probability above 0.5 predicts 1."""
    return float(exact_mean(((pred > 0.5) != (y > 0.5)).astype(np.float64), w, collective))


def quantile_loss(alphas):
    """Mean pinball loss over rows and quantile levels (XGBoost's ``quantile``)."""
    def metric(y, pred, w, collective=LOCAL):
        pred = pred.reshape(y.shape[0], -1)
        d = y[:, None] - pred
        a = np.asarray(alphas, dtype=np.float64)[None, :]
        loss = np.where(d >= 0, a * d, (a - 1.0) * d).mean(axis=1)
        return float(exact_mean(loss, w, collective))

    return metric


def pseudo_huber_error(slope):
    """Mean pseudo-Huber error ``s^2 (sqrt(1 + ((p - y) / s)^2) - 1)`` (XGBoost's ``mphe``)."""
    def metric(y, pred, w, collective=LOCAL):
        z = (pred - y) / slope
        return float(exact_mean(slope * slope * (np.sqrt(1.0 + z * z) - 1.0), w, collective))

    return metric


def expectile_loss(alphas):
    """Mean expectile loss over rows and levels (XGBoost 3.3's ``expectile``): per level
    ``alpha``, ``(1 - alpha) d^2`` where ``d = pred - y >= 0``, else ``alpha d^2``."""
    if alphas is None:
        raise ValueError("eval_metric 'expectile' reads expectile_alpha from the training "
                         "parameters; set expectile_alpha (a level in [0, 1] or a list)")

    def metric(y, pred, w, collective=LOCAL):
        pred = pred.reshape(y.shape[0], -1)
        d = pred - y[:, None]
        a = np.asarray(alphas, dtype=np.float64)[None, :]
        loss = (np.where(d >= 0, 1.0 - a, a) * d * d).mean(axis=1)
        return float(exact_mean(loss, w, collective))

    return metric


METRICS = {"rmse": rmse, "rmsle": rmsle, "mae": mae, "mape": mape, "error": error, "auc": auc, "aucpr": aucpr,
           "logloss": logloss, "mlogloss": mlogloss, "merror": merror,
           "poisson-nloglik": poisson_nloglik, "gamma-nloglik": gamma_nloglik,
           "gamma-deviance": gamma_deviance}
# the metrics of gbm.metrics.names.PARAMETRIC: a factory taking the parameter's value
PARAMETRIC = {"quantile": quantile_loss, "mphe": pseudo_huber_error,
              "expectile": expectile_loss}
