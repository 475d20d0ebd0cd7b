"""Coordinate descent for the linear models (Numba CPU).

* ``cd_gram`` and ``cd_residual_dense`` / ``cd_residual_csc``: the inner solver of the
  proximal Newton method (``gbm/linear/newton.py``): minimise the quadratic model

      M(delta) = grad . delta + 1/2 delta^T H delta
                 + sum_j l1_j |w_j + delta_j| + l2_j / 2 (w_j + delta_j)^2

  one coordinate at a time (each step a soft threshold, Friedman et al. 2010; Yuan, Ho
  and Lin 2012 for the Newton outer loop). Coordinates are flattened as ``k * (d + 1) +
  j``, ``j = d`` the intercept, whose feature value is ``intercept_scale``. ``cd_gram``
  holds H as a matrix (few features); the residual forms keep ``q = X delta`` (n, K) and
  ``t_i = b_i . q_i`` and read H from the rows' curvatures ``diag(a_i) - b_i b_i^T``.
* ``svc_dual_cd_dense`` / ``svc_dual_cd_csr``: dual coordinate ascent for the hinge and
  squared hinge losses (Hsieh et al. 2008), with CoCoA+'s local subproblem (Ma et al.
  2015): ``sigma`` = 1 on one rank, the number of ranks otherwise.

All are sequential: each coordinate step reads the previous one's result, so the thread
count cannot change anything.
"""
from ..jit import helper, kernel
from ..linear_math import CPU as _math

_coordinate_minimizer = _math.coordinate_minimizer


@kernel
def cd_gram(hessian, grad, l1, l2, coef, delta, hdelta, active, max_sweeps, rel_tol, abs_tol):
    """Minimise the quadratic model with H given as a matrix.

    Parameters
    ----------
    hessian : float64 (D, D)            # IN  symmetric
    grad, l1, l2, coef : float64 (D,)   # IN  loss gradient, penalties, current point
    delta : float64 (D,)                # IN/OUT the step
    hdelta : float64 (D,)               # IN/OUT H delta
    active : int64 (m,)                 # IN  coordinates, in sweep order
    max_sweeps : int; rel_tol, abs_tol : float
        Stop after the first sweep whose summed subgradient violation (``_sweep_end``) is
        at most ``abs_tol`` or ``rel_tol`` times the first sweep's.

    Returns
    -------
    int, sweeps done
    """
    size = hessian.shape[0]
    first = -1.0
    for sweep in range(max_sweeps):
        violation = 0.0
        for at in range(active.shape[0]):
            j = active[at]
            h = hessian[j, j]
            current = coef[j] + delta[j]
            slope = grad[j] + hdelta[j]
            violation += _violation(slope, current, l1[j], l2[j])
            step = _coordinate_minimizer(h * current - slope, h, l1[j], l2[j]) - current
            if step != 0.0:
                delta[j] += step
                for m in range(size):
                    hdelta[m] += step * hessian[j, m]
        first, done = _sweep_end(violation, first, rel_tol, abs_tol)
        if done:
            return sweep + 1
    return max_sweeps


@helper
def _intercept_dot(q, curv_a, curv_b, t, k, rank_one):
    total = 0.0
    for i in range(q.shape[0]):
        total += curv_a[i, k] * q[i, k]
        if rank_one:
            total -= curv_b[i, k] * t[i]
    return total


@helper
def _intercept_step(q, curv_b, t, k, step, rank_one):
    for i in range(q.shape[0]):
        q[i, k] += step
        if rank_one:
            t[i] += curv_b[i, k] * step


@helper
def _violation(slope, current, l1, l2):
    """How far 0 is from the model's subdifferential in one coordinate: |slope + l2 w +
    l1 sign(w)| off zero, the excess of |slope| over l1 at zero."""
    slope += l2 * current
    if current > 0.0:
        return abs(slope + l1)
    if current < 0.0:
        return abs(slope - l1)
    return max(0.0, abs(slope) - l1)


@helper
def _sweep_end(violation, first, rel_tol, abs_tol):
    """(first sweep's violation, whether to stop): the sum of the coordinates' violations,
    each taken just before its step, is at most abs_tol or rel_tol times the first
    sweep's (the violation at delta = 0, i.e. of the outer problem)."""
    if first < 0.0:
        first = violation
    return first, violation <= abs_tol or violation <= rel_tol * first


@kernel
def cd_residual_dense(X, intercept_scale, curv_a, curv_b, rank_one, grad, diag, l1, l2, coef,
                      delta, q, t, active, max_sweeps, rel_tol, abs_tol):
    """Minimise the quadratic model for dense X (n, d), Fortran order.

    X IN; intercept_scale float; curv_a, curv_b (n, K) IN; rank_one bool (any b != 0);
    grad, diag (H's diagonal), l1, l2, coef (K (d+1),) IN; delta (K (d+1),) IN/OUT;
    q (n, K), t (n,) IN/OUT (``X delta`` and ``b_i . q_i`` for the current ``delta``);
    active int64 (m,) IN; stopping as ``cd_gram``. Returns the sweeps done.
    """
    d = X.shape[1]
    width = d + 1
    first = -1.0
    for sweep in range(max_sweeps):
        violation = 0.0
        for at in range(active.shape[0]):
            flat = active[at]
            k, j = flat // width, flat % width
            if j < d:
                total = 0.0
                for i in range(X.shape[0]):
                    value = curv_a[i, k] * q[i, k]
                    if rank_one:
                        value -= curv_b[i, k] * t[i]
                    total += X[i, j] * value
            else:
                total = intercept_scale * _intercept_dot(q, curv_a, curv_b, t, k, rank_one)
            h = diag[flat]
            current = coef[flat] + delta[flat]
            slope = grad[flat] + total
            violation += _violation(slope, current, l1[flat], l2[flat])
            step = _coordinate_minimizer(h * current - slope, h, l1[flat], l2[flat]) - current
            if step == 0.0:
                continue
            delta[flat] += step
            if j < d:
                for i in range(X.shape[0]):
                    change = step * X[i, j]
                    q[i, k] += change
                    if rank_one:
                        t[i] += curv_b[i, k] * change
            else:
                _intercept_step(q, curv_b, t, k, step * intercept_scale, rank_one)
        first, done = _sweep_end(violation, first, rel_tol, abs_tol)
        if done:
            return sweep + 1
    return max_sweeps


