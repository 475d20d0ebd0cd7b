"""Data given as a stream of batches (XGBoost's ``DataIter`` protocol), binned without the
whole float matrix in memory: the two passes ``QuantileDMatrix`` and
``ExtMemQuantileDMatrix`` (``gbm.bins.quantile``) make over an iterator.

The bins are the in-memory fit's, whatever the batches: a row's index in the whole data
set is its batch's offset plus its place in the batch, so the hash-chosen binning sample
(``gbm.bins.binning.sample_mask``) is the same rows, and the edges the same function of them.

* Pass 1 (``scan``): every batch's rows counted and checked, its labels, weights and base
  margins kept, its categories seen, which features hold missing values, and the rows
  that may be in the sample. The sample's size depends on the row count, unknown until
  the end: a row is kept while its hash is below the limit for the rows seen so far (a
  limit that only falls as rows come), and the end keeps those below the final limit.
* Pass 2 (``bin_batches``): ``reset()``, each batch again, read as pass 1 read it, its
  categories encoded and its rows binned.

A batch is read the same way in both passes (``Scan.read``: its features as float32, a
categorical column holding codes into the batch's own categories), and a cheap
fingerprint of what was read (CRC-32 of the features, of the batch's categories and of
each field, ``_fingerprint``) is kept from pass 1: a batch that differs in pass 2 (an
iterator that shuffles or draws new rows on ``reset()``, other labels, a category column
of another type) is refused naming it, never trained with one pass's labels beside
another's rows. What reads the same (a float64 batch given as float32 of the same
values) is the same batch. A batch may have no rows. A column that is a pandas
``category`` column in some batches may hold no value at all in others, as numbers (a
text column of a CSV chunk where every cell is empty): it is categorical, missing there.
"""
import zlib

import numpy as np

from ..data.categorical import category_columns, as_frame, merge_categories, \
    fit_categories, recode
from ..data.dmatrix import replace_missing
from ..data.feature_info import frame_feature_types
from ..data.iterator import BATCH_FIELDS, batches
from ..data.queries import join_qids, qid_array
from ..data.sparse import SparseMatrix
from .binning import BinMapper, missing_columns, sample_mask


