"""Rows of a data set taken by index: a feature matrix's rows in its own kind
(``take_rows``), and the query groups such rows hold (``query_runs``); what ``gbm.cv``'s
folds and ``DMatrix.slice`` take."""
import numpy as np


def query_runs(rows, ptr, what):
    """The query groups of ``rows`` (row indices, ordered as the fold holds them): each
    group's index and size, in order. Every group must be whole and its rows together."""
    n_groups = ptr.shape[0] - 1
    row_group = np.repeat(np.arange(n_groups), np.diff(ptr))[rows]
    starts = np.flatnonzero(np.concatenate(([True], row_group[1:] != row_group[:-1])))
    groups = row_group[starts]
    sizes = np.diff(np.append(starts, rows.shape[0]))
    split = np.flatnonzero(np.bincount(groups, minlength=n_groups) > 1)
    if split.size:
        raise ValueError(f"{what} put the rows of query group {split[0]} apart; each group's "
                         "rows must be together")
    short = np.flatnonzero(sizes != np.diff(ptr)[groups])
    if short.size:
        g = groups[short[0]]
        raise ValueError(f"{what} hold {sizes[short[0]]} of query group {g}'s "
                         f"{np.diff(ptr)[g]} rows; a fold keeps each group whole")
    return groups, sizes


def take_rows(X, rows):
    """Rows ``rows`` of a feature matrix, in its own kind: NumPy (or a nested list),
    pandas (``iloc``: category columns stay categories), SciPy sparse (as CSR), CuPy."""
    if hasattr(X, "iloc"):
        return X.iloc[rows]
    if hasattr(X, "tocsr"):
        return X.tocsr()[rows]
    if hasattr(X, "__cuda_array_interface__") and not isinstance(X, np.ndarray):
        import cupy

        return cupy.asarray(X)[cupy.asarray(rows)]
    return np.asarray(X)[rows]
