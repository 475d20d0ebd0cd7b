"""A free intercept's optimum given the other coefficients: what makes the certificate
cover the intercept.

A free (unpenalised) intercept makes the dual constrained: ``(Xt^T u)_b = s sum_i u_i``
must be 0 (the conjugate of a zero penalty is the indicator of 0). At the primal point's
dual point ``u = -f'(z)`` that constraint is the intercept's optimality condition
``sum_i f_i'(z_i) = 0``; where it fails, ``P - D`` bounds nothing (at ``W = 0, b = 0``,
Fenchel-Young is an equality at every row and the "gap" is exactly 0, whatever ``y``).
So before the certificate that ends a fit (and in ``NewtonSolver.evaluate``) the Newton
solver moves the intercepts to their optimum given the other coefficients
(``NewtonSolver._settle_intercept``): a block-coordinate step that only lowers the
objective, after which the constraint holds to rounding. The rounds before use the
certificate only to steer (the inner tolerance, when to check).

The intercepts act on the margins as one shift ``t`` per output, ``z_i -> z_i + t``;
``sum_i f_i(z_i + t)`` is convex in ``t`` with the gradient and Hessian below, from the
per-row terms the solver already holds (``kernels/linear_math.py``: the Hessian of
``f_i`` is ``diag(a_i) - b_i b_i^T``). Its minimiser: one Newton step for the squared
loss (the weighted mean residual), a few damped ones for the logistic losses (the
weighted log-odds, or log class frequencies, at ``W = 0``).
"""
import numpy as np

from .problem import allsum

MAX_STEPS = 60  # damped Newton steps on the shift; quadratic convergence needs a few
MAX_HALVINGS = 40
_NEGLIGIBLE = 1e-15  # a shift this small next to the intercepts' margins is rounding
_RESOLVED = 1e-12  # a predicted decrease this small next to the loss is lost in its rounding


def shift_derivatives(terms, collective):
    """Gradient (K,) and Hessian (K, K) of ``sum_i f_i(z_i + t)`` at ``t = 0``, over every
    rank, from a ``newton._Terms`` at ``z``."""
    a, b = terms.curv_a, terms.curv_b
    K = a.shape[1]
    packed = np.concatenate([terms.grad.sum(axis=0), a.sum(axis=0), (b.T @ b).ravel()])
    total = allsum(packed, collective)
    grad, diag, outer = total[:K], total[K:2 * K], total[2 * K:].reshape(K, K)
    return grad, np.diag(diag) - outer


def newton_shift(grad, hessian, coupled):
    """The Newton step on the shift, (K,). ``coupled``: the outputs share a softmax, whose
    Hessian is singular along ``(1, ..., 1)`` (a common shift changes nothing, and the
    gradient has no part along it): that direction gets a curvature of the mean diagonal,
    so the step has none of it. Outputs without curvature do not move."""
    if coupled:
        K = grad.shape[0]
        regular = hessian + np.trace(hessian) / K * np.full((K, K), 1.0 / K)
        try:
            return np.linalg.solve(regular, -grad)
        except np.linalg.LinAlgError:
            return np.zeros(K)
    curvature = np.diag(hessian)
    return np.where(curvature > 0.0, -grad / np.where(curvature > 0.0, curvature, 1.0), 0.0)


def negligible(step, intercept_margins):
    """Whether a shift ``step`` (K,) is rounding next to the intercepts' part of the
    margins, ``s b`` (K,)."""
    return bool(np.all(np.abs(step) <= _NEGLIGIBLE * (1.0 + np.abs(intercept_margins))))


def unresolved(decrease, loss_sum):
    """Whether a predicted decrease of the loss is below what its sum can show, so that a
    failed trial says rounding, not a step too long (no point in halving it)."""
    return decrease <= _RESOLVED * abs(loss_sum)
