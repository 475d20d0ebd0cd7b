"""Twins of ``cpu/quantize.py``."""
import numpy as np


def max_abs(values):
    return float(np.max(np.abs(values), initial=0.0))


def quantize_gradients(grad, hess, scales, out):
    out[:, 0] = np.rint(grad * scales[0])
    out[:, 1] = np.rint(hess * scales[1])
