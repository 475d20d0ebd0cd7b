"""The accelerated failure time (AFT) model's per-row loss, gradient and hessian, written
once and compiled for every backend (like ``objective_math``, which calls them for the
``layout.AFT`` kind; the ``aft-nloglik`` metric's host kernel calls ``aft_loss``).

The model (XGBoost's ``survival:aft``; Barnwal, Cho & Hocking 2020, arXiv:2006.04920):
``log T = m + sigma Z``, ``m`` the margin, ``Z`` of a distribution ``dist``
(``layout.AFT_NORMAL``, ``AFT_LOGISTIC``, ``AFT_EXTREME``), a row labelled by an interval
``[lower, upper]`` of times: ``lower == upper`` an exact (uncensored) time, ``upper =
inf`` right-censored, ``lower = 0`` left-censored, else interval-censored. With
``z = (log t - m) / sigma``:

* uncensored       loss = -log(pdf(z) / (sigma t)), g = pdf'(z) / (sigma pdf(z)),
                   h = -(pdf pdf'' - pdf'^2) / (sigma pdf)^2 (dz/dm = -1/sigma);
* censored         loss = -log(D), D = cdf(z_u) - cdf(z_l), g = (pdf(z_u) - pdf(z_l)) /
                   (sigma D), h = -(D (pdf'(z_u) - pdf'(z_l)) - (pdf(z_u) - pdf(z_l))^2) /
                   (sigma D)^2 (a missing bound contributes 0 to pdf, pdf' and its cdf
                   term: cdf(z_u) = 1 when right-censored, cdf(z_l) = 0 when left-censored).

XGBoost's safeguards are kept: the gradient is clipped to [-15, 15] and the hessian to
[1e-16, 15], a loss's likelihood is floored at 1e-12, and where the ratios cannot be
computed (``D`` underflows to 0: the margin is far outside the interval) the gradient and
hessian take XGBoost's limits at an infinite margin (``_limit_gradient`` /
``_limit_hessian``, by distribution and censoring, on the side of ``z``).

What gbm computes more stably than XGBoost (whose results it equals elsewhere):

* uncensored rows use the ratios pdf'/pdf and pdf''/pdf in closed form (normal: -z and
  z^2 - 1; logistic: -tanh(z/2) and (1 - 4u + u^2)/(1 + u)^2 with u = e^-|z|; extreme:
  1 - e^z and e^2z - 3e^z + 1), so the gradient and hessian never divide 0 by 0;
* ``D`` is a difference of upper-tail probabilities when the lower bound lies above the
  middle (z_l > 0) and of lower-tail ones otherwise, each computed directly (erfc for the
  normal, 1/(1 + e^z) for the logistic, e^-e^z and 1 - e^-e^z for the extreme value), so
  ``D`` keeps its digits deep in a tail where 1 - cdf would round to 0 (XGBoost's normal
  cdf, 0.5 (1 + erf), does beyond |z| ~ 8: its gradient there jumps to the clip value).

Every product goes through ``mul`` (no fused multiply-add on CUDA; see
``kernels/elementary.py``).
"""
import math
from types import SimpleNamespace

from .layout import AFT_EXTREME, AFT_LOGISTIC, AFT_NORMAL
from .special import make_special

MIN_GRADIENT, MAX_GRADIENT = -15.0, 15.0  # XGBoost's clip of the AFT gradient
MIN_HESSIAN, MAX_HESSIAN = 1e-16, 15.0  # and of its hessian
MIN_LIKELIHOOD = 1e-12  # a row's likelihood in the loss is at least this (XGBoost's kEps)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_UNCENSORED, _RIGHT, _LEFT, _INTERVAL = 0, 1, 2, 3


