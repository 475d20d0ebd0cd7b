"""Log-link regression objectives (Poisson, gamma, Tweedie), with the interface of
``gbm.objectives.base``; formulas as in XGBoost's documentation, with margins ``m`` and
predictions ``p = exp(m)``.
"""
import numpy as np

from ..collective import LOCAL
from ..numerics.exact import exact_mean
from .base import Objective
from .gradients import pointwise
from ..kernels.elementary import python as _elementary
from ..kernels.layout import GAMMA, POISSON, TWEEDIE


def _check_labels(y, name, positive):
    bad = (y <= 0) if positive else (y < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        need = "> 0" if positive else ">= 0"
        raise ValueError(f"y[{row}] = {y[row]}; {name} needs labels {need}")
    return y


class LogLink(Objective):
    """Margin = log(prediction); the starting prediction is the weighted label mean."""

    def base_margin(self, y, w, collective=LOCAL):
        return self.base_score_to_margin(max(exact_mean(y, w, collective), 1e-6))

    def base_score_to_margin(self, base_score):
        if base_score <= 0:
            raise ValueError(f"base_score must be > 0 for {self.name}, got {base_score}")
        # gbm's own log: NumPy's differs between CPUs (its AVX-512 loop), and this
        # number is in the model file
        return np.array([_elementary.log(float(base_score))])

    def margin_to_base_score(self, margin):
        return float(_elementary.exp(float(margin[0])))

    def transform(self, margin, xp=np):
        return xp.exp(margin[:, 0])


class Poisson(LogLink):
    """count:poisson: loss p - y m; g = p - y, h = exp(m + max_delta_step) (XGBoost's
    safeguard: a larger hessian, together with the default leaf cap of 0.7)."""

    name = "count:poisson"
    default_metric = "poisson-nloglik"

    def __init__(self, params):
        self.max_delta_step = params["max_delta_step"]

    def check_labels(self, y):
        return _check_labels(y, self.name, positive=False)

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(POISSON, margin, y, w, (self.max_delta_step,), backend)


class Gamma(LogLink):
    """reg:gamma: loss y exp(-m) + m; g = 1 - y exp(-m), h = y exp(-m)."""

    name = "reg:gamma"
    default_metric = "gamma-deviance"  # XGBoost's (regression_loss.h)

    def check_labels(self, y):
        return _check_labels(y, self.name, positive=True)

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(GAMMA, margin, y, w, (), backend)


class Tweedie(LogLink):
    """reg:tweedie with power rho in [1, 2): loss -y exp((1-rho) m)/(1-rho) + exp((2-rho) m)/(2-rho)."""

    name = "reg:tweedie"

    def __init__(self, params):
        self.rho = params["tweedie_variance_power"]
        self.default_metric = f"tweedie-nloglik@{self.rho:g}"

    def check_labels(self, y):
        return _check_labels(y, self.name, positive=False)

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(TWEEDIE, margin, y, w, (self.rho,), backend)
