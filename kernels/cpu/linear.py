"""Linear models' data passes (Numba CPU): per-row loss terms, margins, gradients and
Hessian pieces. The formulas are in ``kernels/linear_math.py``.

Layouts: dense ``X`` is (n_rows, n_features) float64 in C or Fortran order (the passes
work on blocks of rows, which are in cache either way); sparse ``X`` is CSC with sorted,
duplicate-free indices (``indptr`` int64/int32, ``indices`` int32, ``data`` float64),
except ``margins_csr`` (rows, for the dual solver). Coefficients ``coef`` are (K,
n_features), one row per output; ``intercept`` (K,) is the intercept already multiplied by
its feature value.

Determinism: every output element is one sum in a fixed order (a row over its columns in
column order, a column over its rows in row order), and the partial Hessians are cut by
rows in blocks whose size depends on the data shape only, then added in block order; so
no result depends on the thread count.
"""
import math

import numpy as np
from numba import prange

from ..jit import helper, kernel
from ..linear_math import CPU as _math, MULTINOMIAL

_separable_dual = _math.separable_dual
_separable_terms = _math.separable_terms
_xlogx = _math.xlogx

_FAST = {"reassoc", "contract"}  # vectorised sums and fused multiply-adds (see kernels/jit.py)
BLOCK_ROWS = 2048  # rows a thread processes at a time: 28 float64 columns of it fit in L2
_CHUNK = 256  # rows of one Hessian step, so the weighted column stays in L1


@kernel(parallel=True)
def loss_terms(loss, z, y, c, grad, curv_a, curv_b, losses):
    """Loss, gradient and Hessian pieces of every row at margins ``z``.

    Parameters
    ----------
    loss : int, a ``linear_math`` loss id (not HINGE)
    z : float64 (n, K)           # IN  margins
    y : float64 (n, K_y)         # IN  targets (K_y = K), signs, or class indices (K_y = 1)
    c : float64 (n,)             # IN  row weights (>= 0)
    grad : float64 (n, K)        # OUT f_i'(z_i)
    curv_a, curv_b : float64 (n, K)  # OUT Hessian diag(a_i) - b_i b_i^T
    losses : float64 (n,)        # OUT f_i(z_i)
    """
    n, n_outputs = z.shape
    for i in prange(n):
        ci = c[i]
        if loss == MULTINOMIAL:
            zmax = z[i, 0]
            for k in range(1, n_outputs):
                zmax = max(zmax, z[i, k])
            total = 0.0
            for k in range(n_outputs):
                total += math.exp(z[i, k] - zmax)
            lse = zmax + math.log(total)
            label = int(y[i, 0])
            losses[i] = ci * (lse - z[i, label])
            root = math.sqrt(ci)
            for k in range(n_outputs):
                p = math.exp(z[i, k] - lse)
                grad[i, k] = ci * (p - 1.0) if k == label else ci * p
                curv_a[i, k] = ci * p
                curv_b[i, k] = root * p
        else:
            total = 0.0
            for k in range(n_outputs):
                value, g, h = _separable_terms(loss, z[i, k], y[i, k], ci)
                total += value
                grad[i, k] = g
                curv_a[i, k] = h
                curv_b[i, k] = 0.0
            losses[i] = total


@kernel(parallel=True)
def dual_terms(loss, z, y, c, theta, out):
    """``-f_i*(-theta u_i)`` per row, ``u_i = -f_i'(z_i)``: the rows' part of the dual.

    z (n, K), y (n, K_y), c (n,) IN; theta float in (0, 1]; out float64 (n,) OUT.
    """
    n, n_outputs = z.shape
    for i in prange(n):
        ci = c[i]
        if loss == MULTINOMIAL:
            zmax = z[i, 0]
            for k in range(1, n_outputs):
                zmax = max(zmax, z[i, k])
            total = 0.0
            for k in range(n_outputs):
                total += math.exp(z[i, k] - zmax)
            lse = zmax + math.log(total)
            label = int(y[i, 0])
            entropy = 0.0
            for k in range(n_outputs):
                q = theta * math.exp(z[i, k] - lse)
                if k == label:
                    q += 1.0 - theta
                entropy -= _xlogx(q)
            out[i] = ci * entropy
        else:
            total = 0.0
            for k in range(n_outputs):
                total += _separable_dual(loss, z[i, k], y[i, k], ci, theta)
            out[i] = total


