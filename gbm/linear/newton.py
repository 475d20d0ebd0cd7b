"""Proximal Newton with coordinate-descent inner solves: the solver of every smooth loss
(squared, logistic, multinomial, squared hinge) with L1, L2 or elastic-net penalties.

Each outer round (Yuan, Ho and Lin 2012, "newGLMNET"; Friedman, Hastie and Tibshirani
2010 for the coordinate steps):

1. per-row loss terms at the margins ``z`` (local), the gradient ``G = Xt^T f'(z)``
   (local, then summed over ranks), the duality gap (``problem.certificate``): stop when
   ``gap <= tol * P``, so ``tol`` bounds the relative suboptimality. Before a result is
   returned, the free intercepts go to their optimum given the other coefficients and
   the certificate is taken again (damped Newton on the margins' shift,
   ``gbm/linear/intercept.py``: only there is the gap a bound; until then it steers);
2. the quadratic model ``G . delta + 1/2 delta^T H delta + penalty(W + delta)`` minimised by
   coordinate descent, either on the explicit Hessian (``gram``: dense data with few
   features, one pass of ``n (K (d+1))^2 / 2`` and a small matrix; the squared loss's
   Hessian is computed once) or, for sparse or wide data (``residual``), through the
   residual ``q = X delta`` (every sweep one pass over the nonzeros) when a coordinate
   has an L1 penalty, else by conjugate gradients on the Newton system (Newton-CG, as
   liblinear's primal solver: every step two parallel passes over X, where coordinate
   descent is sequential and slow on ill-conditioned data such as one-hot features);
3. a backtracking line search on the true objective (Armijo on the model's decrease).

Distributed (ranks holding rows, ``collective``): in ``gram`` mode the ranks add their
Hessians, so every rank takes the same exact Newton step; in ``residual`` mode each rank
solves the model with its own rows' curvature scaled by its share of the weight, and the
steps are averaged with those shares (a descent direction: the directional derivative is
sublinear and each local step is one), as in GIANT (Wang et al. 2018). Either way one
gather per round carries the gradient and the Hessian or the step, the line search's
trials and the certificate add scalar sums, and every rank makes the same decisions.
"""
import warnings
from dataclasses import dataclass

import numpy as np

from ..collective import LOCAL
from ..kernels.linear_math import MULTINOMIAL, SQUARED
from . import intercept
from .problem import allsum, certificate, penalty_value

GRAM_MAX_SIZE = 512  # coordinates K (d + 1) up to which the Hessian may be held as a matrix
_ARMIJO = 0.01
_MAX_HALVINGS = 50
_MAX_SWEEPS = 100  # inner sweeps per Newton step (residual mode, L1 penalties)
_ACTIVE_GRAM_MAX = 1024  # active coordinates up to which their Hessian is held (residual mode)
_MAX_CG = 250
_SMALL_WORK = 1 << 16  # nonzeros x outputs of a "small" problem (solved past tol)
_SMALL_TOL = 1e-15  # down to the precision the line search can still improve  # conjugate-gradient steps per Newton step (residual mode, smooth penalties)
_ACTIVE_SLACK = 0.95  # a coordinate at 0 joins the sweep when |G_j| >= 0.95 l1_j


@dataclass
class Result:
    """coef: float64 (K, d + 1), last column the intercept's coefficient (times its scale
    gives the intercept); n_iter: Newton steps; primal, gap: the objective and duality gap
    at ``coef``; converged: ``gap <= tol * primal``."""

    coef: np.ndarray
    n_iter: int
    primal: float
    gap: float
    converged: bool


class _Terms:
    """Per-row loss terms at some margins."""

    def __init__(self, n, n_outputs):
        self.grad = np.empty((n, n_outputs))
        self.curv_a = np.empty((n, n_outputs))
        self.curv_b = np.empty((n, n_outputs))
        self.losses = np.empty(n)

    def evaluate(self, problem, backend, z):
        with backend.threads(z.size):
            backend.kernels.loss_terms(problem.loss, z, problem.y, problem.c, self.grad,
                                       self.curv_a, self.curv_b, self.losses)
        return float(allsum(np.sum(self.losses), backend.collective))


