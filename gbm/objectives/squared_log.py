"""``reg:squaredlogerror``: the squared error of ``log1p`` values,
``(log1p(m) - log1p(y))^2 / 2``, identity link, with XGBoost's safeguards (the prediction
clipped at ``-1 + 1e-6`` inside the formulas, and the hessian floored at ``1e-6``: it is
negative where ``log1p(m) > log1p(y) + 1``). Formulas in ``kernels/objective_math.py``.
"""
import numpy as np

from ..collective import LOCAL
from ..kernels.layout import SQUARED_LOG
from ..numerics.exact import exact_sums
from .base import Objective
from .gradients import pointwise

_MIN_HESS = 1e-6  # XGBoost's floor on the hessian sum of its starting Newton step (kRtEps)


class SquaredLogError(Objective):
    """reg:squaredlogerror: labels > -1; default metric ``rmsle``."""

    name = "reg:squaredlogerror"
    default_metric = "rmsle"

    def check_labels(self, y):
        bad = ~(y > -1.0)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"y[{row}] = {y[row]}; {self.name} needs labels > -1 "
                             "(log(1 + y) must exist)")
        return y

    def base_margin(self, y, w, collective=LOCAL):
        """XGBoost's: one Newton step from a margin of 0, ``-G / max(H, 1e-6)`` with the
        gradients of every rank's rows (``G = -sum w log1p(y)``)."""
        w = np.ones_like(y) if w is None else w
        g, h = pointwise(SQUARED_LOG, np.zeros((y.shape[0], 1)), y, w)
        g_sum, h_sum = exact_sums(np.stack([g[:, 0], h[:, 0]]), collective)
        return np.array([-g_sum / max(h_sum, _MIN_HESS)])

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(SQUARED_LOG, margin[:, :1], y, w, (), backend)

    def transform(self, margin, xp=np):
        return margin[:, 0]
