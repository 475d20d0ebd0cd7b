"""Polars frames read as pandas ones: the one place gbm turns a polars ``DataFrame`` (or
``Series``, one column) into the pandas frame the rest of ``gbm.data`` reads. Each column
keeps its kind: numbers and booleans as Arrow-backed pandas columns (nulls stay missing,
integers stay integers), ``Categorical`` and ``Enum`` columns as pandas ``category``
columns with the same categories in the same order. Needs pyarrow (polars' own
``to_pandas`` does)."""


def is_polars(X):
    """Whether ``X`` is a polars DataFrame or Series."""
    return type(X).__module__.startswith("polars") and hasattr(X, "to_pandas")


def polars_to_pandas(X):
    """A pandas DataFrame of the polars DataFrame or Series ``X``."""
    import pandas as pd

    if hasattr(X, "to_frame") and not hasattr(X, "columns"):  # a Series: one column
        X = X.to_frame()
    columns = {}
    for name in X.columns:
        col = X.get_column(name)
        if col.dtype.__class__.__name__ in ("Categorical", "Enum"):
            columns[name] = col.to_pandas()
        else:
            columns[name] = col.to_pandas(use_pyarrow_extension_array=True)
    return pd.DataFrame(columns)
