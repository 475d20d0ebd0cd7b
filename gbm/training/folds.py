"""The folds of ``gbm.cv``: which rows each fold trains and tests on, and each fold's
data as a pair of ``DMatrix``.

Fold membership, as ``xgboost.cv`` draws it (so that the same seed gives the same folds):

* by default, the rows (with query groups: the groups, kept whole) are permuted by
  ``numpy.random.RandomState(seed).permutation`` (not permuted when ``shuffle=False``)
  and cut by ``numpy.array_split`` into ``nfold`` consecutive parts; fold k tests on
  part k and trains on the other parts, in part order. xgboost.cv seeds NumPy's global
  generator with ``numpy.random.seed(seed)`` and draws the same permutation from it;
  gbm draws from a generator of its own and leaves the global one alone. ``RandomState``
  is NumPy's legacy Mersenne Twister stream, which NumPy keeps the same in every version;
* ``stratified=True``: scikit-learn's ``StratifiedKFold(nfold, shuffle=True,
  random_state=seed)`` over the labels, as xgboost.cv (which shuffles there whatever
  ``shuffle`` says);
* ``folds`` given: a scikit-learn-style splitter's ``split(y, y)`` (``split(y, y,
  groups)`` with query groups, each row's group index: ``GroupKFold`` works), or a
  list (any iterable, e.g. ``KFold().split(X)``) of ``(train rows, test rows)`` index
  arrays, used as given.

With query groups (ranking), every fold keeps each group whole: given folds that split
a group, or put its rows apart, are refused.
"""
import dataclasses
import numbers

import numpy as np

from ..data.dmatrix import DMatrix
from ..data.inputs import to_host
from ..data.rows import query_runs, take_rows


@dataclasses.dataclass
class Fold:
    """One fold: the rows it trains on and the rows it tests on (int64 indices into the
    whole data, in the order the fold's data holds them)."""

    train: np.ndarray
    test: np.ndarray


def check_nfold(nfold, folds):
    """``nfold`` (None: 3) checked against ``folds``: an int >= 2, and when folds are
    given, either None or their number (which ``split_rows`` checks)."""
    if nfold is None:
        return None if folds is not None else 3
    if isinstance(nfold, bool) or not isinstance(nfold, numbers.Integral):
        raise TypeError(f"nfold must be an integer >= 2, got {nfold!r}")
    if nfold < 2:
        raise ValueError(f"nfold must be >= 2 (a fold tests on rows the others train on), "
                         f"got {nfold}")
    return int(nfold)


def split_rows(n_rows, nfold, labels, query_ptr, *, stratified=False, folds=None,
               shuffle=True, seed=0):
    """The folds, as a list of ``Fold``.

    Parameters
    ----------
    n_rows : int
    nfold : int >= 2, or None when ``folds`` gives them (see ``check_nfold``)
    labels : ndarray (n_rows,) or (n_rows, n_targets); what stratification and a
        splitter's ``split`` read
    query_ptr : int64 (n_groups + 1,) or None; the query groups' row offsets
    stratified, folds, shuffle, seed : as ``gbm.cv``'s
    """
    if folds is not None:
        found = _given(folds, n_rows, labels, query_ptr)
        if nfold is not None and nfold != len(found):
            raise ValueError(f"nfold={nfold} but folds gives {len(found)} folds; pass one of "
                             "them (nfold is taken from folds)")
        return found
    if stratified:
        return _stratified(labels, nfold, seed, query_ptr)
    if query_ptr is not None:
        n_groups = query_ptr.shape[0] - 1
        if n_groups < nfold:
            raise ValueError(f"nfold={nfold} but the data has {n_groups} query group(s); each "
                             "fold tests on whole groups, so nfold must be at most that")
        parts = _parts(n_groups, nfold, shuffle, seed)
        return [Fold(_group_rows(query_ptr, _others(parts, k)), _group_rows(query_ptr, part))
                for k, part in enumerate(parts)]
    if n_rows < nfold:
        raise ValueError(f"nfold={nfold} but the data has {n_rows} row(s); nfold must be at "
                         "most the number of rows")
    parts = _parts(n_rows, nfold, shuffle, seed)
    return [Fold(_others(parts, k), part) for k, part in enumerate(parts)]


def _parts(n, nfold, shuffle, seed):
    """``range(n)``, permuted when ``shuffle``, in ``nfold`` consecutive parts."""
    order = (np.random.RandomState(seed).permutation(n) if shuffle
             else np.arange(n))
    return [part.astype(np.int64) for part in np.array_split(order, nfold)]


def _others(parts, k):
    return np.concatenate([part for i, part in enumerate(parts) if i != k])


