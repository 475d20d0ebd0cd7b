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

from .layout import (ABSOLUTE, AFT, GAMMA, LOGISTIC, POISSON, PSEUDOHUBER, QUANTILE,
                     SOFTMAX, SQUARED, TWEEDIE)
from .survival_math import make_survival_math

_EPS = 1e-16  # floor of the logistic and softmax hessians


def make_objective_math(jit, mul, elementary):
    exp, sigmoid = elementary.exp, elementary.sigmoid
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
            h = mul(max(mul(p, 1.0 - p), _EPS), w)
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
        else:
            g = math.nan
            h = math.nan
        return g, h

    @jit
    def rows_gradients(kind, margin, lo, hi, y, w, objective_params, grad, hess):
        """Rows ``lo .. hi - 1``'s gradients and hessians into ``grad[i, :]``,
        ``hess[i, :]`` (a CPU thread takes a range of rows, a GPU thread one row)."""
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
                    hess[i, k] = mul(max(mul(mul(2.0, p), 1.0 - p), _EPS), w[i])
        elif kind == QUANTILE:
            for i in range(lo, hi):
                for k in range(n_groups):
                    alpha = objective_params[k]
                    g = (1.0 - alpha) if margin[i, k] >= y[i] else -alpha
                    grad[i, k] = mul(g, w[i])
                    hess[i, k] = w[i]
        elif kind == AFT:
            dist, sigma = np.int64(objective_params[0]), objective_params[1]
            for i in range(lo, hi):
                g, h = aft_gradient_hessian(dist, sigma, y[2 * i], y[2 * i + 1], margin[i, 0])
                grad[i, 0] = mul(g, w[i])
                hess[i, 0] = mul(h, w[i])
        else:
            for i in range(lo, hi):
                g, h = _pointwise(kind, margin[i, 0], y[i], w[i], objective_params)
                grad[i, 0] = g
                hess[i, 0] = h

    return SimpleNamespace(rows_gradients=rows_gradients)


def _python():
    from . import elementary

    return make_objective_math(lambda f: f, elementary.product, elementary.python)


python = _python()
