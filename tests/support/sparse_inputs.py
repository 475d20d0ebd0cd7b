"""Sparse bin matrices and CSR rows for the kernel tests (CPU and CUDA): the stored entries
of random dense bins, so that every sparse kernel can be checked against the dense one
on the same rows."""
import numpy as np


def value_offsets(n_bins):
    """A sparse matrix's histogram layout: feature f's value slots (no missing slot)."""
    return np.concatenate(([0], np.cumsum(n_bins))).astype(np.int32)


def csr_bins(bins, n_bins):
    """The non-missing cells of dense ``bins`` (missing = ``n_bins[f]``) as a sparse bin
    matrix: ``(indptr int64, slots int32, feature_offsets int32)``."""
    offsets = value_offsets(n_bins)
    stored = bins != np.asarray(n_bins)[None, :]
    rows, cols = np.nonzero(stored)
    slots = (offsets[cols] + bins[rows, cols]).astype(np.int32)
    indptr = np.concatenate(([0], np.cumsum(stored.sum(axis=1)))).astype(np.int64)
    return indptr, slots, offsets


def csr_values(X):
    """The non-NaN cells of float32 ``X`` as CSR: ``(indptr, indices int32, data float32)``."""
    stored = ~np.isnan(X)
    rows, cols = np.nonzero(stored)
    indptr = np.concatenate(([0], np.cumsum(stored.sum(axis=1)))).astype(np.int64)
    return indptr, cols.astype(np.int32), X[rows, cols]


def drop_missing_slots(hist, n_bins):
    """A dense layout's histograms with each feature's missing slot taken out."""
    keep = np.ones(hist.shape[1], dtype=bool)
    keep[np.cumsum(np.asarray(n_bins) + 1) - 1] = False
    return np.ascontiguousarray(hist[:, keep])
