"""Query groups for learning to rank: ``group`` (sizes) or ``qid`` (an id per row), the
per-group weights, checked once here.

As in XGBoost's ``DMatrix``, a query's rows are consecutive: ``group=[3, 4]`` means rows
0-2 are one query and rows 3-6 the next; ``qid`` must be sorted (non-decreasing), each
run of equal ids being one query. Weights are per query group, not per row.
"""
import numpy as np

from ..collective import LOCAL
from ..numerics.exact import exact_sum
from .inputs import check_sample_weight


class QueryGroups:
    """Consecutive query groups of a data set.

    Attributes
    ----------
    ptr : int64 (n_groups + 1,), group ``g`` owns rows ``[ptr[g], ptr[g + 1])``
    weight : float64 (n_groups,), one weight per group (ones when none was given)
    first_row : int64 (n_groups,), each group's first row's index in the whole data set
        (its position here, until ``locate`` says otherwise)
    scaled_weight : float64 (n_groups,), the weights scaled to average 1 over every rank's
        groups (XGBoost's ranking objectives weigh groups so; set by ``locate``, the
        weights themselves until then)
    """

    def __init__(self, ptr, weight=None):
        self.ptr = np.ascontiguousarray(ptr, dtype=np.int64)
        n = self.ptr.shape[0] - 1
        self.weight = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
        self.first_row = np.ascontiguousarray(self.ptr[:-1])
        self.scaled_weight = self.weight

    def locate(self, row_ids=None, collective=LOCAL):
        """These groups as one rank's part of the whole training data: ``row_ids`` (int64
        (n_rows,)) gives each row's index in it (None: its position), and the weights'
        average is taken over every rank's groups (two exchanges). Returns self."""
        if row_ids is not None:
            self.first_row = np.ascontiguousarray(row_ids[self.ptr[:-1]], dtype=np.int64)
        n_groups = int(collective.allreduce(np.array([self.n_groups], np.int64), "sum")[0])
        self.scaled_weight = self.weight * (n_groups / exact_sum(self.weight, collective))
        return self

    @property
    def n_groups(self):
        return self.ptr.shape[0] - 1

    def row_weight(self):
        """float64 (n_rows,): each row carries its group's weight."""
        return np.repeat(self.weight, np.diff(self.ptr))


def _integers(value, name):
    """``value`` as 1-d integers: int64, or (query ids of 2**63 or more, which XGBoost
    keeps as uint64) uint64; the ids' order and equality are what query groups read."""
    arr = np.asarray(value, dtype=object) if isinstance(value, (list, tuple)) else \
        np.asarray(value)  # a list's Python integers as they are (not float64)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {arr.shape}")
    if arr.dtype.kind == "O":  # Python integers beyond int64 (a list of uint64 ids)
        arr = _object_integers(arr, name)
    if arr.dtype.kind == "f" and np.isfinite(arr).all() and (arr == np.floor(arr)).all():
        big = arr.size and arr.max() >= 2.0**63
        if arr.size and (arr.min() < (0 if big else -2.0**63) or arr.max() >= 2.0**64):
            raise ValueError(_NOT_64_BITS.format(name=name))
        arr = arr.astype(np.uint64 if big else np.int64)
    if arr.dtype.kind not in "iub":
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arr.size \
            and arr.max() >= np.uint64(2**63):
        return arr.astype(np.uint64)
    return arr.astype(np.int64)


_NOT_64_BITS = ("{name} holds values beyond 64-bit integers: query ids are int64, or "
                "uint64 as XGBoost keeps them (not both negative ids and ids of 2**63 or "
                "more)")


def _object_integers(arr, name):
    """Objects (a list's items) as int64, else uint64, else as NumPy reads them (floats,
    strings: refused by the caller)."""
    items = arr.tolist()
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
        return np.asarray(items)
    for dtype in (np.int64, np.uint64):
        try:
            return np.array(items, dtype=dtype)
        except OverflowError:
            continue
    raise ValueError(_NOT_64_BITS.format(name=name))


def qid_array(value, name="qid"):
    """Query ids as ``_integers`` reads them: int64, or uint64 when one is 2**63 or
    more (never wrapped around to negative ids, nor an ``OverflowError``)."""
    return _integers(value, name)


def join_qids(parts):
    """The query ids of several batches (``qid_array``'s, each) as one array: int64, or
    uint64 when a batch has ids of 2**63 or more (then no batch may have negative ones)."""
    if not any(p.dtype == np.uint64 for p in parts):
        return np.concatenate(parts)
    negative = [i for i, p in enumerate(parts) if p.dtype != np.uint64 and (p < 0).any()]
    if negative:
        raise ValueError(f"batch {negative[0]} has negative query ids and another batch ids "
                         "of 2**63 or more: no 64-bit integer type holds both")
    return np.concatenate([p.astype(np.uint64) for p in parts])


