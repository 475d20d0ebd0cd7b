"""Linear models' data passes on CUDA (twin of ``cpu/linear.py``): per-row loss terms,
margins, gradients and Hessian pieces. The scalar formulas are ``kernels/linear_math.py``'s,
compiled as device functions with products that never become FMAs (``mul``).

Determinism without float atomics: every output element is one thread's sum in a fixed
order (a row over its columns, a column over its entries), or, for the sums over rows of a
dense ``X``, partial sums over blocks of ``PARTIAL_ROWS`` rows (a constant: the blocks do
not depend on the grid) added in block order by a second launch. So a result depends on the
data only, never on the launch size or the order in which threads run.

``margins_csc`` transposes the CSC matrix to CSR on the device (row counts with integer
atomics, a scan, a scatter, each row's entries then sorted by column), so every row adds
its entries in column order, as the CPU kernel does.
"""
import math

import numpy as np
from numba import cuda, int64

from ..linear_math import MULTINOMIAL, make_linear_math
from ._device import (SIMULATOR, THREADS, array_module, blocks_for, device_function,
                      device_output, is_device_array, mul)
from ._device import to_device as _to_device

# Rows of one partial sum of the dense passes over rows: a constant of the build, never of
# the grid. The simulator's threads are Python threads polled by one loop, so a long one
# is slow there: its blocks are smaller.
PARTIAL_ROWS = 64 if SIMULATOR else 1024


def to_device(array):
    """A kernel input on the device (a host array in C order: the simulator, which passes
    NumPy arrays as they are, takes only contiguous ones)."""
    return array if is_device_array(array) else _to_device(np.ascontiguousarray(array))


def output(array):
    """``device_output`` that also takes a non-contiguous host view (a column block of a
    coefficient table): the kernel writes a contiguous copy, copied back by ``finish``."""
    if not SIMULATOR or is_device_array(array) or array.flags.c_contiguous:
        return device_output(array)
    copy = np.ascontiguousarray(array)

    def finish():
        array[...] = copy

    return copy, finish

linear_math = make_linear_math(device_function, mul)  # the formulas as device functions
_separable_terms = linear_math.separable_terms
_separable_dual = linear_math.separable_dual
_xlogx = linear_math.xlogx


# -- per-row terms ---------------------------------------------------------------------
@cuda.jit(device=True)
def _log_sum_exp(z, i):
    n_outputs = z.shape[1]
    zmax = z[i, 0]
    for k in range(1, n_outputs):
        zmax = max(zmax, z[i, k])
    total = 0.0
    for k in range(n_outputs):
        total += math.exp(z[i, k] - zmax)
    return zmax + math.log(total)


@cuda.jit
def _loss_terms_kernel(loss, z, y, c, grad, curv_a, curv_b, losses):
    n_outputs = z.shape[1]
    for i in range(cuda.grid(1), z.shape[0], cuda.gridsize(1)):
        ci = c[i]
        if loss == MULTINOMIAL:
            lse = _log_sum_exp(z, i)
            label = int64(y[i, 0])
            losses[i] = mul(ci, lse - z[i, label])
            root = math.sqrt(ci)
            for k in range(n_outputs):
                p = math.exp(z[i, k] - lse)
                grad[i, k] = mul(ci, p - 1.0) if k == label else mul(ci, p)
                curv_a[i, k] = mul(ci, p)
                curv_b[i, k] = mul(root, p)
        else:
            total = 0.0
            for k in range(n_outputs):
                value, g, h = _separable_terms(loss, z[i, k], y[i, k], ci)
                total += value
                grad[i, k] = g
                curv_a[i, k] = h
                curv_b[i, k] = 0.0
            losses[i] = total


@cuda.jit
def _dual_terms_kernel(loss, z, y, c, theta, out):
    n_outputs = z.shape[1]
    for i in range(cuda.grid(1), z.shape[0], cuda.gridsize(1)):
        ci = c[i]
        if loss == MULTINOMIAL:
            lse = _log_sum_exp(z, i)
            label = int64(y[i, 0])
            entropy = 0.0
            for k in range(n_outputs):
                q = mul(theta, math.exp(z[i, k] - lse))
                if k == label:
                    q += 1.0 - theta
                entropy -= _xlogx(q)
            out[i] = mul(ci, entropy)
        else:
            total = 0.0
            for k in range(n_outputs):
                total += _separable_dual(loss, z[i, k], y[i, k], ci, theta)
            out[i] = total


