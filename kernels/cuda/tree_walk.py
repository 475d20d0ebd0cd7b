"""A row's way through the walk table on the device (twin of ``cpu/tree_walk.py``), which
``predict.py``, ``csr_predict.py`` and ``bundled.py`` share: the walk table and the
category sets copied to the device (``tree_tables``), and a row's way at a node from its
bin or from its raw value."""
import math

import numpy as np
from numba import cuda, float32, int64

from ..layout import CAT_WORDS
from ._device import to_device


@cuda.jit(device=True)
def _categorical_goes_left(x, default_left, cat_bits, row):
    if not (x >= 0.0 and x < 32.0 * cat_bits.shape[1]):
        return default_left
    code = int64(x)
    word = int64(cat_bits[row, code >> 5])
    return ((word >> (code & 31)) & 1) == 0


@cuda.jit(device=True)
def binned_goes_left(walk, at, b, missing, cat_bits):
    """Whether a row goes left at the walk-table node at ``at``, from its bin ``b`` of the
    node's feature (``missing``: ``b`` is the missing bin); every bin layout's walk."""
    flags = walk[at + 2]
    default_left = (flags & 1) == 1
    if flags & 2:
        x = float32(math.nan) if missing else float32(b)
        return _categorical_goes_left(x, default_left, cat_bits, walk[at + 3])
    if missing:
        return default_left
    return b <= walk[at + 3]


@cuda.jit(device=True)
def value_goes_left(walk, at, x, thresholds, cat_bits):
    """Whether a row goes left at the walk-table node at ``at``, from its raw value ``x``
    of the node's feature (NaN: missing)."""
    flags = walk[at + 2]
    default_left = (flags & 1) == 1
    if flags & 2:
        return _categorical_goes_left(x, default_left, cat_bits, walk[at + 3])
    if math.isnan(x):
        return default_left
    return x < thresholds[at + 3]


def tree_tables(walk, cat_bits):
    walk = to_device(walk)
    cat_bits = to_device(cat_bits)
    if cat_bits.shape[0] == 0:  # a launch needs a non-empty array of the right type
        cat_bits = to_device(np.zeros((1, CAT_WORDS), dtype=np.uint32))
    return walk, walk.view(np.float32), cat_bits
