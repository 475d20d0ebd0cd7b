"""Dual coordinate ascent for L2-penalised hinge and squared-hinge losses (LinearSVC).

The primal, with the intercept a penalised feature of value ``s`` (liblinear's
``intercept_scaling``), is

    P(w) = 1/2 |w|^2 + sum_i c_i l(y_i w . xt_i),   l(m) = max(0, 1 - m) or max(0, 1 - m)^2,

and its dual (Hsieh et al. 2008), with ``w(alpha) = sum_i alpha_i y_i xt_i``,

    D(alpha) = sum_i alpha_i - 1/2 |w(alpha)|^2 - sum_i alpha_i^2 / (4 c_i)   (squared hinge),
    0 <= alpha_i <= c_i  (hinge, without the last sum).

Each epoch visits the rows in a seeded random order; after it, ``P(w) - D(alpha)`` is the
certificate (``w`` is kept equal to ``w(alpha)``), and the solver stops when it is at most
``tol * P``.

Over several ranks this is CoCoA+ (Ma et al. 2015): each rank runs an epoch on its own
rows against the shared ``w`` with its subproblem scaled by ``sigma`` = the number of
ranks, then the ranks add their changes of ``w`` (one gather per epoch).
"""
import numpy as np

from ..kernels.linear_math import HINGE
from .newton import Result
from .problem import allsum

_CHECK_WORK = 200_000  # nonzeros + rows an epoch must touch to be worth one certificate


def solve(loss, y, c, design, backend, intercept_scale, tol, max_iter, seed):
    """Fit one binary problem.

    Parameters
    ----------
    loss : HINGE or SQUARED_HINGE
    y : float64 (n,), -1 / +1;  c : float64 (n,), row weights C s_i (class weight)
    design : Design by rows;  intercept_scale : float (0: no intercept)
    tol : relative duality gap to reach;  max_iter : epochs;  seed : int
    Returns a ``Result`` (coef (1, d + 1)).
    """
    collective = backend.collective
    n, d = design.n, design.d
    upper, diag_shift = box(loss, c)
    row_norm = design.row_norms() + intercept_scale ** 2
    sigma = float(collective.world_size)
    rng = np.random.default_rng([seed, collective.rank])
    w, alpha = np.zeros(d + 1), np.zeros(n)
    primal = gap = np.inf
    # the certificate costs about an epoch and a few Python calls: on small data it is
    # taken every few epochs (a count fixed by the data's size, so the same on every rank)
    every = int(np.clip(_CHECK_WORK // max(1, int(allsum(design.nnz + n, collective))), 1, 64))
    for epoch in range(1, max_iter + 1):
        v = np.zeros(d + 1)
        design.svc_epoch(y, upper, diag_shift, row_norm, intercept_scale,
                         rng.permutation(n).astype(np.int64), sigma, w, alpha, v)
        w = w + allsum(v, collective)
        if epoch % every and epoch != max_iter:
            continue
        m = signed_margins(y, design, w, intercept_scale)
        primal, gap = certificate(loss, c, m, w, alpha, diag_shift, collective)
        if gap <= tol * primal:
            return Result(w.reshape(1, -1), epoch, primal, gap, True)
    return Result(w.reshape(1, -1), max_iter, primal, gap, False)


def box(loss, c):
    """``(upper, diag_shift)``, float64 (n,): the dual variables' box ``[0, upper]`` (``c``
    for the hinge, unbounded for the squared hinge, ``[0, 0]`` for a row of weight 0) and
    the squared hinge's diagonal term ``1 / (2 c)`` (0 for the hinge)."""
    positive = c > 0.0
    if loss == HINGE:
        return np.where(positive, c, 0.0), np.zeros(c.shape[0])
    return (np.where(positive, np.inf, 0.0),
            np.where(positive, 0.5 / np.where(positive, c, 1.0), 0.0))


def signed_margins(y, design, w, intercept_scale):
    """``m_i = y_i (w . xt_i)``, float64 (n,)."""
    margins = np.empty((design.n, 1))
    design.margins(w[None, :-1], np.array([w[-1] * intercept_scale]), margins)
    return y * margins[:, 0]


def row_gaps(loss, c, m, alpha, diag_shift):
    """Each row's part of ``P(w) - D(alpha)`` at ``w = w(alpha)``: ``c_i l(m_i) - alpha_i
    + diag_shift_i alpha_i^2 / 2 + alpha_i m_i`` (>= 0; ``|w|^2 = sum_i alpha_i m_i``)."""
    slack = np.maximum(0.0, 1.0 - m)
    losses = c * (slack if loss == HINGE else slack * slack)
    return losses - alpha + 0.5 * diag_shift * alpha * alpha + alpha * m


def certificate(loss, c, m, w, alpha, diag_shift, collective):
    """(P(w), P(w) - D(alpha)) over every rank, from the signed margins ``m``."""
    slack = np.maximum(0.0, 1.0 - m)
    losses = c * (slack if loss == HINGE else slack * slack)
    local = np.array([np.sum(losses), np.sum(alpha) - 0.5 * np.sum(diag_shift * alpha * alpha)])
    loss_sum, dual_rows = allsum(local, collective)
    half_norm = 0.5 * float(w @ w)
    primal = half_norm + loss_sum
    return primal, primal - (dual_rows - half_norm)
