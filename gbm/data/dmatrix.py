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

import numpy as np

from . import binary_format
from .categorical import as_frame, category_columns
from .inputs import check_X, column_names, to_host
from .queries import qid_array
from .sparse import SparseMatrix, from_dense
from .uri import is_uri, read_uri

# XGBoost's feature type codes: "c" is categorical, the rest numeric.
_FEATURE_TYPES = ("q", "float", "int", "i", "c")


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


def _optional_array(value, dtype=np.float64):
    return None if value is None else np.asarray(value, dtype=dtype)


def _given(value, stored, name):
    """An argument, or where it is None what the file read held (``stored``)."""
    return stored.get(name) if value is None else value


class DMatrix:
    """Features and what goes with them, as ``xgboost.DMatrix``.

    Parameters
    ----------
    data : array-like (n_samples, n_features): NumPy, pandas, SciPy sparse; or a file:
        a path or URI, ``str`` or ``os.PathLike`` (``"train.txt?format=libsvm"``,
        ``"data.csv?format=csv&label_column=0"``, a file ``save_binary`` wrote; see
        ``gbm.data.uri``). The arguments given override what the file holds.
    label : array-like (n_samples,) or (n_samples, n_targets), optional
    weight : array-like (n_samples,), or (n_groups,) for ranking, optional
    base_margin : array-like (n_samples,) or (n_samples, n_groups), optional
        Each row's starting margin, used instead of the model's base score (offsets,
        e.g. log exposure for ``count:poisson``, or another model's margins).
    missing : float, optional
        A value that means missing (besides NaN), e.g. ``-999``.
    feature_names : list of str, optional
    feature_types : list of str, optional
        Per feature, XGBoost's codes: ``"c"`` categorical, ``"q"``/``"float"``/``"int"``/
        ``"i"`` numeric. Categorical features hold non-negative integer codes (or are
        pandas ``category`` columns, which always are categorical).
    group : array-like of int (n_groups,), optional
        Sizes of consecutive query groups (ranking).
    qid : array-like of int (n_samples,), optional
        Instead of ``group``: each row's query id, sorted.
    label_lower_bound, label_upper_bound : array-like (n_samples,), optional
        Each row's survival time interval for ``survival:aft`` (``upper = inf``:
        right-censored; ``lower = 0``: left-censored; equal: an exact time), as XGBoost's;
        checked where a fit reads them (``gbm.data.intervals``).
    nthread, silent, enable_categorical
        Accepted for XGBoost compatibility; they change nothing.
    """

    def __init__(self, data, label=None, *, weight=None, base_margin=None, missing=None,
                 silent=False, feature_names=None, feature_types=None, nthread=None,
                 group=None, qid=None, enable_categorical=False, label_lower_bound=None,
                 label_upper_bound=None):
        if isinstance(data, DMatrix):
            raise TypeError("data is already a DMatrix")
        if isinstance(data, bytes):
            raise TypeError("data is bytes; a file is named by a str or an os.PathLike")
        stored = {}
        if is_uri(data):
            stored = read_uri(data)
            data = stored.pop("data")
            if group is None and qid is None:
                group, qid = stored["group"], stored["qid"]
        self.data = replace_missing(data, missing, name="data")
        self.missing = missing
        shape = getattr(self.data, "shape", None)
        if shape is None or len(shape) != 2:
            self.data = np.asarray(self.data)
            shape = self.data.shape
        self._shape = tuple(int(s) for s in shape) if len(shape) == 2 else None
        self.label = _optional_array(_given(label, stored, "label"))
        self.weight = _optional_array(_given(weight, stored, "weight"))
        self.base_margin = _optional_array(_given(base_margin, stored, "base_margin"))
        self.group = _optional_array(group, np.int64)
        self.qid = None if qid is None else qid_array(qid)
        self.label_lower_bound = _optional_array(
            _given(label_lower_bound, stored, "label_lower_bound"))
        self.label_upper_bound = _optional_array(
            _given(label_upper_bound, stored, "label_upper_bound"))
        feature_names = _given(feature_names, stored, "feature_names")
        feature_types = _given(feature_types, stored, "feature_types")
        if feature_names is None:
            feature_names = column_names(self.data)
        self.feature_names = None if feature_names is None else list(feature_names)
        if feature_types is not None:
            feature_types = list(feature_types)
            bad = [t for t in feature_types if t not in _FEATURE_TYPES]
            if bad:
                raise ValueError(f"feature_types holds {bad[0]!r}; expected XGBoost's codes "
                                 f"{list(_FEATURE_TYPES)}")
            if self._shape is not None and len(feature_types) != self._shape[1]:
                raise ValueError(f"feature_types has {len(feature_types)} entries but data has "
                                 f"{self._shape[1]} columns")
        self.feature_types = feature_types
        if self.feature_names is not None and self._shape is not None \
                and len(self.feature_names) != self._shape[1]:
            raise ValueError(f"feature_names has {len(self.feature_names)} names but data has "
                             f"{self._shape[1]} columns")

    @classmethod
    def _of_labels(cls, label, weight=None, base_margin=None):
        """A DMatrix of labels only (no features), what a user's ``(predt, dmatrix)``
        objective or metric reads."""
        d = cls.__new__(cls)
        d.data, d.missing, d._shape = None, None, (len(label), 0)
        d.label, d.weight = _optional_array(label), _optional_array(weight)
        d.base_margin = _optional_array(base_margin)
        d.group = d.qid = d.feature_names = d.feature_types = None
        d.label_lower_bound = d.label_upper_bound = None
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

    def get_label(self):
        """Labels as float32, XGBoost's ``get_label`` (empty when none)."""
        return np.zeros(0, np.float32) if self.label is None else self.label.astype(np.float32)

    def get_weight(self):
        """Weights as float32 (empty when none, as XGBoost)."""
        return np.zeros(0, np.float32) if self.weight is None else self.weight.astype(np.float32)

    def get_base_margin(self):
        return (np.zeros(0, np.float32) if self.base_margin is None
                else self.base_margin.astype(np.float32))

    def get_group(self):
        return np.zeros(0, np.int64) if self.group is None else self.group

    def set_label(self, label):
        self.label = _optional_array(label)

    def set_weight(self, weight):
        self.weight = _optional_array(weight)

    def set_base_margin(self, margin):
        self.base_margin = _optional_array(margin)

    def set_group(self, group):
        self.group = _optional_array(group, np.int64)

    # XGBoost's float fields (set_float_info / get_float_info)
    _FLOAT_FIELDS = ("label", "weight", "base_margin", "label_lower_bound", "label_upper_bound")

    def set_float_info(self, field, data):
        """Set a float field by name, as XGBoost's ``set_float_info``: ``"label"``,
        ``"weight"``, ``"base_margin"``, ``"label_lower_bound"``, ``"label_upper_bound"``."""
        self._check_float_field(field)
        setattr(self, field, _optional_array(data))

    def get_float_info(self, field):
        """A float field by name as float32 (empty when not set), as XGBoost's."""
        self._check_float_field(field)
        value = getattr(self, field)
        return np.zeros(0, np.float32) if value is None else value.astype(np.float32)

    def _check_float_field(self, field):
        if field not in self._FLOAT_FIELDS:
            raise ValueError(f"unknown float field {field!r}; the fields are "
                             f"{list(self._FLOAT_FIELDS)}")

    def set_info(self, *, label=None, weight=None, base_margin=None, group=None, qid=None,
                 feature_names=None, feature_types=None, label_lower_bound=None,
                 label_upper_bound=None):
        """Set any of the fields given (XGBoost's ``set_info``)."""
        for name, value in (("label", label), ("weight", weight),
                            ("base_margin", base_margin),
                            ("label_lower_bound", label_lower_bound),
                            ("label_upper_bound", label_upper_bound)):
            if value is not None:
                setattr(self, name, _optional_array(value))
        for name, value in (("group", group), ("qid", qid)):
            if value is not None:
                setattr(self, name, _optional_array(value, np.int64))
        if feature_names is not None:
            self.feature_names = list(feature_names)
        if feature_types is not None:
            self.feature_types = list(feature_types)

    def _features(self, what):
        """The features as a fit reads them (``check_X``: a float32 ndarray or a
        ``SparseMatrix``, on the host)."""
        if self.data is None:
            raise ValueError(f"{what}: this DMatrix holds labels only, no features")
        frame = as_frame(self.data)
        cats = category_columns(frame)
        if cats:
            raise ValueError(f"{what}: column {frame.columns[cats[0]]!r} is a pandas category "
                             "column; give its integer codes with feature_types 'c' instead")
        if self._shape is not None and 0 in self._shape:  # no entries (check_X refuses it)
            return SparseMatrix(np.zeros(self._shape[0] + 1, np.int64), np.zeros(0, np.int32),
                                np.zeros(0, np.float32), self._shape)
        return to_host(check_X(self.data, name="data", shard=True))

    def get_data(self):
        """The features present, as a SciPy CSR matrix of float32 (XGBoost's
        ``get_data``): missing entries are absent, stored zeros kept."""
        import scipy.sparse as sp

        X = self._features("get_data")
        if isinstance(X, np.ndarray):
            X = from_dense(X)
        return sp.csr_matrix((X.data, X.indices, X.indptr), shape=X.shape)

    def save_binary(self, fname, silent=True):
        """Write the DMatrix to ``fname`` (str or os.PathLike) in gbm's binary format,
        which ``DMatrix(fname)`` reads back (``gbm.data.binary_format``): the features
        as a fit reads them (float32, missing entries absent), labels, weights, base
        margins, query groups, interval labels, feature names and types. ``silent`` is
        accepted for XGBoost compatibility."""
        binary_format.write(fname, self._features("save_binary"),
                            {name: getattr(self, name) for name in binary_format.INFO_FIELDS},
                            self.feature_names, self.feature_types)

    def __repr__(self):
        return f"gbm.DMatrix({self._shape[0]} rows x {self._shape[1]} features)"

