"""What every CUDA kernel module shares: the simulator switch, launch sizes, host/device
array moves, and the shared formulas compiled as CUDA device functions.

Arrays: a launcher takes CuPy arrays (or anything with ``__cuda_array_interface__``) and
leaves them where they are; a NumPy argument is copied to the device (an output is then
copied back when the kernel is done), so a caller may keep a level's small arrays on the
host. Under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) kernels run in Python
threads on NumPy arrays, and nothing moves.

Rounding: products in the shared formulas go through libdevice's ``dmul_rn``, which NVVM
and ptxas never fuse with an addition into an FMA (``tests/test_cuda_ptx.py`` checks the
PTX); the simulator has no libdevice, and a plain product there is the same thing.
"""
import numpy as np
from numba import config, cuda

from ..elementary import make_elementary, product
from ..objective_math import make_objective_math
from ..split_math import make_split_math

SIMULATOR = bool(config.ENABLE_CUDASIM)

# Threads per block and the most blocks of a grid-stride launch. The simulator runs every
# thread as a Python thread (its cost grows with threads launched, not with rows), so it
# gets tiny grids; results never depend on the grid.
THREADS = 8 if SIMULATOR else 256
MAX_BLOCKS = 2 if SIMULATOR else 16384
TASK_ROWS = 4096 if SIMULATOR else 8192  # rows of one node per block (histogram, partition)

if not SIMULATOR:
    # Small grids are by design here (a level's few nodes, one tree's leaves): Numba's
    # "low occupancy" performance warning would fire on every such launch.
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 0

device_function = cuda.jit(device=True)
if SIMULATOR:
    mul = device_function(product)
else:
    from numba.cuda import libdevice

    mul = libdevice.dmul_rn  # never contracted into an FMA

elementary = make_elementary(device_function, mul)
split_math = make_split_math(device_function, mul)
objective_math = make_objective_math(device_function, mul, elementary)


def blocks_for(n_items, threads=THREADS):
    """Blocks of a grid-stride launch over ``n_items``."""
    return max(1, min(MAX_BLOCKS, (int(n_items) + threads - 1) // threads))


def array_module():
    """CuPy on a GPU; NumPy under the simulator."""
    if SIMULATOR:
        return np
    import cupy

    return cupy


def is_device_array(array):
    return hasattr(array, "__cuda_array_interface__")


def to_device(array):
    """A kernel input: device arrays as they are, host arrays copied to the device."""
    if SIMULATOR or is_device_array(array):
        return array
    return array_module().asarray(np.ascontiguousarray(array))


def to_host(array):
    """A NumPy array of ``array`` (a copy from the device, or the array itself)."""
    if is_device_array(array):
        if hasattr(array, "get"):
            return array.get()
        return cuda.as_cuda_array(array).copy_to_host()
    return np.asarray(array)


def device_output(array):
    """``(device array, finish)`` for an output argument: a host array gets a device copy
    (its values copied in, for IN/OUT arguments) and ``finish()`` copies it back."""
    if SIMULATOR or is_device_array(array):
        return array, _nothing
    copy = array_module().asarray(array)

    def finish():
        array[...] = copy.get()

    return copy, finish


def _nothing():
    return None


def segment_tasks(starts, ends, chunk=TASK_ROWS):
    """Cut each segment ``[starts[k], ends[k])`` into pieces of at most ``chunk``:
    ``(task_segment, task_lo, task_hi)`` int64 arrays on the device, from host copies of
    the (small) segment bounds."""
    starts = to_host(starts).astype(np.int64)
    ends = to_host(ends).astype(np.int64)
    sizes = np.maximum(ends - starts, 0)
    n_chunks = (sizes + chunk - 1) // chunk
    task_segment = np.repeat(np.arange(starts.shape[0], dtype=np.int64), n_chunks)
    first = np.concatenate(([0], np.cumsum(n_chunks)[:-1])) if n_chunks.size else n_chunks
    piece = np.arange(task_segment.shape[0], dtype=np.int64) - np.repeat(first, n_chunks)
    task_lo = starts[task_segment] + piece * chunk
    task_hi = np.minimum(task_lo + chunk, ends[task_segment])
    return to_device(task_segment), to_device(task_lo), to_device(task_hi)
