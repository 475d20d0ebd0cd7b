"""The CPU softmax kernel on group-major arrays (kernels/cpu/objective.py: blocks of rows,
exp_normal with a redo by exp outside its range, each class's maxima taken in the same
pass) against its reference twin, bit for bit, on 1, 2 and 3 threads, at 1 to 1,000
classes; and against independent oracles: NumPy's softmax on finite rows, NumPy's
maxima of the values written, a one-class model's gradients in closed form."""
import numpy as np
import pytest

from gbm.kernels import cpu, layout
from gbm.kernels.cpu.objective import softmax_gradients
from gbm.kernels.reference.objective import softmax_gradients as reference_softmax


def _case(k, n, seed):
    """Margins (k, n) with the hard rows up front: far apart (exp underflows, is
    subnormal, or exp_normal's range is left by a hair), ties, NaN, infinities; labels
    and weights (one of them 0)."""
    rng = np.random.default_rng(seed)
    margin = rng.normal(scale=4, size=(k, n))
    hard = [[800.0, 0.0], [0.0, -800.0], [709.0, 0.0], [0.0, 708.5], [-745.5, 0.0],
            [1e300, -1e300], [np.nan, 0.0], [0.0, np.nan], [np.inf, 0.0], [-np.inf, 0.0],
            [3.0, 3.0], [-708.0, 0.0], [0.0, -708.0001]]
    for r, pair in enumerate(hard):
        if k >= 2:
            margin[:2, r] = pair
        else:
            margin[0, r] = pair[0]
    if k >= 3:
        margin[2, len(hard)] = 2000.0  # one class far above the rest: every other exp is 0
        margin[:, len(hard) + 1] = 7.0  # every class tied
    y = rng.integers(0, k, n).astype(np.float64)
    w = rng.uniform(0.25, 3.0, n)
    w[len(hard) + 2] = 0.0
    return margin, y, w


def _run(fn, margin, y, w, n_threads, maxima):
    grad, hess = np.full_like(margin, -1.0), np.full_like(margin, -1.0)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, the twin's NumPy scalars
        fn(margin, y, w, grad, hess, n_threads, maxima)
    return grad, hess


@pytest.mark.parametrize("k, n", [(1, 1100), (2, 1300), (3, 1029), (40, 1500), (1000, 530)])
def test_softmax_kernel_matches_its_twin_bit_for_bit(k, n):
    margin, y, w = _case(k, n, seed=k)
    want_maxima = np.zeros((k, 2))
    want_g, want_h = _run(reference_softmax, margin, y, w, 1, want_maxima)
    for n_threads in (1, 2, 3):
        maxima = np.zeros((k, 2))
        grad, hess = _run(softmax_gradients, margin, y, w, n_threads, maxima)
        np.testing.assert_array_equal(grad.view(np.uint64), want_g.view(np.uint64))
        np.testing.assert_array_equal(hess.view(np.uint64), want_h.view(np.uint64))
        np.testing.assert_array_equal(maxima, want_maxima)
        # the path training takes: pointwise_gradients on (n, k) views of group-major arrays
        g_view, h_view = np.empty((k, n)).T, np.empty((k, n)).T
        with np.errstate(invalid="ignore"):
            cpu.pointwise_gradients(layout.SOFTMAX, margin.T, y, w, np.zeros(1), g_view,
                                    h_view, n_threads)
        np.testing.assert_array_equal(g_view.T.view(np.uint64), want_g.view(np.uint64))
        np.testing.assert_array_equal(h_view.T.view(np.uint64), want_h.view(np.uint64))


