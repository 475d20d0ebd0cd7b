"""gbm's binary DMatrix file: what ``DMatrix.save_binary`` writes and ``DMatrix(path)``
reads back (XGBoost's own binary buffers are a different format, not read).

Layout, little-endian::

    MAGIC (12 bytes) | version u32 | header length u32 | header (JSON, UTF-8)
    | the arrays the header lists, one after another, raw | CRC-32 u32 of all before it

The header holds the shape, the features' layout ("dense": a float32 matrix, written
when no entry is missing; "csr": indptr int64, indices int32, values float32 of the
entries present), each array's name, dtype and shape, and the feature names and types.
The features are the ones a fit reads (``gbm.data.inputs.check_X``: float32, missing
entries absent), so the same data given densely or sparsely writes the same bytes;
labels, weights and margins are float64, as a ``DMatrix`` keeps them. A pandas
``category`` column is written as its codes, its categories in the header (version 2:
a reader of version 1 refuses such a file instead of losing them), and read back as a
``category`` column of a DataFrame. A file whose magic, version, length, checksum or
arrays do not check out is refused with the reason.
"""
import json
import os
import struct
import zlib

import numpy as np

from .sparse import from_dense

MAGIC = b"gbm.DMatrix\n"
VERSION = 1
CATEGORIES_VERSION = 2  # a file whose header lists categories
_FRAME = struct.Struct("<II")  # version, header length
_CRC = struct.Struct("<I")
# what each optional field is stored as: the dtype a DMatrix keeps it in
INFO_FIELDS = {"label": "<f8", "weight": "<f8", "base_margin": "<f8", "group": "<i8",
               "qid": "<i8", "label_lower_bound": "<f8", "label_upper_bound": "<f8"}
_FEATURE_ARRAYS = {"dense": {"values": "<f4"},
                   "csr": {"indptr": "<i8", "indices": "<i4", "values": "<f4"}}


class BinaryFileError(ValueError):
    """A file that is not, or no longer, a binary DMatrix file gbm can read."""


def is_binary_file(path):
    """Whether ``path`` starts with gbm's binary DMatrix magic."""
    with open(path, "rb") as f:
        return f.read(len(MAGIC)) == MAGIC


def write(path, features, info, feature_names, feature_types, categories=None):
    """Write ``features`` (a float32 ndarray or a ``SparseMatrix``, as ``check_X``
    returns them, category columns as codes), ``info`` (field name -> array or None, the
    ``INFO_FIELDS``), the feature names and types (lists or None) and ``categories`` (per
    feature None or its category labels, str or numbers; None: no category column) to
    ``path``."""
    n_rows, n_cols = features.shape
    if isinstance(features, np.ndarray) and np.isnan(features).any():
        features = from_dense(features)
    elif not isinstance(features, np.ndarray) and features.nnz == n_rows * n_cols:
        features = features.dense_rows(0, n_rows)  # nothing missing: written densely
    if isinstance(features, np.ndarray):
        layout, arrays = "dense", {"values": features}
    else:
        layout, arrays = "csr", {"indptr": features.indptr, "indices": features.indices,
                                 "values": features.data}
    arrays = {name: np.ascontiguousarray(arrays[name], dtype=dtype)
              for name, dtype in _FEATURE_ARRAYS[layout].items()}
    for name, dtype in INFO_FIELDS.items():
        if info.get(name) is not None:
            arrays[name] = np.ascontiguousarray(info[name], dtype=dtype)
    header = {"shape": [int(n_rows), int(n_cols)], "layout": layout,
              "arrays": [[name, a.dtype.str, list(a.shape)] for name, a in arrays.items()],
              "feature_names": feature_names, "feature_types": feature_types}
    version = VERSION
    if categories is not None and any(c is not None for c in categories):
        header["categories"] = [None if c is None else [_plain(v) for v in c]
                                for c in categories]
        version = CATEGORIES_VERSION
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    parts = [MAGIC, _FRAME.pack(version, len(text)), text]
    parts += [a.tobytes() for a in arrays.values()]
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
    with open(os.fspath(path), "wb") as f:
        for part in parts:
            f.write(part)
        f.write(_CRC.pack(crc))


