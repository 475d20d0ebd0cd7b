"""What a ``DMatrix`` holds beside its features, XGBoost's "meta info": labels, weights,
base margins, query groups, survival bounds and per-feature weights, set and read by
name (``set_float_info`` / ``get_uint_info`` ...) or by ``set_info``.

Fields are stored as given (float64 or int64 arrays, their shape kept); what only a fit
can check (a weight per row or per query group, group sizes summing to the rows) is
checked where the fit reads them (``gbm.data.inputs``, ``gbm.data.queries``). What is
wrong whatever the fit (a label that is NaN, a base margin of three dimensions, a
negative feature weight) is refused when it is set.
"""
import numpy as np

from .queries import qid_array

FLOAT_FIELDS = ("label", "weight", "base_margin", "label_lower_bound", "label_upper_bound",
                "feature_weights")
# set_uint_info's names: group (sizes) or qid (per row); get_uint_info reads group_ptr
UINT_SET_FIELDS = ("group", "qid")
UINT_GET_FIELDS = ("group_ptr",)


def _float_array(value, field):
    """``value`` as a float64 array, None for None or an empty array (a field cleared)."""
    if value is None:
        return None
    try:
        arr = np.asarray(_numpy(value), dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{field} must hold numbers: {e}") from None
    if arr.size == 0 and field in ("feature_weights", "base_margin", "weight"):
        return None
    if arr.ndim > 2:
        raise ValueError(f"{field} must be 1- or 2-dimensional, got shape {arr.shape}")
    if arr.ndim == 2 and arr.shape[1] == 1:  # one column: a vector, as XGBoost reads it
        arr = arr[:, 0]
    return arr


def _numpy(value):
    """A pandas (or polars, Arrow) column or frame as NumPy, missing values NaN."""
    if not hasattr(value, "to_numpy"):
        return value
    try:
        return value.to_numpy(dtype=np.float64, na_value=np.nan)
    except TypeError:  # not pandas: no na_value
        return value.to_numpy()


def _int_array(value, field):
    if value is None:
        return None
    arr = np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(f"{field} must be 1-dimensional, got shape {arr.shape}")
    if arr.dtype.kind == "f" and np.isfinite(arr).all() and (arr == np.floor(arr)).all():
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iub":
        raise ValueError(f"{field} must hold integers, got dtype {arr.dtype}")
    return arr.astype(np.int64)


def _check_label(label):
    """NaN is never a label (infinity is, as an interval's open end in gbm's two-column
    survival labels; the fit checks the rest)."""
    bad = np.isnan(label)
    if bad.any():
        at = np.unravel_index(int(np.flatnonzero(bad.reshape(-1))[0]), label.shape)
        raise ValueError(f"Label contains NaN: label[{', '.join(map(str, at))}] is NaN; "
                         "labels must be numbers")


class MetaInfo:
    """The fields of a ``DMatrix`` besides its features (a base class of ``DMatrix``).
    Attributes: ``label``, ``weight``, ``base_margin``, ``label_lower_bound``,
    ``label_upper_bound``, ``feature_weights`` (float64 arrays or None), ``group`` (sizes)
    and ``qid`` (int64 arrays or None: one of the two)."""

    def _set_float(self, field, value):
        arr = _float_array(value, field)
        if arr is not None and field == "label":
            _check_label(arr)
        if arr is not None and field == "feature_weights":
            arr = self._check_feature_weights(arr)
        setattr(self, field, arr)

    def _check_feature_weights(self, fw):
        if fw.ndim != 1:
            raise ValueError(f"feature_weights must be 1-dimensional, got shape {fw.shape}")
        n = self.num_col()
        if fw.shape[0] != n:
            raise ValueError(f"feature_weights has {fw.shape[0]} entries but the data has {n} "
                             "features; give one weight per feature")
        bad = ~np.isfinite(fw) | (fw < 0)
        if bad.any():
            f = int(np.flatnonzero(bad)[0])
            raise ValueError(f"feature_weights[{f}] is {fw[f]}; feature weights must be finite "
                             "and >= 0")
        return fw

    def _set_groups(self, group=None, qid=None):
        """Query groups as sizes (``group``) or ids per row (``qid``, int64, or uint64 for
        ids of 2**63 or more): one replaces the other, as in XGBoost (both describe the
        same row offsets)."""
        if group is not None:
            self.group, self.qid = _int_array(group, "group"), None
        elif qid is not None:
            self.group, self.qid = None, qid_array(qid)

    def set_float_info(self, field, data):
        """Set a float field by name, as XGBoost's ``set_float_info``: ``"label"``,
        ``"weight"``, ``"base_margin"``, ``"label_lower_bound"``, ``"label_upper_bound"``
        or ``"feature_weights"`` (None or an empty array clears it)."""
        if field not in FLOAT_FIELDS:
            raise ValueError(f"unknown float field {field!r}; the fields are "
                             f"{list(FLOAT_FIELDS)}")
        self._set_float(field, data)

    def set_float_info_npy2d(self, field, data):
        """XGBoost's alias of ``set_float_info`` for 2-d arrays."""
        self.set_float_info(field, data)

    def get_float_info(self, field):
        """A float field by name as float32 (empty when not set), as XGBoost's."""
        if field not in FLOAT_FIELDS:
            raise ValueError(f"unknown float field {field!r}; the fields are "
                             f"{list(FLOAT_FIELDS)}")
        value = getattr(self, field)
        return np.zeros(0, np.float32) if value is None else value.astype(np.float32)

    def set_uint_info(self, field, data):
        """Set query groups by name, as XGBoost's ``set_uint_info``: ``"group"`` (sizes of
        consecutive groups) or ``"qid"`` (a sorted query id per row)."""
        if field not in UINT_SET_FIELDS:
            raise ValueError(f"unknown uint field {field!r} to set; the fields are "
                             f"{list(UINT_SET_FIELDS)}")
        self._set_groups(**{field: data})

    def get_uint_info(self, field):
        """``"group_ptr"``: uint32 (n_groups + 1,), the first row of each query group and
        the row count (empty when there are no groups), as XGBoost's."""
        if field == "qid":
            raise ValueError("get_uint_info('qid') is not supported (as in XGBoost); read "
                             "the query groups' row offsets with get_uint_info('group_ptr')")
        if field not in UINT_GET_FIELDS:
            raise ValueError(f"unknown uint field {field!r} to get; the fields are "
                             f"{list(UINT_GET_FIELDS)}")
        return self._group_ptr().astype(np.uint32)

    def _group_ptr(self):
        """int64: each group's first row then the end (empty without groups), unchecked."""
        if self.group is not None:
            return np.concatenate(([0], np.cumsum(self.group))).astype(np.int64)
        if self.qid is not None:
            ids = self.qid
            starts = np.flatnonzero(ids[1:] != ids[:-1]) + 1
            return np.concatenate(([0], starts, [ids.shape[0]])).astype(np.int64)
        return np.zeros(0, np.int64)

    def get_label(self):
        """Labels as float32, XGBoost's ``get_label`` (empty when none)."""
        return self.get_float_info("label")

    def get_weight(self):
        """Weights as float32 (empty when none, as XGBoost)."""
        return self.get_float_info("weight")

    def get_base_margin(self):
        """Base margins as float32, in the shape they were given (empty when none)."""
        return self.get_float_info("base_margin")

    def get_group(self):
        """Sizes of the query groups (empty when none), as XGBoost's ``get_group``."""
        return np.diff(self._group_ptr())

    def set_label(self, label):
        self._set_float("label", label)

    def set_weight(self, weight):
        self._set_float("weight", weight)

    def set_base_margin(self, margin):
        self._set_float("base_margin", margin)

    def set_group(self, group):
        self._set_groups(group=group)

    def set_info(self, *, label=None, weight=None, base_margin=None, group=None, qid=None,
                 label_lower_bound=None, label_upper_bound=None, feature_names=None,
                 feature_types=None, feature_weights=None):
        """Set any of the fields given (XGBoost's ``set_info``); those left None stay."""
        for field, value in (("label", label), ("weight", weight),
                             ("base_margin", base_margin),
                             ("label_lower_bound", label_lower_bound),
                             ("label_upper_bound", label_upper_bound),
                             ("feature_weights", feature_weights)):
            if value is not None:
                self._set_float(field, value)
        self._set_groups(group, qid)
        if feature_names is not None:
            self.feature_names = feature_names
        if feature_types is not None:
            self.feature_types = feature_types

    def _info_rows(self, rows, group_rows=None):
        """The fields of the rows ``rows`` (int64), for ``slice``: a dict of set_info's
        arguments. ``group_rows``: (groups kept (int64), their sizes) when the rows are
        whole query groups."""
        out = {}
        for field in ("label", "base_margin", "label_lower_bound", "label_upper_bound"):
            value = getattr(self, field)
            if value is not None:
                out[field] = value[rows]
        weight = self.weight
        if weight is not None:
            per_group = group_rows is not None and weight.shape[0] == group_rows[2]
            out["weight"] = weight[group_rows[0]] if per_group else weight[rows]
        if group_rows is not None:
            out["group"] = group_rows[1]
        return out
