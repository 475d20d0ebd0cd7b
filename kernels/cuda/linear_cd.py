"""Coordinate descent for the linear models on CUDA (twin of ``cpu/linear_cd.py``).

Coordinate descent is sequential: each step reads the previous one's result. So each
kernel runs as **one block**, whose threads visit the coordinates one after another
together: for a coordinate they split its inner loop (the dot product of a column with
the rows' curvature-weighted residuals, or of a row with the shared point), each thread a
fixed strided share summed in order into shared memory; thread 0 adds the ``COOP_THREADS``
partial sums in thread order, takes the coordinate step (the formulas of
``kernels/linear_math.py``) and publishes it; then every thread applies it to its share of
the kept products (``q``, ``t``, ``H delta``, ``v``). The split depends on the block size
only (a constant), never on timing: the same data give the same bits on every run.

Under Numba's CUDA simulator every ``syncthreads`` costs milliseconds, so the block there is
one thread (no barrier is needed then) unless a test sets ``COOP_THREADS``; the kernel
tests run both.
"""
import numpy as np
from numba import cuda, float64

from ._device import SIMULATOR, array_module, mul, to_host
from .linear import linear_math, output, to_device

COOP_THREADS = 1 if SIMULATOR else 256  # threads of the one block (read at each launch)
_MAX_COOP = 256  # shared-memory slots for the partial sums (COOP_THREADS at most)

_EMPTY_X = np.zeros((0, 0))  # the X argument of a sparse launch
_NO_SPARSE = (np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0))  # ... of a dense one

_coordinate_minimizer = linear_math.coordinate_minimizer


@cuda.jit(device=True)
def _barrier():
    if cuda.blockDim.x > 1:  # uniform over the block
        cuda.syncthreads()


@cuda.jit(device=True)
def _violation(slope, current, l1, l2):
    """How far 0 is from the model's subdifferential in one coordinate (as the CPU's)."""
    slope += mul(l2, current)
    if current > 0.0:
        return abs(slope + l1)
    if current < 0.0:
        return abs(slope - l1)
    return max(0.0, abs(slope) - l1)


@cuda.jit(device=True)
def _block_sum(partial, value):
    """Every thread's ``value`` added in thread order; the total is valid in thread 0."""
    tid = cuda.threadIdx.x
    partial[tid] = value
    _barrier()
    total = 0.0
    if tid == 0:
        for t in range(cuda.blockDim.x):
            total += partial[t]
    return total


# -- the proximal Newton inner solve ---------------------------------------------------
@cuda.jit
def _cd_gram_kernel(hessian, grad, l1, l2, coef, delta, hdelta, active, max_sweeps, rel_tol,
                    abs_tol, result):
    shared = cuda.shared.array(2, float64)  # the step, the stop flag
    tid, step_size = cuda.threadIdx.x, cuda.blockDim.x
    size = hessian.shape[0]
    first, violation = -1.0, 0.0
    result[0] = max_sweeps
    for sweep in range(max_sweeps):
        violation = 0.0
        for at in range(active.shape[0]):
            j = active[at]
            if tid == 0:
                h = hessian[j, j]
                current = coef[j] + delta[j]
                slope = grad[j] + hdelta[j]
                violation += _violation(slope, current, l1[j], l2[j])
                step = _coordinate_minimizer(mul(h, current) - slope, h, l1[j], l2[j]) - current
                delta[j] += step
                shared[0] = step
            _barrier()
            step = shared[0]
            if step != 0.0:
                for m in range(tid, size, step_size):
                    hdelta[m] += mul(step, hessian[j, m])
            _barrier()  # thread 0 reads hdelta of the next coordinate
        if tid == 0:
            if first < 0.0:
                first = violation
            shared[1] = 1.0 if violation <= abs_tol or violation <= mul(rel_tol, first) else 0.0
        _barrier()
        if shared[1] == 1.0:
            if tid == 0:
                result[0] = sweep + 1
            return
        _barrier()  # nobody overwrites the flag before all have read it


@cuda.jit(device=True)
def _curved(curv_a, curv_b, q, t, i, k, rank_one):
    """(a_ik q_ik - b_ik t_i): row i's curvature-weighted residual change."""
    value = mul(curv_a[i, k], q[i, k])
    if rank_one:
        value -= mul(curv_b[i, k], t[i])
    return value