def read(path):
    """``(features, info, feature_names, feature_types)`` from a file ``write`` wrote;
    features as a float32 ndarray or a SciPy CSR matrix. Raises ``BinaryFileError``."""
    with open(path, "rb") as f:
        raw = f.read()
    start = len(MAGIC) + _FRAME.size
    if len(raw) < start or raw[:len(MAGIC)] != MAGIC:
        raise BinaryFileError(f"{path} is not a gbm binary DMatrix file")
    version, size = _FRAME.unpack_from(raw, len(MAGIC))
    if version not in (VERSION, CATEGORIES_VERSION):
        raise BinaryFileError(f"{path} is a gbm binary DMatrix file of version {version}; "
                              f"this gbm reads versions {VERSION} and {CATEGORIES_VERSION}")
    header = _header(raw, start, size, path)
    lengths = [int(np.dtype(dtype).itemsize * np.prod(shape, dtype=np.int64))
               for _, dtype, shape in header["arrays"]]
    expected = start + size + sum(lengths) + _CRC.size
    if len(raw) != expected:
        raise BinaryFileError(f"{path} is truncated or damaged: {len(raw)} bytes where its "
                              f"header announces {expected}")
    (crc,) = _CRC.unpack_from(raw, expected - _CRC.size)
    if zlib.crc32(memoryview(raw)[:expected - _CRC.size]) != crc:
        raise BinaryFileError(f"{path} is damaged: its checksum does not match its bytes")
    arrays, at = {}, start + size
    for (name, dtype, shape), length in zip(header["arrays"], lengths):
        arrays[name] = np.frombuffer(raw, dtype=dtype, count=length // np.dtype(dtype).itemsize,
                                     offset=at).reshape(shape).copy()
        at += length
    features = _features(header, arrays, path)
    if header.get("categories") is not None:
        features = _frame(features, header["categories"], header["feature_names"], path)
    info = {name: arrays.get(name) for name in INFO_FIELDS}
    return features, info, header["feature_names"], header["feature_types"]


def _plain(label):
    """A category label as JSON holds it (NumPy scalars as Python numbers)."""
    return label.item() if hasattr(label, "item") else label


def _frame(features, categories, names, path):
    """A pandas DataFrame of the file's features, its category columns rebuilt from their
    codes and categories."""
    import pandas as pd

    if len(categories) != features.shape[1]:
        raise BinaryFileError(f"{path} is damaged: its categories do not match its columns")
    dense = features if isinstance(features, np.ndarray) else np.where(
        _stored(features), features.toarray(), np.nan).astype(np.float32)
    columns = {}
    for f, cats in enumerate(categories):
        name = names[f] if names is not None else f
        if cats is None:
            columns[name] = dense[:, f]
            continue
        codes = np.where(np.isnan(dense[:, f]), -1, dense[:, f]).astype(np.int64)
        if codes.max(initial=-1) >= len(cats):
            raise BinaryFileError(f"{path} is damaged: column {f} has a code past its "
                                  "categories")
        columns[name] = pd.Categorical.from_codes(codes, categories=cats)
    return pd.DataFrame(columns)


def _stored(csr):
    """bool (n_rows, n_cols): which entries of a SciPy CSR matrix are stored."""
    out = np.zeros(csr.shape, dtype=bool)
    out[np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr)), csr.indices] = True
    return out


def _header(raw, start, size, path):
    """The JSON header, its arrays' names and dtypes checked against the known ones."""
    try:
        header = json.loads(raw[start:start + size].decode())
        layout = header["layout"]
        known = dict(_FEATURE_ARRAYS[layout], **INFO_FIELDS)
        for name, dtype, shape in header["arrays"]:
            if known[name] != dtype or not all(isinstance(s, int) and s >= 0 for s in shape):
                raise ValueError(name)
        n_rows, n_cols = header["shape"]
        if not (isinstance(n_rows, int) and isinstance(n_cols, int) and n_rows >= 0
                and n_cols >= 0):
            raise ValueError("shape")
        for key in ("feature_names", "feature_types"):
            if header[key] is not None and not isinstance(header[key], list):
                raise ValueError(key)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, IndexError):
        raise BinaryFileError(f"{path} is damaged: its header cannot be read") from None
    return header


def _features(header, arrays, path):
    """The feature matrix of a file's arrays, its shape and CSR structure checked."""
    n_rows, n_cols = header["shape"]
    values = arrays.get("values")
    if header["layout"] == "dense":
        if values is None or values.shape != (n_rows, n_cols):
            raise BinaryFileError(f"{path} is damaged: its values do not have the shape "
                                  f"({n_rows}, {n_cols})")
        return values
    import scipy.sparse as sp

    indptr, indices = arrays.get("indptr"), arrays.get("indices")
    if indptr is None or indices is None or values is None \
            or indptr.shape != (n_rows + 1,) or indices.shape != values.shape \
            or indptr[0] != 0 or indptr[-1] != values.shape[0] or (np.diff(indptr) < 0).any() \
            or (indices.shape[0] and (indices.min() < 0 or indices.max() >= n_cols)):
        raise BinaryFileError(f"{path} is damaged: its sparse entries are not a valid "
                              f"({n_rows}, {n_cols}) CSR matrix")
    return sp.csr_matrix((values, indices, indptr), shape=(n_rows, n_cols))