@kernel(parallel=True, fastmath=_FAST)
def margins_dense(X, coef, intercept, out):
    """``out = X coef^T + intercept``: X (n, d) IN, coef (K, d) IN, intercept (K,) IN,
    out (n, K) OUT. Blocks of rows in parallel; each sum runs over columns in order."""
    n, d = X.shape
    n_blocks = (n + BLOCK_ROWS - 1) // BLOCK_ROWS
    for block in prange(n_blocks):
        lo, hi = block * BLOCK_ROWS, min(n, (block + 1) * BLOCK_ROWS)
        for k in range(coef.shape[0]):
            for i in range(lo, hi):
                out[i, k] = intercept[k]
            for j in range(d):
                w = coef[k, j]
                if w != 0.0:
                    for i in range(lo, hi):
                        out[i, k] += w * X[i, j]


@kernel(parallel=True, fastmath=_FAST)
def margins_csr(indptr, indices, data, coef, intercept, out):
    """``out = X coef^T + intercept`` for CSR X (rows in parallel)."""
    for i in prange(out.shape[0]):
        for k in range(coef.shape[0]):
            total = intercept[k]
            for p in range(indptr[i], indptr[i + 1]):
                total += data[p] * coef[k, indices[p]]
            out[i, k] = total


@helper
def _first_at_or_after(indices, lo, hi, row):
    """First position p in [lo, hi) with indices[p] >= row (indices sorted)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < row:
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel(parallel=True)
def margins_csc(indptr, indices, data, coef, intercept, out, n_threads):
    """``out = X coef^T + intercept`` for CSC X.

    The rows are cut into ranges (a few per thread); each range walks every column from
    the first entry of its rows (binary search). Every row adds its entries in column
    order whatever the ranges, so the result does not depend on ``n_threads``.
    """
    n, n_outputs = out.shape
    d = indptr.shape[0] - 1
    n_ranges = max(1, min(n, 4 * n_threads))
    for r in prange(n_ranges):
        lo, hi = r * n // n_ranges, (r + 1) * n // n_ranges
        for i in range(lo, hi):
            for k in range(n_outputs):
                out[i, k] = intercept[k]
        for j in range(d):
            p = _first_at_or_after(indices, indptr[j], indptr[j + 1], lo)
            end = indptr[j + 1]
            while p < end and indices[p] < hi:
                i = indices[p]
                for k in range(n_outputs):
                    out[i, k] += data[p] * coef[k, j]
                p += 1


@kernel(parallel=True, fastmath=_FAST)
def gradient_dense(X, g, out):
    """``out = g^T X``: X (n, d) IN (C or Fortran order), g (n, K) IN, out (K, d) OUT.

    Blocks of ``BLOCK_ROWS`` rows in parallel, each into its own partial sums (a block is
    contiguous in C order and in cache in either), then the partials added in block
    order: the blocks depend on n only, so the result does not depend on the threads.
    """
    n, d = X.shape
    n_outputs = g.shape[1]
    n_blocks = (n + BLOCK_ROWS - 1) // BLOCK_ROWS
    partial = np.zeros((max(1, n_blocks), n_outputs, d))
    for block in prange(n_blocks):
        lo, hi = block * BLOCK_ROWS, min(n, (block + 1) * BLOCK_ROWS)
        for k in range(n_outputs):
            for j in range(d):
                total = 0.0
                for i in range(lo, hi):
                    total += X[i, j] * g[i, k]
                partial[block, k, j] = total
    for k in range(n_outputs):
        for j in range(d):
            total = 0.0
            for block in range(n_blocks):
                total += partial[block, k, j]
            out[k, j] = total


@kernel(parallel=True, fastmath=_FAST)
def gradient_csc(indptr, indices, data, g, out):
    """``out = g^T X`` for CSC X (columns in parallel)."""
    for j in prange(indptr.shape[0] - 1):
        for k in range(g.shape[1]):
            total = 0.0
            for p in range(indptr[j], indptr[j + 1]):
                total += data[p] * g[indices[p], k]
            out[k, j] = total


@kernel(parallel=True, fastmath=_FAST)
def hessian_diagonal_dense(X, curv_a, curv_b, out):
    """``out[k, j] = sum_i X[i, j]^2 (a_ik - b_ik^2)``: the Hessian's diagonal."""
    n, d = X.shape
    for j in prange(d):
        for k in range(curv_a.shape[1]):
            total = 0.0
            for i in range(n):
                x = X[i, j]
                total += x * x * (curv_a[i, k] - curv_b[i, k] * curv_b[i, k])
            out[k, j] = total


