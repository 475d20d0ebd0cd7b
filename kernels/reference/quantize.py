"""Twins of ``cpu/quantize.py``."""
import numpy as np


def max_abs(values):
    return float(np.max(np.abs(values), initial=0.0))


def quantize_gradients(grad, hess, scales, out):
    out[:, 0] = np.rint(grad * scales[0])
    out[:, 1] = np.rint(hess * scales[1])


def max_abs_pairs(pairs):
    values = pairs.view(np.float64)
    return np.array([max_abs(column[~np.isnan(column)]) for column in values.T])


def quantize_pairs_in_place(pairs, scales):
    values = pairs.view(np.float64).copy()
    quantize_gradients(values[:, 0], values[:, 1], scales, pairs)
