"""The host kernels (``exact``, ``elementwise``, ``auc``: CPU and reference only, see
tests/test_kernel_contract.py) against their NumPy twins on random inputs and edge cases,
and against oracles that share no code with either: ``fractions.Fraction`` and
``math.fsum`` for the exact sums, NumPy's ``exp`` / ``log`` / ``log2`` within one unit in
the last place, and a count over every pair for the Mann-Whitney statistic."""
import math
from fractions import Fraction

import numpy as np
import pytest

from gbm.kernels import cpu, reference
from gbm.kernels.layout import EXACT_BINS, EXACT_E_MIN
from gbm.numerics.exact import parts_to_float

TINY = 5e-324  # the smallest subnormal
HUGE = 1.7976931348623157e308  # the largest finite float
EDGES = [0.0, -0.0, TINY, -TINY, 2.2250738585072014e-308, 2.225073858507201e-308, 1e-310,
         1.0, -1.0, 0.5, 2.0 ** 1022, HUGE, -HUGE]


def _wide_floats(rng, n):
    """Finite floats of every magnitude, subnormals included, either sign."""
    mantissa = rng.uniform(0.5, 1.0, n) * rng.choice([-1.0, 1.0], n)
    return np.ldexp(mantissa, rng.integers(-1074, 1025, n))


# -- exact sums ---------------------------------------------------------------------------

def _exact_cases():
    rng = np.random.default_rng(0)
    return [np.zeros((1, 0)), np.zeros((0, 4)), np.array([[3.5]]), np.array([[TINY]]),
            np.array([[-0.0, 0.0]]), np.array([EDGES]), np.array([[HUGE, HUGE, -HUGE]]),
            _wide_floats(rng, 3000).reshape(3, -1),
            rng.normal(size=(2, 500)) * 10.0 ** rng.integers(-20, 20, (2, 500)),
            np.concatenate([np.full(100, 1e300), np.full(100, 1e-300), [-1e300] * 100])[None]]


@pytest.mark.parametrize("values", _exact_cases())
def test_exact_parts_match_the_twin(values):
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.int64)
    start = np.random.default_rng(1).integers(-2**40, 2**40, (values.shape[0], EXACT_BINS))
    fast, slow = start.copy(), start.copy()  # the kernels add into what is there
    cpu.add_exact_parts(bits, fast)
    reference.add_exact_parts(bits, slow)
    np.testing.assert_array_equal(fast, slow)


def _bins_value(row):
    return sum(Fraction(int(c)) * Fraction(2) ** (k + EXACT_E_MIN)
               for k, c in enumerate(row) if c)


@pytest.mark.parametrize("values", _exact_cases())
def test_exact_parts_hold_the_exact_sum(values):
    out = np.zeros((values.shape[0], EXACT_BINS), dtype=np.int64)
    cpu.add_exact_parts(np.ascontiguousarray(values).view(np.int64), out)
    for row, parts in zip(values, out):
        exact = sum(map(Fraction, row.tolist()), Fraction(0))
        assert _bins_value(parts) == exact
        if abs(exact) <= HUGE:  # wide floats' sums may overflow
            assert parts_to_float(parts) == float(exact)  # a ratio of ints: correctly rounded
        if np.all(np.abs(row) < 1e307):  # fsum's partials overflow near the largest float
            assert parts_to_float(parts) == math.fsum(row.tolist())
    assert np.abs(out).max(initial=0) <= 2 ** 27 * max(values.shape[1], 1)


# -- exp, log, log2 -----------------------------------------------------------------------

def _elementwise_cases():
    rng = np.random.default_rng(2)
    special = EDGES + [math.inf, -math.inf, math.nan, 709.78, 709.79, -745.13, -745.14,
                       -708.5, 1e-17, -1e-17]
    return [np.zeros(0), np.array([0.7]), np.array([math.nan]), np.array(special),
            rng.uniform(-750, 750, 3000), rng.normal(size=3000), _wide_floats(rng, 3000)]


def _same(a, b):
    """Bit for bit, NaN where NaN."""
    nan = np.isnan(a)
    assert np.array_equal(nan, np.isnan(b))
    assert np.array_equal(a[~nan].view(np.int64), b[~nan].view(np.int64))


def _run(name, x, kernels):
    out = np.full(x.shape, -7.0)
    if name == "log_into":
        getattr(kernels, name)(x, x.view(np.int64), out)
    else:
        getattr(kernels, name)(x, out)
    return out


