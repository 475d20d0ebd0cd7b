"""``exp``, ``log`` and ``log2`` over NumPy arrays with the same bits on every CPU.

NumPy's own are not one function: on a CPU with AVX-512 its SIMD loops and the C
library's differ in the last bit on a few percent of inputs. Wherever such a value
feeds the model file (the eval metrics behind early stopping and ``best_score``, the
probabilities they read), gbm uses these instead: ``kernels.elementary``'s functions
(plain ``+ - * /`` and exact scalings, the ones the gradient kernels use), applied to each
element by a compiled loop. ``elementary.python`` is their reference twin.

``SAME_BITS`` is NumPy with these in place of ``exp`` / ``log`` / ``log2``: an objective's
``transform(margin, xp)`` given it as ``xp`` computes the metric's probabilities so.
"""
import numpy as np

from ..kernels import elementary
from ..kernels.jit import kernel

_EXP, _LOG, _LOG2 = elementary.cpu.exp, elementary.cpu.log, elementary.cpu.log2
_LOG_SPLIT = elementary.cpu.log_split
_POWERS = elementary._POWERS  # 2**-1022 .. 2**1023


@kernel
def _exp_into(x, out):
    for i in range(x.size):
        out[i] = _EXP(x[i])


@kernel
def _log_into(x, bits, out):
    """``log`` of every ``x[i]``; ``bits`` is ``x`` as int64 (its IEEE 754 bits). Positive
    normal values below 2**1022 take ``log_split``, their frexp parts read from the bits
    (m = x 2**-e, an exact scaling): the same bits as ``log``, without its libm frexp
    call; the others (zero, subnormal, huge, negative, inf, NaN) take ``log``."""
    for i in range(x.size):
        field = (bits[i] >> 52) & 0x7FF  # biased exponent; 0 for a negative bits[i] too
        if bits[i] > 0 and 1 <= field <= 2044:
            out[i] = _LOG_SPLIT(x[i] * _POWERS[2044 - field], field - 1022)
        else:
            out[i] = _LOG(x[i])


@kernel
def _log2_into(x, out):
    for i in range(x.size):
        out[i] = _LOG2(x[i])


def _apply(loop, a, out, with_bits=False):
    """``loop(a, result)`` (``loop(a, a's bits as int64, result)`` ``with_bits``) on
    ``a`` flattened; ``out``: written in place and returned."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    result = np.empty_like(a)
    flat = a.reshape(-1)
    if with_bits:
        loop(flat, flat.view(np.int64), result.reshape(-1))
    else:
        loop(flat, result.reshape(-1))
    if out is None:
        return result
    out[...] = result
    return out


def exp(a, out=None):
    """e**a elementwise (float64), as ``np.exp``; ``out``: written in place and returned."""
    return _apply(_exp_into, a, out)


def log(a, out=None):
    """Natural logarithm elementwise (float64), as ``np.log``."""
    return _apply(_log_into, a, out, with_bits=True)


def log2(a, out=None):
    """Base-2 logarithm elementwise (float64), as ``np.log2``."""
    return _apply(_log2_into, a, out)


class _SameBits:
    """NumPy, with gbm's ``exp``, ``log`` and ``log2``."""

    exp, log, log2 = staticmethod(exp), staticmethod(log), staticmethod(log2)

    def __getattr__(self, name):
        return getattr(np, name)


SAME_BITS = _SameBits()
