"""NumPy twins of the linear models' data passes (``kernels/cpu/linear.py``): whole-array
formulas written from the definitions (``kernels/linear_math.py``), not from the kernels.
``n_threads`` is accepted and ignored."""
import numpy as np
from scipy.special import expit, log_softmax, xlogy

from ..linear_math import LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE
from .sparse_arrays import csc_matrix_of, csr_matrix_of


def _entropy(p):
    return -(xlogy(p, p) + xlogy(1.0 - p, 1.0 - p))


def loss_terms(loss, z, y, c, grad, curv_a, curv_b, losses):
    """Loss, gradient and Hessian pieces per row (see the CPU kernel)."""
    cc = c[:, None]
    if loss == MULTINOMIAL:
        logp = log_softmax(z, axis=1)
        p = np.exp(logp)
        onehot = np.zeros_like(z)
        onehot[np.arange(z.shape[0]), y[:, 0].astype(np.int64)] = 1.0
        losses[:] = -c * (logp * onehot).sum(axis=1)
        grad[:] = cc * (p - onehot)
        curv_a[:] = cc * p
        curv_b[:] = np.sqrt(cc) * p
        return
    curv_b[:] = 0.0
    if loss == SQUARED:
        r = z - y
        losses[:] = (0.5 * cc * r * r).sum(axis=1)
        grad[:] = cc * r
        curv_a[:] = np.broadcast_to(cc, z.shape)
    elif loss == LOGISTIC:
        m = y * z
        s = expit(-m)
        losses[:] = (cc * np.logaddexp(0.0, -m)).sum(axis=1)
        grad[:] = -cc * y * s
        curv_a[:] = cc * s * (1.0 - s)
    elif loss == SQUARED_HINGE:
        slack = np.maximum(0.0, 1.0 - y * z)
        losses[:] = (cc * slack * slack).sum(axis=1)
        grad[:] = -2.0 * cc * y * slack
        curv_a[:] = 2.0 * cc * (slack > 0.0)
    else:
        raise ValueError(f"loss id {loss} has no smooth terms")


def dual_terms(loss, z, y, c, theta, out):
    """-f*(-theta u) per row at u = -f'(z)."""
    cc = c[:, None]
    if loss == MULTINOMIAL:
        p = np.exp(log_softmax(z, axis=1))
        onehot = np.zeros_like(z)
        onehot[np.arange(z.shape[0]), y[:, 0].astype(np.int64)] = 1.0
        q = theta * p + (1.0 - theta) * onehot
        out[:] = -c * xlogy(q, q).sum(axis=1)
    elif loss == SQUARED:
        u = theta * cc * (y - z)  # dual variable; f*(v) = v y + v^2 / (2c)
        safe = np.where(cc > 0.0, cc, 1.0)
        out[:] = np.where(cc > 0.0, u * y - u * u / (2.0 * safe), 0.0).sum(axis=1)
    elif loss == LOGISTIC:
        out[:] = (cc * _entropy(theta * expit(-y * z))).sum(axis=1)
    elif loss == SQUARED_HINGE:
        s = -2.0 * theta * np.maximum(0.0, 1.0 - y * z)
        out[:] = (-cc * (s + s * s / 4.0)).sum(axis=1)
    else:
        raise ValueError(f"loss id {loss} has no dual terms here")


def margins_dense(X, coef, intercept, out):
    out[:] = X @ coef.T + intercept


def margins_csr(indptr, indices, data, coef, intercept, out):
    X = csr_matrix_of(indptr, indices, data, (out.shape[0], coef.shape[1]))
    out[:] = X @ coef.T + intercept


def margins_csc(indptr, indices, data, coef, intercept, out, n_threads):
    X = csc_matrix_of(indptr, indices, data, (out.shape[0], coef.shape[1]))
    out[:] = X @ coef.T + intercept


def gradient_dense(X, g, out):
    out[:] = g.T @ X


def gradient_csc(indptr, indices, data, g, out):
    X = csc_matrix_of(indptr, indices, data, (g.shape[0], out.shape[1]))
    out[:] = (X.T @ g).T


def hessian_diagonal_dense(X, curv_a, curv_b, out):
    out[:] = ((X * X).T @ (curv_a - curv_b * curv_b)).T


def hessian_diagonal_csc(indptr, indices, data, curv_a, curv_b, out):
    X = csc_matrix_of(indptr, indices, data, (curv_a.shape[0], out.shape[1]))
    out[:] = (X.multiply(X).T @ (curv_a - curv_b * curv_b)).T


def gram_dense(X, curv_a, curv_b, intercept_scale, block_rows, out):
    """H[(k, j), (l, m)] = sum_i xt_ij xt_im (delta_kl a_ik - b_ik b_il), xt = [X, s]."""
    n, d = X.shape
    K = curv_a.shape[1]
    xt = np.hstack([X, np.full((n, 1), float(intercept_scale))])
    for k in range(K):
        for l in range(K):
            w = (curv_a[:, k] if k == l else 0.0) - curv_b[:, k] * curv_b[:, l]
            out[k * (d + 1):(k + 1) * (d + 1), l * (d + 1):(l + 1) * (d + 1)] = \
                (xt * w[:, None]).T @ xt
