"""The built-in objectives' gradients through the backend's ``pointwise_gradients``
kernel (``kernels/objective_math.py``): one implementation of their formulas, ``exp``
included, compiled for every backend, so the gradients (and the trees) are the same bits
on a CPU and on a GPU."""
import numpy as np

# a row's gradient costs about what 8 histogram cells do (the logistic loss: 5 ns a row on
# one thread, measured): the rows are shared between threads from 8,192 on
_COST = 8


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
    if backend is None:
        kernels.pointwise_gradients(kind, margin, y, w, params, grad, hess, n_threads)
    else:
        with backend.threads(_COST * margin.size) as n:
            kernels.pointwise_gradients(kind, margin, y, w, params, grad, hess, n)
    return grad, hess
