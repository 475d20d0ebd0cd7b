"""Categorical features: which columns they are, the categories seen at fit, and codes.

A categorical feature's *code* for a row is the index of its category among the
categories seen at fit (so codes are ``0 .. n_categories - 1``); the code is also the
row's bin, and a missing value, or a category not seen at fit, is NaN (the missing bin).
The engine (binning, splits, prediction) only ever sees codes.

Which features are categorical:

* every pandas ``category`` column (Arrow dictionary columns arrive as such);
* the features named by ``categorical_features``: column indices, names, or a boolean
  mask with one entry per feature. A numeric column named there must hold non-negative
  integers (below 2**24, the float32 limit XGBoost also uses) or NaN.

Categories seen at fit are kept per feature, in the model, as a list: the labels present
in a pandas column (in the dtype's order), or the sorted distinct integers of a numeric
column. At predict, values are matched to them by value, so a pandas column with the
categories in another order, or a subset of them, gives the same codes. Numbers given for
a feature whose categories are strings are codes, positions among them (as XGBoost 3
reads them); a number past the last is a category not seen at fit.
"""
import numbers

import numpy as np

from ..collective import LOCAL
from .frames import is_polars, polars_to_pandas
from .inputs import FLOAT, check_X, feature_names_of, is_device_array, to_host
from .sparse import SparseMatrix

# Codes 0 .. 65535 are uint16 bins (gbm.bins.binning stores a feature with more than 256 bins so);
# a feature with all 65,536 categories has no symbol left for its missing bin, so its
# training rows may not have missing values (as a numeric feature's 256 uint8 bins).
MAX_CATEGORIES = 65536
MAX_CATEGORY_VALUE = 2**24  # float32 holds every integer below this exactly


def as_frame(X):
    """A pandas DataFrame for pandas or Arrow input, else None."""
    if type(X).__module__.startswith("pyarrow") and hasattr(X, "to_pandas"):
        X = X.to_pandas()
    if is_polars(X):
        X = polars_to_pandas(X)
    if type(X).__module__.startswith("pandas") and hasattr(X, "dtypes") and hasattr(X, "columns"):
        return X
    return None


def category_columns(frame):
    """Positions of the pandas ``category`` columns of ``frame`` (None: no columns)."""
    if frame is None:
        return []
    import pandas as pd

    return [i for i, dtype in enumerate(frame.dtypes) if isinstance(dtype, pd.CategoricalDtype)]


def categorical_mask(categorical_features, n_features, feature_names, category_cols=()):
    """bool (n_features,): True for categorical features.

    ``categorical_features``: None, or a sequence of column indices, of feature names,
    or a boolean mask of length ``n_features``. ``category_cols`` (pandas ``category``
    columns) are categorical in any case.
    """
    mask = np.zeros(n_features, dtype=bool)
    mask[list(category_cols)] = True
    if categorical_features is None:
        return mask
    if isinstance(categorical_features, (str, bytes)) or not hasattr(categorical_features, "__len__"):
        raise TypeError(f"categorical_features must be a list of column indices or names, or a "
                        f"boolean mask, got {categorical_features!r}")
    entries = list(np.asarray(categorical_features, dtype=object).ravel()) \
        if isinstance(categorical_features, np.ndarray) else list(categorical_features)
    is_bool = [isinstance(e, (bool, np.bool_)) for e in entries]
    if entries and all(is_bool):
        if len(entries) != n_features:
            raise ValueError(f"categorical_features is a boolean mask of length {len(entries)} "
                             f"but X has {n_features} features")
        return mask | np.array(entries, dtype=bool)
    for entry in entries:
        if isinstance(entry, str):
            if not feature_names or entry not in feature_names:
                raise ValueError(f"categorical_features names feature {entry!r}, which is not "
                                 f"among the feature names {feature_names}")
            mask[feature_names.index(entry)] = True
        elif isinstance(entry, numbers.Integral) and not isinstance(entry, (bool, np.bool_)) \
                and 0 <= entry < n_features:
            mask[int(entry)] = True
        else:
            raise ValueError(f"categorical_features holds {entry!r}; expected column indices in "
                             f"[0, {n_features}), feature names, or a boolean mask")
    return mask


