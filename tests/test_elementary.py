"""gbm's own exp / log / log2 (kernels/elementary.py) against independent oracles: the C
library's (Python's ``math``) within one unit in the last place, exact special values;
the Python and CPU builds give the same bits; the objectives' gradients built on them
agree with NumPy's formulas to rounding."""
import math

import numpy as np
import pytest

from gbm.kernels import cpu, elementary, layout, reference


def _ulps(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.abs(a.view(np.int64) - b.view(np.int64))


def _inputs(rng):
    return np.concatenate([rng.normal(scale=3, size=3000), rng.uniform(-745, 709, 3000),
                           rng.uniform(-1e-6, 1e-6, 300), np.arange(-40.0, 41.0)])


@pytest.mark.parametrize("name", ["exp", "log", "log2"])
def test_within_one_ulp_of_the_c_library(name):
    rng = np.random.default_rng(0)
    x = _inputs(rng)
    if name != "exp":
        x = np.concatenate([np.abs(x) + 1e-300, rng.lognormal(0, 40, 3000),
                            2.0 ** np.arange(-1074.0, 1024.0, 13.0), [5e-324, 1.0]])
    ours = np.array([getattr(elementary.cpu, name)(v) for v in x])
    theirs = np.array([getattr(math, name)(v) for v in x])
    finite = np.isfinite(theirs) & (theirs != 0)
    assert _ulps(ours[finite], theirs[finite]).max() <= 1
    assert (ours == theirs).mean() > 0.97  # mostly the very same float
    python = np.array([getattr(elementary.python, name)(v) for v in x])
    np.testing.assert_array_equal(python, ours)  # one source, the same bits


def test_special_values():
    e = elementary.cpu
    assert e.exp(0.0) == 1.0 and e.exp(-800.0) == 0.0 and e.exp(800.0) == math.inf
    assert math.isnan(e.exp(math.nan)) and e.exp(-math.inf) == 0.0
    assert e.log(1.0) == 0.0 and e.log(0.0) == -math.inf and e.log(math.inf) == math.inf
    assert math.isnan(e.log(-1.0)) and math.isnan(e.log(math.nan))
    assert [e.log2(2.0 ** k) for k in range(-1074, 1024)] == list(range(-1074, 1024))
    assert e.sigmoid(0.0) == 0.5


@pytest.mark.parametrize("kind, formula", [
    (layout.LOGISTIC, lambda m, y, w: ((1 / (1 + np.exp(-m)) - y) * w,
                                       np.maximum((1 / (1 + np.exp(-m))) * (1 - 1 / (1 + np.exp(-m))),
                                                  1e-16) * w)),
    (layout.POISSON, lambda m, y, w: ((np.exp(m) - y) * w, np.exp(m + 0.7) * w)),
    (layout.GAMMA, lambda m, y, w: ((1 - y * np.exp(-m)) * w, y * np.exp(-m) * w)),
    (layout.TWEEDIE, lambda m, y, w: ((-y * np.exp(-0.3 * m) + np.exp(0.7 * m)) * w,
                                      (-y * -0.3 * np.exp(-0.3 * m) + 0.7 * np.exp(0.7 * m)) * w)),
])
def test_gradients_agree_with_numpy_formulas(kind, formula):
    rng = np.random.default_rng(kind)
    m, y, w = rng.normal(size=500), rng.random(500) * 3 + 0.1, rng.random(500) + 0.5
    params = np.array([1.3 if kind == layout.TWEEDIE else 0.7])
    grad, hess = np.empty((500, 1)), np.empty((500, 1))
    cpu.pointwise_gradients(kind, m[:, None].copy(), y, w, params, grad, hess, 2)
    g, h = formula(m, y, w)
    np.testing.assert_allclose(grad[:, 0], g, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(hess[:, 0], h, rtol=1e-13, atol=1e-15)
    slow_g, slow_h = np.empty((500, 1)), np.empty((500, 1))
    reference.pointwise_gradients(kind, m[:, None].copy(), y, w, params, slow_g, slow_h)
    np.testing.assert_array_equal(grad, slow_g)
    np.testing.assert_array_equal(hess, slow_h)


def test_exp_normal_is_exp_on_its_range():
    """exp_normal (no tests on the way) gives exp's bits wherever its range promises."""
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-708, 709, 5000), rng.normal(scale=3, size=2000),
                        [-708.0, 709.0, 0.0, -0.0, 1e-300, -1e-300]])
    fast = np.array([elementary.cpu.exp_normal(v) for v in x])
    np.testing.assert_array_equal(fast, [elementary.cpu.exp(v) for v in x])
    np.testing.assert_array_equal(fast, [elementary.python.exp_normal(v) for v in x])


