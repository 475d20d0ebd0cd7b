"""Duality-gap working sets: a fit on a device that holds only part of the data.

When ``max_device_memory`` (bytes) is less than what a ``device="cuda"`` fit would put on
the GPU (``primal_bytes`` / ``dual_bytes``), X stays on the host and the fit alternates,
as in Duenner et al. 2017 ("Efficient use of limited-memory accelerators for linear
learning on heterogeneous systems", the building block of Snap ML):

1. the host computes, over all the data and with the CPU kernels, the certificate and
   each coordinate's part of the duality gap; it stops when the gap is at most ``tol``
   times the objective, so the result carries the same certificate as any fit;
2. the coordinates with the largest parts that fit in the memory go to the device,
   which improves them with the usual solver while the others stay fixed.

*Primal* (proximal Newton): the coordinates are the columns of X. At ``u = -f'(z)`` the
rows' part of the gap is zero (Fenchel-Young), and the rest splits over coordinates:
``gap_j = g_j(w_j) + g_j*(v_j) - w_j v_j >= 0`` with ``v = -G`` (the loss gradient).
A pure L1 coordinate's conjugate is infinite outside ``|v_j| <= l1``; for the ranking it
is taken with ``|w_j| <= B = P(w) / l1`` (no better point has a larger coefficient), which
gives ``B (|v_j| - l1)_+`` (the Lipschitzing of Duenner et al. 2016). A column's score
sums its outputs; the intercept is always in the set. The device then solves the problem
restricted to the chosen columns (the fixed ones' margins are an offset), to a relative
gap of a tenth of the whole problem's, warm-started.

*Dual* (``LinearSVC``'s dual coordinate ascent): the coordinates are the rows' dual
variables, and row ``i``'s part of the gap is ``c_i l(m_i) - alpha_i + alpha_i m_i``
(plus ``alpha_i^2 / (4 c_i)`` for the squared hinge): the rows with the largest parts go
to the device for ``ROUND_EPOCHS`` epochs against the shared ``w``.

Over several ranks every decision comes from summed numbers, so the ranks agree; each
rank fits its own rows' part into its own device.
"""
import dataclasses

import numpy as np

from ..runtime.backend import get_backend
from .design import Design
from .dual_cd import box, certificate as dual_certificate, row_gaps, signed_margins
from .newton import NewtonSolver, Result, warn_unconverged
from .problem import allsum

PRIMAL_ROW_FLOATS = 8  # float64 per row and output a primal fit holds on the device at once
DUAL_ROW_FLOATS = 6  # float64 per row of the dual solver (label, box, shift, norm, alpha, order)
ROUND_EPOCHS = 1  # dual epochs on the device between two host certificates (measured below)
_MIN_INNER_TOL = 1e-15


def _index_bytes(design):
    indptr, indices, _ = design._host_sparse
    return indptr.dtype.itemsize, indices.dtype.itemsize


def primal_row_bytes(n_rows, n_outputs):
    """Device bytes of the per-row arrays of a primal fit (margins, residuals, loss terms,
    their trial copies, labels, weights)."""
    return 8 * n_rows * (PRIMAL_ROW_FLOATS * n_outputs + 2)


def column_bytes(design):
    """int64 (d,): device bytes of each column of a column-layout Design's X (sparse: its
    entries twice, as ``margins_csc`` transposes them to rows on the device)."""
    if design.kind == "dense":
        return np.full(design.d, 8 * design.n, dtype=np.int64)
    ptr, index = _index_bytes(design)
    counts = np.diff(design._host_sparse[0]).astype(np.int64)
    return 2 * counts * (8 + index) + ptr


def row_bytes(design):
    """int64 (n,): device bytes of each row of a row-layout Design (X's row and the dual
    solver's per-row arrays)."""
    per_row = 8 * DUAL_ROW_FLOATS
    if design.kind == "dense":
        return np.full(design.n, 8 * design.d + per_row, dtype=np.int64)
    ptr, index = _index_bytes(design)
    counts = np.diff(design._host_sparse[0]).astype(np.int64)
    return counts * (8 + index) + ptr + per_row


def primal_bytes(design, n_outputs):
    """Device bytes of a primal fit with all the data on the device."""
    return int(column_bytes(design).sum()) + primal_row_bytes(design.n, n_outputs)


def dual_bytes(design):
    """Device bytes of a dual fit with all the data on the device."""
    return int(row_bytes(design).sum()) + 16 * (design.d + 1)


class HostData:
    """A fit's X kept on the host (it does not fit ``budget`` bytes of device memory).

    design : Design on the CPU backend (all the data, for the host's passes)
    backend : the device backend the working sets are solved on
    """

    def __init__(self, design, backend, budget):
        self.design, self.backend, self.budget = design, backend, int(budget)
        self.n, self.d, self.kind = design.n, design.d, design.kind

    def columns(self, columns):
        """X's ``columns`` (sorted int array) as a matrix for a column-layout Design."""
        block = self.design.column_block(columns)
        return np.asfortranarray(block) if self.kind == "dense" else block.tocsc()

    def rows(self, rows):
        """X's ``rows`` (sorted int array) as a matrix for a row-layout Design."""
        if self.kind == "dense":
            return self.design._host_X[rows]
        import scipy.sparse as sp

        indptr, indices, data = self.design._host_sparse
        return sp.csr_matrix((data, indices, indptr), shape=(self.n, self.d))[rows]


def host_design(X, backend, by):
    """``X`` as a Design on the CPU backend with ``backend``'s threads and collective."""
    host = get_backend("cpu", backend.n_threads, backend.collective)
    return Design(X, host, by)


