"""Gradients and hessians of the built-in pointwise objectives (``objective_math``)."""
import numpy as np
from numba import prange

from ..elementary import cpu as _elementary
from ..elementary import product
from ..jit import helper, kernel
from ..layout import AFT, EXPECTILE, LOGISTIC, SOFTMAX
from ..objective_math import HESSIAN_FLOOR, make_objective_math
from .views import flat

_math = make_objective_math(helper, helper(product), _elementary)
rows_gradients, rows_common = _math.rows_gradients, _math.rows_common
exp, exp_normal = _elementary.exp, _elementary.exp_normal

_BLOCK = 256  # logistic rows at a time: one vector loop
_NORMAL_LOW = -708.0  # exp_normal's lowest input
_NORMAL_HIGH = 709.0  # and its highest


def pointwise_gradients(kind, margin, y, w, objective_params, grad, hess, n_threads):
    """Every row's gradient and hessian for objective ``kind`` (``layout.SQUARED`` ..).

    kind : int                                  # IN  layout's objective kinds
    margin : float64 (n_rows, n_groups), any layout  # IN
    y, w : float64 (n_rows,)                    # IN  labels, row weights
    objective_params : float64 (n_params,)      # IN  see layout.py
    grad, hess : float64 (n_rows, n_groups)     # OUT any layout (gbm.objectives.gradients: views of
                                                #     group-major arrays)
    n_threads : int                             # rows are cut into this many pieces

    Each row is computed alone: the thread count cannot change any result. Softmax and
    the logistic loss on group-major arrays (training's) take a kernel of their own that
    vectorises: the same bits, 1.5x faster (softmax, 58,400 rows x 5 classes) and 3.6x
    (logistic, 261,876 rows), one thread. Each kernel compiles only its objectives' code
    (a first fit with an empty cache compiles only the one it calls): the expectile loss
    and AFT, most of the code, have one of their own, softmax and the logistic loss one
    each. One output group's ``grad`` and ``hess`` may be the two columns of one float64
    (n_rows, 2) memory (a CPU round writes them into the gradient pairs' own slots:
    ``gbm.training.rounds``): the logistic loss then has a kernel for that layout whose
    stores vectorise (``_logistic_pair_gradients``), the same bits.
    """
    pairs = _pair_slots(grad, hess)
    if kind == LOGISTIC and pairs is not None and margin.T.flags.c_contiguous:
        _logistic_pair_gradients(margin.T[0], y, w, pairs, n_threads, np.zeros(2))
    elif ((kind == SOFTMAX or kind == LOGISTIC and margin.shape[1] == 1)
            and all(a.T.flags.c_contiguous for a in (margin, grad, hess))):
        if kind == SOFTMAX:
            _softmax_gradients(margin.T, y, w, grad.T, hess.T, n_threads, np.zeros((0, 2)))
        else:
            _logistic_gradients(margin.T[0], y, w, grad.T[0], hess.T[0], n_threads)
    elif kind == EXPECTILE or kind == AFT:
        _special_gradients(kind, margin, y, w, objective_params, grad, hess, n_threads)
    else:
        _pointwise_gradients(kind, margin, y, w, objective_params, grad, hess, n_threads)


@kernel(parallel=True)
def _pointwise_gradients(kind, margin, y, w, objective_params, grad, hess, n_threads):
    n = margin.shape[0]
    for t in prange(n_threads):
        i = np.int64(t)  # bounds of one type in the typing pass and the loop: one compile
        rows_common(kind, margin, n * i // n_threads, n * (i + 1) // n_threads, y, w,
                    objective_params, grad, hess)


def _pair_slots(grad, hess):
    """float64 (n, 2), C order, of the memory ``grad`` and ``hess`` share when they are
    one output group's interleaved slots (row ``i``'s gradient at float ``2i``, its
    hessian at ``2i + 1``: the gradient pairs' memory, ``gbm.training.rounds``); else
    None. The logistic loss has a kernel for that layout that vectorises (the strided
    views' own would not); the other objectives write into the views as given."""
    if not (isinstance(grad, np.ndarray) and isinstance(hess, np.ndarray)
            and grad.dtype == hess.dtype == np.float64 and grad.ndim == hess.ndim == 2
            and grad.shape == hess.shape and grad.shape[1] == 1 and grad.shape[0] > 0
            and grad.strides[0] == hess.strides[0] == 16
            and hess.ctypes.data == grad.ctypes.data + 8):
        return None
    return np.lib.stride_tricks.as_strided(grad, shape=(grad.shape[0], 2), strides=(16, 8))