class Scan:
    """Pass 1 over a stream (see the module's text). After ``run``: ``n_rows``,
    ``n_features``, ``batch_rows`` (rows per batch), ``feature_names``, ``feature_types``,
    ``categories`` (per feature None or the categories seen, or None), the labels and
    other fields concatenated (``info``), ``has_missing`` and the sample (``Xs``, ``ws``)."""

    def __init__(self, missing, sample_size, seed, collect_sample=True):
        self.missing, self.sample_size, self.seed = missing, sample_size, seed
        self.collect_sample = collect_sample
        self.batch_rows, self.n_rows, self.n_features = [], 0, None
        self.feature_names = self.feature_types = None
        self.frame_types = None  # the first batch's DataFrame's type codes (its dtypes)
        self._fields = {name: [] for name in BATCH_FIELDS}
        self._cats, self._order = [], {}
        self._empty = []  # per batch, the columns holding no value
        self.fingerprints = []  # per batch, ``_fingerprint``'s
        self._first_pass = True
        self._ids, self._rows, self._w = [], [], []
        self._held, self._kept = 0, 0  # sample rows held; held after the last filtering
        self.has_missing = None
        self._last_group = None  # (batch, qid, weight) of the last query group seen

    def run(self, it, feature_names=None, feature_types=None):
        self.feature_names, self.feature_types = feature_names, feature_types
        for i, batch in batches(it):
            self._batch(i, batch)
        if not self.batch_rows:
            raise ValueError("the data iterator gave no batches; it needs at least 1 batch")
        if self.n_rows == 0:
            raise ValueError("the data iterator's batches have 0 rows in all; training needs "
                             "at least one")
        self.info = {}
        for name, parts in self._fields.items():
            given = [p is not None for p in parts]
            if any(given) and not all(given):
                b = given.index(not given[0])
                raise ValueError(f"batch {b} {'gives' if given[b] else 'has no'} {name} but "
                                 f"batch 0 {'does' if given[0] else 'does not'}: give it in "
                                 "every batch or in none")
            self.info[name] = None if not all(given) else (
                join_qids(parts) if name == "qid" else np.concatenate(parts))
        if self.info["group"] is not None:
            raise ValueError("batches give group= (sizes of query groups), which a batch cannot "
                             "split; give qid= (each row's query id) instead")
        self.categories = None
        if any(c is not None for c in self._cats):  # as the ranks of a distributed fit do
            self.categories = merge_categories(
                self._batch_categories(),
                {f: _category_order(lists) for f, lists in self._order.items()},
                self.feature_names)
        if self.collect_sample:
            self._final_sample()
        self._first_pass = False
        return self

    def read(self, i, batch):
        """Batch ``i`` read as both passes read it: ``(frame or None, features (float32
        matrix or ``SparseMatrix``; a categorical column holds codes into the batch's own
        categories), the batch's categories (per feature None or its list; None),
        fingerprint)``. Pass 1's first batch gives the feature names and types."""
        name = f"batch {i}"
        X = replace_missing(batch["data"], self.missing, name=f"{name} data")
        first = i == 0 and self._first_pass
        if first:
            self.feature_names = self.feature_names or batch.get("feature_names")
            self.feature_types = self.feature_types or batch.get("feature_types")
        cat_features = None
        if self.feature_types is not None:
            cat_features = [f for f, t in enumerate(self.feature_types) if t == "c"] or None
        frame = as_frame(X)
        if frame is not None and self.feature_names is None and first:
            self.feature_names = [str(c) for c in frame.columns]
        if frame is not None and i == 0:
            self.frame_types = frame_feature_types(frame)
        if frame is not None and self.feature_names is not None \
                and [str(c) for c in frame.columns] != list(self.feature_names):
            raise ValueError(f"{name} has columns {[str(c) for c in frame.columns]} but the "
                             f"first batch's are {list(self.feature_names)}")
        arr, cats = fit_categories(X if frame is None else frame, cat_features,
                                   self.feature_names, name=f"{name} data", part=True)
        return frame, arr, cats, _fingerprint(arr, cats, batch)

    def _batch(self, i, batch):
        name = f"batch {i}"
        frame, arr, cats, fingerprint = self.read(i, batch)
        n, width = arr.shape
        if self.n_features is None:
            self.n_features = width
            self.has_missing = np.zeros(width, np.uint8)
        elif width != self.n_features:
            raise ValueError(f"{name} has {width} columns but batch 0 has {self.n_features}; "
                             "every batch needs the same columns")
        self.fingerprints.append(fingerprint)
        for f in category_columns(frame):
            self._order.setdefault(f, []).append(frame.iloc[:, f].cat.categories.tolist())
        self._cats.append(cats)
        row_weight = batch.get("weight")
        for field in BATCH_FIELDS:
            value = batch.get(field)
            if field == "weight" and value is not None and batch.get("qid") is not None:
                value, row_weight = self._group_weights(i, value, batch["qid"], n)
                self._fields[field].append(value)
                continue
            self._fields[field].append(None if value is None else _per_row(
                value, n, field, name, np.int64 if field in ("qid", "group") else np.float64))
        if isinstance(arr, SparseMatrix):
            stored = arr.stored_per_feature()
            missing, empty = stored < n, np.flatnonzero(stored == 0).tolist()
        else:  # the columns without a value (a category column may come as numbers)
            missing = missing_columns(arr)
            empty = [f for f in np.flatnonzero(missing).tolist()
                     if np.isnan(arr[0, f]) and np.isnan(arr[:, f]).all()]
        self.has_missing |= missing.astype(np.uint8)
        self._empty.append(set(range(width)) if n == 0 else set(empty))
        if self.collect_sample:
            self._sample_batch(arr, row_weight, n)
        self.batch_rows.append(n)
        self.n_rows += n

    def _batch_categories(self):
        """Each batch's categories (per feature None or its list) for ``merge_categories``:
        a feature that is categorical in some batches has no categories (``[]``) in a
        batch where it holds no value at all (a text column of a CSV chunk whose cells
        are all empty reads as numbers); one that holds numbers there is refused."""
        per_batch = [list(c) if c is not None else [None] * self.n_features
                     for c in self._cats]
        for f in range(self.n_features):
            kinds = [c[f] is not None for c in per_batch]
            if all(kinds) or not any(kinds):
                continue
            first = kinds.index(True)
            for b, c in enumerate(per_batch):
                if c[f] is None and f not in self._empty[b]:
                    column = repr(self.feature_names[f]) if self.feature_names else str(f)
                    raise ValueError(
                        f"Inconsistent number of categories between batches: batch {b} "
                        f"column {column} holds numbers, but batch {first} gives it "
                        "as a categorical ('category') column: a column is categorical in "
                        "every batch (a batch where it holds no value at all may give it as "
                        "numbers) or in none")
                if c[f] is None:
                    c[f] = []
        return per_batch

    def _group_weights(self, i, weight, qid, n):
        """Batch ``i``'s ``weight`` beside ``qid``: one weight per query group (run of
        equal qid) of the batch, as XGBoost takes them. Returns ``(group weights float64,
        without a first group that continues the previous batch's last one, row weights
        float64 (n,))``: the groups' weights of the whole stream are then those of the
        in-memory ``DMatrix(X, qid=qid, weight=...)``, each row weighted as its group
        (the binning sample's weights). A group split between batches is one group (its
        weight given in both, the same)."""
        ids = _per_row(qid, n, "qid", f"batch {i}", np.int64)
        w = np.asarray(weight, np.float64).reshape(-1)
        starts = np.flatnonzero(np.r_[n > 0, ids[1:] != ids[:-1]]) if n else np.zeros(0, int)
        if w.shape[0] != starts.shape[0]:
            raise ValueError(
                f"batch {i}: weight has {w.shape[0]} values but the batch has "
                f"{starts.shape[0]} query groups (runs of equal qid); with qid=, weight= gives "
                "one weight per query group of the batch, as in XGBoost")
        row_weight = np.repeat(w, np.diff(np.r_[starts, n]))
        if n == 0:
            return w, row_weight
        last = self._last_group
        if last is not None and int(ids[0]) == last[1]:  # the previous batch's group goes on
            if w[0] != last[2]:
                raise ValueError(
                    f"batch {i}: query group qid={int(ids[0])} goes on from batch {last[0]} "
                    f"with weight {float(w[0])!r} but has weight {float(last[2])!r} there; a "
                    "query group has one weight: give it in both batches")
            w = w[1:]
        self._last_group = (i, int(ids[-1]), float(row_weight[-1]))
        return w, row_weight

    def _sample_batch(self, arr, weight, n):
        """Keep the rows of this batch that may be in the sample of a data set of at least
        the rows seen so far, and now and then drop those kept before that no longer may:
        when the rows held have grown by half since the last time (each row is tested
        a bounded number of times on average, so the batches cost time linear in the
        rows, one-row batches too; at most half again the sample is held)."""
        seen = self.n_rows + n
        ids = np.arange(self.n_rows, seen, dtype=np.int64)
        rows = np.flatnonzero(sample_mask(ids, seen, self.sample_size, self.seed))
        if isinstance(arr, SparseMatrix):
            dense = arr.take_rows(rows).dense_rows(0, rows.shape[0])
        else:
            dense = arr[rows]
        w = np.ones(rows.shape[0]) if weight is None else \
            np.asarray(weight, np.float64).reshape(-1)[rows]
        self._ids.append(ids[rows])
        self._rows.append(np.asarray(dense, np.float32))
        self._w.append(w)
        self._held += rows.shape[0]
        if self._held > max(1024, self._kept + self._kept // 2):
            self._filter(seen)

    def _filter(self, seen):
        """The rows held joined, less those not in the sample of ``seen`` rows."""
        ids = np.concatenate(self._ids)
        keep = sample_mask(ids, seen, self.sample_size, self.seed)
        self._ids = [ids[keep]]
        self._rows = [np.concatenate(self._rows)[keep]]
        self._w = [np.concatenate(self._w)[keep]]
        self._held = self._kept = int(keep.sum())

    def _final_sample(self):
        self._filter(self.n_rows)
        self.Xs = np.ascontiguousarray(self._rows[0])
        self.ws = self._w[0]
        self._ids = self._rows = self._w = None

    def n_categories(self):
        """int64 (n_features,): each categorical feature's category count, -1 elsewhere
        (what ``BinMapper`` reads), or None."""
        if self.categories is None:
            return None
        return np.array([-1 if c is None else len(c) for c in self.categories], np.int64)


def _category_order(lists):
    """The order of a pandas ``category`` column's categories over the batches: the
    dtype's when every batch has the same dtype (the order one DataFrame of every batch
    has); else, when each batch made its own (text read file by file), the sorted union
    (what ``astype("category")`` of the whole column gives)."""
    if all(c == lists[0] for c in lists):
        return lists[0]
    union = set().union(*lists)
    try:
        return sorted(union)
    except TypeError:  # labels of several types: first seen first
        seen = {}
        for c in lists:
            seen.update(dict.fromkeys(c))
        return list(seen)


def _per_row(value, n, field, name, dtype):
    arr = qid_array(value, f"{name}: {field}") if field == "qid" else np.asarray(value, dtype)
    if arr.shape[0:1] != (n,):
        raise ValueError(f"{name}: {field} has {arr.shape[0] if arr.ndim else 'no'} rows but "
                         f"the batch's data has {n}")
    return arr


def fit_mapper(scan, max_bin, sample_size, seed, n_threads=1):
    """The ``BinMapper`` of the scanned stream: the in-memory fit's edges."""
    mapper = BinMapper(max_bin, sample_size, seed)
    return mapper.fit_sample(scan.Xs, scan.ws, scan.has_missing, scan.n_categories(),
                             n_threads)


def bin_batches(it, scan, mapper, categories, fitted):
    """Pass 2: ``(i, row offset, bins uint8/uint16 (rows, n_features))`` for each batch,
    checked against pass 1 (``scan``): the same batches, each with the same fingerprint
    (its rows, their order, labels and every field, categories)."""
    offset = 0
    seen = 0
    for i, batch in batches(it):
        seen = i + 1
        if i >= len(scan.batch_rows):
            raise ValueError(f"the data iterator gave {i + 1} or more batches after reset() but "
                             f"{len(scan.batch_rows)} the first time: reset() must start again "
                             "from the first batch, and the batches must be the same")
        frame, arr, own, fingerprint = scan.read(i, batch)
        _check_same_batch(i, fingerprint, scan.fingerprints[i], arr.shape,
                          (scan.batch_rows[i], scan.n_features))
        pandas = category_columns(frame)
        numeric = [f for f, c in enumerate(own or []) if c is not None and f not in pandas]
        arr = recode(arr, own, categories, numeric, scan.feature_names, f"batch {i} data")
        yield i, offset, mapper.transform(arr, fitted_on_X=fitted)
        offset += arr.shape[0]
    if seen != len(scan.batch_rows):
        raise ValueError(f"the data iterator gave {seen} batches after reset() but "
                         f"{len(scan.batch_rows)} the first time: reset() must start again "
                         "from the first batch")


def _check_same_batch(i, fingerprint, first, shape, first_shape):
    """Batch ``i`` of pass 2 must be pass 1's: its shape and ``_fingerprint``."""
    if tuple(shape) != tuple(first_shape):
        raise ValueError(f"batch {i} has shape {tuple(shape)} after reset() but "
                         f"{tuple(first_shape)} the first time: reset() must start again from "
                         "the first batch, and the batches must be the same")
    differ = [part for part in fingerprint if fingerprint[part] != first.get(part)]
    if differ:
        what = {"data": "its rows (feature values or their order)",
                "categories": "its categories"}
        raise ValueError(
            f"batch {i} differs between the data iterator's passes: "
            f"{', '.join(what.get(p, p) for p in differ)} after reset() are not those of "
            "the first pass; reset() must start again from the first batch and give the "
            "same batches (an iterator that shuffles or draws anew on reset() would pair one "
            "pass's labels with another pass's rows)")


def _fingerprint(arr, cats, batch):
    """A cheap fingerprint of a batch as read: ``{part: CRC-32}`` of its features (the
    float32 matrix, or a ``SparseMatrix``'s arrays), its categories (those it holds, per
    feature), and each field (as float64, query ids as integers; None when not given)."""
    parts = (arr.indptr, arr.indices, arr.data) if isinstance(arr, SparseMatrix) else (arr,)
    # a column without a category is the same whether categorical or numbers (all missing)
    held = [c or None for c in cats or ()]
    out = {"data": _crc(parts),
           "categories": zlib.crc32(repr(held if any(held) else None).encode())}
    for field in BATCH_FIELDS:
        value = batch.get(field)
        if value is None:
            out[field] = None
            continue
        try:
            value = qid_array(value) if field in ("qid", "group") else \
                np.asarray(value, np.float64)
        except (TypeError, ValueError, OverflowError):
            value = np.frombuffer(repr(value).encode(), np.uint8)
        out[field] = _crc((value,))
    return out


def _crc(arrays):
    crc = 0
    for a in arrays:
        a = np.ascontiguousarray(a)
        crc = zlib.crc32(repr((a.dtype.str, a.shape)).encode(), crc)
        crc = zlib.crc32(a.reshape(-1).view(np.uint8), crc)
    return crc