@pytest.mark.parametrize("name", ["exp_into", "log_into", "log2_into"])
@pytest.mark.parametrize("case", range(len(_elementwise_cases())))
def test_elementwise_matches_the_twin(name, case):
    x = _elementwise_cases()[case]
    _same(_run(name, x, cpu), _run(name, x, reference))


def _ulps(a, b):
    return np.abs(a.view(np.int64) - b.view(np.int64))


@pytest.mark.parametrize("name", ["exp", "log", "log2"])
def test_elementwise_within_one_ulp_of_numpy(name):
    x = np.concatenate(_elementwise_cases())
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    got = _run(f"{name}_into", x, cpu)
    finite = np.isfinite(want) & (want != 0)
    assert _ulps(got[finite], want[finite]).max() <= 1
    _same(got[~finite], want[~finite])  # 0, inf, -inf and NaN exactly where NumPy has them


# -- AUC ----------------------------------------------------------------------------------

def _split_cases():
    rng = np.random.default_rng(3)
    y = (rng.random(500) < 0.3).astype(np.float64)
    edges = np.array(EDGES)
    return [(np.zeros(0), np.zeros(0)), (np.ones(1), np.array([0.25])),
            (np.zeros(1), np.array([-0.0])), (y, rng.normal(size=500)),
            (np.resize([0.0, 1.0], edges.size), edges),
            (np.zeros(5), np.arange(5.0)), (np.ones(5), np.arange(5.0)),
            # refused (-1): a soft label, a NaN label, label 2, an infinite or NaN score
            (np.array([0.0, 0.5]), np.zeros(2)), (np.array([1.0, math.nan]), np.zeros(2)),
            (np.array([2.0]), np.zeros(1)), (np.array([0.0, 1.0]), np.array([1.0, math.inf])),
            (np.array([0.0, 1.0, 1.0]), np.array([1.0, 2.0, math.nan]))]


@pytest.mark.parametrize("y, score", _split_cases())
def test_split_by_label_matches_the_twin(y, score):
    fast = np.full((2, y.size), -7.0)
    slow = fast.copy()
    count = cpu.split_by_label(y, score, fast[0], fast[1])
    assert count == reference.split_by_label(y, score, slow[0], slow[1])
    refused = not (np.all((y == 0) | (y == 1)) and np.all(np.isfinite(score)))
    assert count == (-1 if refused else np.count_nonzero(y == 1))
    if not refused:  # the slots past the counts hold no result
        np.testing.assert_array_equal(fast[0, :count], slow[0, :count])
        np.testing.assert_array_equal(fast[1, :y.size - count], slow[1, :y.size - count])
        np.testing.assert_array_equal(fast[0, :count], score[y == 1])  # in row order


def _pair_count(pos, neg):
    """2U from every (positive, negative) pair: 2 for a win, 1 for a tie."""
    return int(2 * np.sum(pos[:, None] > neg[None, :]) + np.sum(pos[:, None] == neg[None, :]))


def _mann_whitney_cases():
    rng = np.random.default_rng(4)
    cases = [(np.zeros(0), np.zeros(0)), (np.zeros(0), np.ones(3)), (np.ones(3), np.zeros(0)),
             (np.array([1.0]), np.array([1.0])), (np.array([0.0]), np.array([-0.0])),
             (np.array([-0.0, 0.0]), np.array([0.0, 0.0, -0.0])),
             (np.array([TINY, HUGE]), np.array([-HUGE, 0.0, TINY, 2 * TINY, HUGE])),
             (np.full(50, 3.0), np.full(40, 3.0))]
    for _ in range(40):
        n_pos, n_neg = rng.integers(0, 200, 2)
        digits = int(rng.integers(0, 3))  # coarse scores: many ties
        cases.append((np.round(rng.normal(size=n_pos) + 0.3, digits),
                      np.round(rng.normal(size=n_neg), digits)))
    return [(np.sort(p), np.sort(n)) for p, n in cases]


def test_twice_mann_whitney_matches_the_twin_and_every_pair():
    for pos, neg in _mann_whitney_cases():
        twice = cpu.twice_mann_whitney(pos, neg)
        assert twice == reference.twice_mann_whitney(pos, neg) == _pair_count(pos, neg)
