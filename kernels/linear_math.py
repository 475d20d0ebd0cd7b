"""Scalar formulas of the linear models' losses, written once and compiled for every backend.

A linear model's primal problem is

    P(W, b) = sum_i f_i(z_i) + sum_j l1_j |w_j| + l2_j / 2 w_j^2,     z_i = W x_i + b,

with one loss term ``f_i`` per row (its weight ``c_i`` folded in) and ``K`` outputs per
row (``K = 1`` except multinomial logistic and multi-target regression). Its Fenchel dual
is ``D(u) = -sum_i f_i*(-u_i) - g*(X^T u)``, and the primal point gives the dual point
``u_i = -theta * f_i'(z_i)`` (``theta`` in (0, 1] scales it into the dual's domain when
the penalty is pure L1). The gap ``P - D`` bounds the distance to the optimum: it is the
solvers' stopping certificate.

Per-row quantities, for label ``y`` and margin ``m = y z`` where the label is a sign:

=============== =================== ============================ =====================
loss            f(z) / c            f'(z) / c                    -f*(-theta u) / c
=============== =================== ============================ =====================
squared         (z - y)^2 / 2       z - y                        theta r y - theta^2 r^2 / 2, r = y - z
logistic        log(1 + e^-m)       -y s, s = sigmoid(-m)        H(theta s), H binary entropy
multinomial     logsumexp(z) - z_y  p - e_y, p = softmax(z)      H(q), q = (1-theta) e_y + theta p
squared hinge   max(0, 1 - m)^2     -2 y max(0, 1 - m)           -(s + s^2 / 4), s = -2 theta max(0, 1 - m)
=============== =================== ============================ =====================

The Hessian of ``f_i`` in ``z`` is ``diag(a_i) - b_i b_i^T`` (``a``, ``b`` of length K):
``a = c``, ``b = 0`` for squared loss; ``a = c s (1 - s)`` logistic; ``a = c p``,
``b = sqrt(c) p`` multinomial; ``a = 2 c [m < 1]`` squared hinge (its generalised
Hessian). One diagonal-minus-rank-one form serves every loss, so one coordinate-descent
kernel serves them all.

``make_linear_math(jit, mul)`` builds the functions with a decorator: the identity gives
plain Python, ``kernels.jit.kernel`` the CPU versions and ``numba.cuda.jit(device=True)``
the CUDA ones, all from this one source. Products go through ``mul`` (as in
``split_math``): a plain product on the CPU, libdevice's ``dmul_rn`` on CUDA, which the
GPU compilers never fuse with an addition into an FMA, so the CUDA results do not depend
on where a compiler chose to contract.
"""
import math
from types import SimpleNamespace

from .elementary import product
from .jit import kernel

SQUARED, LOGISTIC, MULTINOMIAL, SQUARED_HINGE, HINGE = 0, 1, 2, 3, 4
LOSS_IDS = {"squared": SQUARED, "logistic": LOGISTIC, "multinomial": MULTINOMIAL,
            "squared_hinge": SQUARED_HINGE, "hinge": HINGE}


def make_linear_math(jit, mul=product):
    @jit
    def log1pexp(x):
        """log(1 + e^x) without overflow."""
        if x > 0.0:
            return x + math.log1p(math.exp(-x))
        return math.log1p(math.exp(x))

    @jit
    def sigmoid(x):
        if x >= 0.0:
            return 1.0 / (1.0 + math.exp(-x))
        e = math.exp(x)
        return e / (1.0 + e)

    @jit
    def xlogx(p):
        return mul(p, math.log(p)) if p > 0.0 else 0.0

    @jit
    def binary_entropy(s):
        return -(xlogx(s) + xlogx(1.0 - s))

    @jit
    def soft_threshold(x, l1):
        if x > l1:
            return x - l1
        if x < -l1:
            return x + l1
        return 0.0

    @jit
    def coordinate_minimizer(beta, h, l1, l2):
        """argmin_v  h / 2 v^2 - beta v + l1 |v| + l2 / 2 v^2 (0 when flat)."""
        denom = h + l2
        if denom <= 0.0:
            return 0.0
        return soft_threshold(beta, l1) / denom

    @jit
    def separable_terms(loss, z, y, c):
        """(loss, gradient, curvature) of one output of a separable loss."""
        if loss == 0:  # squared
            r = z - y
            return mul(mul(mul(0.5, c), r), r), mul(c, r), c
        m = mul(y, z)
        if loss == 1:  # logistic, y in {-1, +1}
            s = sigmoid(-m)
            return mul(c, log1pexp(-m)), -mul(mul(c, y), s), mul(mul(c, s), 1.0 - s)
        # squared hinge, y in {-1, +1}
        slack = 1.0 - m
        if slack > 0.0:
            return (mul(mul(c, slack), slack), -mul(mul(mul(2.0, c), y), slack), mul(2.0, c))
        return 0.0, 0.0, 0.0

    @jit
    def separable_dual(loss, z, y, c, theta):
        """-f*(-theta u) of one output at the primal point's dual point u = -f'(z)."""
        if loss == 0:
            r = y - z
            return mul(mul(mul(c, theta), r), y - mul(mul(0.5, theta), r))
        m = mul(y, z)
        if loss == 1:
            return mul(c, binary_entropy(mul(theta, sigmoid(-m))))
        s = -mul(mul(2.0, theta), max(0.0, 1.0 - m))
        return -mul(c, s + mul(mul(0.25, s), s))

    return SimpleNamespace(log1pexp=log1pexp, sigmoid=sigmoid, xlogx=xlogx,
                           binary_entropy=binary_entropy, soft_threshold=soft_threshold,
                           coordinate_minimizer=coordinate_minimizer,
                           separable_terms=separable_terms, separable_dual=separable_dual)


CPU = make_linear_math(kernel(inline="always"), kernel(inline="always")(product))