def _column_name(feature_names, f):
    return f"{feature_names[f]!r} (position {f})" if feature_names else str(f)


def _check_integer_codes(values, column, name, rows=None):
    """Numeric values of a categorical column: non-negative integers below 2**24, or NaN.
    ``rows``: each value's row (a sparse column's stored entries); None: its position."""
    ok = ~np.isnan(values)
    v = values[ok]
    bad = (v < 0) | (v != np.floor(v)) | (v >= MAX_CATEGORY_VALUE)
    if bad.any():
        at = int(np.flatnonzero(ok)[np.flatnonzero(bad)[0]])
        row = at if rows is None else int(rows[at])
        raise ValueError(
            f"{name} column {column} is categorical but holds {float(values[at])!r} at row "
            f"{row}; a "
            f"numeric categorical column must hold non-negative integers below "
            f"{MAX_CATEGORY_VALUE} (or NaN for missing values)")


def _check_labels(labels, column, name):
    for label in labels:
        if isinstance(label, bool) or not isinstance(label, (str, numbers.Real)) \
                or (isinstance(label, float) and not np.isfinite(label)):
            raise ValueError(f"{name} column {column} has the category {label!r}; category "
                             "labels must be strings or finite numbers")


def fit_categories(X, categorical_features=None, feature_names=None, name="X",
                   collective=LOCAL, part=False):
    """Check ``X`` for training; learn the categories of its categorical features.

    With several ranks (``collective``), each holding some rows, the categories are those
    seen on any rank, in the same order as one rank holding every row would list them.
    ``part``: ``X`` is a part of the data (a batch of a stream): it may have no rows.

    Returns
    -------
    X : float32 (n_samples, n_features), categorical columns holding codes (NaN = missing)
    categories : list with, per feature, None (numeric) or the list of categories seen
        (strings or numbers); None when no feature is categorical
    """
    frame = as_frame(X)
    cat_cols = category_columns(frame)
    shard = collective.world_size > 1
    arr = check_X(X if frame is None else frame, name=name, allow_category=True,
                  shard=shard or part)
    if feature_names is None:
        feature_names = feature_names_of(frame) if frame is not None else None
    if feature_names is not None and len(feature_names) != arr.shape[1]:
        feature_names = None  # the caller reports the mismatch
    mask = categorical_mask(categorical_features, arr.shape[1], feature_names, cat_cols)
    if not mask.any():
        return arr, None
    sparse = isinstance(arr, SparseMatrix)
    if not sparse:
        arr = _writable_copy(to_host(arr), X)  # codes are checked and encoded on the host
    entries = _column_entries(arr, np.flatnonzero(mask)) if sparse else None
    categories = [None] * arr.shape[1]
    order = {}  # pandas columns: the dtype's order of the categories
    for f in np.flatnonzero(mask):
        column = _column_name(feature_names, f)
        if f in cat_cols:
            col = frame.iloc[:, f]
            codes = col.cat.codes.to_numpy()
            labels = col.cat.categories[np.unique(codes[codes >= 0])].tolist()
            _check_labels(labels, column, name)
            order[f] = col.cat.categories.tolist()
        else:
            values, rows = (arr[:, f], None) if not sparse else (
                arr.data[entries[f][1]], entries[f][0])
            _check_integer_codes(values, column, name, rows)
            labels = [int(v) for v in np.unique(values[~np.isnan(values)])]
        categories[f] = labels
    if shard:
        categories = merge_categories(collective.allgather(categories), order, feature_names)
    for f in np.flatnonzero(mask):
        labels = categories[f]
        column = _column_name(feature_names, f)
        if len(labels) > MAX_CATEGORIES:
            raise ValueError(
                f"{name} column {column} has {len(labels)} categories; a categorical feature may "
                f"have at most {MAX_CATEGORIES} (its codes are uint16 bins)")
    if sparse:
        arr = _encode_sparse(frame, arr, categories, cat_cols, feature_names, name, entries)
    else:
        _encode(frame, arr, categories, cat_cols, feature_names, name)
    _check_missing_fits(arr, categories, feature_names, name, collective)
    return arr, categories


