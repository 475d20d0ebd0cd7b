"""``ParquetIter``: a ready ``gbm.DataIter`` over Parquet (or CSV) files, so that a
folder of files trains without a user-written iterator::

    it = gbm.ParquetIter("data/*.parquet", label="clicked", cache_prefix="/scratch/cache")
    dtrain = gbm.ExtMemQuantileDMatrix(it)

Each file is read in batches of at most ``batch_rows`` rows (Parquet: record batches of
pyarrow; CSV: pandas chunks); text columns become categories.
"""
import glob
import os

import numpy as np

from .iterator import DataIter

_KINDS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".txt": "csv"}


def data_files(spec):
    """The files of ``spec``: a file, a folder (its .parquet/.pq/.csv files), a glob
    pattern, or a list of those; sorted by name within a folder or pattern."""
    if isinstance(spec, (list, tuple)):
        return [f for s in spec for f in data_files(s)]
    spec = os.fspath(spec)
    if os.path.isdir(spec):
        found = sorted(os.path.join(spec, f) for f in os.listdir(spec)
                       if os.path.splitext(f)[1].lower() in _KINDS)
        if not found:
            raise FileNotFoundError(f"{spec!r} is a folder without .parquet or .csv files")
        return found
    if os.path.isfile(spec):
        return [spec]
    found = sorted(glob.glob(spec))
    if not found:
        raise FileNotFoundError(f"{spec!r}: no such file, folder, or files matching the pattern")
    return found


class ParquetIter(DataIter):
    """Batches read from Parquet (or CSV) files, as a ``gbm.DataIter``.

    Parameters
    ----------
    files : str, path or list
        A file, a folder (its .parquet, .pq and .csv files), a glob pattern, or a list.
    label : str
        The label column; every other column (less ``weight``, ``qid``, ``drop``) is a
        feature.
    weight, qid : str, optional
        A sample-weight and a query-id column.
    drop : list of str, optional
        Columns that are not features.
    batch_rows : int
        Most rows a batch holds (65,536 by default).
    cache_prefix, min_cache_page_bytes
        As ``gbm.DataIter``'s (where an ``ExtMemQuantileDMatrix`` writes its pages).
    on_batch : callable, optional
        Called with the rows of each batch given (a progress bar).
    """

    def __init__(self, files, label, *, weight=None, qid=None, drop=None, batch_rows=65536,
                 cache_prefix=None, min_cache_page_bytes=None, on_batch=None):
        super().__init__(cache_prefix=cache_prefix, min_cache_page_bytes=min_cache_page_bytes)
        self.files = data_files(files)
        for f in self.files:
            if os.path.splitext(f)[1].lower() not in _KINDS:
                raise ValueError(f"{f!r}: expected a .parquet, .pq or .csv file")
        if isinstance(batch_rows, bool) or not isinstance(batch_rows, (int, np.integer)) \
                or batch_rows < 1:
            raise ValueError(f"batch_rows must be a positive integer, got {batch_rows!r}")
        self.label, self.weight, self.qid = label, weight, qid
        self.drop = list(drop or [])
        self.batch_rows, self.on_batch = int(batch_rows), on_batch
        self._frames = None

    def _read(self):
        for path in self.files:
            if _KINDS[os.path.splitext(path)[1].lower()] == "csv":
                import pandas as pd

                yield from ((path, chunk) for chunk in
                            pd.read_csv(path, chunksize=self.batch_rows))
            else:
                import pyarrow.parquet as pq

                with pq.ParquetFile(path) as f:
                    for part in f.iter_batches(batch_size=self.batch_rows):
                        yield path, part.to_pandas()

    def reset(self):
        self._frames = None

    def next(self, input_data):
        if self._frames is None:
            self._frames = self._read()
        for path, frame in self._frames:
            if len(frame) == 0:
                continue
            input_data(**self._fields(frame, path))
            if self.on_batch is not None:
                self.on_batch(len(frame))
            return True
        return False

    def _fields(self, frame, path):
        import pandas as pd

        columns = [str(c) for c in frame.columns]
        named = {"label": self.label, "weight": self.weight, "qid": self.qid}
        for role, name in named.items():
            if name is not None and name not in columns:
                raise ValueError(f"{path!r} has no {role} column {name!r}; its columns are "
                                 f"{columns}")
        out = {role: frame[name].to_numpy(dtype=np.int64 if role == "qid" else np.float64)
               for role, name in named.items() if name is not None}
        if "weight" in out and "qid" in out:  # a batch gives one weight per query group
            out["weight"] = _group_weights(out["weight"], out["qid"], path, self.weight)
        features = frame.drop(columns=[n for n in list(named.values()) + self.drop
                                       if n is not None and n in columns])
        for name in features.columns:
            dtype = features[name].dtype
            if dtype == object or (pd.api.types.is_string_dtype(dtype)
                                   and not isinstance(dtype, pd.CategoricalDtype)):
                features[name] = features[name].astype("category")
        out["data"] = features
        return out


def _group_weights(w, qid, path, column):
    """float64 (n_runs,): a batch's per-row ``weight`` column beside ``qid``, as one weight
    per query group (run of equal qid) of the batch, what ``DataIter`` batches give with
    ``qid=`` (XGBoost's form); a group's rows must all carry its weight."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    first = np.repeat(w[starts], np.diff(np.r_[starts, qid.shape[0]]))
    differ = np.flatnonzero(first != w)
    if differ.size:
        row = int(differ[0])
        raise ValueError(f"{path!r}: the weight column {column!r} holds {float(w[row])!r} for "
                         f"a row of query group qid={int(qid[row])} whose first row holds "
                         f"{float(first[row])!r}; with a qid column, the weight is the query "
                         "group's: every row of a group carries the same weight")
    return w[starts]
