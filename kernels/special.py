"""erfc and 1 - e**-w written once from ``+ - * /`` and ``kernels.elementary``'s exp, and
compiled for every backend: the same bits on a CPU, a GPU and in plain Python (the
accelerated failure time objective's normal and extreme-value distributions need them).

Why not ``math.erfc``: on a CPU Numba calls the C library's and on a GPU libdevice's,
which differ in the last bits, and a model's gradients must not depend on where it was
trained (see ``kernels/elementary.py``). Products go through ``mul`` for the same reason
as there (no fused multiply-add on CUDA).

``erfc(x)``, for ``x >= 0`` (negative ``x``: ``2 - erfc(-x)``):

* ``x < 1.5``: ``1 - erf(x)`` with erf(x) = 2/sqrt(pi) x e^(-x^2) sum_n (2x^2)^n /
  (1 3 5 ... (2n+1)), a series of positive terms (no cancellation inside it; 30 terms:
  the next is below 1e-17 of the sum at x = 1.5);
* ``x >= 1.5``: Laplace's continued fraction erfc(x) = e^(-x^2) / sqrt(pi) /
  (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))), evaluated from its ``N``-th term back,
  ``N`` shrinking as ``x`` grows (80 at 1.5, 20 beyond 5: each keeps the truncation below
  1e-16 relative);
* e^(-x^2) as e^(-h^2) e^(-(x - h)(x + h)), ``h`` the high 26 bits of ``x`` (``h^2`` is
  exact), so that large ``x`` loses no accuracy to the rounding of ``x^2``.

Measured against the C library's ``erfc`` (Python's ``math.erfc``;
``tests/test_survival_math.py``): within 2e-14 relative where erfc is a normal number,
the largest errors near 1.5 (where ``1 - erf`` cancels most). ``one_minus_exp_neg(w)`` = 1 - e**-w for
``w >= 0``: a Taylor series below 0.35 (where ``1 - exp(-w)`` would cancel), else that
difference.
"""
import math
from types import SimpleNamespace

from .jit import helper

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI = math.sqrt(math.pi)
_SERIES_END = 1.5  # below: the series; from here: the continued fraction
_ERFC_ZERO = 27.3  # erfc underflows to 0 beyond (e^(-27.3^2) < 2**-1074)
_SMALL_W = 0.35  # one_minus_exp_neg: the Taylor series below


def make_special(jit, mul, elementary):
    """``erfc`` and ``one_minus_exp_neg`` built with ``jit`` and ``mul`` on
    ``elementary`` (``kernels.elementary.make_elementary``'s functions built the same
    way)."""
    exp = elementary.exp

    @jit
    def _exp_minus_square(x):
        """e**(-x**2), with x = h + (x - h), h of 26 bits: h*h is exact."""
        c = mul(134217729.0, x)  # 2**27 + 1: Veltkamp's split
        h = c - (c - x)
        return mul(exp(-mul(h, h)), exp(-mul(x - h, x + h)))

    @jit
    def _erf_series(x):
        """erf(x) for 0 <= x < 1.5: the series of positive terms (module docstring)."""
        t = mul(2.0, mul(x, x))
        term = 1.0
        total = 1.0
        for n in range(1, 30):
            term = mul(term, t) / (2 * n + 1)
            total += term
        return mul(mul(_TWO_OVER_SQRT_PI, x), mul(_exp_minus_square(x), total))

    @jit
    def _erfc_fraction(x):
        """erfc(x) for x >= 1.5: Laplace's continued fraction from its n-th term back."""
        if x < 2.0:
            n = 80
        elif x < 3.0:
            n = 60
        elif x < 5.0:
            n = 30
        else:
            n = 20
        t = x
        for k in range(n, 0, -1):
            t = x + mul(0.5, float(k)) / t
        return _exp_minus_square(x) / mul(t, _SQRT_PI)

    @jit
    def _erfc_positive(x):
        if x < _SERIES_END:
            return 1.0 - _erf_series(x)
        if x > _ERFC_ZERO:
            return 0.0
        return _erfc_fraction(x)

    @jit
    def erfc(x):
        """The complementary error function 1 - erf(x) = 2/sqrt(pi) int_x^inf e^(-t^2) dt."""
        if x != x:
            return x
        if x >= 0.0:
            return _erfc_positive(x)
        return 2.0 - _erfc_positive(-x)

    @jit
    def one_minus_exp_neg(w):
        """1 - e**-w for w >= 0, accurate for small w too (-expm1(-w))."""
        if w < _SMALL_W:
            # w (1 - w/2 (1 - w/3 (1 - ...))), 18 terms: the next is below 1e-19 of w
            inner = 1.0
            for k in range(18, 1, -1):
                inner = 1.0 - mul(w / k, inner)
            return mul(w, inner)
        return 1.0 - exp(-w)

    return SimpleNamespace(erfc=erfc, one_minus_exp_neg=one_minus_exp_neg)


def _python():
    from . import elementary

    return make_special(lambda f: f, elementary.product, elementary.python)


def _cpu():
    from . import elementary

    return make_special(helper, helper(elementary.product), elementary.cpu)


python = _python()
cpu = _cpu()
