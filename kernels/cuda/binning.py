"""Raw feature values to bins, on the device (twin of ``cpu/binning.py``)."""
import math

from numba import cuda, int64

from ._device import THREADS, blocks_for, device_output, to_device


@cuda.jit
def _bin_kernel(X, padded_cuts, n_bins, out):
    n_rows, n_features = X.shape
    width = padded_cuts.shape[1]
    for cell in range(cuda.grid(1), n_rows * n_features, cuda.gridsize(1)):
        r = cell // n_features
        f = cell - r * n_features
        x = X[r, f]
        if math.isnan(x):
            out[r, f] = n_bins[f]
            continue
        position = int64(0)
        step = width // 2
        while step > 0:  # the fixed-step search of the CPU kernel
            if padded_cuts[f, position + step - 1] <= x:
                position += step
            step >>= 1
        out[r, f] = position


def bin_values(X, padded_cuts, n_bins, out):
    """Map raw values to bins: the number of a feature's cuts <= x; NaN -> n_bins[f].

    Arguments as in ``cpu.bin_values``; one thread per cell (grid-stride).
    """
    if X.shape[0] * X.shape[1] == 0:
        return
    d_out, finish = device_output(out)
    _bin_kernel[blocks_for(X.size), THREADS](to_device(X), to_device(padded_cuts),
                                              to_device(n_bins), d_out)
    finish()
