"""A Spark DataFrame as the ranks of a gbm training read it.

On the driver (``training_frame``): the columns a fit needs are checked (a clear error
naming the parameter and the column), selected under gbm's own names, and each row is
given its place in the DataFrame: the index of its input partition and its position
there among the rows of its kind (trained on, or the validation set's). Then the rows are
repartitioned over the ranks (a query's rows kept together), with those two columns.

On each rank (``rank_rows``, ``global_ids``): the rank's Arrow batches become NumPy
arrays (dense float32 features, or CSR parts when the vector column holds sparse
vectors), and each row's global index, its position in ``DataFrame.collect()``'s order
among the rows of its kind, comes from the partitions' row counts, all-reduced over the
ranks. The bin edges' row sample and row sampling are keyed by that index, so the model
is the one ``gbm.train`` writes on the collected rows, however Spark split them.
"""
import numpy as np

PART, POS = "_gbm_part", "_gbm_pos"
Y, W, MARGIN, QID, VALID, X = "_gbm_y", "_gbm_w", "_gbm_margin", "_gbm_qid", "_gbm_valid", "_gbm_x"
VTYPE, VSIZE, VIDX, VVAL = "_gbm_vtype", "_gbm_vsize", "_gbm_vidx", "_gbm_vval"
_POS_BITS = 33  # monotonically_increasing_id(): partition index << 33 + position in it