@kernel
def cd_residual_csc(indptr, indices, data, intercept_scale, curv_a, curv_b, rank_one, grad,
                    diag, l1, l2, coef, delta, q, t, active, max_sweeps, rel_tol, abs_tol):
    """``cd_residual_dense`` for CSC X (n, d); the same arguments after X."""
    d = indptr.shape[0] - 1
    width = d + 1
    first = -1.0
    for sweep in range(max_sweeps):
        violation = 0.0
        for at in range(active.shape[0]):
            flat = active[at]
            k, j = flat // width, flat % width
            if j < d:
                total = 0.0
                for p in range(indptr[j], indptr[j + 1]):
                    i = indices[p]
                    value = curv_a[i, k] * q[i, k]
                    if rank_one:
                        value -= curv_b[i, k] * t[i]
                    total += data[p] * value
            else:
                total = intercept_scale * _intercept_dot(q, curv_a, curv_b, t, k, rank_one)
            h = diag[flat]
            current = coef[flat] + delta[flat]
            slope = grad[flat] + total
            violation += _violation(slope, current, l1[flat], l2[flat])
            step = _coordinate_minimizer(h * current - slope, h, l1[flat], l2[flat]) - current
            if step == 0.0:
                continue
            delta[flat] += step
            if j < d:
                for p in range(indptr[j], indptr[j + 1]):
                    i = indices[p]
                    change = step * data[p]
                    q[i, k] += change
                    if rank_one:
                        t[i] += curv_b[i, k] * change
            else:
                _intercept_step(q, curv_b, t, k, step * intercept_scale, rank_one)
        first, done = _sweep_end(violation, first, rel_tol, abs_tol)
        if done:
            return sweep + 1
    return max_sweeps


@helper
def _svc_step(i, margin, y, upper, diag_shift, row_norm, sigma, alpha):
    """New alpha_i for one dual coordinate (projected Newton step), or alpha_i itself."""
    a = alpha[i]
    g = y[i] * margin - 1.0 + diag_shift[i] * a
    if a <= 0.0:
        g = min(g, 0.0)
    elif a >= upper[i]:
        g = max(g, 0.0)
    curvature = sigma * row_norm[i] + diag_shift[i]
    if g == 0.0:
        return a
    if curvature <= 0.0:  # an empty row under the hinge: its dual term is linear
        return upper[i] if g < 0.0 else 0.0
    return min(max(a - g / curvature, 0.0), upper[i])


@kernel
def svc_dual_cd_dense(X, y, upper, diag_shift, row_norm, intercept_scale, order, sigma, w,
                      alpha, v):
    """One epoch of dual coordinate ascent over the rows in ``order``.

    Parameters
    ----------
    X : float64 (n, d)        # IN  C order
    y : float64 (n,)          # IN  -1 / +1
    upper : float64 (n,)      # IN  box of alpha_i: c_i (hinge) or inf (squared hinge); 0 for weight 0
    diag_shift : float64 (n,) # IN  0 (hinge) or 1 / (2 c_i) (squared hinge)
    row_norm : float64 (n,)   # IN  |x_i|^2 + intercept_scale^2
    intercept_scale : float   # the intercept's feature value (0: none)
    order : int64 (m,)        # IN  rows to visit
    sigma : float             # CoCoA+ subproblem scale (1 on one rank)
    w : float64 (d + 1,)      # IN  shared primal point (last entry: intercept)
    alpha : float64 (n,)      # IN/OUT dual variables of these rows
    v : float64 (d + 1,)      # IN/OUT this rank's change of w in the round

    The margin of row i is read at ``w + sigma v``; the step moves ``v`` by ``step y_i x_i``.
    Returns the number of coordinates that moved.
    """
    d = X.shape[1]
    moved = 0
    for at in range(order.shape[0]):
        i = order[at]
        margin = (w[d] + sigma * v[d]) * intercept_scale
        for j in range(d):
            margin += (w[j] + sigma * v[j]) * X[i, j]
        new = _svc_step(i, margin, y, upper, diag_shift, row_norm, sigma, alpha)
        step = (new - alpha[i]) * y[i]
        if step != 0.0:
            alpha[i] = new
            moved += 1
            for j in range(d):
                v[j] += step * X[i, j]
            v[d] += step * intercept_scale
    return moved


@kernel
def svc_dual_cd_csr(indptr, indices, data, y, upper, diag_shift, row_norm, intercept_scale,
                    order, sigma, w, alpha, v):
    """``svc_dual_cd_dense`` for CSR X; the same arguments after X."""
    d = w.shape[0] - 1
    moved = 0
    for at in range(order.shape[0]):
        i = order[at]
        margin = (w[d] + sigma * v[d]) * intercept_scale
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            margin += (w[j] + sigma * v[j]) * data[p]
        new = _svc_step(i, margin, y, upper, diag_shift, row_norm, sigma, alpha)
        step = (new - alpha[i]) * y[i]
        if step != 0.0:
            alpha[i] = new
            moved += 1
            for p in range(indptr[i], indptr[i + 1]):
                v[indices[p]] += step * data[p]
            v[d] += step * intercept_scale
    return moved