@cuda.jit
def _cd_residual_kernel(X, indptr, indices, data, sparse, intercept_scale, curv_a, curv_b,
                        rank_one, grad, diag, l1, l2, coef, delta, q, t, active, max_sweeps,
                        rel_tol, abs_tol, result):
    partial = cuda.shared.array(_MAX_COOP, float64)
    shared = cuda.shared.array(2, float64)  # the step, the stop flag
    tid, stride = cuda.threadIdx.x, cuda.blockDim.x
    n = q.shape[0]
    d = indptr.shape[0] - 1 if sparse else X.shape[1]
    width = d + 1
    first, violation = -1.0, 0.0
    result[0] = max_sweeps
    for sweep in range(max_sweeps):
        violation = 0.0
        for at in range(active.shape[0]):
            flat = active[at]
            k, j = flat // width, flat % width
            own = 0.0  # this thread's share of the slope's sum
            if j == d:
                for i in range(tid, n, stride):
                    own += _curved(curv_a, curv_b, q, t, i, k, rank_one)
            elif sparse:
                for p in range(indptr[j] + tid, indptr[j + 1], stride):
                    own += mul(data[p], _curved(curv_a, curv_b, q, t, indices[p], k, rank_one))
            else:
                for i in range(tid, n, stride):
                    own += mul(X[i, j], _curved(curv_a, curv_b, q, t, i, k, rank_one))
            total = _block_sum(partial, own)
            if tid == 0:
                if j == d:
                    total = mul(intercept_scale, total)
                h = diag[flat]
                current = coef[flat] + delta[flat]
                slope = grad[flat] + total
                violation += _violation(slope, current, l1[flat], l2[flat])
                step = _coordinate_minimizer(mul(h, current) - slope, h, l1[flat],
                                             l2[flat]) - current
                delta[flat] += step
                shared[0] = step
            _barrier()
            step = shared[0]
            if step != 0.0:
                if j == d:
                    change = mul(step, intercept_scale)
                    for i in range(tid, n, stride):
                        q[i, k] += change
                        if rank_one:
                            t[i] += mul(curv_b[i, k], change)
                elif sparse:
                    for p in range(indptr[j] + tid, indptr[j + 1], stride):
                        i = indices[p]
                        change = mul(step, data[p])
                        q[i, k] += change
                        if rank_one:
                            t[i] += mul(curv_b[i, k], change)
                else:
                    for i in range(tid, n, stride):
                        change = mul(step, X[i, j])
                        q[i, k] += change
                        if rank_one:
                            t[i] += mul(curv_b[i, k], change)
            _barrier()  # the next coordinate's rows may be another thread's
        if tid == 0:
            if first < 0.0:
                first = violation
            shared[1] = 1.0 if violation <= abs_tol or violation <= mul(rel_tol, first) else 0.0
        _barrier()
        if shared[1] == 1.0:
            if tid == 0:
                result[0] = sweep + 1
            return
        _barrier()


def cd_gram(hessian, grad, l1, l2, coef, delta, hdelta, active, max_sweeps, rel_tol, abs_tol):
    """Minimise the quadratic model with H given as a matrix (as ``cpu.cd_gram``; delta
    and hdelta IN/OUT); returns the sweeps done."""
    if active.shape[0] == 0 or max_sweeps < 1:  # as the CPU kernel: no sweep, or one empty
        return int(max_sweeps) if max_sweeps < 1 else 1
    args = [to_device(a) for a in (hessian, grad, l1, l2, coef)]
    d_delta, finish_delta = output(delta)
    d_hdelta, finish_hdelta = output(hdelta)
    threads = _threads()
    result = array_module().zeros(1, dtype=np.int64)
    _cd_gram_kernel[1, threads](*args, d_delta, d_hdelta, to_device(active), int(max_sweeps),
                                float(rel_tol), float(abs_tol), result)
    finish_delta()
    finish_hdelta()
    return int(to_host(result)[0])


def _threads():
    threads = int(COOP_THREADS)
    if not 1 <= threads <= _MAX_COOP:
        raise ValueError(f"COOP_THREADS must be in [1, {_MAX_COOP}], got {threads}")
    return threads


def _residual(X, sparse_arrays, sparse, intercept_scale, curv_a, curv_b, rank_one, grad, diag,
              l1, l2, coef, delta, q, t, active, max_sweeps, rel_tol, abs_tol):
    if active.shape[0] == 0 or max_sweeps < 1:  # as the CPU kernel
        return int(max_sweeps) if max_sweeps < 1 else 1
    outs = [output(a) for a in (delta, q, t)]
    result = array_module().zeros(1, dtype=np.int64)
    _cd_residual_kernel[1, _threads()](
        to_device(X), *(to_device(a) for a in sparse_arrays), sparse,
        float(intercept_scale), to_device(curv_a), to_device(curv_b), bool(rank_one),
        *(to_device(a) for a in (grad, diag, l1, l2, coef)), *(o for o, _ in outs),
        to_device(active), int(max_sweeps), float(rel_tol), float(abs_tol), result)
    for _, finish in outs:
        finish()
    return int(to_host(result)[0])


