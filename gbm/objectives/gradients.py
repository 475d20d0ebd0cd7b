"""The built-in objectives' gradients through the backend's ``pointwise_gradients``
kernel (``kernels/objective_math.py``): one implementation of their formulas, ``exp``
included, compiled for every backend, so the gradients (and the trees) are the same bits
on a CPU and on a GPU."""
import numpy as np

from ..kernels.layout import LOGISTIC

# a row's gradient costs about what 8 histogram cells do (the logistic loss: 5 ns a row on
# one thread, measured): the rows are shared between threads from 8,192 on
_COST = 8


_BLOCK_ROWS = 1 << 16  # rows per kernel call when the weights are one value
_ONES = np.ones(_BLOCK_ROWS)  # writable: a read-only array is another type to compile


def unit_weights(n_rows):
    """float64 (n_rows,) of ones that hold no memory of their own (a read-only view of
    one value, stride 0): an unweighted fit's row weights, 8 bytes a row less through its
    rounds. NumPy reads it as any array; ``pointwise`` gives the kernels a block of ones."""
    return np.broadcast_to(np.float64(1.0), (int(n_rows),))


def pointwise(kind, margin, y, w, objective_params=(), backend=None):
    """(grad, hess), float64 (n_rows, n_groups) views of group-major arrays, of objective
    ``kind`` (``kernels.layout``).

    margin : float64 (n_rows, n_groups), any layout; y, w : float64 (n_rows,), on the
        backend's device
    objective_params : sequence of float (see ``kernels/layout.py``)
    backend : gbm.runtime.backend.Backend; None = the CPU kernels on one thread
    """
    if backend is None:
        from ..kernels import cpu

        xp, kernels, n_threads = np, cpu, 1
    else:
        xp, kernels = backend.xp, backend.kernels
        n_threads = backend.threads_for(_COST * margin.size)
    margin = xp.asarray(margin, dtype=xp.float64)
    if margin.ndim == 1:
        margin = margin.reshape(-1, 1)
    # written group-major (each group's rows contiguous, what the grower reads), seen as
    # (n_rows, n_groups); the margin may be either layout
    # (training's backend reuses them from round to round: see Backend.buffer)
    shape = (margin.shape[1], margin.shape[0])
    if backend is None:
        grad, hess = np.empty(shape).T, np.empty(shape).T
    else:
        grad = backend.buffer("grad", shape, np.float64).T
        hess = backend.buffer("hess", shape, np.float64).T
    params = xp.asarray(np.asarray(objective_params, dtype=np.float64).reshape(-1))
    if params.size == 0:
        params = xp.zeros(1, dtype=xp.float64)
    y = xp.asarray(y, dtype=xp.float64)
    w = xp.asarray(w, dtype=xp.float64)
    one_value = xp is np and w.ndim == 1 and w.shape[0] > 0 and w.strides == (0,)
    if one_value and margin.shape[1] > 1:  # several groups: the weights as an array
        w = np.ascontiguousarray(w)
    if backend is None:
        _call(kernels, kind, margin, y, w, params, grad, hess, n_threads, one_value)
    else:
        fused = _fused_pairs(backend, kind, margin, grad, hess)
        with backend.threads(_COST * margin.size) as n:
            _call(kernels, kind, margin, y, w, params, grad, hess, n, one_value, fused)
    return grad, hess


def _fused_pairs(backend, kind, margin, grad, hess):
    """``(maxima, pairs)``: where the logistic loss's kernel is to record ``max |g|``,
    ``max |h|`` as it writes them (``logistic_pair_gradients``), and the float64 (n, 2)
    memory whose columns ``grad`` and ``hess`` are; or None. Only when a CPU round asked
    for them (``gbm.training.rounds`` puts float64 (2,) "pair_maxima", NaN until written,
    and the pairs' "pair_slots" in the workspace) and the gradients go into those slots:
    the quantisation then takes the maxima instead of a second pass over the pairs
    (``max_abs_pairs``)."""
    workspace = backend.workspace
    maxima = None if workspace is None else workspace.get("pair_maxima")
    if maxima is None or kind != LOGISTIC or backend.xp is not np or margin.shape[1] != 1:
        return None
    pairs = workspace.get("pair_slots")
    if (pairs is None or not hasattr(backend.kernels, "logistic_pair_gradients")
            or not margin.T.flags.c_contiguous or grad.shape[0] != pairs.shape[0]
            or grad.shape[0] == 0 or grad.strides[0] != 16 or hess.strides[0] != 16):
        return None
    base = pairs.ctypes.data
    if grad.ctypes.data != base or hess.ctypes.data != base + 8:
        return None
    return maxima, pairs


def _call(kernels, kind, margin, y, w, params, grad, hess, n_threads, one_value, fused=None):
    """The kernel on every row; with weights of one value (``unit_weights``; one output
    group), block by block of rows with a block of that value: each row's gradients are
    computed alone, so the blocks give the same bits. ``fused``: ``_fused_pairs``' (the
    logistic loss into the pairs' slots, the maxima recorded from 0 over the blocks)."""
    if fused is not None:
        fused[0].fill(0.0)
    pairs = None if fused is None else fused[1]
    if not (one_value and margin.shape[1] == 1):
        _rows(kernels, kind, margin, y, w, params, grad, hess, n_threads, fused)
        return
    n = margin.shape[0]
    per_row = y.shape[0] // n  # survival:aft: two labels a row
    ones = _ONES if w[0] == 1.0 else np.full(_BLOCK_ROWS, w[0])
    for lo in range(0, n, _BLOCK_ROWS):
        hi = min(lo + _BLOCK_ROWS, n)
        _rows(kernels, kind, margin[lo:hi], y[lo * per_row:hi * per_row], ones[:hi - lo],
              params, grad[lo:hi], hess[lo:hi], n_threads,
              None if fused is None else (fused[0], pairs[lo:hi]))


def _rows(kernels, kind, margin, y, w, params, grad, hess, n_threads, fused):
    if fused is None:
        kernels.pointwise_gradients(kind, margin, y, w, params, grad, hess, n_threads)
    else:  # grad, hess: the two columns of fused[1] (float64 (n, 2), C order)
        kernels.logistic_pair_gradients(margin.T[0], y, w, fused[1], n_threads, fused[0])