def choose_mode(design, problem, collective=LOCAL):
    """"gram" or "residual" (see the module's docstring); measured in bench/linear.py.
    Decided from every rank's data (dense on every rank that has rows, the total row
    count), so all ranks take the same road."""
    size = problem.n_outputs * (design.d + 1)
    facts = [(design.kind == "dense" or design.n == 0, design.n)]
    if collective.world_size > 1:
        facts = collective.allgather(facts[0])
    dense = all(kind for kind, _ in facts)
    n_rows = sum(n for _, n in facts)
    if not dense or size > GRAM_MAX_SIZE or n_rows < size:
        return "residual"
    if problem.loss == SQUARED:
        return "gram"
    return "gram" if problem.n_outputs == 1 and size <= 128 else "residual"


class NewtonSolver:
    """One problem on one rank's rows; ``solve`` runs the outer rounds."""

    def __init__(self, problem, design, backend, tol, max_iter, mode="auto"):
        self.problem, self.design, self.backend = problem, design, backend
        self.collective = backend.collective
        self.tol, self.max_iter = float(tol), int(max_iter)
        self.mode = choose_mode(design, problem, self.collective) if mode == "auto" else mode
        n, d, K = design.n, design.d, problem.n_outputs
        self.width, self.size = d + 1, K * (d + 1)
        self.scale = problem.scale
        self.l1, self.l2 = problem.penalties(d)
        present = np.ones((K, d + 1), dtype=bool)
        if self.scale == 0.0:
            present[:, d] = False
        self.present = present.ravel()
        self.free_intercept = problem.intercept == "free" and self.scale != 0.0
        self.z = np.empty((n, K))
        self.q = np.empty((n, K))
        self.terms, self.trial = _Terms(n, K), _Terms(n, K)
        self.gram_cache = None
        weight = float(np.sum(problem.c))
        total = float(allsum(weight, self.collective))
        self.share = weight / total if total > 0.0 else 0.0

    # -- passes over the data -------------------------------------------------------

    def _margins(self, coef, out):
        table = coef.reshape(-1, self.width)
        return self.design.margins(table[:, :-1], self.scale * table[:, -1], out)

    def _gradient(self):
        """The loss part's gradient in the flattened coordinates, summed over ranks."""
        K, d = self.problem.n_outputs, self.design.d
        table = np.empty((K, d + 1))
        self.design.gradient(self.terms.grad, table[:, :d])
        table[:, d] = self.scale * self.terms.grad.sum(axis=0)
        return allsum(table.ravel(), self.collective)

    def _dual_sum(self, theta):
        out = np.empty(self.design.n)
        with self.backend.threads(self.z.size):
            self.backend.kernels.dual_terms(self.problem.loss, self.z, self.problem.y,
                                            self.problem.c, float(theta), out)
        total = np.sum(out)
        if self.problem.offset is not None:
            # f_i(s) = g_i(s + o_i) has f_i*(v) = g_i*(v) - v o_i: at v = -theta u_i, with
            # u_i = -g_i'(z_i), the row's term gains theta g_i'(z_i) . o_i
            total += theta * np.sum(self.terms.grad * self.problem.offset)
        return float(allsum(total, self.collective))

    # -- the inner problem ------------------------------------------------------------

    def _active(self, coef, grad):
        keep = self.present & ((coef != 0.0) | (np.abs(grad) >= _ACTIVE_SLACK * self.l1))
        return np.flatnonzero(keep).astype(np.int64)

    def _gram_step(self, coef, grad, active, relative_gap):
        if self.gram_cache is not None:
            hessian = self.gram_cache
        else:
            hessian = np.empty((self.size, self.size))
            self.design.gram(self.terms.curv_a, self.terms.curv_b, self.scale, hessian)
            hessian = allsum(hessian, self.collective)
            if self.problem.loss == SQUARED:  # its curvature does not depend on the point
                self.gram_cache = hessian
        delta = np.zeros(self.size)
        if not np.any(self.l1[active] > 0.0):
            sub = hessian[np.ix_(active, active)] + np.diag(self.l2[active])
            rhs = -(grad[active] + self.l2[active] * coef[active])
            delta[active] = _solve_symmetric(sub, rhs)
        else:
            self.backend.kernels.cd_gram(hessian, grad, self.l1, self.l2, coef, delta,
                                         np.zeros(self.size), active, 1000, 1e-12, 0.0)
        self._margins(delta, self.q)
        return delta

    def _residual_step(self, coef, grad, active, relative_gap):
        delta = np.zeros(self.size)
        self.q[:] = 0.0
        if self.share > 0.0:
            # this rank's rows stand for all: curvature scaled by 1 / share (1 on one rank)
            a, b = self.terms.curv_a, self.terms.curv_b
            if self.share != 1.0:
                a, b = a / self.share, b / np.sqrt(self.share)
            K, d = self.problem.n_outputs, self.design.d
            diag = np.empty((K, d + 1))
            self.design.hessian_diagonal(a, b, diag[:, :d])
            diag[:, d] = self.scale ** 2 * (a - b * b).sum(axis=0)
            inner_tol = min(0.1, max(1e-10, relative_gap))
            if np.any(self.l1 > 0.0) and K == 1 and active.size <= _ACTIVE_GRAM_MAX:
                # few active coordinates: their Hessian as a small matrix (glmnet's
                # covariance updates), then coordinate descent on it, solved tightly
                self._sweeps = self._active_gram_solve(a[:, 0], coef, grad, active, delta)
                self._margins(delta, self.q)
            elif np.any(self.l1 > 0.0):
                self._sweeps = self.design.cd_residual(
                    self.scale, a, b, bool(np.any(b != 0.0)), grad, diag.ravel(), self.l1,
                    self.l2, coef, delta, self.q, np.zeros(self.design.n), active, _MAX_SWEEPS,
                    inner_tol, 0.0)
            else:  # smooth: conjugate gradients, each step two parallel passes over X
                self._sweeps = self._conjugate_gradient(a, b, diag.ravel(), coef, grad, active,
                                                        delta, np.sqrt(inner_tol))
                self._margins(delta, self.q)
        if self.collective.world_size > 1:
            delta = allsum(self.share * delta, self.collective)
            self._margins(delta, self.q)
        return delta

    def _active_gram_solve(self, curvature, coef, grad, active, delta):
        """Minimise the model over the ``active`` coordinates (one output) with their
        Hessian ``Xt_A^T diag(a) Xt_A`` held as a matrix; returns the sweeps."""
        d = self.design.d
        columns = active[active < d]
        block = self.design.column_block(columns)  # (n, |A|), sparse or dense
        weighted = block.multiply(curvature[:, None]) if hasattr(block, "multiply") \
            else block * curvature[:, None]
        hessian = np.asarray((block.T @ weighted).todense() if hasattr(weighted, "todense")
                             else block.T @ weighted)
        order = columns
        if active.size > columns.size:  # the intercept is active: its row and column
            cross = self.scale * np.asarray(block.T @ curvature).ravel()
            corner = self.scale ** 2 * float(np.sum(curvature))
            hessian = np.block([[hessian, cross[:, None]], [cross[None, :], np.array([[corner]])]])
            order = np.append(columns, d)
        hessian = np.ascontiguousarray(hessian, dtype=np.float64)
        sub = np.zeros(order.size)
        sweeps = self.backend.kernels.cd_gram(
            hessian, np.ascontiguousarray(grad[order]), np.ascontiguousarray(self.l1[order]),
            np.ascontiguousarray(self.l2[order]), np.ascontiguousarray(coef[order]), sub,
            np.zeros(order.size), np.arange(order.size, dtype=np.int64), 1000, 1e-10, 0.0)
        delta[order] = sub
        return sweeps

    def _hessian_product(self, a, b, vector, out_rows):
        """(H + diag(l2)) v for flattened v, from this rank's rows' curvatures ``a``, ``b``."""
        K, d = self.problem.n_outputs, self.design.d
        self._margins(vector, out_rows)
        if np.any(b != 0.0):
            out_rows[:] = a * out_rows - b * (b * out_rows).sum(axis=1, keepdims=True)
        else:
            out_rows *= a
        table = np.empty((K, d + 1))
        self.design.gradient(out_rows, table[:, :d])
        table[:, d] = self.scale * out_rows.sum(axis=0)
        return table.ravel() + self.l2 * vector

    def _conjugate_gradient(self, a, b, diag, coef, grad, active, delta, tolerance):
        """Solve (H + diag(l2)) delta = -(grad + l2 w) on the ``active`` coordinates by
        conjugate gradients with a Jacobi preconditioner (Newton-CG, as liblinear's TRON),
        to a residual of ``tolerance`` times the first; returns the iterations."""
        mask = np.zeros(self.size, dtype=bool)
        mask[active] = True
        precondition = np.where(mask, 1.0 / np.maximum(diag + self.l2, 1e-300), 0.0)
        rows = np.empty_like(self.q)
        residual = np.where(mask, -(grad + self.l2 * coef), 0.0)
        z = precondition * residual
        direction = z.copy()
        rz = float(residual @ z)
        start = np.sqrt(float(residual @ residual))
        for it in range(1, _MAX_CG + 1):
            product = np.where(mask, self._hessian_product(a, b, direction, rows), 0.0)
            curvature = float(direction @ product)
            if not curvature > 0.0:
                return it
            step = rz / curvature
            delta += step * direction
            residual -= step * product
            if np.sqrt(float(residual @ residual)) <= tolerance * start:
                return it
            z = precondition * residual
            rz, previous = float(residual @ z), rz
            direction = z + (rz / previous) * direction
        return _MAX_CG

    # -- the outer loop ---------------------------------------------------------------

    def _line_search(self, coef, delta, loss_sum, grad):
        """(step size, new loss sum) or (0, loss_sum) when no step decreases the objective."""
        penalty = penalty_value(coef, self.l1, self.l2)
        predicted = float(grad @ delta) + penalty_value(coef + delta, self.l1, self.l2) - penalty
        if not predicted < 0.0:
            return 0.0, loss_sum
        beta, objective = 1.0, loss_sum + penalty
        z_trial = np.empty_like(self.z)
        for _ in range(_MAX_HALVINGS):
            np.multiply(self.q, beta, out=z_trial)
            z_trial += self.z
            trial_loss = self.trial.evaluate(self.problem, self.backend, z_trial)
            value = trial_loss + penalty_value(coef + beta * delta, self.l1, self.l2)
            if value <= objective + _ARMIJO * beta * predicted:
                self.z = z_trial
                self.terms, self.trial = self.trial, self.terms
                return beta, trial_loss
            beta *= 0.5
        return 0.0, loss_sum

    def _settle_intercept(self, coef, loss_sum):
        """``(coef, loss_sum)`` with the free intercepts moved to their optimum given the
        other coefficients (``gbm/linear/intercept.py``: without it the certificate bounds
        nothing); ``z`` and the terms follow. Damped Newton on the margins' shift."""
        if not self.free_intercept:
            return coef, loss_sum
        coef = np.array(coef, dtype=np.float64)
        intercepts = coef.reshape(-1, self.width)[:, -1]  # a view: updates coef
        coupled = self.problem.loss == MULTINOMIAL
        grad, hessian = intercept.shift_derivatives(self.terms, self.collective)
        for _ in range(intercept.MAX_STEPS):
            step = intercept.newton_shift(grad, hessian, coupled)
            if intercept.negligible(step, self.scale * intercepts):
                break
            found = self._shift_search(step, grad, loss_sum)
            if found is None:
                break
            size, loss_sum, grad, hessian = found
            intercepts += size * step / self.scale
        return coef, loss_sum

    def _shift_search(self, step, grad, loss_sum):
        """Backtracking on the margins' shift ``step`` (K,): (size, loss sum, gradient,
        Hessian) at the accepted shift, or None. Where the loss sum cannot show the
        predicted decrease (near the optimum), a shift is taken if it shrinks the
        gradient, and none is halved."""
        slope = float(grad @ step)
        if not slope < 0.0:
            return None
        size, z_trial = 1.0, np.empty_like(self.z)
        for _ in range(intercept.MAX_HALVINGS):
            np.add(self.z, size * step, out=z_trial)
            trial_loss = self.trial.evaluate(self.problem, self.backend, z_trial)
            trial_grad, trial_hessian = intercept.shift_derivatives(self.trial, self.collective)
            unresolved = intercept.unresolved(-size * slope, loss_sum)
            if trial_loss <= loss_sum + _ARMIJO * size * slope or (
                    unresolved and np.linalg.norm(trial_grad) < np.linalg.norm(grad)):
                self.z = z_trial
                self.terms, self.trial = self.trial, self.terms
                return size, trial_loss, trial_grad, trial_hessian
            if unresolved:
                return None
            size *= 0.5
        return None

    def _refresh(self, coef):
        self._margins(coef, self.z)
        if self.problem.offset is not None:
            self.z += self.problem.offset
        return self.terms.evaluate(self.problem, self.backend, self.z)

    def evaluate(self, coef):
        """``(primal, gap, grad)`` at ``coef`` (flattened (K (d + 1),)): the objective and
        its certificate over every rank, from exact margins, and the loss part's gradient
        where the certificate's dual point comes from: ``coef`` with its free intercepts
        at their optimum. The gap includes the intercepts' distance to that optimum."""
        coef = np.asarray(coef, dtype=np.float64).ravel()
        loss_sum = self._refresh(coef)
        given = loss_sum + penalty_value(coef, self.l1, self.l2)
        settled, loss_sum = self._settle_intercept(coef, loss_sum)
        grad = self._gradient()
        primal, gap = certificate(loss_sum, self._dual_sum, grad, settled, self.l1, self.l2)
        return given, gap + (given - primal), grad

    def solve(self, coef=None):
        coef = np.zeros(self.size) if coef is None else np.array(coef, dtype=np.float64).ravel()
        loss_sum = self._refresh(coef)
        fresh, settled, stalled, n_iter = True, False, False, 0
        # small problems are solved well past tol (steps cost nothing there): the result
        # is then settled to many digits, the same from weighted and from repeated rows
        small = int(allsum(self.design.nnz, self.collective)) * self.problem.n_outputs
        target = min(self.tol, _SMALL_TOL) if small <= _SMALL_WORK else self.tol
        while True:
            grad = self._gradient()
            primal, gap = certificate(loss_sum, self._dual_sum, grad, coef, self.l1, self.l2)
            done = gap <= target * primal
            if done and not fresh:  # confirm on exact margins
                loss_sum, fresh = self._refresh(coef), True
                continue
            finished = done or stalled or n_iter >= self.max_iter
            if finished and not settled:
                # the gap bounds the distance to the optimum only with the intercepts at
                # theirs (gbm/linear/intercept.py); a stall may then resume
                settled_coef, loss_sum = self._settle_intercept(coef, loss_sum)
                stalled = stalled and np.array_equal(settled_coef, coef)
                coef, settled = settled_coef, True
                continue
            if finished:
                return Result(coef.reshape(-1, self.width), n_iter, primal, gap,
                              gap <= self.tol * primal)
            active = self._active(coef, grad)
            step = self._gram_step if self.mode == "gram" else self._residual_step
            delta = step(coef, grad, active, gap / primal)
            beta, loss_sum = self._line_search(coef, delta, loss_sum, grad)
            n_iter += 1
            if beta == 0.0:  # no descent left at this precision (on drifted margins: refresh)
                stalled = fresh
                if not fresh:
                    loss_sum, fresh = self._refresh(coef), True
                continue
            coef = coef + beta * delta
            fresh = settled = False


def _solve_symmetric(matrix, rhs):
    """Solve a symmetric positive semi-definite system; least squares if it is singular."""
    import scipy.linalg

    try:
        return scipy.linalg.solve(matrix, rhs, assume_a="pos", check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return np.linalg.lstsq(matrix, rhs, rcond=None)[0]


def solve(problem, design, backend, tol, max_iter, mode="auto", coef=None):
    """Minimise ``problem`` over ``design``'s rows; a ``Result`` (warns if not converged)."""
    result = NewtonSolver(problem, design, backend, tol, max_iter, mode).solve(coef)
    warn_unconverged(result, tol, "Newton steps")
    return result


def warn_unconverged(result, tol, unit):
    """A ConvergenceWarning when ``result`` did not reach the gap ``tol * primal``."""
    if result.converged:
        return
    from sklearn.exceptions import ConvergenceWarning

    relative = result.gap / max(result.primal, 1e-300)
    warnings.warn(f"the solver stopped after {result.n_iter} {unit} with a relative duality "
                  f"gap of {relative:.3g} > tol={tol}; increase max_iter or tol",
                  ConvergenceWarning, stacklevel=3)