@pytest.mark.parametrize("k", [2, 3, 1000])
def test_softmax_kernel_against_numpy_on_finite_rows(k):
    """Rows with finite margins against NumPy's softmax (an independent exp); the maxima
    against NumPy's over the values written, NaN passed over."""
    margin, y, w = _case(k, 700, seed=100 + k)
    maxima = np.zeros((k, 2))
    grad, hess = _run(softmax_gradients, margin, y, w, 2, maxima)
    finite = np.isfinite(margin).all(axis=0)
    m = margin[:, finite]
    with np.errstate(under="ignore"):
        p = np.exp(m - m.max(axis=0))
    p /= p.sum(axis=0)
    onehot = (np.arange(k)[:, None] == y[finite]).astype(np.float64)
    np.testing.assert_allclose(grad[:, finite], (p - onehot) * w[finite], rtol=1e-12,
                               atol=1e-300)
    np.testing.assert_allclose(hess[:, finite], np.maximum(2 * p * (1 - p), 1e-16)
                               * w[finite], rtol=1e-12, atol=1e-300)
    assert np.isnan(grad).any()  # the NaN rows are there, and passed over below
    np.testing.assert_array_equal(maxima[:, 0], np.nanmax(np.abs(grad), axis=1))
    np.testing.assert_array_equal(maxima[:, 1], np.nanmax(np.abs(hess), axis=1))


def test_one_class_gives_zero_gradients_and_the_floor_hessian():
    """One class: p = 1 on every finite row, so g = 0 and h = max(0, 1e-16) w."""
    rng = np.random.default_rng(3)
    margin = rng.normal(scale=100, size=(1, 777))
    y, w = np.zeros(777), rng.uniform(0.5, 2.0, 777)
    maxima = np.zeros((1, 2))
    grad, hess = _run(softmax_gradients, margin, y, w, 2, maxima)
    np.testing.assert_array_equal(grad, np.zeros((1, 777)))
    np.testing.assert_array_equal(hess, 1e-16 * w[None, :])
    np.testing.assert_array_equal(maxima, [[0.0, 1e-16 * w.max()]])


def test_maxima_are_raised_never_lowered():
    """``maxima`` holds the largest so far: a larger value passed in stays, a smaller one
    is raised to this call's, the same on any thread count."""
    margin, y, w = _case(3, 900, seed=9)
    fresh = np.zeros((3, 2))
    _run(softmax_gradients, margin, y, w, 1, fresh)
    start = fresh.copy()
    start[0, 0] = 50.0  # above any |g| (at most the largest weight, 3)
    start[1, 1] = fresh[1, 1] / 2
    for n_threads in (1, 2):
        maxima = start.copy()
        _run(softmax_gradients, margin, y, w, n_threads, maxima)
        want = fresh.copy()
        want[0, 0] = 50.0
        np.testing.assert_array_equal(maxima, want)


def test_maxima_of_the_wrong_shape_are_refused():
    margin, y, w = _case(3, 50, seed=1)
    grad, hess = np.empty_like(margin), np.empty_like(margin)
    with pytest.raises(ValueError, match=r"maxima has shape \(2, 2\).*\(3, 2\)"):
        softmax_gradients(margin, y, w, grad, hess, 1, np.zeros((2, 2)))


def test_power_from_bits_is_the_power_table():
    """The CPU exp's 2**e, built from the bits, is the table's (Python's exact ldexp) for
    every normal power, compiled and as plain Python."""
    from gbm.kernels.elementary import POWERS_OF_TWO, cpu as compiled, power_from_bits, python
    from gbm.kernels.jit import helper

    e = np.arange(-1022, 1024)
    want = np.array([np.ldexp(1.0, int(v)) for v in e])
    np.testing.assert_array_equal(want, POWERS_OF_TWO)
    np.testing.assert_array_equal([power_from_bits(np.int64(v)) for v in e], want)
    built = helper(power_from_bits)
    np.testing.assert_array_equal([built(np.int64(v)) for v in e], want)
    # the compiled exp and exp_normal (bits) against the Python build's (the table) where
    # the power is the lowest and highest normal one, and across the whole range
    x = np.concatenate([np.linspace(-708.5, -707.5, 2001), np.linspace(708.5, 709.78, 2001),
                        np.linspace(-708.0, 709.0, 4001)])
    for name in ("exp", "exp_normal"):
        inside = x if name == "exp" else x[(x >= -708.0) & (x <= 709.0)]
        got = np.array([getattr(compiled, name)(v) for v in inside])
        np.testing.assert_array_equal(got, [getattr(python, name)(v) for v in inside])
