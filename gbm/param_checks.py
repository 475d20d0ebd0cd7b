"""Checks of one parameter value each (``gbm.params``' validators): a real number or an
integer in a range, a choice, a flag, or None. Each check is ``check(name, value)`` and
returns the value in its canonical type or raises naming the parameter."""
import math
import numbers

import numpy as np

# Real parameters are at most float32's largest value in magnitude (XGBoost keeps them as
# float32): products such as learning_rate x leaf weight, reg_lambda + hessian sum or
# max_delta_step^2 then stay finite in float64 for labels and weights in gbm.data's range.
REAL_LIMIT = float(np.finfo(np.float32).max)
# Integer parameters fit in int64: a model file holds them as 64-bit integers.
INT_LIMITS = (-(2**63), 2**63 - 1)


def real(low=None, high=REAL_LIMIT, low_open=False, high_open=False):
    """Validator for a real number in a (half-)open or closed interval; by default at most
    ``REAL_LIMIT`` in magnitude."""

    def check(name, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
        if abs(value) > REAL_LIMIT:
            raise ValueError(f"{name} must be at most {REAL_LIMIT:.7g} in magnitude (float32's "
                             f"range; products with it would overflow), got {value!r}")
        if low is not None and (value <= low if low_open else value < low):
            op = ">" if low_open else ">="
            raise ValueError(f"{name} must be {op} {low}, got {value!r}")
        if high is not None and (value >= high if high_open else value > high):
            op = "<" if high_open else "<="
            raise ValueError(f"{name} must be {op} {high}, got {value!r}")
        return value

    return check


def integer(low=INT_LIMITS[0], high=INT_LIMITS[1]):
    """Validator for an integer in a closed interval (by default, int64's)."""

    def check(name, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
        value = int(value)
        if low is not None and value < low:
            raise ValueError(f"{name} must be >= {low}, got {value}")
        if high is not None and value > high:
            raise ValueError(f"{name} must be <= {high}, got {value}")
        return value

    return check


def optional(check):
    """``check``, letting None through (None = a default decided later)."""
    def optional(name, value):
        return None if value is None else check(name, value)

    return optional


def choice(options):
    def check(name, value):
        if value not in options:
            raise ValueError(f"{name} must be one of {list(options)}, got {value!r}")
        return value

    return check


def boolean(name, value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
