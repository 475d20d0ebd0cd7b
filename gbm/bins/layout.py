"""Which bin layout a fit trains on (``bin_layout``, docs/parameters.md "Sparse data"), and
the binned rows in it: "dense", "sparse" (CSR of the non-missing entries) or "bundled"
(exactly exclusive features sharing columns, ``gbm.bins.bundling``). The layout changes
the memory and the speed, never the model; every rank decides the same, from counts
summed over all of them and bundles found over all of them.
"""
import numpy as np

from ..data.inputs import to_host
from ..data.sparse import SparseMatrix, from_dense
from .bundling import bundles_fit, find_bundles, propose

# The sparse layouts below this share of non-missing entries (LightGBM stores a feature
# sparse when more than 80% of it is its default value: ``sparse_threshold``). A dense
# matrix keeps every cell twice (row- and feature-major, a byte each); the sparse one 4
# bytes per stored entry: the sparse one is smaller below a share of 1/2, and its
# histograms cheaper, but a partition reads a row's entry by a binary search.
SPARSE_BELOW = 0.2
TRIAL_ROWS = 2000  # "auto" first bundles the sample's first rows: too many bundles there,
# too many over all the rows (fewer rows, fewer conflicts), and bundling is not tried


def stored_entries(X):
    """The non-missing entries of ``X`` (a ``SparseMatrix``: its stored ones; a dense
    matrix, NumPy or CuPy: its non-NaN cells)."""
    if hasattr(X, "nnz"):
        return int(X.nnz)
    xp = np
    if hasattr(X, "__cuda_array_interface__"):
        import cupy as xp
    return int(X.size - int(xp.count_nonzero(xp.isnan(X))))


def choose_layout(requested, X, collective):
    """``requested`` ("dense", "sparse" or "bundled"), or for "auto" the sparse one when
    the non-missing entries of the whole data set (every rank's, through ``collective``)
    are fewer than ``SPARSE_BELOW`` of its cells, else the dense one."""
    if requested != "auto":
        return requested
    counts = _totals(X, collective)
    return "sparse" if counts[0] < SPARSE_BELOW * counts[1] else "dense"


def _totals(X, collective):
    """int64 (3,): the whole data set's non-missing entries, cells and rows."""
    return collective.allreduce(np.array([stored_entries(X), X.shape[0] * X.shape[1],
                                          X.shape[0]], dtype=np.int64), "sum")


def binned_rows(mapper, X, requested, kernels, xp, collective):
    """``X`` binned by ``mapper`` (fitted on it, holding its binning ``sample``) in the
    layout ``requested`` asks for; with "auto", a sparse layout becomes "bundled" when
    its bundle columns take less memory than the CSR entries (a few bundles of many
    features: one-hot columns)."""
    layout = choose_layout(requested, X, collective)
    bundles = None
    if layout == "bundled" or (requested == "auto" and layout == "sparse"):
        if not bundles_fit(mapper.n_bins):
            if layout == "bundled":
                f = int(np.argmax(mapper.n_bins))
                raise ValueError(f"bin_layout='bundled' needs each feature's bins and a "
                                 f"code for none in a uint16 column, but feature {f} has "
                                 f"{int(mapper.n_bins[f])} bins; use bin_layout='sparse'")
        else:
            from ..kernels import cpu as host_kernels  # bundling runs on the host

            sample = mapper.sample_of(X)
            if not isinstance(sample, SparseMatrix):
                sample = from_dense(to_host(sample))
            if layout == "bundled" or _worth_trying(sample, mapper.n_bins, X, collective,
                                                    host_kernels):
                rows = X if isinstance(X, SparseMatrix) else from_dense(to_host(X))
                bundles = find_bundles(sample, rows, mapper.n_bins, collective, host_kernels)
                if layout == "sparse" and not _bundles_smaller(bundles.n_bundles,
                                                               bundles.widths, X, collective):
                    bundles = None
                else:
                    layout, X = "bundled", rows
    return mapper.bin_matrix(X, layout, kernels, xp, fitted_on_X=True, bundles=bundles)


def _worth_trying(sample, n_bins, X, collective, kernels):
    """Whether bundles proposed from the sample's first ``TRIAL_ROWS`` rows (the same on
    every rank) are few enough to be smaller than the CSR entries (their count, one byte
    a cell: a lower bound of the whole sample's)."""
    trial = sample.take_rows(np.arange(min(TRIAL_ROWS, sample.shape[0])))
    proposed = propose(trial, n_bins, kernels)
    return _bundles_smaller(int(proposed.max(initial=-1)) + 1, np.ones(1), X, collective)


def _bundles_smaller(n_bundles, widths, X, collective):
    """Whether ``n_bundles`` columns (two copies, row- and bundle-major, a byte a cell, two
    when a bundle has more than 256 codes) take fewer bytes than the CSR entries (4 bytes
    each, 8 per row) of the whole data set."""
    entries, _, rows = _totals(X, collective)
    width = 1 if widths.max(initial=1) <= 256 else 2
    return 2 * rows * n_bundles * width <= 4 * entries + 8 * rows
