"""Turn user input into the arrays the engine trains on; every input error is raised here.

The engine works on a C-ordered float32 matrix (NaN = missing), as XGBoost does: float64
inputs are rounded to float32 once, at fit and at predict alike, so a split threshold
means the same thing in both. Sparse input (SciPy sparse matrices, pandas frames with
sparse columns) stays sparse: a ``gbm.data.sparse.SparseMatrix`` of its stored entries,
absent ones missing.
"""
import contextlib
import contextvars
import numbers

import numpy as np

from .frames import is_polars, polars_to_pandas
from .sparse import SparseMatrix, has_sparse_columns, is_scipy_sparse

FLOAT = np.float32  # feature values: what XGBoost and LightGBM keep, half of float64's traffic
# Labels and weights are at most float32's largest value in magnitude (XGBoost stores them
# as float32 and refuses larger ones). Then a gradient sum stays below ~1e87 and its
# square, in the gain formula, far below float64's limit: larger inputs would overflow to
# infinity and silently drop splits.
VALUE_LIMIT = float(np.finfo(np.float32).max)


def is_device_array(X):
    """Whether ``X`` lives on a GPU (CuPy, or anything with ``__cuda_array_interface__``)."""
    return hasattr(X, "__cuda_array_interface__")


def to_host(array):
    """A NumPy copy of a device array (CuPy's ``get``); other inputs as they are."""
    if not is_device_array(array):
        return array
    if hasattr(array, "get"):
        return array.get()
    from numba import cuda

    return cuda.as_cuda_array(array).copy_to_host()


def _check_device_X(X, name, shard):
    """A GPU matrix checked on the GPU and kept there: CuPy float32, C order."""
    try:
        import cupy
    except ImportError:
        raise ImportError(f"{name} is a GPU array; reading it needs CuPy: pip install "
                          "'detgbm[gpu]' (from a checkout: pip install -e '.[gpu]')") from None
    arr = cupy.asarray(X)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} has unsupported dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional (n_samples, n_features), got shape "
                         f"{arr.shape}")
    if arr.shape[0] == 0 and not shard:
        raise ValueError(f"{name} has 0 sample(s) (shape={arr.shape}) while a minimum of 1 is "
                         "required.")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is "
                         "required.")
    arr = cupy.ascontiguousarray(arr, dtype=FLOAT)
    inf = cupy.isinf(arr)
    if bool(inf.any()):
        row, col = (int(v) for v in cupy.argwhere(inf)[0].get())
        raise ValueError(f"{name} contains infinity at row {row}, column {col}; use NaN for "
                         "missing values")
    return arr


def _is_pandas_frame(X):
    return type(X).__module__.startswith("pandas") and hasattr(X, "dtypes") and hasattr(X, "columns")


def column_names(X):
    """The column labels of a pandas DataFrame or an Arrow table, as str (an Arrow
    table's ``columns`` are its data: its names are ``column_names``); None for other
    inputs."""
    if type(X).__module__.startswith("pyarrow") and hasattr(X, "column_names"):
        return [str(c) for c in X.column_names]
    if hasattr(X, "columns"):
        return [str(c) for c in X.columns]
    return None


def feature_names_of(X):
    """Column names of a DataFrame or Arrow table as a list of str, or None for other inputs."""
    if type(X).__module__.startswith("pyarrow") and hasattr(X, "column_names"):
        return [str(c) for c in X.column_names]
    if is_polars(X) and hasattr(X, "columns"):
        return [str(c) for c in X.columns]
    if _is_pandas_frame(X):
        names = [str(c) for c in X.columns]
        if not all(isinstance(c, str) for c in X.columns):
            return None  # scikit-learn's rule: only all-string column names count as names
        return names
    return None


