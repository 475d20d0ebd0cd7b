"""``reg:expectileerror`` (XGBoost 3.3): the expectile loss, an asymmetric squared error,
one output group per level of ``expectile_alpha`` (ascending, each in [0, 1]).

For a level ``alpha`` the loss of a prediction ``q`` is ``alpha (y - q)^2`` where
``q < y`` and ``(1 - alpha) (y - q)^2`` where ``q >= y`` (halved in the gradients:
``g = s (q - y)``, ``h = s``, ``s`` the side's weight); its minimiser over a constant is
the ``alpha``-expectile of the labels (the mean at 0.5).

With several levels, XGBoost reparametrises the margins so that the predictions never
cross: ``q_0 = m_0`` and ``q_k = q_(k-1) + 1e-6 + softplus(m_k)``; the gradient of output
``j`` sums the losses of levels ``k >= j`` (the ones ``m_j`` moves), times
``dq_k / dm_j = sigmoid(m_j)``, with a diagonal Gauss-Newton hessian
(``kernels/objective_math.py``). ``base_score`` is then in prediction space, one value
per level (``scores_to_margins`` / ``margins_to_scores``, also read by the XGBoost JSON
import and export).

``softplus``, its inverse and ``expm1`` are written with ``kernels.elementary``'s ``exp``
and ``log`` (the base margins are in the model file: NumPy's differ between CPUs).
"""
import numpy as np

from ..collective import LOCAL
from ..kernels.elementary import python as _elementary
from ..kernels.layout import EXPECTILE
from ..kernels.objective_math import EXPECTILE_GAP as _GAP
from ..kernels.objective_math import python as _math
from ..numerics.exact import exact_mean, exact_sums
from .base import Objective
from .gradients import pointwise

_MIN_HESS = 1e-6  # XGBoost's floor on the hessian sum of its starting Newton step


def _expm1(x):
    """e^x - 1, accurate near 0 (Kahan: the rounding of e^x cancels out)."""
    u = _elementary.exp(x)
    if u == 1.0:
        return x
    if u - 1.0 == -1.0:
        return -1.0
    return (u - 1.0) * x / _elementary.log(u)


def _softplus_inverse(x):
    """The ``m`` with ``softplus(m) = x``: ``x + log(-expm1(-x))``, for ``x`` at least 1e-6
    (XGBoost's ``SoftPlusInv``: a smaller gap is raised to it)."""
    x = max(x, _GAP)
    return x + _elementary.log(-_expm1(-x))


def scores_to_margins(scores):
    """Margins, float64 (k,), of predictions ``scores`` (k,) of the k levels (XGBoost's
    ``ProbToMargin``: the first unchanged, then the gaps less 1e-6, through softplus's
    inverse)."""
    scores = [float(s) for s in scores]
    gaps = [_softplus_inverse(b - a - _GAP) for a, b in zip(scores[:-1], scores[1:])]
    return np.array(scores[:1] + gaps)


def margins_to_scores(margins):
    """Predictions, a list of k floats, of the base margins (k,): the cumulative sums
    (``transform`` on one row)."""
    scores = [float(margins[0])]
    for m in margins[1:]:
        scores.append(scores[-1] + (_GAP + _math.softplus(float(m))))
    return scores


def _softplus(xp, x):
    """``kernels.objective_math.softplus`` over an array of ``xp`` (the same operations:
    ``max(x, 0) + log1p(exp(-|x|))`` is its two branches in one)."""
    t = xp.exp(-xp.abs(x))
    u = 1.0 + t
    log1p = xp.where(u == 1.0, t, xp.log(u) * (t / xp.where(u == 1.0, 1.0, u - 1.0)))
    return xp.maximum(x, 0.0) + log1p


class ExpectileError(Objective):
    """reg:expectileerror: one output group per ``expectile_alpha`` level; default
    metric ``expectile``."""

    name = "reg:expectileerror"
    default_metric = "expectile"

    def __init__(self, params):
        self.alphas = list(params["expectile_alpha"])
        self.n_groups = len(self.alphas)

    def base_margin(self, y, w, collective=LOCAL):
        """XGBoost's: from the weighted label mean, one Newton step per level
        (``mean - G / max(H, 1e-6)``, the gradients at the mean), made non-decreasing,
        then ``scores_to_margins``."""
        mean = exact_mean(y, w, collective)
        w = np.ones_like(y) if w is None else w
        d = mean - y
        rows = []
        for a in self.alphas:
            s = np.where(d >= 0.0, 1.0 - a, a)
            rows += [s * d * w, s * w]
        sums = exact_sums(np.stack(rows), collective)
        scores = [mean - g / max(h, _MIN_HESS) for g, h in zip(sums[0::2], sums[1::2])]
        scores = np.maximum.accumulate(scores)
        return scores_to_margins(scores)

    def base_score_to_margin(self, base_score):
        return scores_to_margins([float(base_score)] * self.n_groups)

    def margin_to_base_score(self, margin):
        scores = margins_to_scores(margin)
        return scores[0] if self.n_groups == 1 else scores

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(EXPECTILE, margin, y, w, self.alphas, backend)

    def transform(self, margin, xp=np):
        if self.n_groups == 1:
            return margin[:, 0]
        out = xp.empty(margin.shape, dtype=xp.float64)
        out[:, 0] = margin[:, 0]
        for k in range(1, self.n_groups):
            out[:, k] = out[:, k - 1] + (_GAP + _softplus(xp, margin[:, k]))
        return out