def check_num_workers(value):
    """``value`` as an int, or ValueError naming ``num_workers``."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"num_workers must be an integer >= 1 (the training's barrier "
                         f"tasks), got {value!r}")
    return int(value)


def check_slots(spark, num_workers):
    """ValueError when the cluster cannot run ``num_workers`` tasks at once: a barrier
    stage would otherwise wait for slots (Spark retries it for minutes) before failing."""
    sc = spark.sparkContext
    try:
        jsc = sc._jsc.sc()
        slots = int(jsc.maxNumConcurrentTasks(
            jsc.resourceProfileManager().resourceProfileFromId(0)))
    except Exception:  # noqa: BLE001 - an API Spark does not document: its default then
        slots = int(sc.defaultParallelism)
    if num_workers > slots:
        raise ValueError(f"num_workers={num_workers} is more than the {slots} task slot(s) "
                         "of the Spark cluster: training runs one barrier task per worker, "
                         "all at once; lower num_workers or add executors or cores")


def _column(dataset, role, name):
    if not isinstance(name, str) or name not in dataset.columns:
        raise ValueError(f"{role}={name!r}: the DataFrame has no such column (its columns: "
                         f"{', '.join(dataset.columns)})")
    return dataset.schema[name].dataType


def feature_columns(dataset, features_col):
    """``(kind, select expressions, feature names or None)`` of ``features_col``: a
    vector column ("vector": its fields, unwrapped), an array column ("array") or a list
    of numeric columns ("columns")."""
    from pyspark.ml.linalg import VectorUDT
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, BooleanType, NumericType

    if isinstance(features_col, (list, tuple)):
        if not features_col:
            raise ValueError("features_col is an empty list; give a vector column, an array "
                             "column or a list of numeric columns")
        for name in features_col:
            t = _column(dataset, "features_col", name)
            if not isinstance(t, (NumericType, BooleanType)):
                raise TypeError(f"features_col: column {name!r} is {t.simpleString()}; a list "
                                "of feature columns takes numeric columns")
        return ("columns", [F.col(n).cast("double").alias(f"{X}{i}")
                            for i, n in enumerate(features_col)], [str(n) for n in features_col])
    t = _column(dataset, "features_col", features_col)
    if isinstance(t, VectorUDT):
        v = F.unwrap_udt(F.col(features_col))
        return ("vector", [v.type.alias(VTYPE), v.size.alias(VSIZE), v.indices.alias(VIDX),
                           v.values.alias(VVAL)], None)
    if isinstance(t, ArrayType) and isinstance(t.elementType, NumericType):
        return ("array", [F.col(features_col).cast("array<double>").alias(X)], None)
    raise TypeError(f"features_col={features_col!r} is a {t.simpleString()} column; give a "
                    "vector column, an array of numbers, or a list of numeric columns")


def training_frame(dataset, features_col, label_col, num_workers, weight_col=None,
                   base_margin_col=None, qid_col=None, validation_indicator_col=None):
    """``(frame, layout)``: the rows for ``num_workers`` barrier tasks and what its
    columns hold (``layout``: ``kind``, ``n_parts``, ``feature_names`` and which of the
    optional columns are there)."""
    from pyspark.sql import functions as F

    kind, features, names = feature_columns(dataset, features_col)
    _column(dataset, "label_col", label_col)
    cols = features + [F.col(label_col).cast("double").alias(Y)]
    layout = {"kind": kind, "feature_names": names,
              "n_features": len(features) if kind == "columns" else None}
    for role, name, alias, cast in (("weight_col", weight_col, W, "double"),
                                    ("base_margin_col", base_margin_col, MARGIN, None),
                                    ("qid_col", qid_col, QID, "long"),
                                    ("validation_indicator_col", validation_indicator_col,
                                     VALID, "boolean")):
        layout[alias] = name is not None
        if name is not None:
            _column(dataset, role, name)
            c = F.col(name)
            cols.append((c.cast(cast) if cast else c).alias(alias))
    part = F.spark_partition_id()
    frame = dataset.select(*cols, part.alias(PART))
    if validation_indicator_col is None:
        pos = F.monotonically_increasing_id() - F.shiftleft(part.cast("long"), _POS_BITS)
        frame = dataset.select(*cols, part.alias(PART), pos.alias(POS))
    else:  # positions among the partition's rows of the same kind: one pass in order
        from pyspark.sql.types import LongType, StructField, StructType

        schema = StructType(list(frame.schema.fields) + [StructField(POS, LongType(), False)])
        frame = frame.mapInArrow(_positions, schema)
    layout["n_parts"] = dataset.rdd.getNumPartitions()
    if qid_col is not None:  # a query's rows on one rank, in order there (sorted by id)
        frame = frame.repartition(num_workers, QID)
    else:
        frame = frame.repartition(num_workers)
    return frame, layout


def _positions(batches):
    """``POS``: each row's position among its partition's rows with the same ``VALID``."""
    import pyarrow as pa

    seen = [0, 0]  # rows trained on, validation rows, so far in this partition
    for batch in batches:
        valid = batch.column(VALID).to_numpy(zero_copy_only=False)
        valid = np.asarray(valid, dtype=object) == True  # noqa: E712 - null: trained on
        pos = np.empty(len(valid), np.int64)
        for v in (0, 1):
            mask = valid == bool(v)
            pos[mask] = seen[v] + np.arange(int(mask.sum()))
            seen[v] += int(mask.sum())
        yield pa.RecordBatch.from_arrays(batch.columns + [pa.array(pos)],
                                         names=batch.schema.names + [POS])


# -- on a rank ---------------------------------------------------------------------------
def rank_rows(batches, layout, missing):
    """This rank's rows as arrays: ``feature_rows``' and ``y``, ``part``, ``pos``,
    ``valid`` and the optional ``w`` (weights), ``margin``, ``qid`` (None when absent)."""
    import pyarrow as pa

    batches = list(batches)
    table = pa.Table.from_batches(batches) if batches else None
    n = 0 if table is None else table.num_rows
    out = feature_rows(table, layout, missing)
    if n == 0:
        out.update(part=np.empty(0, np.int64), pos=np.empty(0, np.int64),
                   valid=np.zeros(0, bool), y=np.empty(0))
        for name in (W, MARGIN, QID):
            out[name] = None
        return out
    col = lambda name: table.column(name).combine_chunks()  # noqa: E731
    out["part"] = _numbers(col(PART), np.int64)
    out["pos"] = _numbers(col(POS), np.int64)
    out["valid"] = (_numbers(col(VALID), np.float64) == 1) if layout[VALID] \
        else np.zeros(n, bool)
    out["y"] = _numbers(col(Y), np.float64)
    out[W] = _numbers(col(W), np.float64) if layout[W] else None
    out[QID] = _numbers(col(QID), np.int64, "qid_col") if layout[QID] else None
    out[MARGIN] = _values(col(MARGIN)) if layout[MARGIN] else None
    return out


def feature_rows(table, layout, missing):
    """The features of an Arrow table's rows (None: no rows): a dict with ``n``, ``X``
    (float32 values, flat or (n, f), or a CSR triple ``(data, indices, indptr)``),
    ``sizes`` (the set of the rows' feature counts) and ``sparse``; entries equal to
    ``missing`` (None: none) become NaN."""
    n = 0 if table is None else table.num_rows
    if n == 0:
        return {"n": 0, "X": None, "sizes": set(), "sparse": False}
    if layout["kind"] == "columns":
        X_ = np.column_stack([_numbers(table.column(f"{X}{i}").combine_chunks(), np.float32)
                              for i in range(layout["n_features"])])
        out = {"X": X_, "sizes": {X_.shape[1]}, "sparse": False}
    elif layout["kind"] == "array":
        values, lengths = _lists(table.column(X).combine_chunks(), "features_col")
        out = {"X": values, "sizes": set(np.unique(lengths).tolist()), "sparse": False}
    else:
        out = _vectors(table)
    out["n"] = n
    if missing is not None and not np.isnan(missing):
        data = out["X"][0] if out["sparse"] else out["X"]
        data[data == missing] = np.nan
    return out


def _numbers(array, dtype, role=None):
    """A numeric Arrow column as NumPy (nulls: NaN for floats; an error for integers)."""
    if array.null_count and np.dtype(dtype).kind != "f":
        raise ValueError(f"{role or 'a column'} holds {array.null_count} null value(s)")
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=dtype)


def _values(array):
    """A numeric or array-of-numbers column as float64 (n,) or (n, k)."""
    import pyarrow as pa

    if pa.types.is_list(array.type) or pa.types.is_large_list(array.type):
        values, lengths = _lists(array, "base_margin_col")
        if len(set(lengths.tolist())) > 1:
            raise ValueError("base_margin_col holds arrays of different lengths "
                             f"{sorted(set(lengths.tolist()))}")
        return values.reshape(len(lengths), -1).astype(np.float64)
    return _numbers(array, np.float64)


def _lists(array, role):
    """A list column's values (float32, flat) and each row's length."""
    if array.null_count:
        raise ValueError(f"{role} holds {array.null_count} null row(s)")
    offsets = np.asarray(array.offsets.to_numpy(), dtype=np.int64)
    values = np.asarray(array.flatten().to_numpy(zero_copy_only=False), dtype=np.float32)
    return values, np.diff(offsets)


def _vectors(table):
    """The unwrapped vector column: dense float32 rows when every vector is dense, else
    a CSR triple (a dense vector's entries all stored)."""
    vtype = np.asarray(table.column(VTYPE).combine_chunks().to_numpy(zero_copy_only=False))
    values, lengths = _lists(table.column(VVAL).combine_chunks(), "features_col")
    dense = vtype == 1
    if dense.all():
        return {"X": values, "sizes": set(np.unique(lengths).tolist()), "sparse": False}
    sizes = np.where(dense, lengths, np.asarray(
        table.column(VSIZE).combine_chunks().to_numpy(zero_copy_only=False), dtype=float))
    starts = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.arange(starts[-1], dtype=np.int64) - np.repeat(starts[:-1], lengths)
    sparse_entries = np.repeat(~dense, lengths)
    idx = table.column(VIDX).combine_chunks().flatten().to_numpy(zero_copy_only=False)
    indices[sparse_entries] = np.asarray(idx, dtype=np.int64)
    return {"X": (values, indices, starts),
            "sizes": set(np.unique(sizes).astype(int).tolist()), "sparse": True}


def feature_count(collective, rows):
    """``(number of features, sparse)``, the same on every rank (one exchange): sparse
    when any rank's vectors were. ValueError when the rows' vectors or arrays are of
    different sizes anywhere, or there are no rows."""
    sizes, sparse = set(), False
    for s, sp in collective.allgather((sorted(rows["sizes"]), rows["sparse"])):
        sizes.update(s)
        sparse = sparse or sp
    if len(sizes) > 1:
        raise ValueError(f"features_col holds vectors of different sizes {sorted(sizes)[:5]}; "
                         "every row needs the same number of features")
    if not sizes:
        raise ValueError("the DataFrame has no rows to train on")
    return int(sizes.pop()), sparse


def matrix(rows, take, n_features, sparse):
    """The rows ``take`` (indices, in that order) as X: float32 (k, f), or a SciPy CSR
    matrix when ``sparse`` (any rank's vectors were; a dense row's entries all stored,
    zeros included)."""
    import scipy.sparse as sp

    X = rows["X"]
    if X is None:
        return sp.csr_matrix((0, n_features), dtype=np.float32) if sparse \
            else np.empty((0, n_features), np.float32)
    if isinstance(X, tuple):
        data, indices, starts = X
        return sp.csr_matrix((data, indices, starts), shape=(rows["n"], n_features))[take]
    dense = X.reshape(rows["n"], n_features)[take]
    if not sparse:
        return dense
    k = dense.shape[0]
    return sp.csr_matrix((dense.ravel(), np.tile(np.arange(n_features), k),
                          np.arange(0, k * n_features + 1, n_features)),
                         shape=(k, n_features))


def global_ids(collective, rows, n_parts):
    """Each row's index among the rows of its kind (trained on / validation) in the
    DataFrame's order: the rows before its partition (counts all-reduced over the
    ranks) plus its position in the partition. int64 (n,)."""
    counts = np.zeros((2, n_parts), np.int64)
    kind = rows["valid"].astype(np.int64)
    np.maximum.at(counts, (kind, rows["part"]), rows["pos"] + 1)
    counts = collective.allreduce(counts, "max")
    offsets = np.concatenate([np.zeros((2, 1), np.int64), np.cumsum(counts, axis=1)], axis=1)
    return offsets[kind, rows["part"]] + rows["pos"]