def _check_missing_fits(arr, categories, feature_names, name, collective):
    """A feature with ``MAX_CATEGORIES`` categories fills every uint16 symbol with a code:
    its missing values would have no bin (on any rank)."""
    full = [f for f, labels in enumerate(categories)
            if labels is not None and len(labels) == MAX_CATEGORIES]
    if not full:
        return
    if isinstance(arr, SparseMatrix):  # an absent entry is a missing value
        stored = arr.stored_per_feature()
        local = np.array([stored[f] < arr.shape[0] for f in full], dtype=np.uint8)
    else:
        local = np.array([np.isnan(arr[:, f]).any() for f in full], dtype=np.uint8)
    missing = collective.allreduce(local, "max")
    for f, has_missing in zip(full, missing):
        if has_missing:
            raise ValueError(
                f"{name} column {_column_name(feature_names, f)} has {MAX_CATEGORIES} categories "
                "and missing values; with every uint16 bin a category, missing values have no "
                f"bin: merge two categories or give it at most {MAX_CATEGORIES - 1} categories")


def merge_categories(per_rank, order, feature_names):
    """Every rank's categories, merged: the labels seen anywhere, in the order of the
    pandas dtype (the same on every rank), or increasing for integer codes."""
    merged = []
    for f, lists in enumerate(zip(*per_rank)):
        kinds = {c is None for c in lists}
        if len(kinds) > 1:
            raise ValueError(f"Inconsistent number of categories between the parts of the "
                             f"data: column {_column_name(feature_names, f)} is categorical in "
                             "some batches (or partitions) and numeric in others; give it the "
                             "same dtype in every one")
        if lists[0] is None:
            merged.append(None)
            continue
        seen = set().union(*lists)
        if f in order:
            if not seen <= set(order[f]):
                raise ValueError(f"column {_column_name(feature_names, f)} has categories "
                                 "that differ between partitions; give every partition the "
                                 "same pandas categorical dtype")
            merged.append([label for label in order[f] if label in seen])
        else:
            merged.append(sorted(seen))
    return merged


def encode_X(X, categories, name="X", shard=False):
    """Check ``X`` for prediction: float32, categorical columns as the model's codes.

    A category not seen at fit, like a missing value, becomes NaN (the missing direction).
    ``shard``: one rank's part of a distributed data set (it may have no rows).
    """
    frame = as_frame(X)
    cat_cols = category_columns(frame)
    arr = check_X(X if frame is None else frame, name=name, allow_category=True, shard=shard)
    names = feature_names_of(frame) if frame is not None else None
    if categories is None or len(categories) != arr.shape[1]:
        if cat_cols:
            f = cat_cols[0]
            raise ValueError(f"{name} column {_column_name(names, f)} has dtype 'category' but "
                             "the model has no categorical features; train on the same columns")
        return arr
    for f in cat_cols:
        if categories[f] is None:
            raise ValueError(f"{name} column {_column_name(names, f)} has dtype 'category' but "
                             "this feature was numeric when the model was trained")
    if isinstance(arr, SparseMatrix):
        return _encode_sparse(frame, arr, categories, cat_cols, names, name)
    arr = _writable_copy(arr, X)
    _encode(frame, arr, categories, cat_cols, names, name)
    return arr


