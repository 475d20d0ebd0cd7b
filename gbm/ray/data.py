"""Ray Data datasets as the ranks of a gbm training read them.

On the driver (``with_row_ids``): a dataset is materialized and each row given its index
in the dataset's order (``Dataset.take_all()``'s) as the column ``_gbm_row``, block by
block: one small task counts each block's rows, one adds the ids. Ray Train then splits
the rows between the workers as it likes (``DataConfig``); each worker reads its shard
(``shard_rows``) and puts its rows in the order of their ids. The bin edges' row sample
and row sampling are keyed by the ids, so the model is the one ``gbm.train`` writes on
the whole dataset, however the rows were split.
"""
import numpy as np

ROW = "_gbm_row"


def _num_rows(table):
    return table.num_rows


def _with_ids(table, offset):
    import pyarrow as pa

    return table.append_column(ROW, pa.array(np.arange(offset, offset + table.num_rows,
                                                       dtype=np.int64)))


def with_row_ids(dataset):
    """``dataset`` with the int64 column ``_gbm_row``: each row's index in it."""
    import ray
    import ray.data

    refs = dataset.to_arrow_refs()
    counts = ray.get([ray.remote(_num_rows).remote(r) for r in refs])
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(int)
    add = ray.remote(_with_ids)
    return ray.data.from_arrow_refs([add.remote(r, int(o)) for r, o in zip(refs, offsets)])


def check_columns(dataset, name, columns):
    """ValueError naming the argument for each of ``columns`` (argument -> column name
    or list of them, None for none) that ``dataset`` has not."""
    have = list(dataset.schema().names)
    for arg, cols in columns.items():
        for col in ([cols] if isinstance(cols, str) else cols or []):
            if col not in have:
                raise ValueError(f"{arg}={col!r}: datasets[{name!r}] has no such column (its "
                                 f"columns: {', '.join(have)})")


def shard_rows(shard, columns):
    """A worker's shard (a ``DataIterator``) as arrays, rows in the order of their ids:
    ``{"X": float32 (n, f), "y", "ids", and "w", "margin", "qid" or None}``.
    ``columns``: ``label``, ``features`` (list), ``weight``, ``base_margin``, ``qid``."""
    import pyarrow as pa

    tables = [b for b in shard.iter_batches(batch_format="pyarrow", batch_size=None)]
    tables = [t for t in tables if t.num_rows]
    n = sum(t.num_rows for t in tables)
    features = columns["features"]
    if n == 0:
        return {"X": np.empty((0, len(features)), np.float32), "y": np.empty(0),
                "ids": np.empty(0, np.int64), "w": None, "margin": None, "qid": None}
    table = pa.concat_tables(tables)
    ids = _numbers(table, ROW, np.int64)
    order = np.argsort(ids, kind="stable")
    out = {"ids": ids[order],
           "X": np.column_stack([_numbers(table, c, np.float32) for c in features])[order],
           "y": _numbers(table, columns["label"], np.float64)[order]}
    for key, kind in (("weight", np.float64), ("base_margin", np.float64), ("qid", np.int64)):
        name = columns.get(key)
        out[{"weight": "w", "base_margin": "margin"}.get(key, key)] = \
            None if name is None else _numbers(table, name, kind)[order]
    return out


def _numbers(table, name, dtype):
    values = table.column(name).combine_chunks()
    if values.null_count and np.dtype(dtype).kind != "f":
        raise ValueError(f"column {name!r} holds {values.null_count} null value(s)")
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=dtype)
