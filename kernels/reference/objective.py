"""Twin of ``cpu/objective.py``: the shared row formulas (``objective_math``) run as
plain Python, row by row (one range of all rows). Their independent oracles are in ``tests/test_objectives.py``
(finite differences of the losses, and NumPy's own functions)."""
import numpy as np

from ..layout import LOGISTIC, SOFTMAX
from ..objective_math import python as _math


def pointwise_gradients(kind, margin, y, w, objective_params, grad, hess, n_threads=1):
    _math.rows_gradients(kind, margin, 0, margin.shape[0], y, w, objective_params, grad, hess)


def logistic_pair_gradients(margin, y, w, pairs, n_threads, maxima):
    pointwise_gradients(LOGISTIC, margin.reshape(-1, 1), y, w, np.zeros(1), pairs[:, :1],
                        pairs[:, 1:])
    for k in range(2):
        column = np.abs(pairs[:, k])
        maxima[k] = max(maxima[k], float(np.max(column[~np.isnan(column)], initial=0.0)))


def softmax_gradients(margin, y, w, grad, hess, n_threads, maxima):
    """The CPU's ``softmax_gradients`` (group-major (n_groups, n_rows) arrays, maxima
    (n_groups, 2)): the row formulas on transposed views, then each class's maxima."""
    pointwise_gradients(SOFTMAX, margin.T, y, w, np.zeros(1), grad.T, hess.T)
    for k in range(margin.shape[0]):
        for j, values in enumerate((grad[k], hess[k])):
            column = np.abs(values)
            maxima[k, j] = max(maxima[k, j],
                               float(np.max(column[~np.isnan(column)], initial=0.0)))
