"""A rank's rows held as external memory (``gbm.dask.train(..., external_memory=True)``):
its partitions binned with the global bin edges into page files on the worker's disk
(``gbm.bins.paged.PagedBins``), the same pages an ``ExtMemQuantileDMatrix`` keeps.

The edges are the ones a Dask fit in memory learns (``BinMapper.fit`` over the ranks'
hash-chosen sample rows, gathered through the collective), so every rank bins as the
whole data set would be binned; each rank sums its pages' integer histograms and the
ranks all-reduce them as usual: the model file is the local one, byte for byte.

Cost: the rank's float rows are joined once to learn the edges (as the in-memory path
does), then binned a partition at a time into pages and freed; the fit maps two pages at
a time per thread instead of holding the rank's bin matrix, and reads every page once per
pass (a tree's root histograms, each level's partition with its children's histograms, a
tree's margins: ``gbm.bins.paged``).
"""
import os
import types

import numpy as np

from ..bins.binning import BinMapper
from ..data.categorical import check_same_categorical, encode_X, fit_categories
from ..data.inputs import feature_names_of, to_host
from ..data.queries import make_queries
from ..bins.quantile import BinnedRows, PageWriter, DEFAULT_PAGE_BYTES
from ..model.booster import load_init_model
from . import data as dask_data


def paged_rows(share, params, w, ids, collective, cache_dir=None, page_bytes=None,
               n_threads=1, categorical_features=None, init_model=None, base_margin=None):
    """This rank's rows of X (``share``, ``gbm.dask.data``) as ``BinnedRows`` of a
    ``PagedBins`` in page files under ``cache_dir`` (None: a temporary folder of the
    worker's), binned with the edges every rank learns together.

    params : validated parameters (``max_bin``, ``bin_sample_size``, ``random_state``)
    w : float (n_rank,) or None, the rows' weights (the edges' sample weights); with
        ``share["group_weight"]``, the rank's query groups' weights
    ids : int64 (n_rank,), each row's global index
    categorical_features : as ``gbm.train``'s (pandas ``category`` columns are categorical
        without it)
    init_model : a model to continue (a ``Booster`` or its file), or None: the rows are
        encoded with its categories and its margins computed on their raw values while
        they are joined (``BinnedRows.init_margins``, float64 (n_rank, n_groups)), the
        in-memory continued fit's bits whatever its split thresholds
    base_margin : the rank's rows' own starts (``gbm.train``'s), or None
    """
    w = None if w is None else np.asarray(w, np.float64).ravel()
    parts = share["X"] or [share["empty"]["X"]]
    init = None if init_model is None else load_init_model(init_model)
    if init is None:  # as the in-memory path: the categories seen on any rank, in one
        # order on every rank
        X, categories = fit_categories(dask_data.assemble(share, "X"), categorical_features,
                                       collective=collective)
    else:  # as the in-memory continued fit: the model's categories
        X = dask_data.assemble(share, "X")
        if categorical_features is not None:
            check_same_categorical(init.categories, categorical_features, X,
                                   feature_names_of(X))
        X, categories = encode_X(X, init.categories, shard=True), init.categories
    init_margins = None if init is None else _raw_margins(init, X, base_margin)
    if "group_weight" in share:  # ranking: w weighs the rank's (whole) query groups; the
        # edges' sample weighs each row as its group, as the in-memory rank's fit does
        w = make_queries(share.get("group"), dask_data.assemble(share, "qid"), w, X.shape[0],
                         shard=True).row_weight()
    n_categories = None if categories is None else np.array(
        [-1 if c is None else len(c) for c in categories], dtype=np.int64)
    n_total = int(collective.allreduce(np.array([X.shape[0]], np.int64), "sum")[0])
    mapper = BinMapper(params["max_bin"], params["bin_sample_size"], params["random_state"])
    mapper.fit(X, w, n_rows_total=n_total, n_threads=max(1, n_threads), row_ids=ids,
               n_categories=n_categories, collective=collective)
    mapper.sample = None
    n_features = X.shape[1]
    del X  # the joined copy: the partitions are binned one at a time below
    if cache_dir is not None and not os.path.isdir(os.fspath(cache_dir)):
        raise FileNotFoundError(f"external_memory cache_dir {os.fspath(cache_dir)!r} does not "
                                "exist on this worker; create it on every worker or leave "
                                "cache_dir out (a temporary folder)")
    writer = PageWriter(cache_dir, DEFAULT_PAGE_BYTES if page_bytes is None else page_bytes)
    rows = [int(p.shape[0]) for p in parts]
    scan = types.SimpleNamespace(batch_rows=rows, n_rows=sum(rows), n_features=n_features)

    def binned():
        offset = 0
        for i, part in enumerate(parts):
            yield i, offset, mapper.transform(encode_X(part, categories,
                                                       name=f"partition {i} of X", shard=True),
                                              fitted_on_X=True)
            offset += rows[i]

    matrix = writer(binned(), scan, mapper)
    names = feature_names_of(parts[0])
    rows_out = BinnedRows(matrix, mapper, categories, names)
    rows_out.sharded = True
    rows_out.init_margins = init_margins
    return rows_out


def _raw_margins(init, X, base_margin):
    """float64 (n_rank, n_groups): ``init``'s margins of the rank's raw rows ``X`` (as
    ``gbm.training.prepare`` computes them on an in-memory rank's rows), from each row's
    own start when ``base_margin`` gives one."""
    if X.shape[1] != init.n_features:
        raise ValueError(f"init_model was trained on {init.n_features} features but X has "
                         f"{X.shape[1]}")
    return np.asarray(init._predict_checked(to_host(X), output_margin=True,
                                            base_margin=base_margin),
                      dtype=np.float64).reshape(X.shape[0], init.n_groups)