def _frame_to_float(X, allow_category=False):
    """A pandas DataFrame to float32, with nullable numbers as NaN; object columns rejected.

    ``category`` columns become NaN placeholders when ``allow_category`` (gbm.data.categorical
    then writes their codes), else they are rejected."""
    import pandas as pd

    # one float32 matrix, filled a column at a time (through float64, as a whole float64
    # matrix cast to float32 would round): a frame's conversion holds one column's
    # float64 copy at a time, not every column's twice over (measured: 5x the float32
    # matrix at its peak, on flights)
    out = np.empty((len(X), X.shape[1]), dtype=FLOAT)
    for i, (name, dtype) in enumerate(X.dtypes.items()):
        col = X.iloc[:, i]
        if isinstance(dtype, pd.CategoricalDtype):
            if not allow_category:
                raise ValueError(
                    f"X column {name!r} (position {i}) has dtype 'category'; pass the frame to "
                    "gbm.train, Booster.predict or the estimators, which encode categories"
                )
            out[:, i] = np.nan
            continue
        if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
            with np.errstate(over="ignore", invalid="ignore"):  # check_X reports beyond float32
                out[:, i] = col.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            raise ValueError(
                f"X column {name!r} (position {i}) has dtype {dtype}; only numeric and boolean "
                "columns are supported: encode strings and objects as numbers"
            )
    return out


# check_X's own outputs that a caller has just checked and hands on to code that checks
# its input again (the estimators' fit: its X and eval sets' Xs, then ``train``)
_CHECKED = contextvars.ContextVar("gbm_checked_X", default=())


@contextlib.contextmanager
def checked_already(*arrays):
    """Within the block, ``check_X`` returns any of ``arrays`` as it is (its shape still
    checked). Each must be ``check_X``'s own output (float32, C order), checked by the
    caller just before and not changed since: a fit's second pass over its values (the
    infinity test: 0.08 ms at 50,000 x 10, more for wider data) is skipped. Others are passed over."""
    done = tuple(a for a in arrays if isinstance(a, np.ndarray) and a.dtype == FLOAT
                 and a.ndim == 2 and a.flags.c_contiguous)
    token = _CHECKED.set(_CHECKED.get() + done)
    try:
        yield
    finally:
        _CHECKED.reset(token)


def check_X(X, *, name="X", allow_category=False, shard=False):
    """Validate a feature matrix and return it as C-ordered float32 (NaN = missing).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        NumPy array, pandas DataFrame, SciPy sparse matrix (absent entries are missing
        values, as in XGBoost) or a nested list.
    allow_category : bool
        Let pandas ``category`` columns through as NaN placeholders, for
        ``gbm.data.categorical`` to fill with codes; otherwise they are rejected.
    shard : bool
        ``X`` is one rank's part of a distributed data set: it may have no rows.

    Returns
    -------
    ndarray of shape (n_samples, n_features), dtype float32; or, for a SciPy sparse
    matrix or a DataFrame with sparse columns, a ``SparseMatrix`` of the stored entries
    (never densified)
    """
    if X is None:
        raise TypeError(f"{name} must be an array-like of shape (n_samples, n_features), got None")
    if any(X is done for done in _CHECKED.get()):
        return _check_shape(X, name, shard)
    if is_device_array(X):  # stays on the GPU
        return _check_device_X(X, name, shard)
    if type(X).__module__.startswith("pyarrow") and hasattr(X, "to_pandas"):
        X = X.to_pandas()  # Arrow tables: nulls become NaN (or pandas NA) on the way
    if is_polars(X):
        X = polars_to_pandas(X)
    wide = None  # the values before float32, where a value beyond its range is read back
    if isinstance(X, SparseMatrix):  # checked already
        return _check_shape(X, name, shard)
    if _is_pandas_frame(X) and has_sparse_columns(X):
        return _check_shape(_sparse_frame(X, allow_category, name), name, shard)
    if is_scipy_sparse(X):
        return _check_shape(_check_sparse(X, name), name, shard)
    if _is_pandas_frame(X):
        arr = _frame_to_float(X, allow_category)
        wide = X
    else:
        arr = np.asarray(X)
        if arr.dtype.kind in "USV":
            raise ValueError(
                f"{name} has dtype {arr.dtype} (strings or raw bytes) in every column; only "
                "numbers are supported: encode strings as numbers"
            )
        if arr.dtype.kind == "O":
            arr = _object_to_float(arr, name)
        if arr.dtype.kind == "c":
            raise ValueError(f"Complex data not supported: {name} has complex values")
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} has unsupported dtype {arr.dtype}")
    _check_shape(arr, name, shard)
    if wide is None:
        wide = arr
    with np.errstate(over="ignore", invalid="ignore"):
        arr = np.ascontiguousarray(arr, dtype=FLOAT)
    inf = first_infinity(arr)
    if inf is not None:
        row, col = inf
        value = wide.iloc[row, col] if wide is X and _is_pandas_frame(X) else wide[row, col]
        if np.isfinite(value):
            raise ValueError(
                f"{name} contains {float(value)!r} at row {row}, column {col}, beyond float32's "
                f"range (|x| <= {VALUE_LIMIT:.7g}), the precision gbm works in")
        raise ValueError(
            f"{name} contains infinity at row {row}, column {col}; use NaN for missing values"
        )
    return arr