def pop_qid(X, qid):
    """``(X, qid)`` with a DataFrame's ``qid`` column (XGBRanker's convention) split from
    ``X``: the frame without it, and the column as the frame holds it (a pandas or cuDF
    Series; a lazy dask Series of a dask DataFrame). Any other ``X`` comes back as given,
    with ``qid``. Raises ``ValueError`` when ``X`` has the column and ``qid`` is given too.
    """
    if hasattr(X, "columns") and hasattr(X, "drop") and "qid" in list(X.columns):
        if qid is not None:
            raise ValueError("found both a 'qid' column in X and the qid argument; pass one")
        return X.drop(columns="qid"), X["qid"]
    return X, qid


def group_ptr(group=None, qid=None, n_rows=None, what="", shard=False):
    """Row offsets of the query groups from ``group`` sizes or ``qid`` per row.

    Parameters
    ----------
    group : array-like of int (n_groups,), optional; sizes of consecutive groups
    qid : array-like of int (n_rows,), optional; sorted query id of each row
    n_rows : int, rows of the data
    what : str, prefix naming the data in error messages (e.g. "eval_set[0] ")
    shard : bool, one rank's part of a distributed data set (it may have no groups)

    Returns
    -------
    int64 (n_groups + 1,) or None when neither is given.
    """
    if group is not None and qid is not None:
        raise ValueError(f"pass either {what}group or {what}qid, not both")
    if group is not None:
        sizes = _integers(group, f"{what}group")
        if sizes.shape[0] == 0 and not (shard and n_rows == 0):
            raise ValueError(f"{what}group is empty; it must list the size of every query group")
        if (sizes < 1).any():
            bad = int(np.flatnonzero(sizes < 1)[0])
            raise ValueError(f"{what}group[{bad}] = {sizes[bad]}; group sizes must be >= 1")
        if sizes.sum() != n_rows:
            raise ValueError(f"{what}group sizes sum to {sizes.sum()} but the data has {n_rows} "
                             "rows; they must match")
        return np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    if qid is not None:
        ids = _integers(qid, f"{what}qid")
        if ids.shape[0] != n_rows:
            raise ValueError(f"{what}qid has {ids.shape[0]} entries but the data has {n_rows} "
                             "rows; they must match")
        down = np.flatnonzero(ids[1:] < ids[:-1])
        if down.size:
            row = int(down[0]) + 1
            raise ValueError(
                f"{what}qid must be sorted in non-decreasing order (each query's rows "
                f"together, as XGBoost requires): qid[{row}] = {ids[row]} follows "
                f"qid[{row - 1}] = {ids[row - 1]}; sort the rows by qid first"
            )
        if n_rows == 0:
            return np.zeros(1, dtype=np.int64)  # an empty shard: no groups
        starts = np.flatnonzero(np.diff(ids)) + 1
        return np.concatenate(([0], starts, [n_rows])).astype(np.int64)
    return None


def group_weight(sample_weight, n_groups, what="", shard=False):
    """Per-group weights: None -> ones; else ``n_groups`` finite values >= 0, not all 0."""
    return check_sample_weight(sample_weight, n_groups, what=what, per="group", shard=shard)


def make_queries(group, qid, sample_weight, n_rows, what="", shard=False):
    """``QueryGroups`` with their weights, or None when neither group nor qid is given."""
    ptr = group_ptr(group, qid, n_rows, what, shard)
    if ptr is None:
        return None
    return QueryGroups(ptr, group_weight(sample_weight, ptr.shape[0] - 1, what, shard))


def training_queries(objective, group, qid, sample_weight, n_rows, shard=False):
    """``(queries, row_weights)`` of the training data.

    A ranking objective needs ``group`` or ``qid``, and ``sample_weight`` is then per
    query group; other objectives check ``group`` / ``qid`` but do not use them
    (``queries`` is None) and take per-row weights.
    """
    if not objective.needs_queries:
        group_ptr(group, qid, n_rows, shard=shard)
        return None, check_sample_weight(sample_weight, n_rows, shard=shard)
    queries = make_queries(group, qid, sample_weight, n_rows, shard=shard)
    if queries is None:
        raise ValueError(f"objective {objective.name!r} needs query groups: pass group= (sizes "
                         "of consecutive query groups) or qid= (a sorted query id per row)")
    return queries, queries.row_weight()
