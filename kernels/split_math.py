"""Scalar split formulas, written once and compiled for every backend.

``G`` and ``H`` are float64 sums of gradients and hessians of the rows in a node. With
L2 penalty ``lam``, L1 penalty ``alpha`` and weight cap ``max_delta_step`` (0 = no cap):

* leaf weight  w* = -T(G) / (H + lam), T the soft threshold by alpha, clipped to the cap
  (eq. 5 of Chen & Guestrin 2016, with XGBoost's L1 and max_delta_step extensions);
* node gain    T(G)^2 / (H + lam) uncapped, else -(2 G w + (H + lam) w^2 + 2 alpha |w|),
  i.e. minus twice the node's regularised loss at w (eq. 6-7); both forms agree uncapped.

``make_split_math(jit, mul)`` builds the functions with a decorator: the identity gives
the plain-Python reference, ``kernels.jit.helper`` (numba.njit, no Python entry point) the CPU versions and
``numba.cuda.jit(device=True)`` the CUDA ones, all from this one source. Every product
goes through ``mul``: a plain product on the CPU and in Python, libdevice's ``dmul_rn``
on CUDA, which the GPU compilers never fuse with an addition into an FMA (a fused
``a * b + c`` rounds once where the CPU rounds twice; see ``kernels/elementary.py`` and
docs/gpu.md).
"""
import math
from types import SimpleNamespace

from .elementary import product
from .jit import helper


def make_split_math(jit, mul=product):
    @jit
    def threshold_l1(g, alpha):
        if g > alpha:
            return g - alpha
        if g < -alpha:
            return g + alpha
        return 0.0

    @jit
    def leaf_weight(g, h, lam, alpha, max_delta_step):
        denom = h + lam
        if denom <= 0.0:
            return 0.0
        w = -threshold_l1(g, alpha) / denom
        if max_delta_step > 0.0 and abs(w) > max_delta_step:
            w = math.copysign(max_delta_step, w)
        return w

    @jit
    def node_gain(g, h, lam, alpha, max_delta_step):
        denom = h + lam
        if denom <= 0.0:
            return 0.0
        if max_delta_step == 0.0:
            t = threshold_l1(g, alpha)
            return mul(t, t) / denom
        w = leaf_weight(g, h, lam, alpha, max_delta_step)
        return -(mul(mul(2.0, g), w) + mul(mul(denom, w), w) + mul(mul(2.0, alpha), abs(w)))

    @jit
    def gain_given_weight(g, h, lam, alpha, w):
        # minus twice the node's regularised loss at weight w
        return -(mul(mul(2.0, g), w) + mul(mul(h + lam, w), w) + mul(mul(2.0, alpha), abs(w)))

    @jit
    def bounded_weight(g, h, lam, alpha, max_delta_step, lower, upper):
        w = leaf_weight(g, h, lam, alpha, max_delta_step)
        if w < lower:
            return lower
        if w > upper:
            return upper
        return w

    @jit
    def bounded_gain(g, h, lam, alpha, max_delta_step, lower, upper):
        """node_gain with the weight kept in [lower, upper] (monotone constraints); the
        plain formula, bit for bit, when the bounds are infinite."""
        if lower == -math.inf and upper == math.inf:
            return node_gain(g, h, lam, alpha, max_delta_step)
        if h + lam <= 0.0:
            return 0.0
        return gain_given_weight(g, h, lam, alpha,
                                 bounded_weight(g, h, lam, alpha, max_delta_step, lower, upper))

    return SimpleNamespace(threshold_l1=threshold_l1, leaf_weight=leaf_weight, node_gain=node_gain,
                           gain_given_weight=gain_given_weight, bounded_weight=bounded_weight,
                           bounded_gain=bounded_gain)


python = make_split_math(lambda f: f)
cpu = make_split_math(helper, helper(product))