_CHECK_ROWS = 1 << 16  # rows tested for infinity at a time: a bounded temporary


def first_infinity(arr):
    """``(row, column)`` of the first infinite entry of a 2-d float array, in row-major
    order, or None; block by block of rows, so the test's boolean temporary stays small
    (a whole-matrix one is a quarter of a float32 matrix's size, for as long as the
    check)."""
    for lo in range(0, arr.shape[0], _CHECK_ROWS):
        block = np.isinf(arr[lo:lo + _CHECK_ROWS])
        if block.any():
            row, col = np.argwhere(block)[0]
            return lo + row, col
    return None


def _check_shape(arr, name, shard):
    """``arr`` itself, once it is 2-d with at least one column (and one row unless
    ``shard``)."""
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-dimensional (n_samples, n_features), got {arr.ndim} dimension(s) "
            f"with shape {arr.shape}. Reshape your data either using array.reshape(-1, 1) if it "
            "has a single feature or array.reshape(1, -1) if it contains a single sample."
        )
    if arr.shape[0] == 0 and not shard:
        raise ValueError(
            f"{name} has 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    if arr.shape[1] == 0:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    return arr


def _first_entry(indptr, indices, position):
    """(row, column) of stored entry ``position`` of a CSR matrix."""
    row = int(np.searchsorted(indptr, position, side="right") - 1)
    return row, int(indices[position])


def _check_sparse(X, name):
    """A SciPy sparse matrix (CSR, CSC, COO or any format, matrix or array) as a
    ``SparseMatrix``, its values checked as dense ones are.

    Read as CSR (a CSC or COO matrix is converted: a sparse copy); entries put in
    canonical order (sorted columns, duplicates summed, SciPy's meaning of them) on a
    copy when needed, never in the caller's matrix; stored NaN entries dropped (missing,
    as absent ones). No dense copy is made at any point.
    """
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional (n_samples, n_features), got shape "
                         f"{X.shape}")
    kind = np.dtype(X.dtype).kind
    if kind == "c":
        raise ValueError(f"Complex data not supported: {name} has complex values")
    if kind not in "biuf":
        raise TypeError(f"{name} has unsupported dtype {X.dtype}")
    csr = X.tocsr()
    if not csr.has_canonical_format:
        csr = csr.copy()
        csr.sum_duplicates()  # sorts each row's columns too
    data = csr.data
    with np.errstate(over="ignore", invalid="ignore"):
        values = data.astype(FLOAT)
    inf = np.isinf(values)
    if inf.any():
        i = int(np.flatnonzero(inf)[0])
        row, col = _first_entry(csr.indptr, csr.indices, i)
        if np.isfinite(data[i]):
            raise ValueError(
                f"{name} contains {float(data[i])!r} at row {row}, column {col}, beyond "
                f"float32's range (|x| <= {VALUE_LIMIT:.7g}), the precision gbm works in")
        raise ValueError(f"{name} contains infinity at row {row}, column {col}; use NaN for "
                         "missing values")
    matrix = SparseMatrix(csr.indptr, csr.indices, values, csr.shape)
    nan = np.isnan(values)
    if nan.any():  # stored missing values: dropped, as absent ones
        matrix = matrix.keep_entries(~nan)
    return matrix


