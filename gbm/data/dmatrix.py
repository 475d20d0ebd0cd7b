"""``DMatrix``: XGBoost's data container (features with their labels, weights, base
margins and query groups), for scripts written against ``xgboost.train``.

gbm's own functions take arrays (``train(params, X, y, ...)``); a ``DMatrix`` only holds
them together. Its data is checked where it is used (``gbm.data``), as any ``X`` is.
``missing`` is applied here: entries equal to it become NaN. A file path or URI as the
data (``"train.txt?format=libsvm"``, a file ``save_binary`` wrote) is read here
(``gbm.data.uri``).
"""
import math
import numbers
import warnings

import numpy as np

from . import binary_format
from .batch_concat import concatenate_batches, is_data_iter
from .categorical import as_frame, category_columns
from .category_container import Categories, recoded
from .cut_layout import cut_layout
from .feature_info import check_feature_names, check_feature_types, frame_feature_types
from .frames import is_polars, polars_to_pandas
from .inputs import check_X, first_infinity, to_host
from .meta_info import MetaInfo
from .rows import query_runs, take_rows
from .sparse import SparseMatrix, from_dense, is_scipy_sparse
from .uri import is_uri, read_uri

_INFO = ("label", "weight", "base_margin", "label_lower_bound", "label_upper_bound",
         "feature_weights")


def replace_missing(X, missing, name="X"):
    """``X`` with every entry equal to ``missing`` set to NaN (a copy when any is changed).

    ``missing`` None or NaN changes nothing (NaN is always missing). NumPy arrays and
    lists, pandas DataFrames (numeric columns; ``category`` columns keep their codes) and
    SciPy sparse matrices (stored entries) are handled.
    """
    if missing is None:
        return X
    if isinstance(missing, bool) or not isinstance(missing, numbers.Real):
        raise TypeError(f"missing must be a real number or None, got {missing!r}")
    if math.isnan(missing):
        return X
    if hasattr(X, "columns") and hasattr(X, "dtypes"):  # pandas DataFrame
        out = X.copy()
        for column in X.columns:
            values = X[column]
            if values.dtype.kind in "biuf":
                out[column] = values.astype(np.float64).mask(values == missing)
        return out
    if hasattr(X, "tocsr") and hasattr(X, "data"):  # SciPy sparse
        out = X.astype(np.float64, copy=True)
        out.data[out.data == missing] = np.nan
        return out
    if hasattr(X, "__cuda_array_interface__"):
        raise TypeError(f"{name}: missing={missing} is not supported for GPU arrays; set "
                        "those entries to NaN")
    arr = np.asarray(X)
    if arr.dtype.kind not in "biuf":
        return X  # gbm.data reports the dtype
    hit = arr == missing
    if not hit.any():
        return X
    return np.where(hit, np.nan, arr.astype(np.float64))


