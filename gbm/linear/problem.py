"""A linear model's optimisation problem, its duality-gap certificate, and the sums over
ranks.

Every estimator maps its scikit-learn objective, exactly, onto

    P(W) = sum_i f_i(z_i) + sum_j l1_j |W_j| + l2_j / 2 W_j^2,   z_i = W xt_i,

where ``xt_i = [x_i, s]`` carries the intercept as a last feature of value ``s`` (0: no
intercept), ``f_i`` is the row's loss with its weight ``c_i`` folded in, and each
coordinate has its own penalties (a free intercept has none). The Fenchel dual is
``D(u) = -sum_i f_i*(-u_i) - sum_j g_j*((Xt^T u)_j)``; see ``kernels/linear_math.py``
for the per-row conjugates. ``certificate`` turns a primal point into a dual point and
returns ``P - D``: no solution has an objective below ``P - gap``.
"""
from dataclasses import dataclass

import numpy as np

from ..collective import LOCAL


@dataclass
class Problem:
    """What the solvers minimise.

    Attributes
    ----------
    loss : int, a ``kernels.linear_math`` id
    y : float64 (n, K_y), targets: values (squared), signs (logistic, hinges) or class
        indices (multinomial, K_y = 1)
    c : float64 (n,), row weights (>= 0) with the loss's scale folded in
    n_outputs : int, K (coefficient rows)
    l1, l2 : float, penalties of the coefficients
    intercept : "none", "free" (not penalised) or "penalized" (penalised like a feature)
    intercept_scale : float, the intercept feature's value (1 unless liblinear's
        ``intercept_scaling``)
    offset : float64 (n, K) or None, added to every margin: the part of ``z`` that the
        coordinates held fixed contribute (a duality-gap working set's restricted
        problem, ``gbm/linear/working_set.py``)
    """

    loss: int
    y: np.ndarray
    c: np.ndarray
    n_outputs: int
    l1: float
    l2: float
    intercept: str = "free"
    intercept_scale: float = 1.0
    offset: np.ndarray = None

    @property
    def scale(self):
        """The intercept feature's value as the kernels take it (0: no intercept)."""
        return 0.0 if self.intercept == "none" else float(self.intercept_scale)

    def penalties(self, n_features):
        """Per-coordinate (l1, l2), float64 (K (d + 1),), flattened as ``k * (d+1) + j``."""
        width = n_features + 1
        l1 = np.full((self.n_outputs, width), float(self.l1))
        l2 = np.full((self.n_outputs, width), float(self.l2))
        if self.intercept != "penalized":
            l1[:, -1] = l2[:, -1] = 0.0
        return l1.ravel(), l2.ravel()


def allsum(values, collective=LOCAL):
    """The sum over ranks of a float array (or scalar): gathered and added in rank order,
    so every rank gets the same numbers whatever order the ranks finish in."""
    values = np.asarray(values, dtype=np.float64)
    if collective.world_size == 1:
        return values
    parts = collective.allgather(values)
    total = parts[0].copy()
    for part in parts[1:]:
        total += part
    return total


def penalty_value(coef, l1, l2):
    """sum_j l1_j |w_j| + l2_j / 2 w_j^2 over flattened coefficients."""
    return float(np.sum(l1 * np.abs(coef)) + 0.5 * np.sum(l2 * coef * coef))


def dual_scale(grad, l1, l2):
    """theta in (0, 1]: the largest scale of u = -f'(z) whose ``Xt^T u = -grad`` lies in the
    domain of the pure-L1 coordinates' conjugates (|v_j| <= l1_j)."""
    pure = (l2 == 0.0) & (l1 > 0.0)
    if not pure.any():
        return 1.0
    biggest = np.max(np.abs(grad[pure]) / l1[pure])
    return 1.0 if biggest <= 1.0 else 1.0 / biggest


def penalty_conjugate(v, l1, l2, coef):
    """sum_j g_j*(v_j) for the dual, with ``v = Xt^T u``.

    Coordinates with l2 > 0: ``(|v| - l1)_+^2 / (2 l2)``; pure L1: 0 (theta keeps
    |v| <= l1); free coordinates (intercepts): their conjugate is the constraint v_j = 0,
    taken as ``v_j w_j`` at the current ``w_j``. That is a bound only where the constraint
    holds: the Newton solver first settles the intercepts at their optimum given the
    other coefficients (``gbm/linear/intercept.py``), after which v_j is rounding.
    """
    smooth = l2 > 0.0
    excess = np.maximum(np.abs(v[smooth]) - l1[smooth], 0.0)
    total = float(np.sum(excess * excess / (2.0 * l2[smooth])))
    free = (l1 == 0.0) & (l2 == 0.0)
    return total + float(np.sum(v[free] * coef[free]))


def certificate(loss_sum, dual_sum_at, grad, coef, l1, l2):
    """(primal, gap) at a primal point.

    loss_sum : float, sum_i f_i(z_i) over every rank
    dual_sum_at : callable theta -> sum_i -f_i*(-theta u_i) over every rank
    grad : float64 (D,), the loss part's gradient in the flattened coordinates (global)
    coef, l1, l2 : float64 (D,)
    """
    primal = loss_sum + penalty_value(coef, l1, l2)
    theta = dual_scale(grad, l1, l2)
    dual = dual_sum_at(theta) - penalty_conjugate(-theta * grad, l1, l2, coef)
    return primal, primal - dual
