"""exp, log and log2 written once, from ``+ - * /`` and exact scalings, and compiled for
every backend: the same bits on a CPU, a GPU and in plain Python.

Why not ``np.exp`` / ``math.exp``: they are not the same function everywhere. NumPy picks
its own AVX-512 exp on CPUs that have it and the C library's elsewhere (measured on this
project's machines: they differ on 4.6% of normal(0, 3) inputs, and the ``binary``
reference model changes when AVX-512 is switched off with ``NPY_DISABLE_CPU_FEATURES``);
Numba's ``math.exp`` calls the C library on a CPU and libdevice on a GPU. Any of them
would make a model depend on the hardware it was trained on. Every operation used here
is correctly rounded by IEEE 754 (``math.floor``, ``math.frexp`` and ``math.ldexp`` are
exact), so the results depend on nothing but the order of operations, which is fixed.

Products go through ``mul`` (see ``make_elementary``): on CUDA it is libdevice's
``dmul_rn``, which NVVM and ptxas never fuse with a following addition into an FMA (they
do fuse a plain ``a * b + c``, and the CPU does not); on the CPU and in Python a plain
product. The functions are accurate to about one unit in the last place (tested against
``math`` in ``tests/test_elementary.py``); they are not correctly rounded, and need not be:
what matters is that every backend computes the same value.
"""
import math
from decimal import Decimal, localcontext
from types import SimpleNamespace

import numpy as np

from .jit import helper


def product(a, b):
    """The product on backends that never contract ``a * b + c`` (CPU, Python, simulator)."""
    return a * b


def _constants():
    with localcontext() as ctx:
        ctx.prec = 60
        ln2 = Decimal(2).ln()
        exact = [Decimal(2) ** (Decimal(j) / 64) for j in range(64)]
        hi = np.array([float(t) for t in exact])
        lo = np.array([float(t - Decimal(h)) for t, h in zip(exact, hi)])
        step = ln2 / 64
        # ln2 / 64 in two parts; the high part has 32 significant bits so that k * high
        # is exact for every |k| < 2**21 (exp's k stays below 2**17)
        step_hi = math.ldexp(math.floor(math.ldexp(float(step), 37)), -37)
        step_lo = float(step - Decimal(step_hi))
        ln2_hi = math.ldexp(math.floor(math.ldexp(float(ln2), 32)), -32)  # 33 bits
        ln2_lo = float(ln2 - Decimal(ln2_hi))
        inv_ln2 = float(1 / ln2)
        inv_ln2_hi = math.ldexp(math.floor(math.ldexp(inv_ln2, 25)), -25)  # 26 bits
        inv_ln2_lo = float(1 / ln2 - Decimal(inv_ln2_hi))
        inv_step = float(1 / step)
    return hi, lo, step_hi, step_lo, ln2_hi, ln2_lo, inv_ln2, inv_ln2_hi, inv_ln2_lo, inv_step


(_T_HI, _T_LO, _STEP_HI, _STEP_LO, _LN2_HI, _LN2_LO, _INV_LN2, _INV_LN2_HI, _INV_LN2_LO,
 _INV_STEP) = _constants()
_EXP_MAX = 709.782712893384  # above: exp overflows
_EXP_MIN = -745.1332191019412  # below: exp is 0 (less than half the smallest subnormal)
_SQRT_HALF = 0.7071067811865476
POWERS_OF_TWO = np.array([math.ldexp(1.0, e) for e in range(-1022, 1024)])  # 2**-1022 .. 2**1023


