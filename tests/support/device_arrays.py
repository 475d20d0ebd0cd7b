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


def gpu_here():
    """Whether a real GPU is usable here (not the simulator): CuPy sees a device and
    numba-cuda is available."""
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        from numba import config, cuda

        return not config.ENABLE_CUDASIM and cuda.is_available()
    except Exception:
        return False
