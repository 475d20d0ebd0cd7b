"""Reading one field of an XGBoost JSON model: its type and range checked, or a
``ValueError`` that names it (``learner_model_param.num_feature``,
``trees[3].split_conditions[5]``).

XGBoost writes counts and parameters as strings (``"3"``, ``"5E-1"``, ``"[1E0,2E0]"``)
and node values as JSON numbers that it holds as float32; the readers take both forms of
a scalar and refuse NaN, the infinities and numbers beyond float32's range.
"""
import math
import re

import numpy as np

FLOAT32_MAX = float(np.finfo(np.float32).max)
INT32_MAX = (1 << 31) - 1
_INTEGER = re.compile(r"\s*[+-]?\d{1,30}\s*")
_MISSING = object()


def kind(value):
    return "null" if value is None else type(value).__name__


def get(obj, key, path, default=_MISSING):
    """``obj[key]`` (``obj`` an object already), or ``default``; named when missing."""
    if key in obj:
        return obj[key]
    if default is _MISSING:
        raise ValueError(f"{path} is missing")
    return default


def as_object(value, path):
    if type(value) is not dict:
        raise ValueError(f"{path} must be an object, got {kind(value)}")
    return value


def as_list(value, path):
    if type(value) is not list:
        raise ValueError(f"{path} must be a list, got {kind(value)}")
    return value


def strings(value, path):
    """A list of strings (feature names and types)."""
    bad = next((k for k, v in enumerate(as_list(value, path)) if type(v) is not str), None)
    if bad is not None:
        raise ValueError(f"{path}[{bad}] is {value[bad]!r}, not a string")
    return value


def count(value, path, low, high=INT32_MAX):
    """An integer in ``[low, high]``, written as a string (``"3"``) or a JSON integer."""
    if type(value) is str and _INTEGER.fullmatch(value):
        number = int(value)
    elif type(value) is int:
        number = value
    else:
        raise ValueError(f"{path} is {value!r}, not an integer")
    if not low <= number <= high:
        raise ValueError(f"{path} is {number}, outside [{low}, {high}]")
    return number


def _float(value):
    try:
        return float(value)
    except OverflowError:  # an integer beyond float64 (a dict built in Python)
        return math.inf


def real(value, path, limit=FLOAT32_MAX):
    """A finite number within ``limit``, written as a string (``"5E-1"``) or a JSON
    number."""
    if type(value) in (int, float):
        number = _float(value)
    elif type(value) is str:
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"{path} is {value!r}, not a number") from None
    else:
        raise ValueError(f"{path} is {value!r}, not a number")
    if not abs(number) <= limit:  # NaN too
        raise ValueError(f"{path} is {value!r}; it must be a finite number within "
                         f"float32's range (an imported model's numbers are float32)")
    return number


def reals(value, path):
    """One number or several: ``"5E-1"``, ``"[1E0,2E0]"``, a JSON number or a list of
    them (``base_score``, ``quantile_alpha``) -> list of floats."""
    if type(value) is str and value.strip().startswith("["):
        text = value.strip()
        if not text.endswith("]"):
            raise ValueError(f"{path} is {value!r}, not a number or a list of numbers")
        items = [v for v in text[1:-1].split(",") if v.strip()]
        return [real(v, f"{path}[{k}]") for k, v in enumerate(items)]
    if type(value) is list:
        return [real(v, f"{path}[{k}]") for k, v in enumerate(value)]
    return [real(value, path)]


def _first(mask):
    return int(np.flatnonzero(mask)[0])


def integers(values, path):
    """A list of JSON integers as int64."""
    types = set(map(type, as_list(values, path)))
    if not types <= {int}:
        bad = next(k for k, v in enumerate(values) if type(v) is not int)
        raise ValueError(f"{path}[{bad}] is {values[bad]!r}, not an integer")
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        bad = next(k for k, v in enumerate(values) if not -(1 << 63) <= v < (1 << 63))
        raise ValueError(f"{path}[{bad}] is {values[bad]}, outside the 64-bit range") from None


def flags(values, path):
    """A list of 0 / 1 (or booleans) as uint8."""
    types = set(map(type, as_list(values, path)))
    if types <= {int, bool}:
        arr = np.array([int(v) if -2 < v < 2 else 2 for v in values], dtype=np.int64)
        if not ((arr == 0) | (arr == 1)).all():
            bad = _first((arr != 0) & (arr != 1))
            raise ValueError(f"{path}[{bad}] is {values[bad]!r}, not 0 or 1")
        return arr.astype(np.uint8)
    bad = next(k for k, v in enumerate(values) if type(v) not in (int, bool))
    raise ValueError(f"{path}[{bad}] is {values[bad]!r}, not 0 or 1")


def float32s(values, path):
    """A list of JSON numbers, each finite and within float32's range, as float64 of the
    float32 values they write (XGBoost's node values are float32: its JSON text prints
    each in the fewest digits that give it back, its UBJSON the value itself; both read
    the same)."""
    types = set(map(type, as_list(values, path)))
    if not types <= {int, float}:
        bad = next(k for k, v in enumerate(values) if type(v) not in (int, float))
        raise ValueError(f"{path}[{bad}] is {values[bad]!r}, not a number")
    try:
        arr = np.array(values, dtype=np.float64)
    except OverflowError:
        arr = np.array([_float(v) for v in values], dtype=np.float64)
    out = ~(np.abs(arr) <= FLOAT32_MAX)  # NaN too
    if out.any():
        bad = _first(out)
        raise ValueError(f"{path}[{bad}] is {values[bad]!r}; it must be a finite number "
                         "within float32's range (XGBoost's node values are float32)")
    return arr.astype(np.float32).astype(np.float64)
