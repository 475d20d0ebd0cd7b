"""Twin of ``cpu/exact.py``: each value split by ``frexp`` rather than read from its bits."""
import numpy as np

from ..layout import EXACT_E_MIN, EXACT_HALF


def add_exact_parts(bits, out):
    values = bits.view(np.float64)
    _, exponent = np.frexp(values)
    # |x| = magnitude * 2**shift, magnitude an integer below 2**53: frexp's exponent less
    # 53, but never below 2**-1074, the smallest subnormal (its bit is the last one)
    shift = np.maximum(exponent.astype(np.int64) - 53, -1074)
    magnitude = np.ldexp(np.abs(values), -shift).astype(np.int64)  # exact: an integer
    sign = np.where(np.signbit(values), -1, 1)
    k = shift - EXACT_E_MIN
    rows = np.broadcast_to(np.arange(values.shape[0])[:, None], values.shape)
    np.add.at(out, (rows, k + EXACT_HALF), sign * (magnitude >> EXACT_HALF))
    np.add.at(out, (rows, k), sign * (magnitude & ((1 << EXACT_HALF) - 1)))