def recode(arr, own, categories, numeric_columns=(), feature_names=None, name="X"):
    """``arr`` (a part of the data as ``fit_categories`` returned it: each categorical
    column holds codes into that part's own categories ``own``) with those columns
    holding codes into ``categories`` (the whole data's), matched by label as
    ``encode_X`` matches them: a category ``categories`` lacks becomes missing (a sparse
    entry dropped). ``numeric_columns``: the categorical columns that held numbers (not
    pandas ``category`` columns): numbers for string ``categories`` are their codes.
    ``arr`` itself is overwritten (a dense one); returns the re-coded matrix."""
    if categories is None:
        return arr
    own = own or [None] * len(categories)
    sparse = isinstance(arr, SparseMatrix)
    data = arr.data.copy() if sparse else arr
    for f, labels in enumerate(categories):
        if labels is None or not own[f]:
            continue  # numeric, or the part holds no category there (all missing)
        if f in numeric_columns and labels and all(isinstance(c, str) for c in labels):
            # numbers for string categories: codes of them, as ``encode_X`` reads them
            table = np.array([v if v < len(labels) else np.nan for v in own[f]] + [np.nan],
                             FLOAT)
        else:
            index = {label: i for i, label in enumerate(labels)}
            table = np.array([index.get(label, np.nan) for label in own[f]] + [np.nan], FLOAT)
        at = arr.indices == f if sparse else (slice(None), f)
        codes = data[at]
        data[at] = table[np.where(np.isnan(codes), -1, codes).astype(np.int64)]
    if not sparse:
        return data
    out = SparseMatrix(arr.indptr, arr.indices, data, arr.shape)
    missing = np.isnan(data)
    return out.keep_entries(~missing) if missing.any() else out


def _writable_copy(arr, X):
    """``arr`` (``check_X`` of ``X``), copied when it may be ``X``'s own memory: the codes
    are written into it, and the caller's array must not change (a C-ordered float32
    NumPy or CuPy ``X`` comes back from ``check_X`` as itself)."""
    if is_device_array(arr):
        same = is_device_array(X) and (arr.__cuda_array_interface__["data"][0]
                                       == X.__cuda_array_interface__["data"][0])
    else:
        same = arr is X or not arr.flags.owndata
    return arr.copy() if same else arr


def check_same_categorical(categories, categorical_features, X, feature_names):
    """For continued training: ``categorical_features`` (given again) must name the
    features the model treats as categorical (it keeps the categories it learned)."""
    frame = as_frame(X)
    n_features = len(categories) if categories is not None else np.shape(X)[1]
    mask = categorical_mask(categorical_features, n_features, feature_names,
                            category_columns(frame))
    model = np.array([c is not None for c in categories or [None] * n_features])
    if mask.shape != model.shape or (mask != model).any():
        raise ValueError(
            f"categorical_features selects features {np.flatnonzero(mask).tolist()}, but "
            f"init_model treats features {np.flatnonzero(model).tolist()} as categorical; "
            "continue with the same ones (or leave categorical_features out)")


def _encode(frame, arr, categories, cat_cols, feature_names, name):
    """Overwrite the categorical columns of ``arr`` with codes, matching by value.

    A GPU ``arr`` (CuPy, from ``check_X``) stays there: each categorical column is copied
    to the host, encoded as on the CPU, and its codes copied back (the other columns
    never move)."""
    on_device = is_device_array(arr)
    for f, labels in enumerate(categories):
        if labels is None:
            continue
        if on_device:
            import cupy

            host = np.ascontiguousarray(to_host(arr[:, f]))[:, None]
            _encode_column(frame, host, 0, f, labels, cat_cols, feature_names, name)
            arr[:, f] = cupy.asarray(host[:, 0])
        else:
            _encode_column(frame, arr, f, f, labels, cat_cols, feature_names, name)


def _column_entries(arr, features):
    """Stored entries of some columns of a ``SparseMatrix``: a dict from column to
    ``(rows, positions)`` (int64 each, in row order), from one sort of their entries."""
    wanted = np.zeros(arr.shape[1], dtype=bool)
    wanted[features] = True
    positions = np.flatnonzero(wanted[arr.indices])
    positions = positions[np.argsort(arr.indices[positions], kind="stable")]
    bounds = np.searchsorted(arr.indices[positions], np.append(features, arr.shape[1]))
    rows = arr.row_of_entries()
    out = {}
    for i, f in enumerate(features):
        at = positions[bounds[i]:bounds[i + 1]]
        out[int(f)] = (rows[at], at)
    return out