def make_survival_math(jit, mul, elementary):
    """``aft_gradient_hessian`` and ``aft_loss`` (and the distributions' functions they
    use) built with ``jit`` and ``mul`` on ``elementary``'s exp and log."""
    exp, log = elementary.exp, elementary.log
    special = make_special(jit, mul, elementary)
    erfc, one_minus_exp_neg = special.erfc, special.one_minus_exp_neg

    @jit
    def pdf(dist, z):
        """The density of Z at z."""
        if dist == AFT_NORMAL:
            return mul(exp(mul(-0.5, mul(z, z))), _INV_SQRT_2PI)
        if dist == AFT_LOGISTIC:
            u = exp(-abs(z))
            return u / mul(1.0 + u, 1.0 + u)
        w = exp(z)
        if w == math.inf:
            return 0.0
        return mul(w, exp(-w))

    @jit
    def grad_pdf(dist, z):
        """pdf'(z)."""
        if dist == AFT_NORMAL:
            return -mul(z, pdf(dist, z))
        if dist == AFT_LOGISTIC:
            u = exp(-abs(z))
            ratio = (1.0 - u) / (1.0 + u)  # (1 - e^z)/(1 + e^z) is -ratio for z > 0
            return mul(-ratio if z > 0.0 else ratio, pdf(dist, z))
        p = pdf(dist, z)
        return 0.0 if p == 0.0 else mul(1.0 - exp(z), p)

    @jit
    def lower_tail(dist, z):
        """cdf(z) = P(Z <= z)."""
        if dist == AFT_NORMAL:
            return mul(0.5, erfc(mul(-z, _INV_SQRT_2)))
        if dist == AFT_LOGISTIC:
            return 1.0 / (1.0 + exp(-z))
        return one_minus_exp_neg(exp(z))

    @jit
    def upper_tail(dist, z):
        """1 - cdf(z) = P(Z > z), computed directly (no cancellation)."""
        if dist == AFT_NORMAL:
            return mul(0.5, erfc(mul(z, _INV_SQRT_2)))
        if dist == AFT_LOGISTIC:
            return 1.0 / (1.0 + exp(z))
        return exp(-exp(z))

    @jit
    def _uncensored(dist, z, sigma):
        """(g, h) of an exact time from the ratios pdf'/pdf and (pdf'/pdf)^2 - pdf''/pdf
        in closed form (module docstring), unclipped."""
        if dist == AFT_NORMAL:
            return -z / sigma, 1.0 / mul(sigma, sigma)
        if dist == AFT_LOGISTIC:
            u = exp(-abs(z))
            ratio = (1.0 - u) / (1.0 + u)
            g = -ratio if z > 0.0 else ratio
            return g / sigma, mul(2.0, pdf(dist, z)) / mul(sigma, sigma)
        w = exp(z)
        return (1.0 - w) / sigma, w / mul(sigma, sigma)

    @jit
    def _limit_gradient(dist, censoring, positive, sigma):
        """XGBoost's gradient at an infinite margin (``GetLimitGradAtInfPred``):
        ``positive`` = z (of either bound) > 0, the margin below the interval."""
        if censoring == _RIGHT and not positive:
            return 0.0
        if censoring == _LEFT and positive:
            return 0.0
        if dist == AFT_NORMAL:
            return MIN_GRADIENT if positive else MAX_GRADIENT
        if dist == AFT_LOGISTIC:
            return -1.0 / sigma if positive else 1.0 / sigma
        return MIN_GRADIENT if positive else 1.0 / sigma

    @jit
    def _limit_hessian(dist, censoring, positive, sigma):
        """XGBoost's hessian at an infinite margin (``GetLimitHessAtInfPred``)."""
        if dist == AFT_LOGISTIC:
            return MIN_HESSIAN
        if dist == AFT_NORMAL:
            if (censoring == _RIGHT and not positive) or (censoring == _LEFT and positive):
                return MIN_HESSIAN
            return 1.0 / mul(sigma, sigma)
        if censoring == _LEFT:
            return MIN_HESSIAN
        return MAX_HESSIAN if positive else MIN_HESSIAN

    @jit
    def _bounds(dist, lower, upper, m, sigma):
        """(censoring, positive, D, pdf_u - pdf_l, pdf'_u - pdf'_l) of a censored row."""
        right = upper == math.inf
        left = lower <= 0.0
        censoring = _INTERVAL
        z_u = 0.0
        z_l = 0.0
        pdf_u = 0.0
        grad_u = 0.0
        pdf_l = 0.0
        grad_l = 0.0
        if right:
            censoring = _RIGHT
        else:
            z_u = (log(upper) - m) / sigma
            pdf_u = pdf(dist, z_u)
            grad_u = grad_pdf(dist, z_u)
        if left:
            censoring = _LEFT
        else:
            z_l = (log(lower) - m) / sigma
            pdf_l = pdf(dist, z_l)
            grad_l = grad_pdf(dist, z_l)
        # D from the tail that holds both terms' digits
        if not left and z_l > 0.0:
            mass = upper_tail(dist, z_l) - (0.0 if right else upper_tail(dist, z_u))
        else:
            mass = (1.0 if right else lower_tail(dist, z_u)) - (
                0.0 if left else lower_tail(dist, z_l))
        return censoring, z_u > 0.0 or z_l > 0.0, mass, pdf_u - pdf_l, grad_u - grad_l

    @jit
    def aft_gradient_hessian(dist, sigma, lower, upper, m):
        """(g, h) of one row (interval ``[lower, upper]``, margin ``m``), clipped."""
        if lower == upper:
            g, h = _uncensored(dist, (log(lower) - m) / sigma, sigma)
        else:
            censoring, positive, mass, pdf_diff, grad_diff = _bounds(dist, lower, upper, m,
                                                                     sigma)
            g = math.inf
            h = math.inf
            if mass > 0.0:
                a = pdf_diff / mass
                g = a / sigma
                h = (mul(a, a) - grad_diff / mass) / mul(sigma, sigma)
            if not (abs(g) < math.inf):
                g = _limit_gradient(dist, censoring, positive, sigma)
            if not (abs(h) < math.inf):
                h = _limit_hessian(dist, censoring, positive, sigma)
        g = min(max(g, MIN_GRADIENT), MAX_GRADIENT)
        h = min(max(h, MIN_HESSIAN), MAX_HESSIAN)
        return g, h

    @jit
    def aft_loss(dist, sigma, lower, upper, m):
        """-log of a row's likelihood (at least ``MIN_LIKELIHOOD``)."""
        if lower == upper:
            z = (log(lower) - m) / sigma
            likelihood = pdf(dist, z) / mul(sigma, lower)
        else:
            likelihood = _bounds(dist, lower, upper, m, sigma)[2]
        return -log(max(likelihood, MIN_LIKELIHOOD))

    return SimpleNamespace(pdf=pdf, grad_pdf=grad_pdf, lower_tail=lower_tail,
                           upper_tail=upper_tail, aft_gradient_hessian=aft_gradient_hessian,
                           aft_loss=aft_loss)


def _python():
    from . import elementary

    return make_survival_math(lambda f: f, elementary.product, elementary.python)


python = _python()
