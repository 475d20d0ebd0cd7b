"""Robust regression objectives: absolute error, quantile (pinball) loss and pseudo-Huber.

The interface of ``gbm.objectives.base``. The absolute and quantile losses have a sign for a
gradient and a constant hessian, so their trees' leaves are refreshed to quantiles of the
residuals after growing (``leaf_alphas``; see ``gbm.objectives.adaptive``), as XGBoost does.
"""
import numpy as np

from .adaptive import gathered_quantile
from ..collective import LOCAL
from ..numerics.exact import exact_sums
from .base import Objective
from .gradients import pointwise
from ..kernels.layout import ABSOLUTE, PSEUDOHUBER, QUANTILE


class _Identity(Objective):
    """Identity link: the margin is the prediction."""

    def transform(self, margin, xp=np):
        return margin[:, 0] if self.n_groups == 1 else margin


class QuantileError(_Identity):
    """reg:quantileerror: the pinball loss ``alpha (y - m)`` above the label side and
    ``(1 - alpha) (m - y)`` below, one output column per ``quantile_alpha``."""

    name = "reg:quantileerror"
    default_metric = "quantile"

    def __init__(self, params):
        self.leaf_alphas = list(params["quantile_alpha"])
        self.n_groups = len(self.leaf_alphas)

    def base_margin(self, y, w, collective=LOCAL):
        """Each alpha's quantile of the labels (XGBoost's starting point); ``w`` None =
        unweighted (interpolated) quantiles."""
        return np.array([gathered_quantile(y, a, w, collective) for a in self.leaf_alphas])

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(QUANTILE, margin, y, w, self.leaf_alphas, backend)


class AbsoluteError(QuantileError):
    """reg:absoluteerror: ``|y - m|``, the quantile loss at alpha 0.5 (up to a factor 2):
    gradient ``sign(m - y)``, hessian 1, leaves refreshed to residual medians."""

    name = "reg:absoluteerror"
    default_metric = "mae"

    def __init__(self, params):
        self.leaf_alphas = [0.5]
        self.n_groups = 1

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(ABSOLUTE, margin, y, w, (), backend)


class PseudoHuber(_Identity):
    """reg:pseudohubererror: ``s^2 (sqrt(1 + ((m - y) / s)^2) - 1)`` with s = huber_slope."""

    name = "reg:pseudohubererror"
    default_metric = "mphe"

    def __init__(self, params):
        self.slope = params["huber_slope"]

    def _grad_hess(self, m, y, w, xp=np):
        z = m - y
        scale = 1.0 + (z / self.slope) ** 2
        root = xp.sqrt(scale)
        return z / root * w, w / (scale * root)

    def base_margin(self, y, w, collective=LOCAL):
        """One Newton step from a margin of 0 (XGBoost's intercept)."""
        g, h = self._grad_hess(np.zeros_like(y), y, 1.0 if w is None else w)
        g_sum, h_sum = exact_sums(np.stack([g, h]), collective)
        return np.array([-g_sum / h_sum])

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(PSEUDOHUBER, margin, y, w, (self.slope,), backend)