def _sparse_frame(frame, allow_category, name):
    """A DataFrame with sparse columns as a ``SparseMatrix``, column by column, never
    densified as a whole: a sparse column filled with NaN contributes its stored values;
    a dense column, or a sparse one filled with a number (whose absent entries hold that
    number, as pandas reads them), every row holding a value. A ``category`` column
    (``allow_category``) contributes no entries here: ``gbm.data.categorical`` adds its
    codes."""
    import pandas as pd
    import scipy.sparse as sp

    n_rows = len(frame)
    rows, cols, vals = [], [], []
    for i, (column_name, dtype) in enumerate(frame.dtypes.items()):
        column = frame.iloc[:, i]
        if isinstance(dtype, pd.SparseDtype) and _is_nan(dtype.fill_value):
            array = column.array
            at = np.asarray(array.sp_index.indices, dtype=np.int64)
            values = np.asarray(array.sp_values, dtype=np.float64)
        elif isinstance(dtype, pd.SparseDtype):
            at = np.arange(n_rows, dtype=np.int64)
            values = np.asarray(column.array.to_dense(), dtype=np.float64)
        else:
            at = np.arange(n_rows, dtype=np.int64)
            values = _frame_to_float(frame.iloc[:, [i]], allow_category)[:, 0].astype(np.float64)
        keep = ~np.isnan(values)
        rows.append(at[keep])
        cols.append(np.full(int(keep.sum()), i, dtype=np.int32))
        vals.append(values[keep])
    rows, cols, vals = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    order = np.lexsort((cols, rows))  # row-major, each row's columns increasing
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n_rows))))
    return _check_sparse(sp.csr_matrix((vals[order], cols[order], indptr),
                                       shape=(n_rows, frame.shape[1])), name)


def _is_nan(value):
    """Whether a sparse column's fill value means missing: NaN, or pandas' ``NA`` (the
    fill of a sparse column made from a nullable ``Float64`` one)."""
    import pandas as pd

    try:
        return bool(np.isnan(value))
    except TypeError:
        return value is pd.NA


def _object_to_float(arr, name):
    """Numbers stored as objects or strings become floats; anything else names its column."""
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError) as err:
        column = "?"
        if arr.ndim == 2:
            for j in range(arr.shape[1]):
                try:
                    arr[:, j].astype(np.float64)
                except (TypeError, ValueError):
                    column = j
                    break
        raise type(err)(
            f"{name} column {column} has non-numeric values ({err}); only numbers are "
            "supported: encode strings and objects as numbers"
        ) from None


def check_y(y, n_rows, *, numeric=True):
    """Validate labels: 1-d, ``n_rows`` long, finite when numeric."""
    if y is None:
        raise ValueError("y is None; training needs labels")
    arr = np.asarray(to_host(y))  # labels are checked on the host (one copy of n floats)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got shape {arr.shape}")
    if arr.shape[0] != n_rows:
        raise ValueError(f"y has {arr.shape[0]} rows but X has {n_rows}; they must match")
    if numeric:
        if arr.dtype.kind not in "biuf":
            try:
                arr = arr.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"y must be numeric for this objective, got dtype {arr.dtype}") from None
        # the caller's own array when it already is what the kernels read (no copy of
        # 8 bytes a row held through the fit: the labels are read, never written)
        if not (arr.dtype == np.float64 and arr.flags.c_contiguous and arr.flags.writeable
                and arr.flags.aligned):
            arr = arr.astype(np.float64)
        bad = ~np.isfinite(arr)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"y contains {arr[row]} at row {row}; labels must be finite")
        bad = np.abs(arr) > VALUE_LIMIT
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"y contains {float(arr[row])!r} at row {row}; labels must be at most "
                f"{VALUE_LIMIT:.7g} in magnitude (float32's range, as in XGBoost): larger ones "
                "overflow the gradient arithmetic; scale the labels down")
    return arr


