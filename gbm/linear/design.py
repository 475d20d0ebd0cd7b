"""The feature matrix as the linear kernels read it, and the data passes over it.

Sparse input stays sparse: CSC for the primal solver (it works column by column), CSR
for the dual one (row by row); a matrix already in that format is used as it is (its
indices are sorted in a copy first if they are not). A CSR matrix given to the primal
solver also serves its row passes (margins), which are faster by rows. Dense input is
float64 in C order, or in Fortran order as given to the primal solver (its passes work on
blocks of rows); coordinate descent on dense columns makes one Fortran-ordered copy.

On the CUDA backend the kernels' copy of X is moved to the device once, when the Design is
made (dense: in Fortran order for the primal solver, whose row-parallel passes then read
consecutive rows, C order for the dual one); the host matrix still serves the few host
computations (row norms, the active columns' small Hessian).
"""
import numpy as np

_GRAM_BUDGET = 64 << 20  # bytes of per-block partial Hessians in gram_dense


def _canonical(X):
    """X with sorted, duplicate-free indices and int32/int64 index arrays, copied only if needed."""
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.data.dtype != np.float64:
        X = X.astype(np.float64)
    return X


class Design:
    """X for the kernels of ``backend``.

    Parameters
    ----------
    X : ndarray (n, d) or scipy.sparse matrix, already validated (finite)
    backend : gbm.runtime.backend.Backend
    by : "columns" (primal solver) or "rows" (dual solver)
    """

    def __init__(self, X, backend, by="columns"):
        import scipy.sparse as sp

        self.backend = backend
        self.kernels = backend.kernels
        self.n, self.d = X.shape
        self.rows = None
        place = backend.asarray if backend.name == "cuda" else (lambda a: a)
        if sp.issparse(X):
            if by == "columns" and X.format == "csr":
                # the given CSR serves the row passes (margins) without a copy
                rows = _canonical(X)
                self.rows = tuple(place(a) for a in (rows.indptr, rows.indices, rows.data))
            X = _canonical(X.tocsc() if by == "columns" else X.tocsr())
            self.kind = "csc" if by == "columns" else "csr"
            self._host_sparse = (X.indptr, X.indices, X.data)
            self.sparse = tuple(place(a) for a in self._host_sparse)
            self.nnz = X.nnz
            self.X = None
        else:
            X = np.asarray(X, dtype=np.float64)
            contiguous = X.flags.c_contiguous or (by == "columns" and X.flags.f_contiguous)
            self._host_X = X if contiguous else np.ascontiguousarray(X)
            self._columns = None
            self.kind = "dense"
            self.nnz = self.n * self.d
            if backend.name == "cuda":
                order = np.asfortranarray if by == "columns" else np.ascontiguousarray
                self.X = place(order(self._host_X))
                self._columns = self.X  # the kernels index either order
            else:
                self.X = self._host_X

    def columns(self):
        """Dense X in Fortran order (columns contiguous), for coordinate descent: a copy,
        made once, unless X is already so."""
        if self._columns is None:
            self._columns = np.asfortranarray(self.X)
        return self._columns

    def margins(self, coef, intercept, out):
        """out (n, K) = X coef^T + intercept; coef (K, d), intercept (K,)."""
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        intercept = np.ascontiguousarray(intercept, dtype=np.float64)
        k = self.kernels
        with self.backend.threads(self.nnz * coef.shape[0]):
            if self.kind == "dense":
                k.margins_dense(self.X, coef, intercept, out)
            elif self.rows is not None:
                k.margins_csr(*self.rows, coef, intercept, out)
            elif self.kind == "csc":
                k.margins_csc(*self.sparse, coef, intercept, out, self.backend.n_threads)
            else:
                k.margins_csr(*self.sparse, coef, intercept, out)
        return out

    def gradient(self, g, out):
        """out (K, d) = g^T X for g (n, K)."""
        with self.backend.threads(self.nnz * g.shape[1]):
            if self.kind == "dense":
                self.kernels.gradient_dense(self.X, g, out)
            else:
                self.kernels.gradient_csc(*self.sparse, g, out)
        return out

    def hessian_diagonal(self, curv_a, curv_b, out):
        """out (K, d): the Hessian's diagonal (see the kernel)."""
        with self.backend.threads(self.nnz * curv_a.shape[1]):
            if self.kind == "dense":
                self.kernels.hessian_diagonal_dense(self.columns(), curv_a, curv_b, out)
            else:
                self.kernels.hessian_diagonal_csc(*self.sparse, curv_a, curv_b, out)
        return out

    def gram(self, curv_a, curv_b, intercept_scale, out):
        """The full Hessian of the loss part (dense X only), (K (d+1), K (d+1))."""
        size = out.shape[0]
        # partial sums per block of rows: as many blocks as the memory budget allows,
        # chosen from the data's shape only (never the thread count)
        max_blocks = max(1, _GRAM_BUDGET // (8 * size * size))
        block_rows = max(2048, -(-self.n // max_blocks))
        with self.backend.threads(self.n * size):
            self.kernels.gram_dense(self.X, curv_a, curv_b, float(intercept_scale), block_rows,
                                    out)
        return out

    def column_block(self, columns):
        """Columns ``columns`` (int array) of X, on the host: a CSC matrix, or a dense array."""
        if self.kind == "dense":
            return self._host_X[:, columns]
        import scipy.sparse as sp

        indptr, indices, data = self._host_sparse
        return sp.csc_matrix((data, indices, indptr), shape=(self.n, self.d))[:, columns]

    def cd_residual(self, intercept_scale, curv_a, curv_b, rank_one, grad, diag, l1, l2, coef,
                    delta, q, t, active, max_sweeps, rel_tol, abs_tol):
        """Inner coordinate descent on the quadratic model (see the kernels)."""
        args = (float(intercept_scale), curv_a, curv_b, bool(rank_one), grad, diag, l1, l2, coef,
                delta, q, t, active, int(max_sweeps), float(rel_tol), float(abs_tol))
        if self.kind == "dense":
            return self.kernels.cd_residual_dense(self.columns(), *args)
        return self.kernels.cd_residual_csc(*self.sparse, *args)

    def svc_epoch(self, y, upper, diag_shift, row_norm, intercept_scale, order, sigma, w, alpha, v):
        """One epoch of dual coordinate ascent (row layout)."""
        args = (y, upper, diag_shift, row_norm, float(intercept_scale), order, float(sigma), w,
                alpha, v)
        if self.kind == "dense":
            return self.kernels.svc_dual_cd_dense(self.X, *args)
        return self.kernels.svc_dual_cd_csr(*self.sparse, *args)

    def row_norms(self):
        """|x_i|^2 per row, float64 (n,) (on the host)."""
        if self.kind == "dense":
            return np.einsum("ij,ij->i", self._host_X, self._host_X)
        indptr, _, data = self._host_sparse
        rows = np.repeat(np.arange(self.n), np.diff(indptr))
        return np.bincount(rows, weights=data * data, minlength=self.n)
