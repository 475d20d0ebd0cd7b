"""A ``DMatrix`` read from a file, as XGBoost's URIs name it::

    gbm.DMatrix("train.txt?format=libsvm")                 # LIBSVM, 0-based indices
    gbm.DMatrix("train.txt?format=libsvm&indexing_mode=1") # 1-based indices
    gbm.DMatrix("data.csv?format=csv&label_column=0")      # CSV, its first column the label
    gbm.DMatrix("train.dmatrix")                           # a file DMatrix.save_binary wrote

A path may be a ``str`` or an ``os.PathLike`` (``~`` is expanded). A text file needs its
``format`` (as XGBoost 3 requires); a file without one must be gbm's binary DMatrix file.
URI parameters: LIBSVM ``indexing_mode`` (0: 0-based, > 0: 1-based, < 0: 1-based when no
index is 0); CSV ``label_column``, ``weight_column`` (0-based, -1: none) and
``delimiter`` (","). The ``#cache`` suffix (XGBoost's former external memory for text
files, which XGBoost 3 removed too) is refused: an ``ExtMemQuantileDMatrix`` over a
``DataIter`` (``gbm.ParquetIter`` reads CSV and Parquet files) is the external-memory path.
"""
import errno
import os

from . import binary_format
from .text_formats import read_csv, read_libsvm

_XGBOOST_BINARY_MAGIC = b"\x01\xab\xff\xff"  # XGBoost's DMatrix buffers start with it
# each format's URI parameters: name -> (type, default)
_PARAMETERS = {"libsvm": {"indexing_mode": (int, 0)},
               "csv": {"label_column": (int, -1), "weight_column": (int, -1),
                       "delimiter": (str, ",")}}


class MissingFileError(FileNotFoundError, ValueError):
    """A file that is not there. A ``FileNotFoundError``, and a ``ValueError`` as
    XGBoost's ``XGBoostError`` is, so that code written for either catches it."""


def is_uri(data):
    """Whether ``data`` names a file (a ``str`` or an ``os.PathLike``)."""
    return isinstance(data, str) or hasattr(data, "__fspath__")


def split_uri(uri):
    """``(path, parameters, cache)`` of ``path[?key=value&...][#cache]``; ``parameters``
    a dict of str, ``cache`` the text after ``#`` or None."""
    rest, hash_, cache = uri.partition("#")
    path, _, query = rest.partition("?")
    parameters = {}
    for item in query.split("&") if query else ():
        key, equals, value = item.partition("=")
        if not key or not equals:
            raise ValueError(f"{uri!r}: URI parameter {item!r} is not key=value")
        if key in parameters:
            raise ValueError(f"{uri!r}: URI parameter {key!r} is given twice")
        parameters[key] = value
    return path, parameters, (cache if hash_ else None)


def read_uri(data):
    """What the file ``data`` names holds, as a dict: ``data`` (the features: a float32
    NumPy array, or a SciPy CSR matrix), the ``binary_format.INFO_FIELDS`` (label,
    weight, ...; None where absent), ``feature_names`` and ``feature_types``."""
    uri = os.fspath(data)
    if isinstance(uri, bytes):
        uri = os.fsdecode(uri)
    path, parameters, cache = split_uri(uri)
    if cache is not None:
        raise ValueError(
            f"{uri!r}: the '#{cache}' suffix asks for XGBoost's external memory of a text "
            "file, which XGBoost 3 removed and gbm does not have: train on an "
            "ExtMemQuantileDMatrix over a DataIter (gbm.ParquetIter reads CSV and Parquet "
            "files in batches), or drop the suffix to read the file into memory")
    path = os.path.expanduser(path)
    if not os.path.exists(path):
        raise MissingFileError(errno.ENOENT, "DMatrix: no such file", path)
    if os.path.isdir(path):
        raise ValueError(f"DMatrix: {path!r} is a folder; give a file")
    fmt = parameters.pop("format", None)
    if fmt is None:
        return _read_binary(path, parameters, uri)
    if fmt not in _PARAMETERS:
        raise ValueError(f"{uri!r}: unknown format={fmt!r}; gbm reads format=libsvm and "
                         "format=csv (and, without format=, its binary DMatrix files)")
    args = _arguments(fmt, parameters, uri)
    read = read_libsvm if fmt == "libsvm" else read_csv
    found = read(path, **args)
    fields = dict.fromkeys(binary_format.INFO_FIELDS)
    fields.update(data=found.data, label=found.label, weight=found.weight, qid=found.qid,
                  feature_names=None, feature_types=None)
    return fields


def _arguments(fmt, parameters, uri):
    """A format's URI parameters converted to their types (unknown names refused)."""
    known = _PARAMETERS[fmt]
    args = {}
    for key, value in parameters.items():
        if key not in known:
            raise ValueError(f"{uri!r}: unknown URI parameter {key!r} for format={fmt}; "
                             f"its parameters are {sorted(known)}")
        kind = known[key][0]
        try:
            args[key] = kind(value)
        except ValueError:
            raise ValueError(f"{uri!r}: URI parameter {key}={value!r} must be an "
                             "integer") from None
    if "delimiter" in args and len(args["delimiter"]) != 1:
        raise ValueError(f"{uri!r}: delimiter={args['delimiter']!r} must be one character")
    return args


def _read_binary(path, parameters, uri):
    """A file without ``format=``: gbm's binary DMatrix file, or a clear refusal."""
    if parameters:
        raise ValueError(f"{uri!r}: URI parameters {sorted(parameters)} without format=; "
                         "give format=libsvm or format=csv for a text file")
    with open(path, "rb") as f:
        start = f.read(len(binary_format.MAGIC))
    if start.startswith(_XGBOOST_BINARY_MAGIC):
        raise ValueError(f"{path!r} is an XGBoost binary DMatrix buffer, which gbm does not "
                         "read: load the data from its source (or a text file, "
                         "'path?format=libsvm') and save it with gbm's DMatrix.save_binary")
    if start != binary_format.MAGIC:
        raise ValueError(f"{path!r} is not a gbm binary DMatrix file; the URI parameter "
                         f"`format` is required for loading text data: '{path}?format=libsvm' "
                         f"or '{path}?format=csv'")
    features, info, names, types = binary_format.read(path)
    return dict(info, data=features, feature_names=names, feature_types=types)