@kernel(parallel=True, fastmath=_FAST)
def hessian_diagonal_csc(indptr, indices, data, curv_a, curv_b, out):
    """The Hessian's diagonal for CSC X (see ``hessian_diagonal_dense``)."""
    for j in prange(indptr.shape[0] - 1):
        for k in range(curv_a.shape[1]):
            total = 0.0
            for p in range(indptr[j], indptr[j + 1]):
                i = indices[p]
                total += data[p] * data[p] * (curv_a[i, k] - curv_b[i, k] * curv_b[i, k])
            out[k, j] = total


@helper
def _column_value(X, i, j, d, intercept_scale):
    return X[i, j] if j < d else intercept_scale


@kernel(parallel=True, fastmath=_FAST)
def gram_dense(X, curv_a, curv_b, intercept_scale, block_rows, out):
    """The Hessian ``H = sum_i xt_i xt_i^T (x) (diag(a_i) - b_i b_i^T)`` of the loss part.

    Coordinates are flattened as ``k * (d + 1) + j``; ``j = d`` is the intercept, whose
    feature value is ``intercept_scale`` (0: no intercept, its rows and columns are 0).

    X (n, d) IN; curv_a, curv_b (n, K) IN; block_rows int: rows per partial sum (chosen
    from the data's shape only); out float64 (K (d+1), K (d+1)) OUT.
    """
    n, d = X.shape
    n_outputs = curv_a.shape[1]
    width = d + 1
    size = n_outputs * width
    n_blocks = max(1, (n + block_rows - 1) // block_rows)
    rank_one = False
    for i in range(n):
        for k in range(n_outputs):
            if curv_b[i, k] != 0.0:
                rank_one = True
    partial = np.zeros((n_blocks, size, size))
    for block in prange(n_blocks):
        lo, hi = block * block_rows, min(n, (block + 1) * block_rows)
        weight = np.empty(_CHUNK)
        weighted = np.empty(_CHUNK)
        for start in range(lo, hi, _CHUNK):
            m = min(hi, start + _CHUNK) - start
            for k in range(n_outputs):
                for l in range(k, n_outputs):
                    if l != k and not rank_one:
                        continue
                    for r in range(m):
                        i = start + r
                        w = curv_a[i, k] if l == k else 0.0
                        weight[r] = w - curv_b[i, k] * curv_b[i, l]
                    for j in range(width):
                        for r in range(m):
                            weighted[r] = weight[r] * _column_value(X, start + r, j, d,
                                                                    intercept_scale)
                        row = partial[block, k * width + j]
                        col = j if l == k else 0
                        while col + 4 <= d:  # four columns per pass: one load of weighted
                            t0 = t1 = t2 = t3 = 0.0
                            for r in range(m):
                                wr = weighted[r]
                                t0 += wr * X[start + r, col]
                                t1 += wr * X[start + r, col + 1]
                                t2 += wr * X[start + r, col + 2]
                                t3 += wr * X[start + r, col + 3]
                            row[l * width + col] += t0
                            row[l * width + col + 1] += t1
                            row[l * width + col + 2] += t2
                            row[l * width + col + 3] += t3
                            col += 4
                        while col < d:
                            total = 0.0
                            for r in range(m):
                                total += weighted[r] * X[start + r, col]
                            row[l * width + col] += total
                            col += 1
                        total = 0.0  # the intercept column
                        for r in range(m):
                            total += weighted[r]
                        row[l * width + d] += total * intercept_scale
    for a in range(size):
        for b in range(size):
            out[a, b] = 0.0
    for block in range(n_blocks):
        for a in range(size):
            for b in range(a, size):
                out[a, b] += partial[block, a, b]
    # every filled entry is on or above the diagonal (same output: col >= j; output k <
    # output l: row block before column block): mirror it below
    for a in range(size):
        for b in range(a + 1, size):
            out[b, a] = out[a, b]