def cd_residual_dense(X, intercept_scale, curv_a, curv_b, rank_one, grad, diag, l1, l2, coef,
                      delta, q, t, active, max_sweeps, rel_tol, abs_tol):
    """Minimise the quadratic model for dense X (as ``cpu.cd_residual_dense``: delta, q, t
    IN/OUT); returns the sweeps done."""
    return _residual(X, _NO_SPARSE, False, intercept_scale, curv_a, curv_b, rank_one, grad,
                     diag, l1, l2, coef, delta, q, t, active, max_sweeps, rel_tol, abs_tol)


def cd_residual_csc(indptr, indices, data, intercept_scale, curv_a, curv_b, rank_one, grad,
                    diag, l1, l2, coef, delta, q, t, active, max_sweeps, rel_tol, abs_tol):
    """``cd_residual_dense`` for CSC X; the same arguments after X."""
    return _residual(_EMPTY_X, (indptr, indices, data), True, intercept_scale, curv_a, curv_b,
                     rank_one, grad, diag, l1, l2, coef, delta, q, t, active, max_sweeps,
                     rel_tol, abs_tol)


# -- dual coordinate ascent (LinearSVC) ------------------------------------------------
@cuda.jit
def _svc_kernel(X, indptr, indices, data, sparse, y, upper, diag_shift, row_norm,
                intercept_scale, order, sigma, w, alpha, v, result):
    partial = cuda.shared.array(_MAX_COOP, float64)
    shared = cuda.shared.array(1, float64)  # the step
    tid, stride = cuda.threadIdx.x, cuda.blockDim.x
    d = w.shape[0] - 1
    moved = 0
    for at in range(order.shape[0]):
        i = order[at]
        own = 0.0  # this thread's share of the row's margin
        if sparse:
            for p in range(indptr[i] + tid, indptr[i + 1], stride):
                c = indices[p]
                own += mul(w[c] + mul(sigma, v[c]), data[p])
        else:
            for c in range(tid, d, stride):
                own += mul(w[c] + mul(sigma, v[c]), X[i, c])
        total = _block_sum(partial, own)
        if tid == 0:
            margin = mul(w[d] + mul(sigma, v[d]), intercept_scale) + total
            a = alpha[i]
            g = mul(y[i], margin) - 1.0 + mul(diag_shift[i], a)
            if a <= 0.0:
                g = min(g, 0.0)
            elif a >= upper[i]:
                g = max(g, 0.0)
            curvature = mul(sigma, row_norm[i]) + diag_shift[i]
            new = a
            if g != 0.0:
                if curvature <= 0.0:  # an empty row under the hinge: its dual term is linear
                    new = upper[i] if g < 0.0 else 0.0
                else:
                    new = min(max(a - g / curvature, 0.0), upper[i])
            step = mul(new - a, y[i])
            if step != 0.0:
                alpha[i] = new
                moved += 1
                v[d] += mul(step, intercept_scale)
            shared[0] = step
        _barrier()
        step = shared[0]
        if step != 0.0:
            if sparse:
                for p in range(indptr[i] + tid, indptr[i + 1], stride):
                    v[indices[p]] += mul(step, data[p])
            else:
                for c in range(tid, d, stride):
                    v[c] += mul(step, X[i, c])
        _barrier()  # the next row's columns may be another thread's
    if tid == 0:
        result[0] = moved


def _svc(X, sparse_arrays, sparse, y, upper, diag_shift, row_norm, intercept_scale, order, sigma, w,
         alpha, v):
    outs = [output(a) for a in (alpha, v)]
    result = array_module().zeros(1, dtype=np.int64)
    if order.shape[0]:
        _svc_kernel[1, _threads()](
            to_device(X), *(to_device(a) for a in sparse_arrays), sparse,
            *(to_device(a) for a in (y, upper, diag_shift, row_norm)), float(intercept_scale),
            to_device(order), float(sigma), to_device(w), *(o for o, _ in outs), result)
    for _, finish in outs:
        finish()
    return int(to_host(result)[0])


def svc_dual_cd_dense(X, y, upper, diag_shift, row_norm, intercept_scale, order, sigma, w,
                      alpha, v):
    """One epoch of dual coordinate ascent over the rows in ``order`` (as
    ``cpu.svc_dual_cd_dense``: alpha and v IN/OUT); returns the coordinates that moved."""
    return _svc(X, _NO_SPARSE, False, y, upper, diag_shift, row_norm, intercept_scale, order, sigma,
                w, alpha, v)


def svc_dual_cd_csr(indptr, indices, data, y, upper, diag_shift, row_norm, intercept_scale,
                    order, sigma, w, alpha, v):
    """``svc_dual_cd_dense`` for CSR X; the same arguments after X."""
    return _svc(_EMPTY_X, (indptr, indices, data), True, y, upper, diag_shift, row_norm,
                intercept_scale, order, sigma, w, alpha, v)