def choose(scores, costs, room):
    """Sorted indices of the items with the largest ``scores`` (ties: lower index first)
    whose ``costs`` fit in ``room`` bytes, taken greedily in score order."""
    order = np.lexsort((np.arange(scores.shape[0]), -scores))
    fits = np.cumsum(costs[order]) <= room
    if not fits.all():  # greedy: after the first that does not fit, the smaller ones
        taken, used = [], 0
        for i in order:
            if used + costs[i] <= room:
                taken.append(i)
                used += costs[i]
        return np.sort(np.array(taken, dtype=np.int64))
    return np.sort(order)


def coordinate_gaps(grad, coef, l1, l2, primal):
    """Each coordinate's part of the duality gap at ``v = -grad`` (module docstring)."""
    v = -grad
    excess = np.maximum(np.abs(v) - l1, 0.0)
    smooth = l2 > 0.0
    conjugate = np.where(smooth, excess * excess / (2.0 * np.where(smooth, l2, 1.0)), 0.0)
    pure = (l2 == 0.0) & (l1 > 0.0)
    bound = primal / np.where(pure, l1, 1.0)
    conjugate = np.where(pure, bound * excess, conjugate)
    penalty = l1 * np.abs(coef) + 0.5 * l2 * coef * coef
    return np.maximum(penalty + conjugate - coef * v, 0.0)


def _too_small(budget, fixed, smallest, what):
    raise ValueError(f"max_device_memory={budget} bytes is too small for this fit: {what} "
                     f"need {fixed} bytes and the smallest working set {smallest} more; give at "
                     f"least {fixed + smallest} bytes, or None to use the whole device")


def newton(problem, data, tol, max_iter, mode="auto"):
    """Minimise ``problem`` (as ``newton.solve``) with column working sets on the device."""
    host, backend = data.design, data.backend
    evaluator = NewtonSolver(problem, host, host.backend, tol, max_iter)
    K, d = problem.n_outputs, host.d
    width = d + 1
    costs = column_bytes(host)
    fixed = primal_row_bytes(host.n, K)
    room = data.budget - fixed
    if d and room < costs.min():
        _too_small(data.budget, fixed, int(costs.min()), f"the per-row arrays of {host.n} rows")
    coef = np.zeros(K * width)
    n_iter, inner_scale, exhausted = 0, 0.1, False
    while True:
        primal, gap, grad = evaluator.evaluate(coef)
        if gap <= tol * primal or n_iter >= max_iter or exhausted:
            result = Result(coef.reshape(K, width), n_iter, primal, gap, gap <= tol * primal)
            warn_unconverged(result, tol, "Newton steps")
            return result
        scores = coordinate_gaps(grad, coef, evaluator.l1, evaluator.l2, primal)
        columns = choose(scores.reshape(K, width)[:, :d].sum(axis=0), costs, room)
        table = coef.reshape(K, width).copy()
        held = table.copy()
        held[:, columns] = 0.0
        offset = np.empty((host.n, K))
        host.margins(held[:, :d], np.zeros(K), offset)
        sub = dataclasses.replace(problem, offset=offset)
        chosen = np.append(columns, d)
        inner_tol = max(tol / 2, min(0.1, inner_scale * gap / primal), _MIN_INNER_TOL)
        solver = NewtonSolver(sub, Design(data.columns(columns), backend, "columns"), backend,
                              inner_tol, max_iter - n_iter, mode)
        step = solver.solve(table[:, chosen].ravel())
        table[:, chosen] = step.coef  # with no Newton step, the intercept may still move
        coef = table.ravel()
        n_iter += step.n_iter
        if step.n_iter == 0:  # the set was already solved this far: ask for more
            exhausted = inner_tol <= max(tol / 2, _MIN_INNER_TOL)
            inner_scale *= 0.01


def dual(loss, y, c, data, intercept_scale, tol, max_iter, seed):
    """Fit one binary LinearSVC dual problem (as ``dual_cd.solve``) with row working sets
    on the device."""
    host, backend = data.design, data.backend
    collective = backend.collective
    n, d = host.n, host.d
    upper, diag_shift = box(loss, c)
    row_norm = host.row_norms() + intercept_scale ** 2
    sigma = float(collective.world_size)
    rng = np.random.default_rng([seed, collective.rank])
    costs = row_bytes(host)
    fixed = 16 * (d + 1)
    room = data.budget - fixed
    if n and room < costs.min():
        _too_small(data.budget, fixed, int(costs.min()), "the shared coefficients")
    w, alpha = np.zeros(d + 1), np.zeros(n)
    epochs = 0
    while True:
        m = signed_margins(y, host, w, intercept_scale)
        primal, gap = dual_certificate(loss, c, m, w, alpha, diag_shift, collective)
        if gap <= tol * primal or epochs >= max_iter:
            return Result(w.reshape(1, -1), epochs, primal, gap, gap <= tol * primal)
        rows = choose(row_gaps(loss, c, m, alpha, diag_shift), costs, room)
        device = Design(data.rows(rows), backend, "rows")
        args = (y[rows], upper[rows], diag_shift[rows], row_norm[rows], intercept_scale)
        part = alpha[rows].copy()
        for _ in range(min(ROUND_EPOCHS, max_iter - epochs)):
            v = np.zeros(d + 1)
            device.svc_epoch(*args, rng.permutation(rows.shape[0]).astype(np.int64), sigma, w,
                             part, v)
            w = w + allsum(v, collective)
            epochs += 1
        alpha[rows] = part
