"""Exact float sums (gbm.numerics.exact): float64 values added into the integer bins of a
superaccumulator (``layout.EXACT_*``). A host kernel: the exact sums behind base scores
and metrics run on the host on every backend, so they are the same bits everywhere (no
CUDA twin, by design)."""
import numpy as np

from ..jit import kernel
from ..layout import EXACT_E_MIN, EXACT_HALF


@kernel
def add_exact_parts(bits, out):
    """Add every value of row ``i`` of ``bits`` exactly into row ``i`` of ``out``.

    bits : int64 (n_sums, n)       # IN  the IEEE 754 bits of finite float64 values
    out : int64 (n_sums, EXACT_BINS)  # OUT added to (the caller zeroes it)

    A value is an integer of at most 53 bits times ``2**(k + EXACT_E_MIN)``, added as two
    integer halves: bins ``k`` (the low 26 bits) and ``k + 26`` (the high 27). Integer
    adds: exact, in any order (a bin takes at most 2**27 a value: no overflow before
    2**36 values).
    """
    low_mask = np.int64((1 << EXACT_HALF) - 1)
    fraction_mask = np.int64((1 << 52) - 1)
    for i in range(bits.shape[0]):
        for j in range(bits.shape[1]):
            b = bits[i, j]
            field = (b >> 52) & 0x7FF
            magnitude = b & fraction_mask
            if field:  # normal: the implicit leading bit
                magnitude |= np.int64(1) << 52
            else:  # subnormal (or zero): the exponent of the smallest normal
                field = 1
            k = field - 1075 - EXACT_E_MIN  # the value is magnitude * 2**(field - 1075)
            high, low = magnitude >> EXACT_HALF, magnitude & low_mask
            if b < 0:
                high, low = -high, -low
            out[i, k + EXACT_HALF] += high
            out[i, k] += low
