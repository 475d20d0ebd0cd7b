"""Fixed-point gradient pairs (twin of ``cpu/quantize.py``)."""
import math

import numpy as np
from numba import cuda, int64

from ._device import THREADS, array_module, blocks_for, device_output, mul, to_device, to_host


@cuda.jit
def _max_abs_kernel(values, out):
    best = 0.0
    for i in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        v = abs(values[i])
        if v > best:
            best = v
    cuda.atomic.max(out, 0, best)  # a maximum: the same whatever the order


@cuda.jit(device=True)
def _rint(x):
    """Round half to even, as ``np.rint``, from exact operations (``x - floor(x)`` is
    exact below 2**52; above, every float is an integer)."""
    low = math.floor(x)
    rest = x - low
    if rest > 0.5 or (rest == 0.5 and low - mul(2.0, math.floor(mul(0.5, low))) != 0.0):
        return low + 1.0
    return low


@cuda.jit
def _quantize_kernel(grad, hess, scales, out):
    for i in range(cuda.grid(1), grad.shape[0], cuda.gridsize(1)):
        out[i, 0] = int64(_rint(mul(grad[i], scales[0])))
        out[i, 1] = int64(_rint(mul(hess[i], scales[1])))


def max_abs(values):
    """Largest |value| of a float64 array (0 for an empty one), as a Python float."""
    if values.shape[0] == 0:
        return 0.0
    out = array_module().zeros(1, dtype=np.float64)
    _max_abs_kernel[blocks_for(values.shape[0]), THREADS](to_device(values), out)
    return float(to_host(out)[0])


def quantize_gradients(grad, hess, scales, out):
    """``out[i] = (rint(grad[i] * scales[0]), rint(hess[i] * scales[1]))`` (int64 (n, 2))."""
    d_out, finish = device_output(out)
    if grad.shape[0]:
        _quantize_kernel[blocks_for(grad.shape[0]), THREADS](
            to_device(grad), to_device(hess), to_device(scales), d_out)
    finish()
