"""A ``DataIter``'s batches joined into one data set in memory: what ``DMatrix(DataIter)``
holds. XGBoost 3 builds an external-memory DMatrix from the iterator; gbm reads the
batches once and keeps their rows together (for data larger than memory, an
``ExtMemQuantileDMatrix`` keeps binned pages on disk instead).

Batches are joined in their kind: NumPy arrays row after row, pandas (or Arrow) frames
with ``pandas.concat`` (a ``category`` column's categories the union over the batches, in
the first batch's order then new ones as they come), sparse matrices (or a mix of sparse
and dense batches) as one ``SparseMatrix`` (a dense batch's NaN absent, its zeros kept).
"""
import numpy as np

from .inputs import check_X
from .iterator import BATCH_FIELDS, DataIter, batches
from .sparse import SparseMatrix, from_dense, is_scipy_sparse


def is_data_iter(data):
    """Whether ``data`` is a ``DataIter`` (or has its ``next`` and ``reset``)."""
    return isinstance(data, DataIter) or (hasattr(data, "next") and hasattr(data, "reset")
                                          and not hasattr(data, "shape"))


def concatenate_batches(it):
    """The batches of ``it`` joined: a dict with ``data`` and each of ``BATCH_FIELDS``
    (None where the batches give none), ``feature_names`` and ``feature_types`` (the
    first batch's)."""
    parts, fields = [], {name: [] for name in BATCH_FIELDS}
    first = None
    for i, batch in batches(it):
        first = batch if first is None else first
        parts.append(batch["data"])
        n = np.shape(parts[-1])[0]
        for name in BATCH_FIELDS:
            fields[name].append(batch.get(name))
            if name in ("label", "label_lower_bound", "label_upper_bound", "base_margin",
                        "qid") and batch.get(name) is not None \
                    and np.shape(batch[name])[0] != n:
                raise ValueError(f"batch {i}: {name} has {np.shape(batch[name])[0]} rows but "
                                 f"the batch's data has {n}")
    if first is None:
        raise ValueError("the data iterator gave no batches; it needs at least 1 batch")
    out = {"data": _join(parts), "feature_names": first.get("feature_names"),
           "feature_types": first.get("feature_types")}
    for name, values in fields.items():
        given = [v is not None for v in values]
        if any(given) and not all(given):
            b = given.index(not given[0])
            raise ValueError(f"batch {b} {'gives' if given[b] else 'has no'} {name} but batch "
                             f"0 {'does' if given[0] else 'does not'}: give it in every batch "
                             "or in none")
        out[name] = np.concatenate([np.asarray(v) for v in values]) if all(given) else None
    if out["group"] is not None:
        raise ValueError("batches give group= (sizes of query groups), which a batch cannot "
                         "split; give qid= (each row's query id) instead")
    if out["qid"] is not None and out["weight"] is not None:
        out["weight"] = _group_weights(fields["weight"], fields["qid"])
    return out


def _group_weights(weights, qids):
    """One weight per query group of the whole stream, from each batch's weights per its
    own groups (a group going on from the previous batch given its weight again)."""
    kept, last = [], None
    for w, q in zip(weights, qids):
        w, q = np.asarray(w, np.float64).reshape(-1), np.asarray(q).reshape(-1)
        if q.size and last is not None and q[0] == last and w.size:
            w = w[1:]
        kept.append(w)
        last = q[-1] if q.size else last
    return np.concatenate(kept)


def _join(parts):
    """The batches' features as one matrix of their kind."""
    if any(type(p).__module__.startswith("pyarrow") for p in parts):
        parts = [p.to_pandas() if hasattr(p, "to_pandas") else p for p in parts]
    frames = [hasattr(p, "columns") and hasattr(p, "dtypes") for p in parts]
    if all(frames):
        return _join_frames(parts)
    if any(frames):
        raise TypeError("the data iterator gives DataFrames in some batches and arrays in "
                        "others; give every batch in one kind")
    if any(is_scipy_sparse(p) or isinstance(p, SparseMatrix) for p in parts):
        checked = [check_X(p, name=f"batch {i} data", shard=True) for i, p in enumerate(parts)]
        width = checked[0].shape[1]
        return SparseMatrix.concatenate(
            [c if isinstance(c, SparseMatrix) else from_dense(c) for c in checked], width)
    arrays = [np.asarray(p) for p in parts]
    if len({a.shape[1:] for a in arrays}) > 1:
        raise ValueError(f"the batches have {sorted({a.shape[1:] for a in arrays})} columns; "
                         "every batch needs the same columns")
    return np.concatenate(arrays)


def _join_frames(frames):
    import pandas as pd

    columns = [list(f.columns) for f in frames]
    if any(c != columns[0] for c in columns):
        raise ValueError(f"the batches' columns differ: {columns[0]} and another batch's "
                         f"{next(c for c in columns if c != columns[0])}")
    frames = [f.copy() for f in frames]
    for name in columns[0]:
        dtypes = [f[name].dtype for f in frames]
        kinds = [isinstance(d, pd.CategoricalDtype) for d in dtypes]
        if any(k != kinds[0] for k in kinds):
            b = kinds.index(not kinds[0])
            raise ValueError(f"Inconsistent feature types between batches: column {name!r} is "
                             f"{'' if kinds[0] else 'not '}categorical in batch 0 but "
                             f"{'' if kinds[b] else 'not '}in batch {b}")
        if kinds[0] and any(d != dtypes[0] for d in dtypes):
            union = pd.api.types.union_categoricals([f[name] for f in frames]).categories
            for f in frames:
                f[name] = f[name].cat.set_categories(union)
    return pd.concat(frames, ignore_index=True)