@kernel(parallel=True)
def _special_gradients(kind, margin, y, w, objective_params, grad, hess, n_threads):
    """The expectile loss's or AFT's (``rows_gradients``' own branches)."""
    n = margin.shape[0]
    for t in prange(n_threads):
        i = np.int64(t)
        rows_gradients(kind, margin, n * i // n_threads, n * (i + 1) // n_threads, y, w,
                       objective_params, grad, hess)


def softmax_gradients(margin, y, w, grad, hess, n_threads, maxima):
    """Softmax's gradients on group-major arrays, and every class's largest absolute
    gradient and hessian, in one pass (what ``max_abs_pairs`` would read again per class).

    margin : float64 (n_groups, n_rows)  # IN  C order
    y, w : float64 (n_rows,)             # IN  labels (class indices), row weights
    grad, hess : float64 (n_groups, n_rows)  # OUT C order
    n_threads : int                      # rows are cut into this many pieces
    maxima : float64 (n_groups, 2)       # IN/OUT class k's max |g|, max |h| so far (0 to
                                         #     start): raised to this call's (NaN passed over)

    Each row is computed alone (the same bits as ``pointwise_gradients``), and a maximum
    is exact in any order: each thread's maxima are combined after the loop, so the
    thread count changes no value.
    """
    if maxima.shape != (margin.shape[0], 2):
        raise ValueError(f"maxima has shape {maxima.shape}; softmax_gradients needs "
                         f"(n_groups, 2) = ({margin.shape[0]}, 2)")
    _softmax_gradients(margin, y, w, grad, hess, n_threads, maxima)


@kernel(parallel=True, error_model="numpy")
def _softmax_gradients(margin, y, w, grad, hess, n_threads, maxima):
    """``softmax_gradients``; ``maxima`` float64 (n_groups, 2), or (0, 2) for none.
    ``error_model="numpy"``: a division is a plain IEEE one, without Python's test for a
    zero divisor, which kept the last loop of ``_softmax_rows`` from vectorising (a row's
    total is at least 1, its top class's exp(0), or NaN: never 0, so nothing changes)."""
    n_groups, n = margin.shape
    block = 256 if n_groups < 32 else 512  # rows a block (measured: see _softmax_rows)
    partial = np.zeros((n_threads, maxima.shape[0], 2), dtype=np.uint64)
    grad_bits, hess_bits = flat(grad).view(np.uint64), flat(hess).view(np.uint64)
    for t in prange(n_threads):
        i = np.int64(t)  # bounds of one type in the typing pass and the loop: one compile
        _softmax_rows(margin, n * i // n_threads, n * (i + 1) // n_threads, y, w, block,
                      grad, hess, grad_bits, hess_bits, partial[t])
    best = flat(maxima).view(np.uint64)  # non-negative floats order as their bits do
    for t in range(n_threads):
        mine = flat(partial[t])
        for j in range(mine.shape[0]):
            best[j] = max(best[j], mine[j])


