"""``exp``, ``log`` and ``log2`` of every element of an array (gbm.numerics.elementwise):
``kernels/elementary.py``'s functions, so the same bits on every CPU (NumPy's own differ
between CPUs in the last bit). Host kernels: the metrics' logarithms and probabilities are
computed on the host on every backend (no CUDA twin, by design)."""
from ..elementary import POWERS_OF_TWO
from ..elementary import cpu as _elementary
from ..jit import kernel

_EXP, _LOG, _LOG2 = _elementary.exp, _elementary.log, _elementary.log2
_LOG_SPLIT = _elementary.log_split


@kernel
def exp_into(x, out):
    """``out[i] = exp(x[i])``.

    x : float64 (n,)    # IN
    out : float64 (n,)  # OUT
    """
    for i in range(x.size):
        out[i] = _EXP(x[i])


@kernel
def log_into(x, bits, out):
    """``out[i] = log(x[i])``.

    x : float64 (n,)     # IN
    bits : int64 (n,)    # IN  ``x`` as int64 (its IEEE 754 bits, a view)
    out : float64 (n,)   # OUT

    Positive normal values below 2**1022 take ``log_split``, their frexp parts read from
    the bits (m = x 2**-e, an exact scaling): the same bits as ``log``, without its libm
    frexp call; the others (zero, subnormal, huge, negative, inf, NaN) take ``log``.
    """
    for i in range(x.size):
        field = (bits[i] >> 52) & 0x7FF  # biased exponent; 0 for a negative bits[i] too
        if bits[i] > 0 and 1 <= field <= 2044:
            out[i] = _LOG_SPLIT(x[i] * POWERS_OF_TWO[2044 - field], field - 1022)
        else:
            out[i] = _LOG(x[i])


@kernel
def log2_into(x, out):
    """``out[i] = log2(x[i])``.

    x : float64 (n,)    # IN
    out : float64 (n,)  # OUT
    """
    for i in range(x.size):
        out[i] = _LOG2(x[i])
