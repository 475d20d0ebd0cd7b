"""The gradients and hessians of the built-in pointwise objectives, written once and
compiled for every backend (like ``split_math``): a model's gradients, and so its trees,
are the same bits on a CPU and on a GPU.

Formulas (margin ``m``, label ``y``, weight ``w``; as in ``gbm.objectives``):

* squared error        g = (m - y) w, h = w
* logistic             p = sigmoid(m): g = (p - y) w, h = max(p (1 - p), 1e-16) w
* softmax (per class)  p = softmax(m): g = (p - [k = y]) w, h = max(2 p (1 - p), 1e-16) w
* Poisson              g = (e^m - y) w, h = e^(m + max_delta_step) w
* gamma                s = y e^-m: g = (1 - s) w, h = s w
* Tweedie (rho)        a = e^((1-rho) m), b = e^((2-rho) m): g = (-y a + b) w,
                       h = (-y (1-rho) a + (2-rho) b) w
* pseudo-Huber (s)     z = m - y, q = 1 + (z/s)^2: g = z / sqrt(q) w, h = w / (q sqrt(q))
* absolute error       g = sign(m - y) w, h = w
* quantile (alpha_k)   g = (1 - alpha_k if m >= y else -alpha_k) w, h = w
* hinge (XGBoost's)    s = 2y - 1: g = -s w, h = w if m s < 1, else g = 0, h = FLT_MIN
                       (float32's smallest normal, unweighted, as XGBoost)
* squared log error    p = max(m, -1 + 1e-6): g = (log1p(p) - log1p(y)) / (p + 1) w,
                       h = max((log1p(y) - log1p(p) + 1) / (p + 1)^2, 1e-6) w
* expectile (alpha_k)  XGBoost 3.3's reparametrisation: the predictions are
                       q_0 = m_0, q_k = q_(k-1) + 1e-6 + softplus(m_k) (never crossing);
                       with d_k = q_k - y, s_k = (1 - alpha_k if d_k >= 0 else alpha_k):
                       G_j = sum_(k >= j) s_k d_k w, H_j = sum_(k >= j) s_k w, and
                       g_j = c_j G_j, h_j = c_j^2 H_j with c_0 = 1, c_j = sigmoid(m_j)
                       (dq_k / dm_j for k >= j; the diagonal Gauss-Newton hessian)
* AFT (dist, sigma)    (g, h) of ``survival_math.aft_gradient_hessian`` on the row's
                       interval [y[2 i], y[2 i + 1]], times w

``exp`` is ``kernels.elementary``'s and every product goes through ``mul`` (no fused
multiply-add on any backend). The operations run in the order NumPy evaluated the same
expressions before these kernels existed, so the objectives without ``exp`` give the same
bits as then.
"""
import math
from types import SimpleNamespace

import numpy as np

from .layout import (ABSOLUTE, AFT, EXPECTILE, GAMMA, HINGE, LOGISTIC, POISSON,
                     PSEUDOHUBER, QUANTILE, SOFTMAX, SQUARED, SQUARED_LOG, TWEEDIE)
from .survival_math import make_survival_math

HESSIAN_FLOOR = 1e-16  # floor of the logistic and softmax hessians
_FLT_MIN = 1.1754943508222875e-38  # hinge's hessian where the margin is met (XGBoost's)
_LOG_FLOOR = -1.0 + 1e-6  # squared log error: predictions clipped here (log1p stays finite)
_LOG_HESS_FLOOR = 1e-6  # and its hessian floored here, as XGBoost
EXPECTILE_GAP = 1e-6  # expectile: least gap between two levels' predictions (XGBoost's kRtEps)


