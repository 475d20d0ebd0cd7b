"""Interval labels (``survival:aft``): each row's survival time known to lie in ``[lower,
upper]``, as XGBoost takes them (``label_lower_bound`` / ``label_upper_bound``):

* ``lower == upper``: the exact time (uncensored), > 0;
* ``upper = +inf``: right-censored at ``lower`` (still alive then);
* ``lower = 0``: left-censored (the event before ``upper``);
* ``0 < lower < upper < inf``: interval-censored.

They come either as two arrays (a ``DMatrix``'s bounds, XGBoost's form) or as one
``y`` of shape (n_rows, 2) holding ``[lower, upper]`` per row (``gbm.train``'s arrays, the
estimators, Dask). Either way a fit holds them as one float64 (n_rows, 2) C-ordered
array, what the AFT kernel reads (``kernels/layout.py``: ``AFT``).
"""
import numpy as np

from .inputs import VALUE_LIMIT, to_host

# the smallest positive bound: float32's smallest normal (XGBoost keeps bounds as float32),
# so that the scale times a bound, in the AFT density, stays > 0
SMALLEST_BOUND = float(np.finfo(np.float32).tiny)


def _column(values, n_rows, name):
    arr = np.asarray(to_host(values))
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1 or arr.shape[0] != n_rows:
        raise ValueError(f"{name} has shape {arr.shape}; expected ({n_rows},): one bound per "
                         "row")
    return arr


def _first(bad):
    return int(np.flatnonzero(bad)[0])


def check_intervals(y, n_rows, lower=None, upper=None, name="y"):
    """Each row's ``[lower, upper]`` as float64 (n_rows, 2), C order.

    Parameters
    ----------
    y : array-like (n_rows, 2) of [lower, upper] bounds, or None when ``lower`` and
        ``upper`` are given (they win: XGBoost's AFT ignores a DMatrix's labels)
    lower, upper : array-like (n_rows,), optional: XGBoost's ``label_lower_bound`` and
        ``label_upper_bound``
    name : what the messages call ``y``

    Raises ``ValueError`` naming the first bad row: a missing bound, NaN, a negative lower
    bound, an infinite lower bound, an upper bound <= 0, a lower bound above the upper.
    """
    if lower is None and upper is None:
        if y is None:
            raise ValueError(f"survival:aft needs interval labels: {name} of shape "
                             f"(n_samples, 2) holding [lower, upper] per row, or a DMatrix "
                             "with label_lower_bound and label_upper_bound")
        arr = np.asarray(to_host(y))
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(f"{name} has shape {arr.shape}; survival:aft needs intervals: "
                             f"shape ({n_rows}, 2), [lower, upper] per row (upper = inf: "
                             "right-censored; lower = 0: left-censored)")
        lower = _column(arr[:, 0], n_rows, f"{name}[:, 0]")
        upper = _column(arr[:, 1], n_rows, f"{name}[:, 1]")
        names = (f"{name}[{{}}, 0]", f"{name}[{{}}, 1]")
    else:
        missing = "label_upper_bound" if upper is None else (
            "label_lower_bound" if lower is None else None)
        if missing is not None:
            raise ValueError(f"{missing} is missing; survival:aft needs both "
                             "label_lower_bound and label_upper_bound")
        lower = _column(lower, n_rows, "label_lower_bound")
        upper = _column(upper, n_rows, "label_upper_bound")
        names = ("label_lower_bound[{}]", "label_upper_bound[{}]")
    _check(lower, upper, *names)
    return np.ascontiguousarray(np.column_stack([lower, upper]))


def _check(lower, upper, lower_name, upper_name):
    need = "survival:aft needs"
    for values, place in ((lower, lower_name), (upper, upper_name)):
        if np.isnan(values).any():
            row = _first(np.isnan(values))
            raise ValueError(f"{place.format(row)} is NaN; {need} a bound for every row "
                             "(upper = inf: right-censored, lower = 0: left-censored)")
    checks = (
        (lower < 0, lower, lower_name, "bounds >= 0 (lower = 0: left-censored)"),
        (np.isinf(lower), lower, lower_name, "a finite lower bound"),
        (upper <= 0, upper, upper_name, "upper bounds > 0 (times are positive)"),
        ((lower > 0) & (lower < SMALLEST_BOUND), lower, lower_name,
         f"positive bounds of at least {SMALLEST_BOUND:.6g} (float32's smallest normal)"),
        (upper < SMALLEST_BOUND, upper, upper_name,
         f"positive bounds of at least {SMALLEST_BOUND:.6g} (float32's smallest normal)"),
        (np.isfinite(lower) & (lower > VALUE_LIMIT), lower, lower_name,
         f"bounds at most {VALUE_LIMIT:.7g} (float32's range) or an infinite upper bound"),
        (np.isfinite(upper) & (upper > VALUE_LIMIT), upper, upper_name,
         f"bounds at most {VALUE_LIMIT:.7g} (float32's range) or an infinite upper bound"),
    )
    for bad, values, place, what in checks:
        if bad.any():
            row = _first(bad)
            raise ValueError(f"{place.format(row)} = {values[row]}; {need} {what}")
    bad = lower > upper
    if bad.any():
        row = _first(bad)
        raise ValueError(f"row {row}: the lower bound {lower[row]} ({lower_name.format(row)}) "
                         f"is above the upper bound {upper[row]} ({upper_name.format(row)}); "
                         f"{need} lower <= upper")
