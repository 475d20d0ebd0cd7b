"""Plain twins of the coordinate-descent kernels (``kernels/cpu/linear_cd.py``).

The residual forms are computed here from the explicit Hessian matrix (built from the
rows' curvatures) instead of the kept products ``q = X delta``: the same coordinate steps
by another road. The dual steps read the margin from ``X @ (w + sigma v)`` in full.
"""
import numpy as np

from .linear import gram_dense
from .sparse_arrays import csc_matrix_of, csr_matrix_of


def _soft_threshold(x, l1):
    return np.sign(x) * max(abs(x) - l1, 0.0)


def _minimizer(beta, h, l1, l2):
    return 0.0 if h + l2 <= 0.0 else _soft_threshold(beta, l1) / (h + l2)


def _violation(slope, w, l1, l2):
    """Distance of 0 from the coordinate's subdifferential l2 w + slope + l1 d|w|."""
    slope = slope + l2 * w
    return abs(slope + np.sign(w) * l1) if w != 0.0 else max(0.0, abs(slope) - l1)


def cd_gram(hessian, grad, l1, l2, coef, delta, hdelta, active, max_sweeps, rel_tol, abs_tol):
    first = None
    for sweep in range(max_sweeps):
        violation = 0.0
        for j in active:
            h = hessian[j, j]
            current = coef[j] + delta[j]
            slope = grad[j] + hessian[j] @ delta  # H delta recomputed, not kept
            violation += _violation(slope, current, l1[j], l2[j])
            delta[j] += _minimizer(h * current - slope, h, l1[j], l2[j]) - current
        hdelta[:] = hessian @ delta
        first = violation if first is None else first
        if violation <= abs_tol or violation <= rel_tol * first:
            return sweep + 1
    return max_sweeps


def _residual(X, intercept_scale, curv_a, curv_b, grad, diag, l1, l2, coef, delta, q, t,
              active, max_sweeps, rel_tol, abs_tol):
    hessian = np.empty((delta.shape[0], delta.shape[0]))
    gram_dense(X, curv_a, curv_b, intercept_scale, 1, hessian)
    np.fill_diagonal(hessian, diag)  # the kernel's diagonal is the caller's
    sweeps = cd_gram(hessian, grad, l1, l2, coef, delta, np.zeros_like(delta), active,
                     max_sweeps, rel_tol, abs_tol)
    n, d = X.shape
    step = delta.reshape(-1, d + 1)
    q[:] = X @ step[:, :d].T + intercept_scale * step[:, d]
    t[:] = (curv_b * q).sum(axis=1)
    return sweeps


def cd_residual_dense(X, intercept_scale, curv_a, curv_b, rank_one, grad, diag, l1, l2, coef,
                      delta, q, t, active, max_sweeps, rel_tol, abs_tol):
    return _residual(np.asarray(X), intercept_scale, curv_a, curv_b, grad, diag, l1, l2,
                     coef, delta, q, t, active, max_sweeps, rel_tol, abs_tol)


def cd_residual_csc(indptr, indices, data, intercept_scale, curv_a, curv_b, rank_one, grad,
                    diag, l1, l2, coef, delta, q, t, active, max_sweeps, rel_tol, abs_tol):
    X = csc_matrix_of(indptr, indices, data, (q.shape[0], indptr.shape[0] - 1)).toarray()
    return _residual(X, intercept_scale, curv_a, curv_b, grad, diag, l1, l2, coef, delta, q, t,
                     active, max_sweeps, rel_tol, abs_tol)


def _svc(X, y, upper, diag_shift, row_norm, intercept_scale, order, sigma, w, alpha, v):
    xt = np.hstack([X, np.full((X.shape[0], 1), float(intercept_scale))])
    moved = 0
    for i in order:
        a = alpha[i]
        g = y[i] * (xt[i] @ (w + sigma * v)) - 1.0 + diag_shift[i] * a
        projected = min(g, 0.0) if a <= 0.0 else max(g, 0.0) if a >= upper[i] else g
        curvature = sigma * row_norm[i] + diag_shift[i]
        if projected == 0.0:
            continue
        if curvature <= 0.0:
            new = upper[i] if projected < 0.0 else 0.0
        else:
            new = min(max(a - projected / curvature, 0.0), upper[i])
        if new != a:
            v += (new - a) * y[i] * xt[i]
            alpha[i] = new
            moved += 1
    return moved


def svc_dual_cd_dense(X, y, upper, diag_shift, row_norm, intercept_scale, order, sigma, w,
                      alpha, v):
    return _svc(np.asarray(X), y, upper, diag_shift, row_norm, intercept_scale, order, sigma,
                w, alpha, v)


def svc_dual_cd_csr(indptr, indices, data, y, upper, diag_shift, row_norm, intercept_scale,
                    order, sigma, w, alpha, v):
    X = csr_matrix_of(indptr, indices, data, (y.shape[0], w.shape[0] - 1)).toarray()
    return _svc(X, y, upper, diag_shift, row_norm, intercept_scale, order, sigma, w, alpha, v)
