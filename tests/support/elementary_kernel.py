"""A CUDA kernel of the device's exp / log / log2 (``kernels/cuda/_device.py``): run by
tests/cuda/test_cuda_kernels.py against the CPU's bits, compiled to PTX by
tests/test_cuda_ptx.py (no fused multiply-add)."""
from numba import cuda

from gbm.kernels.cuda._device import elementary

_exp, _log, _log2 = elementary.exp, elementary.log, elementary.log2


@cuda.jit
def elementary_kernel(x, out):
    for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        out[i, 0] = _exp(x[i])
        out[i, 1] = _log(abs(x[i]))
        out[i, 2] = _log2(abs(x[i]))
