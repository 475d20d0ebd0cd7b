"""The JSON values of a model file, read as exact types: the error every check raises
(``InvalidModel``), the text parsed strictly, and integers, numbers and float32 values
told apart from strings, booleans and null (``gbm.io.validation`` checks the fields with
them)."""
import numpy as np

from . import strict_json

MAX_NESTING = 16  # gbm writes at most 4 levels (trees -> tree -> cat_bits -> words)
FLOAT32_MAX = float(np.finfo(np.float32).max)


class InvalidModel(ValueError):
    """A model file's content breaks one of the checks; the message says which."""


# --- the JSON text ---------------------------------------------------------------------

def parse(text):
    """JSON ``text`` to Python objects, strictly (``gbm.io.strict_json``)."""
    try:
        return strict_json.parse(text, MAX_NESTING)
    except strict_json.StrictJSONError as err:
        raise InvalidModel(str(err)) from None


# --- values ------------------------------------------------------------------------------

def json_kind(value):
    return "null" if value is None else type(value).__name__


def json_integer(value, name, low, high):
    if type(value) is not int or not low <= value <= high:
        raise InvalidModel(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    return value


def json_numbers(values, name):
    """A list of JSON numbers as float64."""
    if type(values) is not list:
        raise InvalidModel(f"{name} must be a list of numbers, got {json_kind(values)}")
    if not set(map(type, values)) <= {int, float}:
        bad = next(v for v in values if type(v) not in (int, float))
        raise InvalidModel(f"{name} holds {bad!r}; expected numbers")
    return np.array(values, dtype=np.float64)


def json_integers(values, name, dtype):
    """A list of JSON integers in ``dtype``'s range, as ``dtype``."""
    if type(values) is not list:
        raise InvalidModel(f"{name} must be a list of integers, got {json_kind(values)}")
    if not set(map(type, values)) <= {int}:
        bad = next(v for v in values if type(v) is not int)
        raise InvalidModel(f"{name} holds {bad!r}; expected integers")
    arr = np.array(values, dtype=np.int64)
    info = np.iinfo(dtype)
    out = (arr < info.min) | (arr > info.max)
    if out.any():
        raise InvalidModel(f"{name} holds {int(arr[out][0])}, outside [{info.min}, {info.max}]")
    return arr.astype(dtype)


def json_float32(values, name):
    arr = json_numbers(values, name)
    out = np.abs(arr) > FLOAT32_MAX
    if out.any():
        raise InvalidModel(f"{name} holds {float(arr[out][0])!r}, beyond float32's range")
    return arr.astype(np.float32)


def same_json(a, b):
    """Equal values of equal JSON types all the way down (1 is not 1.0 nor True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return a == b