def loss_terms(loss, z, y, c, grad, curv_a, curv_b, losses):
    """Loss, gradient and Hessian pieces of every row at margins ``z`` (as
    ``cpu.loss_terms``: z (n, K), y (n, K_y), c (n,) IN; grad, curv_a, curv_b (n, K) and
    losses (n,) OUT)."""
    outs = [output(a) for a in (grad, curv_a, curv_b, losses)]
    if z.shape[0]:
        _loss_terms_kernel[blocks_for(z.shape[0]), THREADS](
            int(loss), to_device(z), to_device(y), to_device(c), *(o for o, _ in outs))
    for _, finish in outs:
        finish()


def dual_terms(loss, z, y, c, theta, out):
    """``-f_i*(-theta u_i)`` per row (as ``cpu.dual_terms``; out float64 (n,) OUT)."""
    d_out, finish = output(out)
    if z.shape[0]:
        _dual_terms_kernel[blocks_for(z.shape[0]), THREADS](
            int(loss), to_device(z), to_device(y), to_device(c), float(theta), d_out)
    finish()


# -- margins ---------------------------------------------------------------------------
@cuda.jit
def _margins_dense_kernel(X, coef, intercept, out):
    n_outputs = coef.shape[0]
    for cell in range(cuda.grid(1), out.shape[0] * n_outputs, cuda.gridsize(1)):
        i, k = cell // n_outputs, cell % n_outputs
        total = intercept[k]
        for j in range(X.shape[1]):
            total += mul(coef[k, j], X[i, j])
        out[i, k] = total


@cuda.jit
def _margins_csr_kernel(indptr, indices, data, coef, intercept, out):
    n_outputs = coef.shape[0]
    for cell in range(cuda.grid(1), out.shape[0] * n_outputs, cuda.gridsize(1)):
        i, k = cell // n_outputs, cell % n_outputs
        total = intercept[k]
        for p in range(indptr[i], indptr[i + 1]):
            total += mul(data[p], coef[k, indices[p]])
        out[i, k] = total


def _margins_launch(kernel, arrays, coef, intercept, out):
    d_out, finish = output(out)
    cells = out.shape[0] * coef.shape[0]
    if cells:
        kernel[blocks_for(cells), THREADS](*(to_device(a) for a in arrays), to_device(coef),
                                           to_device(intercept), d_out)
    finish()


def margins_dense(X, coef, intercept, out):
    """``out = X coef^T + intercept``: X (n, d), coef (K, d), intercept (K,) IN; out (n, K)
    OUT. One thread per (row, output), its sum over the columns in order."""
    _margins_launch(_margins_dense_kernel, (X,), coef, intercept, out)


def margins_csr(indptr, indices, data, coef, intercept, out):
    """``out = X coef^T + intercept`` for CSR X (a row's entries in column order)."""
    _margins_launch(_margins_csr_kernel, (indptr, indices, data), coef, intercept, out)


