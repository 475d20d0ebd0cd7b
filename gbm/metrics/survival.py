"""Survival metrics: ``cox-nloglik`` (survival:cox), ``aft-nloglik`` and
``interval-regression-accuracy`` (survival:aft), as XGBoost computes them.

They read margins, not predictions (``reads_margin``): the evaluation passes each eval
set's margins (n,) and its labels as the objective holds them (Cox: signed times (n,);
AFT: intervals (n, 2)). A log-likelihood from the margin itself keeps its digits where
``exp`` of it would overflow or underflow.

* ``cox-nloglik``: the negative log of Breslow's partial likelihood, divided by the
  number of events: ``sum over events i of (log R_i - m_i) / n_events``, ``R_i`` the sum of
  ``exp(m)`` over the rows with ``|y| >= |y_i|``. Unweighted, as XGBoost's. Every rank's
  rows are gathered and put in one order by value (``|y|``, then margin), so the sums do
  not depend on how the rows are split.
* ``aft-nloglik``: the weighted mean of each row's AFT loss (``kernels/survival_math.py``:
  likelihoods floored at 1e-12, as XGBoost's).
* ``interval-regression-accuracy``: the weighted share of rows whose predicted time
  ``exp(m)`` lies in ``[lower, upper]``.
"""
import numpy as np

from ..collective import LOCAL
from ..kernels.layout import AFT_DISTRIBUTIONS
from ..numerics import elementwise
from ..numerics.exact import exact_mean, exact_sum


class SurvivalMetric:
    """A metric called ``metric(y, margin, w, collective)`` with margins (n,)."""

    reads_margin = True
    needs_queries = False


class CoxNegLogLik(SurvivalMetric):
    def __call__(self, y, margin, w, collective=LOCAL):
        y, margin = np.asarray(y, np.float64), np.asarray(margin, np.float64)
        if collective.world_size > 1:
            parts = collective.allgather((y, margin))
            y = np.concatenate([p[0] for p in parts])
            margin = np.concatenate([p[1] for p in parts])
        event = y > 0
        n_events = int(event.sum())
        if n_events == 0:
            raise ValueError("eval_metric 'cox-nloglik' needs at least one event (a label "
                             "> 0) in the eval set; every row is censored")
        order = np.lexsort((margin, np.abs(y)))  # by value: the same order however split
        times, m, event = np.abs(y)[order], margin[order], event[order]
        top = m.max()
        e = elementwise.exp(m - top)
        risk = np.cumsum(e[::-1])[::-1][np.searchsorted(times, times, side="left")]
        terms = elementwise.log(risk[event]) - (m[event] - top)
        return exact_sum(terms) / n_events


class AFTNegLogLik(SurvivalMetric):
    def __init__(self, params):
        code = AFT_DISTRIBUTIONS.index(params["aft_loss_distribution"])
        self.kernel_params = np.array([code, params["aft_loss_distribution_scale"]],
                                      np.float64)

    def __call__(self, y, margin, w, collective=LOCAL):
        from ..kernels import cpu  # on first use: ``import gbm`` stays light

        loss = np.empty(y.shape[0])
        cpu.aft_loss_into(np.ascontiguousarray(y[:, 0]), np.ascontiguousarray(y[:, 1]),
                          np.ascontiguousarray(margin, np.float64), self.kernel_params, loss)
        return exact_mean(loss, w, collective)


class IntervalAccuracy(SurvivalMetric):
    def __call__(self, y, margin, w, collective=LOCAL):
        pred = elementwise.exp(np.asarray(margin, np.float64))
        inside = (pred >= y[:, 0]) & (pred <= y[:, 1])
        return exact_mean(inside.astype(np.float64), w, collective)


def survival_metric(name, params):
    """The metric object of a survival metric's ``name``; ``params``: validated training
    parameters (the AFT distribution and scale; None: their defaults)."""
    if name == "cox-nloglik":
        return CoxNegLogLik()
    if name == "interval-regression-accuracy":
        return IntervalAccuracy()
    return AFTNegLogLik(params if params is not None else
                        {"aft_loss_distribution": "normal", "aft_loss_distribution_scale": 1.0})