@kernel(parallel=True)
def _logistic_gradients(margin, y, w, grad, hess, n_threads):
    """The logistic loss's gradients; margin, grad, hess : float64 (n_rows,)."""
    n = margin.shape[0]
    for t in prange(n_threads):
        i = np.int64(t)  # bounds of one type in the typing pass and the loop: one compile
        _logistic_rows(margin, n * i // n_threads, n * (i + 1) // n_threads, y, w, grad, hess)


def logistic_pair_gradients(margin, y, w, pairs, n_threads, maxima):
    """The logistic loss's gradients written into one output group's interleaved slots,
    and their largest absolute values, in one pass (what ``max_abs_pairs`` would read
    again afterwards: ``gbm.tree.quantize`` takes them instead).

    margin, y, w : float64 (n_rows,)   # IN  C order
    pairs : float64 (n_rows, 2)        # OUT C order: row i's gradient, then its hessian
    n_threads : int                    # rows are cut into this many pieces
    maxima : float64 (2,)              # IN/OUT max |g|, max |h| so far (0 to start):
                                       #     raised to this call's (NaN passed over)

    Each row is computed alone (the same bits as ``pointwise_gradients``), and a maximum
    is exact in any order: each thread's maxima, taken over its own rows, are combined
    after the loop, so the thread count changes no value.
    """
    _logistic_pair_gradients(margin, y, w, pairs, n_threads, maxima)


@kernel(parallel=True)
def _logistic_pair_gradients(margin, y, w, pairs, n_threads, maxima):
    """``logistic_pair_gradients``. Each block's maxima are taken on the bits of the
    values just written, while they are in cache, as ``max_abs_pairs`` takes them."""
    n = margin.shape[0]
    slots = flat(pairs)
    bits = slots.view(np.uint64)
    partial = np.zeros((n_threads, 2), dtype=np.uint64)
    for t in prange(n_threads):
        i = np.int64(t)  # bounds of one type in the typing pass and the loop: one compile
        _logistic_pair_rows(margin, n * i // n_threads, n * (i + 1) // n_threads, y, w, slots,
                            bits, partial[t])
    best = maxima.view(np.uint64)  # non-negative floats order as their bits do
    for t in range(n_threads):
        best[0] = max(best[0], partial[t, 0])
        best[1] = max(best[1], partial[t, 1])


@helper(error_model="numpy")
def _softmax_rows(margin, lo, hi, y, w, block, grad, hess, grad_bits, hess_bits, best):
    """``rows_gradients``' softmax for rows ``lo:hi``, the same operations in the same order
    per row, done ``block`` rows at a time, one class after another over stretches of the
    group-major arrays, so that the loops vectorise. Three passes a block: the rows' top
    margins; the exp and their running totals; the gradients and hessians (and, where
    ``best`` (uint64 (n_groups, 2)) has rows, each class's largest |g|, |h| bits, read back
    while in cache). ``exp`` becomes ``exp_normal`` on inputs clamped to its range; a block
    with an input outside it (a margin more than 708 below its row's top, or NaN) has those
    redone with ``exp`` and its totals summed again. Indices into the flat arrays are
    unsigned (no wrap-around test per access). Block size, measured (one thread, 100,000
    rows): 512 rows faster than 32 to 256 at 100 and 1,000 classes, although at 1,000 a
    block's classes then outgrow the L2 cache (fewer, longer stretches a class won over
    reuse in cache; software prefetches of the next stretches did not pay); 256 at 10."""
    n_groups, n = margin.shape
    mf, gf, hf = flat(margin), flat(grad), flat(hess)
    top = np.empty(block)
    total = np.empty(block)
    label = np.empty(block, dtype=np.int64)
    sign_off = np.uint64(0x7FFFFFFFFFFFFFFF)  # every bit of a float64 but its sign
    inf = np.uint64(0x7FF0000000000000)  # +inf's bits; |NaN|'s are larger: passed over
    zero = np.uint64(0)
    for first in range(lo, hi, block):
        m = min(first + block, hi) - first
        at = np.uint64(first)
        for i in range(m):
            top[i] = mf[at + np.uint64(i)]
        for k in range(1, n_groups):
            at = np.uint64(k * n + first)
            for i in range(m):
                x = mf[at + np.uint64(i)]
                top[i] = x if x > top[i] else top[i]
        for i in range(m):
            total[i] = 0.0
            label[i] = np.int64(y[first + i])
        outside = False
        for k in range(n_groups):
            at = np.uint64(k * n + first)
            for i in range(m):
                x = mf[at + np.uint64(i)] - top[i]
                inside = x >= _NORMAL_LOW
                outside |= not inside
                e = exp_normal(x if inside else _NORMAL_LOW)
                gf[at + np.uint64(i)] = e
                total[i] += e
        if outside:
            for i in range(m):
                total[i] = 0.0
            for k in range(n_groups):
                at = np.uint64(k * n + first)
                for i in range(m):
                    x = mf[at + np.uint64(i)] - top[i]
                    if not x >= _NORMAL_LOW:
                        gf[at + np.uint64(i)] = exp(x)
                    total[i] += gf[at + np.uint64(i)]
        for k in range(n_groups):
            at = np.uint64(k * n + first)
            for i in range(m):
                p = gf[at + np.uint64(i)] / total[i]
                onehot = 1.0 if k == label[i] else 0.0
                weight = w[first + i]
                gf[at + np.uint64(i)] = (p - onehot) * weight
                hf[at + np.uint64(i)] = max((2.0 * p) * (1.0 - p), HESSIAN_FLOOR) * weight
            if best.shape[0] > 0:
                best_g, best_h = best[k, 0], best[k, 1]
                for i in range(m):  # unsigned maxima: vectorised (max_abs_pairs' loop)
                    g = grad_bits[at + np.uint64(i)] & sign_off
                    h = hess_bits[at + np.uint64(i)] & sign_off
                    best_g = max(best_g, g if g <= inf else zero)
                    best_h = max(best_h, h if h <= inf else zero)
                best[k, 0], best[k, 1] = best_g, best_h


@helper
def _logistic_rows(margin, lo, hi, y, w, grad, hess):
    """``rows_gradients``' logistic loss (``p = sigmoid(m) = 1 / (1 + exp(-m))``), the
    same operations per row, a block of rows at a time so that the loops vectorise:
    ``exp`` becomes ``exp_normal`` on ``-m`` clamped to its range, and the rows outside it
    (|m| above about 708, or NaN) are redone with ``exp``."""
    e = np.empty(_BLOCK)
    for first in range(lo, hi, _BLOCK):
        last = min(first + _BLOCK, hi)
        m = last - first
        _minus_exp(margin[first:last], e)
        g, h = grad[first:last], hess[first:last]
        label, weight = y[first:last], w[first:last]
        for i in range(m):
            p = 1.0 / (1.0 + e[i])
            g[i] = (p - label[i]) * weight[i]
            h[i] = max(p * (1.0 - p), HESSIAN_FLOOR) * weight[i]


@helper
def _logistic_pair_rows(margin, lo, hi, y, w, slots, bits, best):
    """``_logistic_rows`` writing row ``i``'s gradient and hessian into ``slots[2 i]``,
    ``slots[2 i + 1]`` (the flat interleaved pairs): the same operations, the same bits;
    the constant stride lets the last loop vectorise. ``best`` (uint64 (2,)) is raised to
    the largest ``|g|``, ``|h|`` bits of these rows (``bits``: ``slots`` as uint64)."""
    sign_off = np.uint64(0x7FFFFFFFFFFFFFFF)  # every bit of a float64 but its sign
    inf = np.uint64(0x7FF0000000000000)  # +inf's bits; |NaN|'s are larger: passed over
    zero = np.uint64(0)
    best_g, best_h = zero, zero
    e = np.empty(_BLOCK)
    for first in range(lo, hi, _BLOCK):
        last = min(first + _BLOCK, hi)
        m = last - first
        _minus_exp(margin[first:last], e)
        out = slots[2 * first:2 * last]
        label, weight = y[first:last], w[first:last]
        for i in range(m):
            p = 1.0 / (1.0 + e[i])
            out[2 * i] = (p - label[i]) * weight[i]
            out[2 * i + 1] = max(p * (1.0 - p), HESSIAN_FLOOR) * weight[i]
        written = bits[2 * first:2 * last]
        for i in range(m):  # unsigned maxima: vectorised (max_abs_pairs' loop)
            g, h = written[2 * i] & sign_off, written[2 * i + 1] & sign_off
            best_g = max(best_g, g if g <= inf else zero)
            best_h = max(best_h, h if h <= inf else zero)
    best[0], best[1] = best_g, best_h


@helper(inline="always")
def _minus_exp(column, e):
    """``e[i] = exp(-column[i])`` for a block of margins: ``exp_normal`` on ``-m`` clamped
    to its range (a loop that vectorises), and the rows outside it (|m| above about 708,
    or NaN) redone with ``exp``."""
    m = column.shape[0]
    for i in range(m):
        x = -column[i]
        x = x if x >= _NORMAL_LOW else _NORMAL_LOW
        e[i] = exp_normal(x if x <= _NORMAL_HIGH else _NORMAL_HIGH)
    outside = False
    for i in range(m):
        outside |= not _NORMAL_LOW <= -column[i] <= _NORMAL_HIGH
    if outside:
        for i in range(m):
            if not _NORMAL_LOW <= -column[i] <= _NORMAL_HIGH:
                e[i] = exp(-column[i])
