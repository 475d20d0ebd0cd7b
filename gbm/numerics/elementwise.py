"""``exp``, ``log`` and ``log2`` over NumPy arrays with the same bits on every CPU.

NumPy's own are not one function: on a CPU with AVX-512 its SIMD loops and the C
library's differ in the last bit on a few percent of inputs. Wherever such a value
feeds the model file (the eval metrics behind early stopping and ``best_score``, the
probabilities they read), gbm uses these instead: ``kernels.elementary``'s functions
(plain ``+ - * /`` and exact scalings, the ones the gradient kernels use), applied to each
element by a compiled loop (``kernels/cpu/elementwise.py``, host kernels on every backend).
``elementary.python`` is their reference twin.

``SAME_BITS`` is NumPy with these in place of ``exp`` / ``log`` / ``log2``: an objective's
``transform(margin, xp)`` given it as ``xp`` computes the metric's probabilities so.
"""
import numpy as np


def _kernels():
    """``gbm.kernels.cpu``, imported on first use (``import gbm`` stays light)."""
    from ..kernels import cpu

    return cpu


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
    return _apply(_kernels().exp_into, a, out)


def log(a, out=None):
    """Natural logarithm elementwise (float64), as ``np.log``."""
    return _apply(_kernels().log_into, a, out, with_bits=True)


def log2(a, out=None):
    """Base-2 logarithm elementwise (float64), as ``np.log2``."""
    return _apply(_kernels().log2_into, a, out)


class _SameBits:
    """NumPy, with gbm's ``exp``, ``log`` and ``log2``."""

    exp, log, log2 = staticmethod(exp), staticmethod(log), staticmethod(log2)

    def __getattr__(self, name):
        return getattr(np, name)


SAME_BITS = _SameBits()