def make_objective_math(jit, mul, elementary):
    exp, log, sigmoid = elementary.exp, elementary.log, elementary.sigmoid

    @jit
    def log1p(x):
        """log(1 + x), accurate for small x: u = 1 + x rounded, then log(u) x / (u - 1)
        (Goldberg 1991, theorem 4): the rounding of u cancels out."""
        u = 1.0 + x
        if u == 1.0:
            return x
        return mul(log(u), x / (u - 1.0))

    @jit
    def softplus(x):
        """log(1 + e^x), without overflow (XGBoost's arrangement)."""
        if x > 0.0:
            return x + log1p(exp(-x))
        return log1p(exp(x))

    aft_gradient_hessian = make_survival_math(jit, mul, elementary).aft_gradient_hessian

    @jit
    def _pointwise(kind, m, y, w, objective_params):
        """(g, h) of one row of a one-output objective (scalars in, scalars out: no
        array is passed per row, which on the CPU costs more than the formulas)."""
        h = w
        if kind == SQUARED:
            g = mul(m - y, w)
        elif kind == LOGISTIC:
            p = sigmoid(m)
            g = mul(p - y, w)
            h = mul(max(mul(p, 1.0 - p), HESSIAN_FLOOR), w)
        elif kind == POISSON:
            g = mul(exp(m) - y, w)
            h = mul(exp(m + objective_params[0]), w)
        elif kind == GAMMA:
            scaled = mul(y, exp(-m))
            g = mul(1.0 - scaled, w)
            h = mul(scaled, w)
        elif kind == TWEEDIE:
            rho = objective_params[0]
            a = exp(mul(1.0 - rho, m))
            b = exp(mul(2.0 - rho, m))
            g = mul(mul(-y, a) + b, w)
            h = mul(mul(mul(-y, 1.0 - rho), a) + mul(2.0 - rho, b), w)
        elif kind == PSEUDOHUBER:
            z = m - y
            t = z / objective_params[0]
            scale = 1.0 + mul(t, t)
            root = math.sqrt(scale)
            g = mul(z / root, w)
            h = w / mul(scale, root)
        elif kind == ABSOLUTE:
            d = m - y
            sign = 1.0 if d > 0.0 else (-1.0 if d < 0.0 else 0.0)
            g = mul(sign, w)
        elif kind == HINGE:
            s = mul(2.0, y) - 1.0
            if mul(m, s) < 1.0:
                g = mul(-s, w)
            else:
                g = 0.0
                h = _FLT_MIN
        elif kind == SQUARED_LOG:
            p = max(m, _LOG_FLOOR)
            log_p, log_y = log1p(p), log1p(y)
            g = mul((log_p - log_y) / (p + 1.0), w)
            h = mul(max((-log_p + log_y + 1.0) / mul(p + 1.0, p + 1.0), _LOG_HESS_FLOOR), w)
        else:
            g = math.nan
            h = math.nan
        return g, h

    @jit
    def _expectile_row(margin, i, y, w, alphas, grad, hess):
        """Row ``i`` of the expectile loss (see the module docstring): each level's
        ``s_k d_k w`` and ``s_k w`` first (in ``grad`` / ``hess``), then their sums from
        the last level down, scaled by the chain rule."""
        n_groups = margin.shape[1]
        q = margin[i, 0]
        for k in range(n_groups):
            if k > 0:
                q = q + (EXPECTILE_GAP + softplus(margin[i, k]))
            d = q - y
            s = (1.0 - alphas[k]) if d >= 0.0 else alphas[k]
            grad[i, k] = mul(mul(s, d), w)
            hess[i, k] = mul(s, w)
        g_sum = 0.0
        h_sum = 0.0
        for k in range(n_groups - 1, -1, -1):
            g_sum += grad[i, k]
            h_sum += hess[i, k]
            c = 1.0 if k == 0 else sigmoid(margin[i, k])
            grad[i, k] = mul(c, g_sum)
            hess[i, k] = mul(mul(c, c), h_sum)

    @jit
    def rows_common(kind, margin, lo, hi, y, w, objective_params, grad, hess):
        """``rows_gradients`` for every kind but the expectile loss and AFT (whose
        formulas are most of the code to compile: a CPU fit of another objective compiles
        only this)."""
        n_groups = margin.shape[1]
        if kind == SOFTMAX:
            for i in range(lo, hi):
                label = np.int64(y[i])
                top = margin[i, 0]
                for k in range(1, n_groups):
                    if margin[i, k] > top:
                        top = margin[i, k]
                total = 0.0
                for k in range(n_groups):
                    e = exp(margin[i, k] - top)
                    grad[i, k] = e
                    total += e
                for k in range(n_groups):
                    p = grad[i, k] / total
                    onehot = 1.0 if k == label else 0.0
                    grad[i, k] = mul(p - onehot, w[i])
                    hess[i, k] = mul(max(mul(mul(2.0, p), 1.0 - p), HESSIAN_FLOOR), w[i])
        elif kind == QUANTILE:
            for i in range(lo, hi):
                for k in range(n_groups):
                    alpha = objective_params[k]
                    g = (1.0 - alpha) if margin[i, k] >= y[i] else -alpha
                    grad[i, k] = mul(g, w[i])
                    hess[i, k] = w[i]
        else:
            for i in range(lo, hi):
                g, h = _pointwise(kind, margin[i, 0], y[i], w[i], objective_params)
                grad[i, 0] = g
                hess[i, 0] = h

    @jit
    def rows_gradients(kind, margin, lo, hi, y, w, objective_params, grad, hess):
        """Rows ``lo .. hi - 1``'s gradients and hessians into ``grad[i, :]``,
        ``hess[i, :]`` (a CPU thread takes a range of rows, a GPU thread one row)."""
        if kind == EXPECTILE:
            for i in range(lo, hi):
                _expectile_row(margin, i, y[i], w[i], objective_params, grad, hess)
        elif kind == AFT:
            dist, sigma = np.int64(objective_params[0]), objective_params[1]
            for i in range(lo, hi):
                g, h = aft_gradient_hessian(dist, sigma, y[2 * i], y[2 * i + 1], margin[i, 0])
                grad[i, 0] = mul(g, w[i])
                hess[i, 0] = mul(h, w[i])
        else:
            rows_common(kind, margin, lo, hi, y, w, objective_params, grad, hess)

    return SimpleNamespace(rows_gradients=rows_gradients, rows_common=rows_common, log1p=log1p,
                           softplus=softplus)


def _python():
    from . import elementary

    return make_objective_math(lambda f: f, elementary.product, elementary.python)


python = _python()