@cuda.jit
def _row_counts_kernel(indices, counts):
    for p in range(cuda.grid(1), indices.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(counts, indices[p], 1)  # integer: the count is order-free


@cuda.jit
def _scatter_rows_kernel(indptr, indices, data, row_ptr, cursor, col_of, value_of):
    for j in range(cuda.grid(1), indptr.shape[0] - 1, cuda.gridsize(1)):
        for p in range(indptr[j], indptr[j + 1]):
            at = row_ptr[indices[p]] + cuda.atomic.add(cursor, indices[p], 1)
            col_of[at] = j
            value_of[at] = data[p]


@cuda.jit
def _sort_rows_kernel(row_ptr, col_of, value_of):
    """Each row's entries by column (insertion sort: the scatter's order is a race)."""
    for i in range(cuda.grid(1), row_ptr.shape[0] - 1, cuda.gridsize(1)):
        for p in range(row_ptr[i] + 1, row_ptr[i + 1]):
            col, value = col_of[p], value_of[p]
            q = p - 1
            while q >= row_ptr[i] and col_of[q] > col:
                col_of[q + 1] = col_of[q]
                value_of[q + 1] = value_of[q]
                q -= 1
            col_of[q + 1] = col
            value_of[q + 1] = value


def csc_to_csr(indptr, indices, data, n_rows):
    """``(row_ptr, columns, values)`` of the CSR form of a CSC matrix, on the device, each
    row's entries in column order (so sums over a row's entries do not depend on the
    scatter's races)."""
    xp = array_module()
    indptr, indices, data = to_device(indptr), to_device(indices), to_device(data)
    nnz = int(indices.shape[0])
    counts = xp.zeros(n_rows, dtype=np.int64)
    if nnz:
        _row_counts_kernel[blocks_for(nnz), THREADS](indices, counts)
    row_ptr = xp.zeros(n_rows + 1, dtype=np.int64)
    row_ptr[1:] = xp.cumsum(counts)
    columns = xp.empty(nnz, dtype=np.int64)
    values = xp.empty(nnz, dtype=np.float64)
    if nnz:
        cursor = xp.zeros(n_rows, dtype=np.int64)
        n_cols = int(indptr.shape[0]) - 1
        _scatter_rows_kernel[blocks_for(n_cols), THREADS](indptr, indices, data, row_ptr,
                                                          cursor, columns, values)
        _sort_rows_kernel[blocks_for(n_rows), THREADS](row_ptr, columns, values)
    return row_ptr, columns, values


def margins_csc(indptr, indices, data, coef, intercept, out, n_threads):
    """``out = X coef^T + intercept`` for CSC X: transposed to CSR on the device, then as
    ``margins_csr`` (``n_threads`` is ignored)."""
    rows = csc_to_csr(indptr, indices, data, out.shape[0])
    _margins_launch(_margins_csr_kernel, rows, coef, intercept, out)


# -- sums over rows --------------------------------------------------------------------
@cuda.jit
def _gradient_partials_kernel(X, g, partial):
    n_blocks, n_outputs, d = partial.shape
    n = X.shape[0]
    for cell in range(cuda.grid(1), n_blocks * n_outputs * d, cuda.gridsize(1)):
        block = cell // (n_outputs * d)
        k = (cell // d) % n_outputs
        j = cell % d
        total = 0.0
        for i in range(block * PARTIAL_ROWS, min(n, (block + 1) * PARTIAL_ROWS)):
            total += mul(X[i, j], g[i, k])
        partial[block, k, j] = total


@cuda.jit
def _hessian_partials_kernel(X, curv_a, curv_b, partial):
    n_blocks, n_outputs, d = partial.shape
    n = X.shape[0]
    for cell in range(cuda.grid(1), n_blocks * n_outputs * d, cuda.gridsize(1)):
        block = cell // (n_outputs * d)
        k = (cell // d) % n_outputs
        j = cell % d
        total = 0.0
        for i in range(block * PARTIAL_ROWS, min(n, (block + 1) * PARTIAL_ROWS)):
            x = X[i, j]
            b = curv_b[i, k]
            total += mul(mul(x, x), curv_a[i, k] - mul(b, b))
        partial[block, k, j] = total


@cuda.jit
def _sum_partials_kernel(partial, out):
    n_blocks, n_outputs, d = partial.shape
    for cell in range(cuda.grid(1), n_outputs * d, cuda.gridsize(1)):
        k, j = cell // d, cell % d
        total = 0.0
        for block in range(n_blocks):
            total += partial[block, k, j]
        out[k, j] = total


def _over_row_blocks(kernel, X, row_arrays, out):
    """out (K, d) = the sum over blocks of rows of ``kernel``'s partials, in block order."""
    n, d = X.shape
    n_outputs = out.shape[0]
    n_blocks = max(1, (n + PARTIAL_ROWS - 1) // PARTIAL_ROWS)
    partial = array_module().empty((n_blocks, n_outputs, d), dtype=np.float64)
    d_out, finish = output(out)
    if n_outputs * d:
        kernel[blocks_for(partial.size), THREADS](to_device(X),
                                                  *(to_device(a) for a in row_arrays), partial)
        _sum_partials_kernel[blocks_for(n_outputs * d), THREADS](partial, d_out)
    finish()


def gradient_dense(X, g, out):
    """``out = g^T X``: X (n, d), g (n, K) IN; out (K, d) OUT."""
    _over_row_blocks(_gradient_partials_kernel, X, (g,), out)


def hessian_diagonal_dense(X, curv_a, curv_b, out):
    """``out[k, j] = sum_i X[i, j]^2 (a_ik - b_ik^2)``: the Hessian's diagonal."""
    _over_row_blocks(_hessian_partials_kernel, X, (curv_a, curv_b), out)


@cuda.jit
def _gradient_csc_kernel(indptr, indices, data, g, out):
    n_outputs, d = out.shape
    for cell in range(cuda.grid(1), n_outputs * d, cuda.gridsize(1)):
        k, j = cell // d, cell % d
        total = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            total += mul(data[p], g[indices[p], k])
        out[k, j] = total


@cuda.jit
def _hessian_csc_kernel(indptr, indices, data, curv_a, curv_b, out):
    n_outputs, d = out.shape
    for cell in range(cuda.grid(1), n_outputs * d, cuda.gridsize(1)):
        k, j = cell // d, cell % d
        total = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            i = indices[p]
            b = curv_b[i, k]
            total += mul(mul(data[p], data[p]), curv_a[i, k] - mul(b, b))
        out[k, j] = total


def _over_columns(kernel, sparse, row_arrays, out):
    d_out, finish = output(out)
    if out.size:
        kernel[blocks_for(out.size), THREADS](*(to_device(a) for a in sparse),
                                              *(to_device(a) for a in row_arrays), d_out)
    finish()


def gradient_csc(indptr, indices, data, g, out):
    """``out = g^T X`` for CSC X: one thread per (output, column), its entries in order."""
    _over_columns(_gradient_csc_kernel, (indptr, indices, data), (g,), out)


def hessian_diagonal_csc(indptr, indices, data, curv_a, curv_b, out):
    """The Hessian's diagonal for CSC X (see ``hessian_diagonal_dense``)."""
    _over_columns(_hessian_csc_kernel, (indptr, indices, data), (curv_a, curv_b), out)


# -- the Hessian as a matrix -----------------------------------------------------------
@cuda.jit(device=True)
def _xt(X, i, j, intercept_scale):
    """Column j of ``xt = [X, s]`` at row i."""
    return X[i, j] if j < X.shape[1] else intercept_scale


@cuda.jit
def _gram_partials_kernel(X, curv_a, curv_b, intercept_scale, block_rows, pairs, partial):
    n, d = X.shape
    width = d + 1
    n_blocks = partial.shape[0]
    n_pairs = pairs.shape[0]
    for cell in range(cuda.grid(1), n_blocks * n_pairs, cuda.gridsize(1)):
        block, pair = cell // n_pairs, cell % n_pairs
        a, b = pairs[pair, 0], pairs[pair, 1]
        k, j = a // width, a % width
        l, m = b // width, b % width
        total = 0.0
        for i in range(block * block_rows, min(n, (block + 1) * block_rows)):
            weight = (curv_a[i, k] if k == l else 0.0) - mul(curv_b[i, k], curv_b[i, l])
            total += mul(mul(weight, _xt(X, i, j, intercept_scale)),
                         _xt(X, i, m, intercept_scale))
        partial[block, pair] = total


@cuda.jit
def _gram_sum_kernel(pairs, partial, out):
    n_blocks, n_pairs = partial.shape
    for pair in range(cuda.grid(1), n_pairs, cuda.gridsize(1)):
        total = 0.0
        for block in range(n_blocks):
            total += partial[block, pair]
        a, b = pairs[pair, 0], pairs[pair, 1]
        out[a, b] = total
        out[b, a] = total


def gram_dense(X, curv_a, curv_b, intercept_scale, block_rows, out):
    """The Hessian ``H = sum_i xt_i xt_i^T (x) (diag(a_i) - b_i b_i^T)`` of the loss part
    (as ``cpu.gram_dense``: coordinates ``k * (d + 1) + j``, ``j = d`` the intercept of
    value ``intercept_scale``): per block of ``block_rows`` rows one thread per entry on or
    above the diagonal, then the blocks added in order and mirrored."""
    n, d = X.shape
    size = out.shape[0]
    xp = array_module()
    upper = np.transpose(np.triu_indices(size)).astype(np.int64)  # (pairs, 2): a <= b
    pairs = to_device(np.ascontiguousarray(upper))
    n_blocks = max(1, (n + int(block_rows) - 1) // int(block_rows))
    partial = xp.empty((n_blocks, upper.shape[0]), dtype=np.float64)
    d_out, finish = output(out)
    _gram_partials_kernel[blocks_for(partial.size), THREADS](
        to_device(X), to_device(curv_a), to_device(curv_b), float(intercept_scale),
        int(block_rows), pairs, partial)
    _gram_sum_kernel[blocks_for(upper.shape[0]), THREADS](pairs, partial, d_out)
    finish()
