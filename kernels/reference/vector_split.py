"""The vector-leaf split rule in plain Python (twin of ``cpu/vector_split.py``), shared by
``vector_leaf.py`` and ``vector_categorical.py``: which outputs count in a node, each
output's weight and gain and their monotone forms, and a candidate split's gain."""
import numpy as np

from ..split_math import python as _math


def counted(h, mcw):
    # XGBoost 3.2 weighs an output 0 (gain 0) in a node whose hessian there is not
    # positive or is below min_child_weight
    return h > 0 and h >= mcw


def split_gain(left, total, scales, lam, alpha, mds, mcw, parent):
    right = total - left
    gain = 0.0
    for j in range(left.shape[0]):
        gl, hl = left[j, 0] * (1.0 / scales[j, 0]), left[j, 1] * (1.0 / scales[j, 1])
        gr, hr = right[j, 0] * (1.0 / scales[j, 0]), right[j, 1] * (1.0 / scales[j, 1])
        gain += _math.node_gain(gl, hl, lam, alpha, mds) if counted(hl, mcw) else 0.0
        gain += _math.node_gain(gr, hr, lam, alpha, mds) if counted(hr, mcw) else 0.0
    return gain - parent


# -- monotone constraints (XGBoost 3.4's vector rule) ---------------------------------------
def clip(w, bound):
    return min(max(w, bound[0]), bound[1])


def output_weight(g, h, lam, alpha, mds, mcw):
    return _math.leaf_weight(g, h, lam, alpha, mds) if counted(h, mcw) else 0.0


def split_weights(g_left, h_left, g_all, h_all, scale, bound, sign, params):
    """One output's two child weights: each clamped into the node's bound; swapped order
    on a constrained feature -> both the clamped weight of the node's sums at twice the
    L1/L2 penalties. Returns (w_left, w_right, pooled)."""
    lam, alpha, mds, mcw = params
    inv_g, inv_h = 1.0 / scale[0], 1.0 / scale[1]
    gl, hl = g_left * inv_g, h_left * inv_h
    gr, hr = (g_all - g_left) * inv_g, (h_all - h_left) * inv_h
    w_left = clip(output_weight(gl, hl, lam, alpha, mds, mcw), bound)
    w_right = clip(output_weight(gr, hr, lam, alpha, mds, mcw), bound)
    wrong = w_left > w_right if sign > 0 else (w_left < w_right if sign < 0 else False)
    if wrong:
        pooled = clip(output_weight(g_all * inv_g, h_all * inv_h, 2.0 * lam, 2.0 * alpha,
                                    mds, mcw), bound)
        return pooled, pooled, True
    return w_left, w_right, False


def bounded_output_gain(g, h, bound, params):
    """Minus twice the node's loss at its clamped weight (the plain gain when unbounded)."""
    lam, alpha, mds, mcw = params
    if np.isinf(bound[0]) and np.isinf(bound[1]):
        return _math.node_gain(g, h, lam, alpha, mds) if counted(h, mcw) else 0.0
    return _math.gain_given_weight(g, h, lam, alpha, clip(output_weight(g, h, lam, alpha, mds, mcw),
                                                          bound))


def bounded_split_gain(left, total, bounds, sign, scales, params, parent):
    lam, alpha = params[0], params[1]
    gain = 0.0
    for j in range(total.shape[0]):
        s = scales[j]
        wl, wr, pooled = split_weights(left[j, 0], left[j, 1], total[j, 0], total[j, 1], s,
                                       bounds[j], sign, params)
        gl, hl = left[j, 0] * (1.0 / s[0]), left[j, 1] * (1.0 / s[1])
        gr = (total[j, 0] - left[j, 0]) * (1.0 / s[0])
        hr = (total[j, 1] - left[j, 1]) * (1.0 / s[1])
        if pooled:
            gain += _math.gain_given_weight(gl, hl, lam, alpha, wl)
            gain += _math.gain_given_weight(gr, hr, lam, alpha, wr)
        else:
            gain += bounded_output_gain(gl, hl, bounds[j], params)
            gain += bounded_output_gain(gr, hr, bounds[j], params)
    return gain - parent