def _group_rows(ptr, groups):
    """The rows of query groups ``groups``, group after group."""
    starts, sizes = ptr[groups], np.diff(ptr)[groups]
    offsets = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return (np.repeat(starts, sizes) + offsets).astype(np.int64)


def _stratified(labels, nfold, seed, query_ptr):
    if query_ptr is not None:
        raise ValueError("stratified=True splits rows by label, which would split query "
                         "groups; ranking data is split by whole groups (leave stratified "
                         "False) or by the folds you give")
    if labels.ndim != 1:
        raise ValueError(f"stratified=True needs one label per row; y has shape {labels.shape}")
    from sklearn.model_selection import StratifiedKFold

    splitter = StratifiedKFold(n_splits=nfold, shuffle=True, random_state=seed)
    return [Fold(np.asarray(tr, np.int64), np.asarray(te, np.int64))
            for tr, te in splitter.split(labels, labels)]


def _given(folds, n_rows, labels, query_ptr):
    """The folds a user gave: a splitter (an object with ``split``) or a list of pairs."""
    if hasattr(folds, "split"):
        extra = {}
        if query_ptr is not None:  # each row's group: for group-aware splitters
            extra["groups"] = np.repeat(np.arange(query_ptr.shape[0] - 1), np.diff(query_ptr))
        pairs = list(folds.split(labels, labels, **extra))
    elif hasattr(folds, "__iter__") and not isinstance(folds, (str, bytes, dict)):
        pairs = list(folds)  # a list of pairs, or a splitter's split(...) generator
    else:
        raise TypeError(f"folds must be a splitter with a split method (e.g. scikit-learn's "
                        f"KFold) or a list of (train rows, test rows), got "
                        f"{type(folds).__name__}")
    if len(pairs) < 1:
        raise ValueError("folds is empty; it must give at least one (train, test) pair")
    out = []
    for k, pair in enumerate(pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"folds[{k}] must be a pair (train rows, test rows), got "
                             f"{type(pair).__name__}")
        fold = Fold(_indices(pair[0], n_rows, f"folds[{k}][0] (train rows)"),
                    _indices(pair[1], n_rows, f"folds[{k}][1] (test rows)"))
        if query_ptr is not None:
            for rows, what in ((fold.train, "train"), (fold.test, "test")):
                query_runs(rows, query_ptr, f"folds[{k}]'s {what} rows")
        out.append(fold)
    return out


def _indices(value, n_rows, name):
    arr = np.asarray(to_host(value))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of row indices, got shape {arr.shape}")
    if arr.dtype.kind == "b":
        raise TypeError(f"{name} is a boolean mask; give row indices (np.flatnonzero(mask))")
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer row indices, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; every fold needs rows to train and test on")
    bad = np.flatnonzero((arr < 0) | (arr >= n_rows))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] = {arr[bad[0]]}, outside the data's rows "
                         f"[0, {n_rows})")
    return arr.astype(np.int64)


def fold_dmatrix(data, rows, query_ptr):
    """A ``DMatrix`` of rows ``rows`` of ``data`` (a ``gbm.data.training_data.TrainingData``
    of the whole data): features, labels (and survival:aft's label bounds), weights, base
    margins, query groups (as sizes), feature names and types."""
    weight = data.sample_weight
    group = None
    if query_ptr is not None:
        groups, group = query_runs(rows, query_ptr, "the fold's rows")
        if weight is not None and np.ndim(weight) == 1 \
                and len(weight) == query_ptr.shape[0] - 1:
            weight = np.asarray(weight)[groups]  # one weight per query group
            return _dmatrix(data, rows, weight, group)
    if weight is not None and np.ndim(weight) > 0:
        weight = np.asarray(weight)[rows]
    return _dmatrix(data, rows, weight, group)


def _dmatrix(data, rows, weight, group):
    base_margin = data.base_margin
    if base_margin is not None:
        base_margin = np.asarray(to_host(base_margin))[rows]
    source = data.dmatrix
    types = None if source is None else source.feature_types
    label, lower, upper = (None if a is None else np.asarray(to_host(a))[rows]
                           for a in (data.y, data.label_lower_bound, data.label_upper_bound))
    fold = DMatrix(take_rows(data.X, rows), label, weight=weight, base_margin=base_margin,
                   feature_names=data.feature_names, feature_types=types, group=group,
                   label_lower_bound=lower, label_upper_bound=upper)
    if source is None:  # arrays: no type codes (a frame's DMatrix would take its dtypes')
        fold.feature_types = None  # as gbm.train on the arrays records none
    return fold