@pytest.mark.parametrize("n_threads", [1, 2])
def test_softmax_on_group_major_arrays_matches_the_reference(n_threads):
    """The CPU softmax path for group-major arrays (blocks of rows, exp_normal, a redo
    with exp outside its range) against the reference, bit for bit, and against the
    closed form: margins far below a row's top (exp underflows, or is subnormal), ties,
    infinities, NaN, and a row count that is not a multiple of the block."""
    rng = np.random.default_rng(6)
    n, k = 1000, 5
    by_group = rng.normal(scale=4, size=(k, n))
    by_group[0, :8] = [800.0, -800.0, 0.0, 3.0, 730.0, np.nan, np.inf, -np.inf]
    by_group[1, 8:12] = 709.0  # ties at the top
    y = rng.integers(0, k, n).astype(np.float64)
    w = rng.uniform(0.5, 2.0, n)
    grad, hess = np.empty((k, n)).T, np.empty((k, n)).T
    cpu.pointwise_gradients(layout.SOFTMAX, by_group.T, y, w, np.zeros(1), grad, hess,
                            n_threads)
    slow_g, slow_h = np.empty((n, k)), np.empty((n, k))
    with np.errstate(invalid="ignore"):  # inf - inf in the rows with infinities
        reference.pointwise_gradients(layout.SOFTMAX, by_group.T.copy(), y, w, np.zeros(1),
                                      slow_g, slow_h)
    np.testing.assert_array_equal(grad, slow_g)
    np.testing.assert_array_equal(hess, slow_h)
    finite = np.isfinite(by_group).all(axis=0)
    m = by_group.T[finite]
    p = np.exp(m - m.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    onehot = np.eye(k)[y[finite].astype(int)]
    np.testing.assert_allclose(grad[finite], (p - onehot) * w[finite, None], rtol=1e-12,
                               atol=1e-300)
    np.testing.assert_allclose(hess[finite], np.maximum(2 * p * (1 - p), 1e-16)
                               * w[finite, None], rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_logistic_on_a_contiguous_column_matches_the_reference(n_threads):
    """The CPU logistic path for one contiguous column (blocks of rows, exp_normal, a redo
    with exp outside its range) against the reference, bit for bit, and against the
    closed form: margins at and past the edges of exp_normal's range (-709, 708), beyond
    exp's (+-800), infinities, NaN, and a row count that is not a multiple of the block."""
    rng = np.random.default_rng(7)
    n = 1000
    m = rng.normal(scale=6, size=n)
    m[:14] = [800.0, -800.0, 708.0, -709.0, 708.5, -709.5, 745.5, -745.5, np.nan, np.inf,
              -np.inf, 0.0, -0.0, 37.0]
    y = (rng.random(n) > 0.5).astype(np.float64)
    w = rng.uniform(0.5, 2.0, n)
    grad, hess = np.empty((n, 1)), np.empty((n, 1))
    cpu.pointwise_gradients(layout.LOGISTIC, m[:, None].copy(), y, w, np.zeros(1), grad, hess,
                            n_threads)
    slow_g, slow_h = np.empty((n, 1)), np.empty((n, 1))
    reference.pointwise_gradients(layout.LOGISTIC, m[:, None].copy(), y, w, np.zeros(1),
                                  slow_g, slow_h)
    np.testing.assert_array_equal(grad, slow_g)
    np.testing.assert_array_equal(hess, slow_h)
    # the generic kernel (a strided column takes it) gives the same bits
    wide = np.zeros((n, 2))
    wide[:, 0] = m
    strided_g, strided_h = np.empty((n, 2)), np.empty((n, 2))
    cpu.pointwise_gradients(layout.LOGISTIC, wide[:, :1], y, w, np.zeros(1),
                            strided_g[:, :1], strided_h[:, :1], n_threads)
    np.testing.assert_array_equal(strided_g[:, :1], grad)
    np.testing.assert_array_equal(strided_h[:, :1], hess)
    finite = np.isfinite(m)
    with np.errstate(over="ignore"):
        p = 1 / (1 + np.exp(-m[finite]))
    np.testing.assert_allclose(grad[finite, 0], (p - y[finite]) * w[finite], rtol=1e-13,
                               atol=1e-300)
    np.testing.assert_allclose(hess[finite, 0], np.maximum(p * (1 - p), 1e-16) * w[finite],
                               rtol=1e-13, atol=1e-300)
