"""Feature names and feature types of a ``DMatrix``, checked as XGBoost checks them, and
the types a DataFrame's columns give by default.

XGBoost's type codes: ``"c"`` categorical; ``"q"``, ``"float"``, ``"int"`` and ``"i"``
(an indicator, 0/1) numeric. A frame's columns default to ``"int"`` (integers),
``"float"`` (floats), ``"i"`` (booleans) and ``"c"`` (``category``), as XGBoost's.
"""
import numpy as np

FEATURE_TYPES = ("q", "float", "int", "i", "c")
_RESERVED = ("[", "]", "<")  # they would break a text dump's split conditions


def _as_list(value, what):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{what} must be a sequence of strings, one per feature, got "
                        f"{type(value).__name__}")
    return list(value)


def check_feature_names(names, n_features):
    """``names`` as a list of str, one per feature, unique and free of ``[``, ``]``, ``<``;
    None stays None. ``n_features`` None: the length is not checked."""
    if names is None:
        return None
    names = _as_list(names, "feature_names")
    if n_features is not None and len(names) != n_features:
        raise ValueError(f"feature_names has {len(names)} names but the data has {n_features} "
                         "columns; give one name per feature")
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise ValueError(f"feature_names must be strings; got {bad[0]!r} "
                         f"({type(bad[0]).__name__})")
    if len(set(names)) != len(names):
        seen, duplicates = set(), []
        for n in names:
            if n in seen and n not in duplicates:
                duplicates.append(n)
            seen.add(n)
        raise ValueError(f"feature_names must be unique. Duplicates found: {duplicates}")
    bad = [n for n in names if any(c in n for c in _RESERVED)]
    if bad:
        raise ValueError(f"feature_names may not contain [, ] or < (they would break a model "
                         f"dump's split conditions); got {bad[0]!r}")
    return names


def check_feature_types(types, n_features):
    """``types`` as a list of XGBoost's type codes, one per feature; None stays None."""
    if types is None:
        return None
    types = _as_list(types, "feature_types")
    bad = [t for t in types if t not in FEATURE_TYPES]
    if bad:
        raise ValueError(f"feature_types holds {bad[0]!r}; expected XGBoost's codes "
                         f"{list(FEATURE_TYPES)}")
    if n_features is not None and len(types) != n_features:
        raise ValueError(f"feature_types has {len(types)} entries but the data has "
                         f"{n_features} columns")
    return types


def frame_feature_types(frame):
    """Each column's type code from a pandas DataFrame's dtypes (``category``: ``"c"``,
    booleans ``"i"``, integers ``"int"``, other numbers ``"float"``); None when a column
    is of another kind (gbm.data.inputs reports it where the data is read)."""
    import pandas as pd

    types = []
    for dtype in frame.dtypes:
        if isinstance(dtype, pd.CategoricalDtype):
            types.append("c")
        elif isinstance(dtype, pd.SparseDtype):
            types.append(_numeric_code(np.dtype(dtype.subtype)))
        elif pd.api.types.is_bool_dtype(dtype):
            types.append("i")
        elif pd.api.types.is_integer_dtype(dtype):
            types.append("int")
        elif pd.api.types.is_numeric_dtype(dtype):
            types.append("float")
        else:
            return None
    return types


def _numeric_code(dtype):
    return {"b": "i", "i": "int", "u": "int"}.get(dtype.kind, "float")
