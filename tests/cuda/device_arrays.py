"""Arrays where the CUDA kernels read them: NumPy under the simulator, CuPy on a GPU."""
import numpy as np
from numba import config

SIMULATOR = bool(config.ENABLE_CUDASIM)


def device_array(array):
    """A device copy of ``array`` (a NumPy copy under the simulator)."""
    if SIMULATOR:
        return np.array(array)
    import cupy

    return cupy.asarray(array)


def host(array):
    """A NumPy array of a device array."""
    return array.get() if hasattr(array, "get") else np.asarray(array)
