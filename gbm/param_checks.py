"""Checks of one parameter value each (``gbm.params``' validators): a real number or an
integer in a range, a choice, a flag, or None, and XGBoost's parameters that gbm takes
with limits (``sampling_method``, ``updater``, ``process_type``, ``lambdarank_unbiased``,
``feature_weights``). Each check is ``check(name, value)`` and returns the value in its
canonical type or raises naming the parameter. Numbers and flags may be text ("0.1",
"6", "true"), as XGBoost reads them."""
import math
import numbers

import numpy as np

# Real parameters are at most float32's largest value in magnitude (XGBoost keeps them as
# float32): products such as learning_rate x leaf weight, reg_lambda + hessian sum or
# max_delta_step^2 then stay finite in float64 for labels and weights in gbm.data's range.
REAL_LIMIT = float(np.finfo(np.float32).max)
# Integer parameters fit in int64: a model file holds them as 64-bit integers.
INT_LIMITS = (-(2**63), 2**63 - 1)


def _from_text(name, value, kind, what):
    """A number given as text (``"0.1"``, ``"6"``: XGBoost reads every parameter from
    text) as ``kind``; any other value as it is."""
    if not isinstance(value, str):
        return value
    try:
        return kind(value.strip())
    except ValueError:
        raise TypeError(f"{name} must be {what}, got str {value!r}") from None


def real(low=None, high=REAL_LIMIT, low_open=False, high_open=False):
    """Validator for a real number in a (half-)open or closed interval; by default at most
    ``REAL_LIMIT`` in magnitude."""

    def check(name, value):
        value = _from_text(name, value, float, "a real number")
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
        value = _from_text(name, value, int, "an integer")
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


_BOOL_TEXT = {"true": True, "false": False, "1": True, "0": False}


def boolean(name, value):
    if isinstance(value, str) and value.strip().lower() in _BOOL_TEXT:
        return _BOOL_TEXT[value.strip().lower()]  # XGBoost's text form
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")

# XGBoost's sampling_method: only "uniform" (its default) is gbm's
SAMPLING_METHODS = ("uniform",)
# XGBoost's updater names that mean what gbm does: its hist grower (on the CPU or the
# GPU), and "prune" after it, which removes no split gbm grows (gbm, like XGBoost's hist,
# never keeps a split whose loss reduction is below gamma).
GROWING_UPDATERS = ("grow_quantile_histmaker", "grow_gpu_hist")


def sampling_method(name, value):
    if value == "gradient_based":
        raise ValueError(f"{name}='gradient_based' is not implemented: gbm draws the rows of "
                         "subsample uniformly, from counter-based hashes (XGBoost 3.2's "
                         "gradient-based sampling weighs rows by their gradients); use "
                         "sampling_method='uniform'")
    return choice(SAMPLING_METHODS)(name, value)


# updaters XGBoost has and gbm refuses: name -> why
_REFUSED_UPDATERS = {
    "grow_colmaker": "is XGBoost's exact grower (tree_method='exact'), which gbm does not have",
    "grow_histmaker": "is XGBoost's approx grower (tree_method='approx'), which gbm does not "
                      "have",
    "refresh": "recomputes an existing model's trees (process_type='update'), which gbm "
               "does not do",
    "coord_descent": "is a gblinear updater; gbm's linear models are gbm.linear's estimators",
    "shotgun": "is a gblinear updater; gbm's linear models are gbm.linear's estimators",
}


def updater(name, value):
    """XGBoost's updater sequence, text ("grow_quantile_histmaker,prune") or a list: one of
    ``GROWING_UPDATERS``, then optionally "prune" and "sync" (no effect: gbm keeps no
    split below gamma, and its ranks always agree); None: the tree_method's."""
    if value is None:
        return None
    names = (value.split(",") if isinstance(value, str)
             else list(value) if isinstance(value, (list, tuple)) else None)
    if not names or not all(isinstance(n, str) for n in names):
        raise TypeError(f"{name} must be updater names, comma-separated text or a list, got "
                        f"{value!r}")
    names = [n.strip() for n in names]
    for n in names:
        if n in _REFUSED_UPDATERS:
            raise ValueError(f"{name}={value!r}: {n!r} {_REFUSED_UPDATERS[n]}")
    if names[0] not in GROWING_UPDATERS:
        raise ValueError(f"{name}={value!r} must start with a tree grower, one of "
                         f"{list(GROWING_UPDATERS)} (gbm grows every tree from histograms; "
                         "'prune' alone updates an existing model, which gbm does not do)")
    for n in names[1:]:
        if n not in ("prune", "sync"):
            raise ValueError(f"{name}={value!r}: after the grower gbm takes 'prune' and "
                             f"'sync', got {n!r}")
    return ",".join(names)


def process_type(name, value):
    if value == "update":
        raise ValueError(f"{name}='update' (running updaters such as prune or refresh over "
                         "an existing model's trees) is not implemented: gbm changes a model "
                         "only by training new rounds")
    return choice(("default",))(name, value)


def lambdarank_unbiased(name, value):
    if boolean(name, value):
        raise ValueError(f"{name}=True is not implemented: gbm's ranking objectives have no "
                         "position-bias estimation (XGBoost's unbiased LambdaMART for click "
                         "data); train with lambdarank_unbiased=False")
    return False


def feature_weights(name, value):
    """None, or a float64 array of one weight >= 0 per feature (the count is checked
    against the data in ``gbm.tree.sampling.ColumnSampler``). Equal weights (all 0 too) are
    the unweighted draw and become None, as does an empty array (XGBoost's "unset")."""
    if value is None:
        return None
    try:
        w = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of numbers, one per feature, got "
                        f"{type(value).__name__}") from None
    if w.ndim == 2 and w.shape[1] == 1:
        w = w[:, 0]  # a column, as XGBoost takes it
    if w.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional (one weight per feature), got shape "
                         f"{w.shape}")
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite and >= 0, got {w[i]} for feature {i}")
    if w.size == 0 or np.all(w == w[0]):
        return None
    w.setflags(write=False)
    return w


def base_score(name, value):
    """None, one real number, or XGBoost 3.2's vector: one per output (a list of floats;
    its length is checked against the outputs when the fit starts)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple, np.ndarray)):
        values = np.asarray(value, dtype=object).reshape(-1).tolist()
        if not values:
            raise ValueError(f"{name} must be a number or a non-empty list of them, got "
                             f"{value!r}")
        return [real()(f"{name}[{i}]", v) for i, v in enumerate(values)]
    return real()(name, value)
