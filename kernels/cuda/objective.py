"""Gradients and hessians of the built-in pointwise objectives, one thread per row (the
shared ``objective_math`` formulas: the same bits as the CPU kernel)."""
from numba import cuda

from ._device import THREADS, blocks_for, device_output, objective_math, to_device

rows_gradients = objective_math.rows_gradients


@cuda.jit
def _gradients_kernel(kind, margin, y, w, objective_params, grad, hess):
    for i in range(cuda.grid(1), margin.shape[0], cuda.gridsize(1)):
        rows_gradients(kind, margin, i, i + 1, y, w, objective_params, grad, hess)


def pointwise_gradients(kind, margin, y, w, objective_params, grad, hess, n_threads=1):
    """Every row's gradient and hessian for objective ``kind`` (as
    ``cpu.pointwise_gradients``; ``n_threads`` is ignored)."""
    d_grad, finish_grad = device_output(grad)
    d_hess, finish_hess = device_output(hess)
    if margin.shape[0]:
        _gradients_kernel[blocks_for(margin.shape[0]), THREADS](
            int(kind), to_device(margin), to_device(y), to_device(w),
            to_device(objective_params), d_grad, d_hess)
    finish_grad()
    finish_hess()