class DMatrix(MetaInfo):
    """Features and what goes with them, as ``xgboost.DMatrix``.

    Parameters
    ----------
    data : array-like (n_samples, n_features): NumPy, pandas (a Series is one column),
        SciPy sparse, Arrow; or a file: a path or URI, ``str`` or ``os.PathLike``
        (``"train.txt?format=libsvm"``, ``"data.csv?format=csv&label_column=0"``, a file
        ``save_binary`` wrote; see ``gbm.data.uri``; the arguments given override what the
        file holds); or a ``gbm.DataIter``, whose batches (with their labels, weights,
        ...) are read once and joined in memory (XGBoost 3 builds an external-memory
        DMatrix of them; for data larger than memory use ``ExtMemQuantileDMatrix``).
    label : array-like (n_samples,) or (n_samples, n_targets), optional
    weight : array-like (n_samples,), or (n_groups,) for ranking, optional
    base_margin : array-like (n_samples,) or (n_samples, n_groups), optional
        Each row's starting margin, used instead of the model's base score (offsets,
        e.g. log exposure for ``count:poisson``, or another model's margins).
    missing : float, optional
        A value that means missing (besides NaN), e.g. ``-999``.
    feature_names : list of str, optional
        Unique, without ``[``, ``]`` or ``<``. A DataFrame's column names by default.
    feature_types : list of str, or a ``Categories``, optional
        Per feature, XGBoost's codes: ``"c"`` categorical, ``"q"``/``"float"``/``"int"``/
        ``"i"`` numeric. Categorical features hold non-negative integer codes (or are
        pandas ``category`` columns, which always are categorical). A DataFrame's dtypes
        give them by default (``gbm.data.feature_info``). A ``Categories`` (another
        matrix's ``get_categories()``) re-codes the category columns to its categories.
    group : array-like of int (n_groups,), optional
        Sizes of consecutive query groups (ranking).
    qid : array-like of int (n_samples,), optional
        Instead of ``group``: each row's query id, sorted.
    label_lower_bound, label_upper_bound : array-like (n_samples,), optional
        Each row's survival time interval for ``survival:aft`` (``upper = inf``:
        right-censored; ``lower = 0``: left-censored; equal: an exact time), as XGBoost's;
        checked where a fit reads them (``gbm.data.intervals``).
    feature_weights : array-like (n_features,), optional
        Each feature's weight (finite, >= 0) in column sampling, as XGBoost's.
    data_split_mode : int
        XGBoost's ``DataSplitMode``: only ``ROW`` (0), rows on each worker.
    nthread, silent, enable_categorical
        Accepted for XGBoost compatibility; they change nothing.
    """

    def __init__(self, data, label=None, *, weight=None, base_margin=None, missing=None,
                 silent=False, feature_names=None, feature_types=None, nthread=None,
                 group=None, qid=None, label_lower_bound=None, label_upper_bound=None,
                 feature_weights=None, enable_categorical=False, data_split_mode=0):
        _check_split_mode(data_split_mode)
        if isinstance(feature_types, Categories):  # a reference encoding (XGBoost 3.1)
            data, feature_types = recoded(data, feature_types)
        stored = {}
        if is_data_iter(data):
            stored = concatenate_batches(data)
        elif isinstance(data, (DMatrix, bytes)) or not is_uri(data):
            data = checked_form(data)
        else:
            stored = read_uri(data)
        if stored:
            data = stored.pop("data")
            if group is None and qid is None:
                group, qid = stored.get("group"), stored.get("qid")
        self.data = replace_missing(data, missing, name="data")
        self.missing = missing
        self._shape = tuple(int(s) for s in self.data.shape)
        given = dict(label=label, weight=weight, base_margin=base_margin,
                     label_lower_bound=label_lower_bound, label_upper_bound=label_upper_bound)
        for field, value in given.items():
            self._set_float(field, stored.get(field) if value is None else value)
        self.group = self.qid = None
        self._set_groups(group, qid)
        self._set_float("feature_weights", feature_weights)
        frame = as_frame(self.data)
        if feature_names is None:
            feature_names = stored.get("feature_names")
        if feature_names is None and frame is not None:
            feature_names = [str(c) for c in frame.columns]
        if feature_types is None:
            feature_types = stored.get("feature_types")
        if feature_types is None and frame is not None:
            feature_types = frame_feature_types(frame)
        self.feature_names, self.feature_types = feature_names, feature_types

    @property
    def feature_names(self):
        """Feature names (list of str) or None; set to a list of unique names, one per
        feature, without ``[``, ``]`` or ``<`` (None clears them)."""
        return self._feature_names

    @feature_names.setter
    def feature_names(self, names):
        self._feature_names = check_feature_names(names, self._width())

    @property
    def feature_types(self):
        """XGBoost's feature type codes (list of str) or None; settable as the names."""
        return self._feature_types

    @feature_types.setter
    def feature_types(self, types):
        self._feature_types = check_feature_types(types, self._width())

    def _width(self):
        shape = getattr(self, "_shape", None)
        return None if shape is None else shape[1]

    @classmethod
    def _of_labels(cls, label, weight=None, base_margin=None):
        """A DMatrix of labels only (no features), what a user's ``(predt, dmatrix)``
        objective or metric reads."""
        d = cls.__new__(cls)
        d.data, d.missing, d._shape = None, None, (len(label), 0)
        d.label = None if label is None else np.asarray(label, np.float64)
        d.weight = None if weight is None else np.asarray(weight, np.float64)
        d.base_margin = None if base_margin is None else np.asarray(base_margin, np.float64)
        d.group = d.qid = d._feature_names = d._feature_types = None
        d.label_lower_bound = d.label_upper_bound = d.feature_weights = None
        return d

    @classmethod
    def _of_intervals(cls, bounds, weight=None, base_margin=None):
        """A DMatrix of interval labels only, ``bounds`` (n, 2) [lower, upper] as its
        ``label_lower_bound`` / ``label_upper_bound`` (what a user's function reads for
        ``survival:aft``, as in XGBoost; no ``label``)."""
        d = cls._of_labels(np.zeros(len(bounds)), weight, base_margin)
        d.label = None
        d.label_lower_bound = np.asarray(bounds, np.float64)[:, 0]
        d.label_upper_bound = np.asarray(bounds, np.float64)[:, 1]
        return d

    def categorical_features(self):
        """Indices of the features ``feature_types`` marks ``"c"``, or None."""
        if self.feature_types is None:
            return None
        found = [i for i, t in enumerate(self.feature_types) if t == "c"]
        return found or None

    def num_row(self):
        return self._shape[0]

    def num_col(self):
        return self._shape[1]

    def num_nonmissing(self):
        """Entries that are not missing (XGBoost's ``num_nonmissing``): a sparse matrix's
        stored entries, a dense one's non-NaN values."""
        return int(self.get_data().nnz)

    def _features(self, what, categories=False):
        """The features as a fit reads them (``check_X``: a float32 ndarray or a
        ``SparseMatrix``, on the host); ``categories``: a pandas ``category`` column as
        its codes (position among the column's categories), else refused."""
        if self.data is None:
            raise ValueError(f"{what}: this DMatrix holds labels only, no features")
        frame = as_frame(self.data)
        cats = category_columns(frame)
        if cats and not categories:
            raise ValueError(f"{what}: column {frame.columns[cats[0]]!r} is a pandas category "
                             "column; give its integer codes with feature_types 'c' instead")
        if 0 in self._shape:  # no entries (check_X refuses it)
            return SparseMatrix(np.zeros(self._shape[0] + 1, np.int64), np.zeros(0, np.int32),
                                np.zeros(0, np.float32), self._shape)
        X = to_host(check_X(self.data if frame is None else frame, name="data", shard=True,
                            allow_category=bool(cats)))
        if cats:
            X = _with_codes(X, frame, cats)
        return X

    def get_data(self):
        """The features present, as a SciPy CSR matrix of float32 (XGBoost's
        ``get_data``): missing entries are absent, stored zeros kept; a pandas
        ``category`` column as its codes (position among the column's categories)."""
        import scipy.sparse as sp

        X = self._features("get_data", categories=True)
        if isinstance(X, np.ndarray):
            X = from_dense(X)
        return sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)

    def get_categories(self, export_to_arrow=False):
        """The categories of the categorical features, as XGBoost 3's ``get_categories``: a
        ``Categories`` whose ``to_arrow()`` (with ``export_to_arrow=True``) lists
        ``(feature name, pyarrow array of the categories, or None for a numeric feature)``.
        A pandas ``category`` column's categories are its dtype's, missing ones left out."""
        frame = as_frame(self.data)
        per_feature = [None] * self.num_col()
        for f in category_columns(frame):
            per_feature[f] = list(frame.iloc[:, f].cat.categories)
        return Categories(self.feature_names or [str(f) for f in range(self.num_col())],
                          per_feature, export_to_arrow)

    def get_quantile_cut(self):
        """The bin edges of the last fit on this DMatrix, in XGBoost's layout
        (``gbm.data.cut_layout``): ``(indptr uint64, values float32)``, a numeric
        feature's least value, its cuts, a value above its largest; a categorical feature's
        codes. As in XGBoost, a DMatrix has edges once a fit has binned it."""
        edges = getattr(self, "fit_edges", None)
        if edges is None:
            raise ValueError("The quantile cut hasn't been generated yet: a DMatrix gets its "
                             "bin edges when a fit bins it (a QuantileDMatrix when it is "
                             "made); train on it first")
        cuts, categories = edges
        X = self._features("get_quantile_cut", categories=True)
        if not isinstance(X, np.ndarray):
            X = X.dense_rows(0, X.shape[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a feature without values
            low, high = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
        categorical = [c is not None for c in categories or [None] * len(cuts)]
        return cut_layout(cuts, [len(c) + 1 for c in cuts], categorical, low, high)

    def slice(self, rindex, allow_groups=False):
        """A DMatrix of the rows ``rindex`` (int indices, in their order), with their
        labels, weights, base margins and bounds, and the same feature names, types and
        feature weights (XGBoost's ``slice``). Rows of query groups need
        ``allow_groups=True`` and must be whole groups, each together (their weights go
        with them); XGBoost would drop the groups."""
        rows = _row_indices(rindex, self.num_row())
        group_rows = None
        if self.group is not None or self.qid is not None:
            if not allow_groups:
                raise ValueError("slice does not support group structure: this DMatrix has "
                                 "query groups; pass allow_groups=True to keep whole groups")
            ptr = self._group_ptr()
            groups, sizes = query_runs(rows, ptr, "rindex")
            group_rows = (groups, sizes, ptr.shape[0] - 1)
        out = DMatrix.__new__(DMatrix)
        out.data, out.missing = take_rows(self.data, rows), self.missing
        out._shape = (rows.shape[0], self._shape[1])
        out.group = out.qid = None
        for field in _INFO:
            setattr(out, field, None)
        out.set_info(**self._info_rows(rows, group_rows))
        out.feature_weights = self.feature_weights
        out._feature_names, out._feature_types = self.feature_names, self.feature_types
        return out

    def data_split_mode(self):
        """XGBoost's ``DataSplitMode``: always ROW (0), each worker holding rows."""
        return 0

    def save_binary(self, fname, silent=True):
        """Write the DMatrix to ``fname`` (str or os.PathLike) in gbm's binary format,
        which ``DMatrix(fname)`` reads back (``gbm.data.binary_format``): the features
        as a fit reads them (float32, missing entries absent), labels, weights, base
        margins, query groups, interval labels, feature names and types, and a pandas
        ``category`` column's categories (read back as such a column). ``silent`` is
        accepted for XGBoost compatibility."""
        binary_format.write(fname, self._features("save_binary", categories=True),
                            {name: getattr(self, name) for name in binary_format.INFO_FIELDS},
                            self.feature_names, self.feature_types,
                            self.get_categories().categories)

    def __repr__(self):
        return f"gbm.DMatrix({self._shape[0]} rows x {self._shape[1]} features)"


def _check_split_mode(mode):
    if mode != 0:
        raise ValueError(f"data_split_mode={mode!r}: gbm's data is split by rows only "
                         "(DataSplitMode.ROW); column-split (federated) data is not supported")


def _row_indices(rindex, n_rows):
    rows = np.asarray(rindex)
    if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise TypeError(f"rindex must be a 1-d sequence of row indices, got "
                        f"{rows.dtype} of shape {rows.shape}")
    rows = rows.astype(np.int64)
    bad = (rows < 0) | (rows >= n_rows)
    if bad.any():
        raise IndexError(f"rindex holds {int(rows[bad][0])}; row indices are in [0, {n_rows})")
    return rows


def _with_codes(X, frame, cats):
    """``X`` (``check_X``'s, NaN where the category columns ``cats`` are) with those
    columns' codes (NaN: missing)."""
    columns = {}
    for f in cats:
        codes = frame.iloc[:, f].cat.codes.to_numpy()
        present = np.flatnonzero(codes >= 0)
        columns[f] = (present, codes[present].astype(np.float32))
    if isinstance(X, SparseMatrix):
        return X.with_columns(columns)
    X = X.copy() if not X.flags.writeable else X
    for f, (present, values) in columns.items():
        X[present, f] = values
    return X


_SPARSE_FORMATS = ("csr", "csc", "coo")


def checked_form(data):
    """``data`` where its form is wrong whatever the fit, refused at once (XGBoost does so
    when a DMatrix is made): not 2-d, strings, complex numbers, infinity, an unknown
    type. A list becomes an array, a pandas Series a one-column frame, a SciPy sparse
    matrix of another format CSR (with a warning: a copy)."""
    if isinstance(data, DMatrix):
        raise TypeError("data is already a DMatrix")
    if isinstance(data, bytes):
        raise TypeError("data is bytes; a file is named by a str or an os.PathLike")
    module = type(data).__module__
    if is_polars(data):
        return polars_to_pandas(data)
    if module.startswith("pandas") and getattr(data, "ndim", 0) == 1:
        return data.to_frame()  # a Series: one column
    if hasattr(data, "columns") or hasattr(data, "column_names"):  # a frame or a table
        return data
    if is_scipy_sparse(data):
        if getattr(data, "format", "csr") not in _SPARSE_FORMATS:
            warnings.warn(f"data is a SciPy {type(data).__name__}; it is converted to CSR (a "
                          "copy): give a csr_matrix to avoid it", UserWarning, stacklevel=3)
            data = data.tocsr()
        if np.dtype(data.dtype).kind == "f" and np.isinf(data.data).any():
            coo = data.tocoo()
            at = int(np.flatnonzero(np.isinf(coo.data))[0])
            _infinity_error(coo.row[at], coo.col[at])
        return data
    if not (hasattr(data, "shape") and hasattr(data, "dtype")) \
            and not isinstance(data, (list, tuple)):
        return checked_form(_as_csr(data, f"{module}.{type(data).__name__}"))
    arr = data if hasattr(data, "dtype") else np.asarray(data)
    if len(arr.shape) != 2:
        raise ValueError(f"data must be 2-dimensional (n_samples, n_features), got "
                         f"{len(arr.shape)} dimension(s) with shape {tuple(arr.shape)}")
    kind = np.dtype(arr.dtype).kind
    if kind in ("U", "S", "V"):
        raise ValueError(f"data has dtype {arr.dtype} (strings or raw bytes); only numbers "
                         "are supported: encode strings as numbers")
    if kind == "c":
        raise ValueError("Complex data not supported: data has complex values")
    if kind == "f" and isinstance(arr, np.ndarray):
        inf = first_infinity(arr)
        if inf is not None:
            _infinity_error(*inf)
    return arr


def _as_csr(data, kind):
    """An object of a type gbm does not know, read as SciPy reads it into a CSR matrix
    (with a warning, as XGBoost tries the same), or a TypeError."""
    import scipy.sparse as sp

    warnings.warn(f"data has an unknown type {kind}: trying to read it as a SciPy "
                  "csr_matrix", UserWarning, stacklevel=4)
    try:
        return sp.csr_matrix(data)
    except Exception:
        raise TypeError(f"data has type {kind}, which a DMatrix cannot read: give a NumPy "
                        "array, a pandas or Arrow frame, a SciPy sparse matrix, a file path "
                        "or a gbm.DataIter") from None


def _infinity_error(row, col):
    raise ValueError(f"Input data contains `inf` at data[{int(row)}, {int(col)}]; use NaN for "
                     "missing values")
