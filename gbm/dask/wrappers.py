"""What every Dask estimator shares: a constructor taking its local twin's arguments plus
the Dask ones, and lazy predictions over the row partitions."""
import inspect

import numpy as np

from .data import dask_kind
from ..data.inputs import is_device_array


def dask_init(local, extra):
    """``__init__`` of the Dask twin of ``local``: its arguments plus the keyword-only
    ``extra`` ones (a dict of their defaults, or names defaulting to None), in a signature
    scikit-learn's ``get_params`` reads."""
    extra = dict(extra) if isinstance(extra, dict) else dict.fromkeys(extra)

    def __init__(self, *args, **kwargs):
        values = {name: kwargs.pop(name, default) for name, default in extra.items()}
        local.__init__(self, *args, **kwargs)
        for name, value in values.items():
            setattr(self, name, value)

    sig = inspect.signature(local.__init__)
    added = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d)
             for n, d in extra.items()]
    __init__.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + added)
    return __init__


def map_rows(X, fn, n_out, dtype):
    """``fn`` over the row partitions of ``X``, lazily: a dask array for a dask array
    (``(n,)``, or ``(n, n_out)``; CuPy-backed for CuPy blocks), a pandas-backed dask
    Series / DataFrame for a DataFrame. Empty partitions give empty results (the local
    predict refuses 0 rows)."""
    shape = (0,) if n_out is None else (0, n_out)

    def block(part):
        return fn(part) if part.shape[0] else _meta(part, shape, dtype)

    if dask_kind(X) == "array":
        if X.ndim == 2 and len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        meta = _meta(X, shape, dtype)
        if n_out is None:
            return X.map_blocks(block, drop_axis=1, dtype=dtype, meta=meta)
        return X.map_blocks(block, chunks=(X.chunks[0], (n_out,)), dtype=dtype, meta=meta)
    import pandas as pd

    if n_out is None:
        return X.map_partitions(lambda part: pd.Series(block(part), index=part.index),
                                meta=pd.Series(dtype=dtype))
    return X.map_partitions(lambda part: pd.DataFrame(block(part), index=part.index),
                            meta=pd.DataFrame({i: pd.Series(dtype=dtype) for i in range(n_out)}))


def _meta(X, shape, dtype):
    """An empty ``shape`` array of the kind the local estimator predicts on ``X``'s blocks
    (``X``: a dask array or a block): CuPy for CuPy blocks (GPU input predicts on the
    GPU) unless CuPy cannot hold the values (string labels come back as NumPy), NumPy
    otherwise. Without it, dask declares every result NumPy-backed."""
    if is_device_array(getattr(X, "_meta", X)) and np.dtype(dtype).kind in "biuf":
        import cupy

        return cupy.empty(shape, dtype=dtype)
    return np.empty(shape, dtype=dtype)
