"""The input of ``Booster.inplace_predict`` (XGBoost's): the data itself (NumPy, pandas,
SciPy sparse, CuPy or any ``__cuda_array_interface__`` array), never a DMatrix, with the
caller's ``missing`` value."""
import numbers

import numpy as np

from ..data.categorical import encode_X
from ..data.inputs import is_device_array

PREDICT_TYPES = ("value", "margin")


def output_margin_of(predict_type):
    """``predict_type`` ("value" or "margin", XGBoost's) as ``predict``'s ``output_margin``."""
    if not isinstance(predict_type, str) or predict_type not in PREDICT_TYPES:
        raise ValueError(f"predict_type must be 'value' or 'margin', got {predict_type!r}")
    return predict_type == "margin"


def _check_missing(missing):
    """``missing`` as a float32 (the precision values are compared in, as XGBoost's), or
    None for NaN (nothing to replace)."""
    if isinstance(missing, (bool, np.bool_)) or not isinstance(missing, numbers.Real):
        raise TypeError(f"missing must be a number (NaN by default), got {missing!r}")
    if np.isnan(missing):
        return None
    return np.float32(missing)


def _is_dmatrix(data):
    return type(data).__name__ in ("DMatrix", "QuantileDMatrix", "DeviceQuantileDMatrix")


def _replace_dense(values, missing):
    """A float32 copy of a numeric array with the entries equal to ``missing`` as NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.array(values, dtype=np.float32)
    values[values == missing] = np.nan
    return values


def _replace_device(data, missing):
    import cupy

    values = cupy.array(data, dtype=np.float32)
    values[values == missing] = np.nan
    return values


def _replace_frame(frame, missing):
    """A copy of a DataFrame whose numeric columns read NaN where they held ``missing``.

    A ``category`` column is missing where its code (the position of the row's label in
    the column's own categories) equals ``missing``: XGBoost compares the codes it reads
    with ``missing`` as it compares numbers (measured with xgboost 3.2: ``missing=0.0``
    makes every row of a column's first category missing, in ``DMatrix`` and
    ``inplace_predict`` alike)."""
    import pandas as pd

    out = frame.copy()
    for i, dtype in enumerate(frame.dtypes):
        column = frame.iloc[:, i]
        if isinstance(dtype, pd.CategoricalDtype):
            hit = column.cat.codes.to_numpy().astype(np.float32) == missing
            if hit.any():
                out.isetitem(i, column.where(~hit))
        elif pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
            values = column.to_numpy(dtype=np.float64, na_value=np.nan)
            out.isetitem(i, _replace_dense(values, missing))
    return out


def _replace_missing(data, missing):
    """``data`` with every value equal to ``missing`` (compared in float32) made NaN,
    gbm's one missing marker; other inputs (lists, objects) are left to the checks."""
    if is_device_array(data):
        return _replace_device(data, missing)
    if hasattr(data, "dtypes") and hasattr(data, "columns"):  # pandas
        return _replace_frame(data, missing)
    if hasattr(data, "tocsr") and hasattr(data, "nnz"):  # SciPy sparse: stored entries
        csr = data.tocsr(copy=True)
        csr.data = _replace_dense(csr.data, missing)
        return csr
    array = np.asarray(data)
    if array.dtype.kind in "biuf":
        return _replace_dense(array, missing)
    return data


def inplace_input(booster, data, missing=np.nan, validate_features=True):
    """``data`` checked for ``booster`` and converted as ``predict`` converts its ``X``:
    a C-ordered float32 matrix (NumPy, or CuPy for GPU input), categorical columns as the
    model's codes, NaN = missing.

    Parameters
    ----------
    booster : gbm.Booster
    data : NumPy array or list (a 1-D one is one column, as XGBoost reads it), pandas
        DataFrame or Series (a one-column frame), SciPy
        sparse matrix (absent entries are missing), CuPy or ``__cuda_array_interface__``
        array; not a DMatrix
    missing : float, the value that marks a missing entry (besides NaN)
    validate_features : bool; a DataFrame's column names must be the model's (False:
        skipped). The column count is always checked.
    """
    if _is_dmatrix(data):
        raise TypeError(f"inplace_predict takes the data itself (NumPy, pandas, SciPy CSR, "
                        f"CuPy), not a {type(data).__name__}; use predict for a DMatrix")
    if not isinstance(validate_features, (bool, np.bool_)):
        raise TypeError(f"validate_features must be True or False, got {validate_features!r}")
    missing = _check_missing(missing)
    if type(data).__module__.startswith("pandas") and hasattr(data, "to_frame") \
            and not hasattr(data, "columns"):
        data = data.to_frame()  # a Series: one column, as XGBoost reads it
    if isinstance(data, (list, tuple)):
        data = np.array(data)
    if isinstance(data, np.ndarray) and data.ndim == 1:
        data = data.reshape(-1, 1)  # one value per row: one column, as XGBoost reads it
    if missing is not None:
        data = _replace_missing(data, missing)
    if validate_features:
        return booster._check_predict_X(data, name="data", shard=True)  # rows: any, none too
    booster._check_loaded()
    X = encode_X(data, booster.categories, name="data", shard=True)
    if X.shape[1] != booster.n_features:
        raise ValueError(f"data has {X.shape[1]} features, but the model was trained with "
                         f"{booster.n_features}")
    return X
