"""Vector-leaf histograms on a paged bin matrix (``ExtMemQuantileDMatrix``:
``gbm.bins.paged.PagedBins``, binned pages on disk), on the host.

A node's histogram is the sum of its pages' histograms: each page's part of a node's rows
is one run of them (a node's rows are increasing: the tree's rows start sorted and every
partition is stable, ``PagedBins.partition_rows``), found by binary search; the page's
histograms are built by the in-memory kernel (``build_vector_histograms``) from the page's
feature-major bins and the page's gradient pairs, and added. Integer sums, so exactly the
one-matrix histograms: the model of the in-memory fit, on any thread count. One pass over
the pages a histogram build; one page of bins (and the next, mapped by the reader thread)
resident at a time. The partition is ``PagedBins.partition_rows`` (a pass of its own).
The monotone re-check of projected splits (``gbm.tree.vector_monotone``) sums its
one-feature histograms over every output the same way (``paged_feature_histograms``).
"""
import numpy as np


def paged_vector_histograms(matrix, kernels, gpair, rows, starts, ends, hist):
    """``kernels.build_vector_histograms`` over the pages of ``matrix``.

    Parameters
    ----------
    matrix : gbm.bins.paged.PagedBins (host)
    kernels : module with ``build_vector_histograms`` (the CPU kernels or their twin)
    gpair : int64 (n_rows, d, 2), row-major over the matrix's rows
    rows : int32 (m,), each node's segment increasing
    starts, ends : int64 (n_nodes,), each node's segment of ``rows``
    hist : int64 (n_nodes, n_slots, d, 2), OUT: the sums over every page
    """
    def build(by_feature, lo, hi, local, s, e, part):
        kernels.build_vector_histograms(by_feature, gpair[lo:hi], local, s, e,
                                        matrix.feature_offsets, part)

    _sum_over_pages(matrix, rows, starts, ends, hist, build)


def paged_feature_histograms(matrix, kernels, gpair, rows, starts, ends, features, hist):
    """``kernels.build_vector_feature_histograms`` over the pages of ``matrix``: one
    feature's histogram per node, every output, summed page by page (integer sums: the
    one-matrix histograms exactly). One pass over the pages for all the nodes.

    Parameters
    ----------
    matrix : gbm.bins.paged.PagedBins (host)
    kernels : module with ``build_vector_feature_histograms`` (the CPU kernels or twin)
    gpair : int64 (k, n_rows, 2), output-major over the matrix's rows
    rows : int32 (m,), each node's segment increasing
    starts, ends : int64 (n_nodes,), each node's segment of ``rows``
    features : int32 (n_nodes,), each node's feature
    hist : int64 (n_nodes, n_slots, k, 2), OUT: ``n_slots`` at least the widest
        feature's bins + 1 (its missing slot)
    """
    features = np.ascontiguousarray(features, dtype=np.int32)

    def build(by_feature, lo, hi, local, s, e, part):
        # the page's pairs as one block (the kernel indexes them by page-local row)
        kernels.build_vector_feature_histograms(
            by_feature, np.ascontiguousarray(gpair[:, lo:hi]), local, s, e, features, part)

    _sum_over_pages(matrix, rows, starts, ends, hist, build)


def _sum_over_pages(matrix, rows, starts, ends, hist, build):
    """``hist`` = the sum over the pages of ``build(bins_by_feature, lo, hi, local rows,
    starts, ends, part)``, each page's histograms of its part of each node's rows (integer
    sums: the one-matrix histograms exactly)."""
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    ends = np.ascontiguousarray(ends, dtype=np.int64)
    _check_increasing(rows, starts, ends)
    hist[...] = 0
    part = np.empty_like(hist)
    for lo, hi, by_feature in matrix.pages_by_feature():
        runs = matrix.node_runs(rows, starts, ends, lo, hi)
        if runs is None:
            continue
        local, s, e = runs
        build(by_feature, lo, hi, local, s, e, part)
        np.add(hist, part, out=hist)  # integers: the sum over pages is the whole matrix's


def _check_increasing(rows, starts, ends):
    """``RuntimeError`` unless each node's rows are increasing (what finds a page's run
    of them by binary search; a pass over the row ids, cheap beside the histograms)."""
    for s, e in zip(starts.tolist(), ends.tolist()):
        seg = rows[s:e]
        if seg.shape[0] > 1 and not bool((seg[1:] > seg[:-1]).all()):
            raise RuntimeError("a node's rows are out of order: a paged matrix's "
                               "histograms need each node's rows increasing")
