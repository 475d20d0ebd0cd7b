"""Vector-leaf margins from leaf indices (twin of ``cpu/vector_predict.py``): one thread
per margin cell ``(row, output)`` adds the row's leaf values of that output, tree after
tree (the CPU's additions in the CPU's order; neighbouring threads read neighbouring
outputs, so the reads and writes coalesce)."""
from numba import cuda

from ._device import THREADS, blocks_for, device_output, to_device


@cuda.jit
def _add_kernel(leaves, tree_offsets, leaf_row, leaf_values, out):
    n_rows, k = out.shape
    for cell in range(cuda.grid(1), n_rows * k, cuda.gridsize(1)):
        i = cell // k
        j = cell - i * k
        total = out[i, j]
        for t in range(leaves.shape[1]):
            total += leaf_values[leaf_row[tree_offsets[t] + leaves[i, t]], j]
        out[i, j] = total


def add_leaf_vectors(leaves, tree_offsets, leaf_row, leaf_values, out):
    """``out[i] += leaf_values[leaf_row[tree_offsets[t] + leaves[i, t]]]`` for every tree
    ``t`` in order (as ``cpu.add_leaf_vectors``)."""
    if out.shape[0] == 0 or out.shape[1] == 0 or leaves.shape[1] == 0:
        return
    d_out, finish = device_output(out)
    _add_kernel[blocks_for(out.shape[0] * out.shape[1]), THREADS](
        to_device(leaves), to_device(tree_offsets), to_device(leaf_row),
        to_device(leaf_values), d_out)
    finish()
