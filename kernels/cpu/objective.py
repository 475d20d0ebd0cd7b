"""Gradients and hessians of the built-in pointwise objectives (``objective_math``)."""
from numba import prange

from ..elementary import cpu as _elementary
from ..elementary import product
from ..jit import kernel
from ..objective_math import make_objective_math

rows_gradients = make_objective_math(kernel, kernel(product), _elementary).rows_gradients


@kernel(parallel=True)
def pointwise_gradients(kind, margin, y, w, objective_params, grad, hess, n_threads):
    """Every row's gradient and hessian for objective ``kind`` (``layout.SQUARED`` ..).

    kind : int                                  # IN  layout's objective kinds
    margin : float64 (n_rows, n_groups), any layout  # IN
    y, w : float64 (n_rows,)                    # IN  labels, row weights
    objective_params : float64 (n_params,)      # IN  see layout.py
    grad, hess : float64 (n_rows, n_groups)     # OUT any layout (gbm.gradients: views of
                                                #     group-major arrays)
    n_threads : int                             # rows are cut into this many pieces

    Each row is computed alone: the thread count cannot change any result.
    """
    n = margin.shape[0]
    for t in prange(n_threads):
        rows_gradients(kind, margin, n * t // n_threads, n * (t + 1) // n_threads, y, w,
                       objective_params, grad, hess)