def _encode_sparse(frame, arr, categories, cat_cols, feature_names, name, entries=None):
    """A ``SparseMatrix`` whose categorical columns hold the codes of ``categories``
    (matched by value as ``_encode_column`` matches them): a category not seen at fit is
    missing, so its entry is dropped; a pandas ``category`` column's entries are its
    rows with a category (a sparse frame's category columns come without entries)."""
    features = [f for f, labels in enumerate(categories) if labels is not None]
    if entries is None:
        entries = _column_entries(arr, np.array(features, dtype=np.int64))
    columns = {}
    for f in features:
        if f in cat_cols:  # one dense column of codes, from the frame
            col = np.full((arr.shape[0], 1), np.nan, dtype=FLOAT)
            _encode_column(frame, col, 0, f, categories[f], cat_cols, feature_names, name)
            rows = np.flatnonzero(~np.isnan(col[:, 0]))
            columns[f] = (rows, col[rows, 0])
            continue
        rows, at = entries[f]
        col = arr.data[at][:, None].copy()
        _check_integer_codes(col[:, 0], _column_name(feature_names, f), name, rows)
        _encode_column(None, col, 0, f, categories[f], cat_cols, feature_names, name)
        ok = ~np.isnan(col[:, 0])
        columns[f] = (rows[ok], col[ok, 0])
    return arr.with_columns(columns)


def _encode_column(frame, arr, j, f, labels, cat_cols, feature_names, name):
    """Overwrite column ``j`` of host ``arr`` (feature ``f``) with its codes."""
    column = _column_name(feature_names, f)
    index = {label: i for i, label in enumerate(labels)}
    if f in cat_cols:
        col = frame.iloc[:, f]
        mapping = np.array([index.get(label, -1) for label in col.cat.categories.tolist()]
                           + [-1], dtype=np.int64)  # code -1 (missing) reads mapping[-1]
        codes = mapping[col.cat.codes.to_numpy()]
    else:
        values = arr[:, j]
        _check_integer_codes(values, column, name)
        numeric = {lab: i for lab, i in index.items() if not isinstance(lab, str)}
        keys = np.array(sorted(numeric), dtype=np.float64)
        codes = np.full(values.shape, -1, dtype=np.int64)
        if keys.size:
            at = np.minimum(np.searchsorted(keys, values), keys.size - 1)
            found = keys[at] == values  # NaN never equals
            codes[found] = np.array([numeric[k] for k in keys.tolist()])[at[found]]
        elif labels:  # numbers for string categories: codes of them, as XGBoost 3 reads
            ok = ~np.isnan(values) & (values < len(labels))  # them; others unseen (missing)
            codes[ok] = values[ok].astype(np.int64)
    arr[:, j] = np.where(codes >= 0, codes, np.nan).astype(FLOAT)



def check_same_categories(model_categories, categories, what):
    """For a model continued on rows encoded before the fit (a ``QuantileDMatrix``'s,
    whose codes are their bins): the rows' categories (per feature None or its category
    values, in code order) must be the model's, so that a code means the same category."""
    n = max(len(model_categories or []), len(categories or []))
    model = list(model_categories or [None] * n)
    rows = list(categories or [None] * n)
    for f, (a, b) in enumerate(zip(model, rows)):
        if (a is None) != (b is None) or (a is not None and list(a) != list(b)):
            raise ValueError(
                f"feature {f} has categories {None if b is None else list(b)!r} in the "
                f"QuantileDMatrix but {None if a is None else list(a)!r} in {what}; its "
                "codes would mean other categories: build the matrix from data with the "
                f"categories {what} was trained with")