def check_sample_weight(sample_weight, n_rows, *, what="", per="row", shard=False):
    """Validate weights: 1-d, one per row (or per query group with ``per="group"``),
    finite, >= 0, not all zero (``shard``: one rank's part of the data, checked as a whole
    by the caller). None -> ones. ``what`` prefixes the messages."""
    if sample_weight is None:
        return np.ones(n_rows, dtype=np.float64)
    sample_weight = to_host(sample_weight)
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_rows, sample_weight, dtype=np.float64)
    w = np.asarray(sample_weight)
    if w.dtype.kind not in "biuf":
        raise ValueError(f"{what}sample_weight must be numeric, got dtype {w.dtype}")
    w = w.astype(np.float64)
    if per == "group" and (w.ndim != 1 or w.shape[0] != n_rows):
        raise ValueError(
            f"{what}sample_weight has shape {w.shape} but there are {n_rows} query groups; "
            "for ranking, weights are per query group (one per group, as in XGBoost), "
            "not per row")
    if w.ndim != 1:
        raise ValueError(f"{what}sample_weight must be 1-dimensional, got shape {w.shape}")
    if w.shape[0] != n_rows:
        raise ValueError(f"{what}sample_weight has {w.shape[0]} entries but X has {n_rows} rows; "
                         "they must match (one sample weight per row)")
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        place = f"at row {i}" if per == "row" else f"for group {i}"
        raise ValueError(f"{what}sample_weight contains {w[i]} {place}; weights must be finite "
                         "and >= 0")
    bad = w > VALUE_LIMIT
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        place = f"at row {i}" if per == "row" else f"for group {i}"
        raise ValueError(
            f"{what}sample_weight contains {float(w[i])!r} {place}; weights must be at most "
            f"{VALUE_LIMIT:.7g} (float32's range, as in XGBoost): larger ones overflow the "
            "gradient arithmetic; scale the weights down")
    if not shard and not (w > 0).any():
        raise ValueError(f"{what}sample_weight is zero for every {per}; at least one weight must "
                         "be positive")
    return w


def check_targets(y, n_rows, name="y"):
    """Labels as float64: (n_rows,) for one target, (n_rows, k) C-ordered for k > 1;
    each column checked as ``gbm.data.inputs.check_y`` checks one."""
    if y is None:
        raise ValueError(f"{name} is None; training needs labels")
    y = to_host(y)  # labels are checked on the host (a GPU array: one copy)
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] > 1:
        if arr.shape[0] != n_rows:
            raise ValueError(f"{name} has {arr.shape[0]} rows but X has {n_rows}; they must match")
        columns = []
        for j in range(arr.shape[1]):
            try:
                columns.append(check_y(arr[:, j], n_rows))
            except ValueError as err:
                raise ValueError(f"{name}[:, {j}]: {err}") from None
        return np.ascontiguousarray(np.column_stack(columns))
    return check_y(y, n_rows)


def n_targets(y):
    """Columns of labels checked by ``check_targets``."""
    return 1 if np.ndim(y) == 1 else int(np.shape(y)[1])


def check_base_margin(base_margin, n_rows, n_groups, name="base_margin"):
    """Per-row starting margins as float64 (n_groups, n_rows), contiguous: XGBoost's
    ``base_margin``, of shape (n_rows,) for one output group or (n_rows, n_groups)."""
    bm = np.asarray(base_margin, dtype=np.float64)
    if bm.ndim == 1 and n_groups == 1:
        bm = bm[:, None]
    elif bm.ndim == 1 and bm.shape[0] == n_rows * n_groups:
        bm = bm.reshape(n_rows, n_groups)  # XGBoost also accepts it flattened
    if bm.shape != (n_rows, n_groups):
        raise ValueError(f"{name} has shape {np.shape(base_margin)}; expected ({n_rows},)"
                         if n_groups == 1 else
                         f"{name} has shape {np.shape(base_margin)}; expected "
                         f"({n_rows}, {n_groups}): one margin per row and output group")
    if not np.isfinite(bm).all():
        raise ValueError(f"{name} holds NaN or infinity; margins must be finite")
    return np.array(bm.T, order="C")  # a copy: the caller's array is never written
