"""Survival objectives: ``survival:cox`` (proportional hazards, right-censored times) and
``survival:aft`` (accelerated failure time, interval-censored times), with the interface
of ``gbm.objectives.base``. Both predict on the time scale through ``exp``: Cox a hazard
ratio ``exp(m)``, AFT a time ``exp(m)``.

**Cox** (XGBoost's labels: ``y > 0`` an event at time ``y``, ``y < 0`` censored at
``|y|``; ``y = 0`` counts as censored at 0). Breslow's partial likelihood: an event at
time ``t`` competes with its risk set, every row with ``|y| >= t``. With the rows sorted
by ``|y|`` (ties by row index: the global index in a distributed fit), ``e_i = exp(m_i)``,
``R_j`` the sum of ``e`` over event ``j``'s risk set and the sums over the events ``j``
at or before row ``i`` in that order, as XGBoost computes them
(``CoxRegression::GetGradient``)::

    g_i = e_i sum_j 1 / R_j - [y_i > 0],     h_i = e_i sum_j 1 / R_j - e_i^2 sum_j 1 / R_j^2

then times the row's weight (weights do not enter the risk sets). For tied times this
counts, for each row, the tied events up to its own place in the order, not all of them
(the exact Breslow gradient would); gbm keeps XGBoost's sums, so the two train alike.
The gradient of one row needs every row's margin: in a distributed fit each rank gathers
every rank's margins (once per round; labels and row indices once per fit) and computes
the same sums over the same sorted rows, so every rank's gradients are the bits of a
local fit. Computed on the host (NumPy; ``exp`` is gbm's own), with the margins shifted
by their maximum (the ratios do not change) so that no ``exp`` overflows. The starting
margin is one Newton step from 0, as XGBoost's (``base_score`` = its ``exp``).

**AFT**: labels are intervals ``[lower, upper]`` (``gbm.data.intervals``); the gradient
and hessian are pointwise (``kernels/survival_math.py`` through the ``pointwise_gradients``
kernel, ``layout.AFT``). XGBoost starts AFT models at ``base_score`` 0.5 (it estimates
none); so does gbm.
"""
import numpy as np

from ..collective import LOCAL
from ..kernels.layout import AFT as AFT_KIND, AFT_DISTRIBUTIONS
from ..numerics import elementwise
from ..numerics.exact import exact_sums
from .log_link import LogLink
from .gradients import pointwise

_AFT_BASE_SCORE = 0.5  # XGBoost's default base_score, which AFT models start from


class _TimeScale(LogLink):
    """Predictions ``exp(margin)``; ``base_score`` on that scale (XGBoost's ``log`` /
    ``exp`` conversions, as the log-link objectives'); each survival objective has its own
    starting margin."""


class Cox(_TimeScale):
    """survival:cox (see the module docstring)."""

    name = "survival:cox"
    default_metric = "cox-nloglik"

    def __init__(self, params):
        self._rows = None  # _SortedRows of the fit's labels, set by bind_rows

    def bind_rows(self, y, row_ids, collective=LOCAL):
        """Sort every rank's rows once: by ``|y|``, ties by ``row_ids`` (None: positions)."""
        ids = np.arange(y.shape[0]) if row_ids is None else np.asarray(row_ids, np.int64)
        self._rows = _SortedRows(np.asarray(y, np.float64), ids, collective)

    def _bound(self, n_rows, y, collective):
        """The sorted rows, bound to ``y`` (a callable giving the host labels) here when
        ``bind_rows`` was not called (a local fit only)."""
        if self._rows is None or self._rows.n_local != n_rows:
            if collective.world_size > 1:  # the ranks' rows cannot be guessed
                raise RuntimeError("survival:cox: bind_rows(y, row_ids, collective) must "
                                   "come first in a distributed fit")
            self.bind_rows(y(), None)
        return self._rows

    def base_margin(self, y, w, collective=LOCAL):
        """One Newton step from a margin of 0 (XGBoost's ``FitIntercept``)."""
        rows = self._bound(y.shape[0], lambda: np.asarray(y), collective)
        g, h = rows.gradients(np.zeros(rows.n_local), collective)
        if w is not None:
            g, h = g * w, h * w
        g_sum, h_sum = exact_sums(np.stack([g, h]), collective)
        return np.array([-g_sum / h_sum if h_sum > 0 else 0.0])

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        to_host = (lambda a: np.asarray(a)) if backend is None else backend.to_host
        collective = LOCAL if backend is None else backend.collective
        rows = self._bound(margin.shape[0], lambda: to_host(y), collective)
        g, h = rows.gradients(np.ascontiguousarray(to_host(margin)[:, 0]), collective)
        w = to_host(w)
        grad, hess = (g * w)[:, None], (h * w)[:, None]
        if backend is None:
            return grad, hess
        return backend.asarray(grad), backend.asarray(hess)


