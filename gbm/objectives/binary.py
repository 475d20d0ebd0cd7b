"""XGBoost's other losses on labels in [0, 1]: ``reg:logistic``, ``binary:logitraw`` and
``binary:hinge``, with the interface of ``gbm.objectives.base``.

``reg:logistic`` and ``binary:logitraw`` train exactly as ``binary:logistic`` (the
``LOGISTIC`` kernel: ``g = sigmoid(m) - y``, ``h = max(p (1 - p), 1e-16)``); they differ in
what they predict, their default metric and, for ``binary:logitraw``, the starting
margin. ``binary:hinge`` is XGBoost's hinge loss ``max(0, 1 - s m)`` with ``s = 2y - 1``
(``kernels/objective_math.py``) and predicts the class, 0 or 1.
"""
import numpy as np

from ..collective import LOCAL
from ..kernels.layout import HINGE, LOGISTIC
from ..numerics.exact import exact_mean
from .base import Objective
from .gradients import pointwise
from .pointwise import Logistic


class LogisticRegression(Logistic):
    """reg:logistic: the logistic loss of probabilities (labels anywhere in [0, 1]);
    predicts ``sigmoid(m)``; XGBoost's default metric is ``rmse``. The starting margin
    is the logit of the weighted label mean, as for ``binary:logistic``."""

    name = "reg:logistic"
    default_metric = "rmse"


class LogitRaw(Objective):
    """binary:logitraw: the logistic loss, predicting the margin itself (no sigmoid).

    As in XGBoost, the starting margin is the weighted label mean taken as a margin (its
    ``base_score`` has the identity link here), and the eval metrics see the predictions,
    that is the margins: the default ``logloss`` reads them as probabilities (clipped
    into (0, 1)), as XGBoost's does; ``auc`` ranks them correctly.
    """

    name = "binary:logitraw"
    default_metric = "logloss"

    check_labels = Logistic.check_labels

    def base_margin(self, y, w, collective=LOCAL):
        return np.array([exact_mean(y, w, collective)])

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(LOGISTIC, margin[:, :1], y, w, (), backend)

    def transform(self, margin, xp=np):
        return margin[:, 0]


class Hinge(Objective):
    """binary:hinge: XGBoost's hinge loss; predicts 1 where the margin is > 0, else 0.

    Labels in [0, 1] (classes 0 and 1; XGBoost maps a label to ``2y - 1`` and does not
    check them). Starting margin: XGBoost's one Newton step from 0 (``-G / H`` = the
    weighted mean of ``2y - 1``) passed through the prediction, so 1 when the weighted
    majority is 1, else 0.
    """

    name = "binary:hinge"
    default_metric = "error"

    check_labels = Logistic.check_labels

    def base_margin(self, y, w, collective=LOCAL):
        step = exact_mean(2.0 * y - 1.0, w, collective)
        return np.array([1.0 if step > 0.0 else 0.0])

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(HINGE, margin[:, :1], y, w, (), backend)

    def transform(self, margin, xp=np):
        return xp.where(margin[:, 0] > 0.0, 1.0, 0.0)