def make_elementary(jit, mul, power=None):
    """``exp`` (and ``exp_normal``), ``log``, ``log2`` built with ``jit`` (identity,
    ``numba.njit`` or ``numba.cuda.jit(device=True)``) and ``mul`` (see the module
    docstring). ``power(e)``: ``2.0**e`` for a normal power (-1022 <= e <= 1023), exact;
    by default read from a table (``power_from_bits`` builds it without a load)."""
    t_hi, t_lo = _T_HI, _T_LO
    powers = POWERS_OF_TWO
    step_hi, step_lo, inv_step = _STEP_HI, _STEP_LO, _INV_STEP
    ln2_hi, ln2_lo, inv_ln2 = _LN2_HI, _LN2_LO, _INV_LN2
    inv_ln2_hi, inv_ln2_lo = _INV_LN2_HI, _INV_LN2_LO

    if power is None:
        @jit
        def power(e):
            return powers[e + 1022]

    @jit
    def _exp_reduced(x):
        """(m, e) with e**x = m 2**e: x = k ln2/64 + r, |r| <= ln2/128, e = k // 64,
        m = 2**((k % 64)/64) e**r, the power from a table (high and low parts), e**r by
        its Taylor series to degree 6 (the next term is below 1e-19 of the result)."""
        kf = math.floor(mul(x, inv_step) + 0.5)
        r = (x - mul(kf, step_hi)) - mul(kf, step_lo)
        k = np.int64(kf)
        j = k & 63
        p = r + mul(mul(r, r), 0.5 + mul(r, 1.0 / 6.0 + mul(r, 1.0 / 24.0 + mul(
            r, 1.0 / 120.0 + mul(r, 1.0 / 720.0)))))
        tail = (mul(t_hi[j], p) + t_lo[j]) + mul(t_lo[j], p)
        return t_hi[j] + tail, k >> 6

    @jit
    def exp_normal(x):
        """``exp(x)`` for ``-708 <= x <= 709`` (the result a normal number), without a
        test on the way: the caller keeps ``x`` in that range (a loop of it vectorises,
        2.5x faster on a CPU than one of ``exp``)."""
        m, e = _exp_reduced(x)
        return mul(m, power(e))

    @jit
    def exp(x):
        """e**x = m 2**e (``_exp_reduced``)."""
        if x != x:
            return x
        if x > _EXP_MAX:
            return math.inf
        if x < _EXP_MIN:
            return 0.0
        m, e = _exp_reduced(x)
        if -1022 <= e <= 1023:  # a normal power of two: the product is ldexp's, rounded once
            return mul(m, power(e))
        return math.ldexp(m, int(e))

    @jit
    def _log_parts(x):
        """(e, f, c) with x = m 2**e, m in [sqrt(1/2), sqrt(2)), log(m) = f + c (see
        ``_log_series``)."""
        m, e = math.frexp(x)
        return _log_series(m, e)

    @jit
    def _log_series(m, e):
        """(e, f, c) for x = m 2**e, m in [1/2, 1) (frexp's), moved to [sqrt(1/2),
        sqrt(2)): log(m) = f + c, f = m - 1 (exact) and the small correction
        c = -(f^2/2 - s (f^2/2 + R)), s = f / (2 + f), R the series of
        log((1 + s)/(1 - s)) - 2s in s^2 over s (fdlibm's arrangement)."""
        if m < _SQRT_HALF:
            m = m * 2.0  # exact
            e -= 1
        f = m - 1.0
        s = f / (2.0 + f)
        z = mul(s, s)
        series = 2.0 / 25.0
        for k in range(11, 0, -1):  # 2/(2k+1), Horner from the highest power of z
            series = 2.0 / (2 * k + 1) + mul(z, series)
        half_square = mul(mul(0.5, f), f)
        return e, f, -(half_square - mul(s, half_square + mul(z, series)))

    @jit
    def _two_sum(a, b):
        """(a + b rounded, its exact rounding error) (Knuth's TwoSum)."""
        total = a + b
        b_part = total - a
        return total, (a - (total - b_part)) + (b - b_part)

    @jit
    def _split(a):
        """a = high + low, high with at most 26 significant bits (Veltkamp), so that the
        product of two high parts is exact."""
        c = mul(134217729.0, a)  # 2**27 + 1
        high = c - (c - a)
        return high, a - high

    @jit
    def log(x):
        """Natural logarithm: e ln2 + f + c, with e ln2_hi + f summed exactly."""
        if not (x > 0.0) or x == math.inf:
            if x == 0.0:
                return -math.inf
            return x if x == math.inf else math.nan
        e, f, c = _log_parts(x)
        return _log_sum(e, f, c)

    @jit
    def _log_sum(e, f, c):
        """e ln2 + f + c, with e ln2_hi + f summed exactly."""
        ef = np.float64(e)
        total, error = _two_sum(mul(ef, ln2_hi), f)  # e ln2_hi is exact
        return total + (error + (c + mul(ef, ln2_lo)))

    @jit
    def log_split(m, e):
        """``log(m * 2**e)`` for m in [1/2, 1) and a normal m 2**e, split by the caller
        (frexp's parts, e.g. read from the float's bits): no test and no frexp call."""
        e, f, c = _log_series(m, e)
        return _log_sum(e, f, c)

    @jit
    def log2(x):
        """Base-2 logarithm: e + (f + c) / ln2, with f / ln2 as an exact double-double
        product and e added exactly; exact at powers of two."""
        if not (x > 0.0) or x == math.inf:
            if x == 0.0:
                return -math.inf
            return x if x == math.inf else math.nan
        e, f, c = _log_parts(x)
        f_hi, f_lo = _split(f)
        product_hi = mul(f_hi, inv_ln2_hi)  # exact: 26 x 26 bits
        product_lo = (mul(f_lo, inv_ln2_hi) + mul(f, inv_ln2_lo)) + mul(c, inv_ln2)
        total, error = _two_sum(np.float64(e), product_hi)
        return total + (error + product_lo)

    @jit
    def sigmoid(z):
        """1 / (1 + e**-z)."""
        return 1.0 / (1.0 + exp(-z))

    return SimpleNamespace(exp=exp, exp_normal=exp_normal, log=log, log_split=log_split,
                           log2=log2, sigmoid=sigmoid)


def power_from_bits(e):
    """``2.0**e`` for a normal power (-1022 <= e <= 1023) built from its bits (biased
    exponent ``e + 1023``, zero mantissa): the table's value exactly, without a load, so
    a vectorised ``exp_normal`` has two table gathers instead of three (measured: its
    loop about 10% faster, softmax at 100 and 1,000 classes)."""
    return np.uint64(np.uint64(e + 1023) << np.uint64(52)).view(np.float64)


python = make_elementary(lambda f: f, product)
cpu = make_elementary(helper, helper(product), helper(power_from_bits))