class _SortedRows:
    """Every rank's rows of a Cox fit in the order of the sums: by ``|y|``, ties by row
    index (what the gradients need of the labels, gathered once per fit)."""

    def __init__(self, y, row_ids, collective):
        parts = collective.allgather((y, row_ids))
        labels = np.concatenate([p[0] for p in parts])
        ids = np.concatenate([p[1] for p in parts])
        # stable: a lexsort by |y|, then row index (ids are unique)
        self.order = np.lexsort((ids, np.abs(labels)))
        times = np.abs(labels)[self.order]
        self.event = labels[self.order] > 0
        if not self.event.any():
            raise ValueError("survival:cox needs at least one event (a label > 0); every "
                             "row is censored (labels <= 0)")
        # the first sorted row of each row's tie group: its risk set starts there
        self.first = np.searchsorted(times, times, side="left")
        start = sum(p[0].shape[0] for p in parts[:collective.rank])
        self.n_local = y.shape[0]
        inverse = np.empty_like(self.order)
        inverse[self.order] = np.arange(self.order.shape[0])
        self.local = inverse[start:start + self.n_local]  # this rank's rows, sorted places

    def gradients(self, margin, collective):
        """(g, h), float64 (n_local,), unweighted, at this rank's ``margin``."""
        if collective.world_size > 1:
            margin = np.concatenate(collective.allgather(margin))
        m = margin[self.order]
        e = elementwise.exp(m - m.max())  # the ratios e / R do not change; no overflow
        risk = np.cumsum(e[::-1])[::-1][self.first]  # sequential sums: the same bits anywhere
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # checked below
            inverse = np.where(self.event, 1.0 / risk, 0.0)
            r = np.cumsum(inverse)
            s = np.cumsum(inverse * inverse)
            g = e * r - self.event
            h = e * r - e * e * s
        if not (np.isfinite(g).all() and np.isfinite(h).all()):
            raise FloatingPointError(
                "survival:cox: the margins span more than about 350 (hazard ratios beyond "
                "e^350 apart), so the risk sets' sums overflow; the fit diverged: lower "
                "learning_rate or raise reg_lambda")
        return g[self.local], h[self.local]


class AFT(_TimeScale):
    """survival:aft with ``aft_loss_distribution`` and ``aft_loss_distribution_scale``."""

    name = "survival:aft"
    default_metric = "aft-nloglik"
    interval_labels = True

    def __init__(self, params):
        self.distribution = params["aft_loss_distribution"]
        self.scale = params["aft_loss_distribution_scale"]
        self.kernel_params = (float(AFT_DISTRIBUTIONS.index(self.distribution)), self.scale)

    def base_margin(self, y, w, collective=LOCAL):
        """log(0.5): XGBoost's AFT models start from its default base_score."""
        return self.base_score_to_margin(_AFT_BASE_SCORE)

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        # y: (n_rows, 2) bounds, C order: read by the kernel as y[2 i], y[2 i + 1]
        return pointwise(AFT_KIND, margin[:, :1], y.reshape(-1), w, self.kernel_params,
                         backend)
