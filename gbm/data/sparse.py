"""Sparse feature matrices, read without a dense copy: SciPy CSR, CSC and COO matrices
(and arrays), and pandas frames with sparse columns.

An absent entry is a missing value (XGBoost's convention); an explicitly stored zero is
the value 0. ``SparseMatrix`` holds the stored entries as canonical CSR: float32 values,
each row's columns strictly increasing, duplicates summed (SciPy's meaning of them), and
stored NaN entries dropped (they are missing, as absent ones). Its memory grows with the
stored entries, never with rows x columns. ``gbm.data.inputs`` makes one from the user's
input, with its checks.
"""
import numpy as np

FLOAT = np.float32  # feature values (gbm.data.inputs.FLOAT)


def is_scipy_sparse(X):
    """Whether ``X`` is a SciPy sparse matrix or array (any format)."""
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def has_sparse_columns(frame):
    """Whether a pandas DataFrame holds a column of pandas' ``SparseDtype``."""
    import pandas as pd

    return any(isinstance(dtype, pd.SparseDtype) for dtype in frame.dtypes)


_COUNT_CHUNK = 1 << 20  # entries np.bincount takes at once (it widens them to int64 first)


def count_values(values, minlength):
    """int64 (minlength,): ``np.bincount(values, minlength=minlength)`` of non-negative
    ints ``values`` (nnz,), taken in chunks: bincount widens its input to int64, a
    copy of 8 bytes an entry (43 MB for 5.4M int32 entries) that chunks keep small."""
    out = np.zeros(minlength, dtype=np.int64)
    for lo in range(0, values.shape[0], _COUNT_CHUNK):
        out += np.bincount(values[lo:lo + _COUNT_CHUNK], minlength=minlength)
    return out


def is_sparse_input(X):
    """Whether ``X`` is read as a ``SparseMatrix``: a SciPy sparse matrix, or a pandas
    DataFrame with a sparse column."""
    if is_scipy_sparse(X):
        return True
    return hasattr(X, "columns") and hasattr(X, "dtypes") and has_sparse_columns(X)


class SparseMatrix:
    """Rows of float32 values, stored as CSR; absent entries are missing.

    Attributes
    ----------
    indptr : int64 (n_rows + 1,), row ``r``'s entries are ``indptr[r]:indptr[r + 1]``
    indices : int32 (nnz,), each row's columns, strictly increasing
    data : float32 (nnz,), finite values (a stored NaN is dropped on the way in)
    shape : (n_rows, n_features)
    """

    ndim = 2
    dtype = np.dtype(FLOAT)

    def __init__(self, indptr, indices, data, shape):
        self.indptr = np.asarray(indptr, dtype=np.int64)
        self.indices = np.asarray(indices, dtype=np.int32)
        self.data = np.asarray(data, dtype=FLOAT)
        self.shape = (int(shape[0]), int(shape[1]))

    @property
    def nnz(self):
        return int(self.data.shape[0])

    @property
    def size(self):
        """The stored entries: what a pass over the matrix costs (its work estimate)."""
        return self.nnz

    @property
    def nbytes(self):
        return self.indptr.nbytes + self.indices.nbytes + self.data.nbytes

    def __repr__(self):
        return f"SparseMatrix(shape={self.shape}, nnz={self.nnz})"

    def row_of_entries(self):
        """int64 (nnz,): the row of each stored entry."""
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))

    def stored_per_feature(self):
        """int64 (n_features,): stored entries per column."""
        return count_values(self.indices, self.shape[1])

    def take_rows(self, rows):
        """The rows ``rows`` (a boolean mask or int indices, in their order)."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        starts, ends = self.indptr[rows], self.indptr[rows + 1]
        counts = ends - starts
        indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        # every kept entry's position: its row's start plus its rank within the row
        take = np.repeat(starts - indptr[:-1], counts) + np.arange(indptr[-1], dtype=np.int64)
        return SparseMatrix(indptr, self.indices[take], self.data[take],
                            (rows.shape[0], self.shape[1]))

    def dense_rows(self, lo, hi):
        """float32 (hi - lo, n_features), C order: rows ``lo .. hi - 1`` with NaN where
        entries are absent (a block of rows, for kernels that read dense rows)."""
        out = np.full((hi - lo, self.shape[1]), np.nan, dtype=FLOAT)
        a, b = self.indptr[lo], self.indptr[hi]
        rows = np.repeat(np.arange(hi - lo), np.diff(self.indptr[lo:hi + 1]))
        out[rows, self.indices[a:b]] = self.data[a:b]
        return out

    def keep_entries(self, keep):
        """The matrix without the entries where ``keep`` (bool (nnz,)) is False."""
        counts = np.bincount(self.row_of_entries()[keep], minlength=self.shape[0])
        indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        return SparseMatrix(indptr, self.indices[keep], self.data[keep], self.shape)

    def with_columns(self, columns):
        """The matrix with the entries of some columns replaced: ``columns`` maps a
        column to ``(rows, values)`` (int64 (k,), float32 (k,)), its new entries."""
        keep = np.ones(self.nnz, dtype=bool)
        replaced = np.zeros(self.shape[1], dtype=bool)
        replaced[list(columns)] = True
        keep &= ~replaced[self.indices]
        rows = [self.row_of_entries()[keep]] + [np.asarray(r, np.int64) for r, _ in columns.values()]
        cols = [self.indices[keep].astype(np.int64)] + [
            np.full(len(r), f, dtype=np.int64) for f, (r, _) in columns.items()]
        vals = [self.data[keep]] + [np.asarray(v, FLOAT) for _, v in columns.values()]
        rows, cols, vals = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
        order = np.lexsort((cols, rows))
        counts = np.bincount(rows, minlength=self.shape[0])
        indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        return SparseMatrix(indptr, cols[order], vals[order], self.shape)

    def copy(self):
        return SparseMatrix(self.indptr.copy(), self.indices.copy(), self.data.copy(),
                            self.shape)

    @classmethod
    def concatenate(cls, parts, n_features):
        """The rows of ``parts`` (SparseMatrix) one after another."""
        if not parts:
            return cls(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, FLOAT),
                       (0, n_features))
        sizes = np.cumsum([0] + [p.nnz for p in parts[:-1]])
        indptr = np.concatenate([[0]] + [p.indptr[1:] + s for p, s in zip(parts, sizes)])
        return cls(indptr, np.concatenate([p.indices for p in parts]),
                   np.concatenate([p.data for p in parts]),
                   (sum(p.shape[0] for p in parts), n_features))


def from_dense(X):
    """The non-NaN entries of a float32 matrix (NaN = missing) as a ``SparseMatrix``."""
    stored = ~np.isnan(X)
    rows, cols = np.nonzero(stored)
    indptr = np.concatenate(([0], np.cumsum(stored.sum(axis=1)))).astype(np.int64)
    return SparseMatrix(indptr, cols.astype(np.int32), X[rows, cols], X.shape)
