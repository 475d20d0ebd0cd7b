"""Model files by their names, as XGBoost chooses: ``.json`` holds gbm's JSON model
(``gbm.io.gbm_json``), ``.ubj`` the same content in UBJSON (``gbm.io.ubjson``: binary JSON,
smaller, every float64 exact). Another name is written as UBJSON with a warning, and read
as whichever of the two its bytes are, with a warning; the bytes of ``save_raw`` are read
by their first bytes too. Files are written atomically (``gbm.io.atomic``).

XGBoost's model schema (``format="xgboost"``) is written the same way: JSON, or UBJSON for
a ``.ubj`` name, in the form XGBoost's reader takes (``typed_arrays=False``).
"""
import os
import warnings

from . import gbm_json, ubjson, validation
from .atomic import write_atomic
from .model_bytes import read_bytes, sniff
from .validation import MAX_NESTING

SUFFIXES = {".json": "json", ".ubj": "ubj"}
RAW_FORMATS = ("json", "ubj")


def format_of(path):
    """"json" or "ubj" by the path's suffix (any case); None for another name."""
    return SUFFIXES.get(os.path.splitext(os.fspath(path))[1].lower())


def to_bytes(booster, raw_format, estimator=None):
    """The model file's bytes in ``raw_format`` ("json" or "ubj")."""
    if raw_format == "json":
        return gbm_json.dumps(booster, estimator).encode("utf-8")
    if raw_format == "ubj":
        return ubjson.dumps(gbm_json.checked_dict(booster, estimator))
    raise ValueError(f"Unknown model format: raw_format must be one of {list(RAW_FORMATS)}, "
                     f"got {raw_format!r}")


def _format_to_write(path):
    fmt = format_of(path)
    if fmt is None:
        warnings.warn(f"Saving model in the UBJSON format as default: {os.fspath(path)!r} ends "
                      "in neither .json nor .ubj; name the file .json or .ubj to choose the "
                      "format", UserWarning, stacklevel=4)
        fmt = "ubj"
    return fmt


def save(booster, path, estimator=None):
    """Write the model to ``path`` in the format its name chooses, atomically: serialised
    first, so a model that cannot be written leaves an existing file alone."""
    path = os.path.expanduser(os.fspath(path))
    write_atomic(path, to_bytes(booster, _format_to_write(path), estimator))


def save_xgboost(booster, path):
    """Write the model in XGBoost's schema (``gbm.io.xgboost_json.to_xgboost``): JSON, or
    UBJSON as XGBoost's reader takes it (lengths as int64, arrays element by element) for
    a ``.ubj`` name; another name is UBJSON with a warning, as ``save``."""
    from . import xgboost_json

    path = os.path.expanduser(os.fspath(path))
    if _format_to_write(path) == "json":
        return xgboost_json.save_xgboost(booster, path)
    write_atomic(path, ubjson.dumps(xgboost_json.to_xgboost(booster), typed_arrays=False))


def load(cls, path, with_estimator=False):
    """A Booster from the file at ``path`` (``loads``); by its name's format, or, for
    another name, by its bytes with a warning."""
    path = os.path.expanduser(os.fspath(path))
    data = read_bytes(path)
    fmt = format_of(path)
    if fmt is None and not _json_or_ubjson(data):  # XGBoost's old binary format?
        return loads(cls, data, None, source=path, with_estimator=with_estimator)
    if fmt is None:
        fmt = sniff(data)
        shown = "UBJSON (`ubj`)" if fmt == "ubj" else "JSON (`json`)"
        suffix = os.path.splitext(path)[1]
        warnings.warn(f"Unknown file format: `{suffix}` ({path!r} ends in neither .json nor "
                      f".ubj). Using {shown} as a guess, from its first bytes.", UserWarning,
                      stacklevel=4)
    return loads(cls, data, fmt, source=path, with_estimator=with_estimator)


def loads(cls, data, fmt=None, source="the model bytes", with_estimator=False):
    """A Booster from a model file's bytes in ``fmt`` ("json", "ubj"; None: by the first
    bytes); ``ValueError`` naming the problem. A model in XGBoost's schema (its
    ``learner`` object, JSON or UBJSON) is imported (``gbm.io.xgboost_import``), and so
    are bytes of neither kind when ``fmt`` is None: XGBoost's old binary format, read
    only through an installed xgboost that reads it (a clear ``ValueError`` otherwise).
    ``with_estimator``: ``(booster, estimator section or None)``."""
    data = bytes(data)
    if fmt is None and not _json_or_ubjson(data):
        from .xgboost_import import from_xgboost, read_old_binary

        booster = from_xgboost(cls, read_old_binary(data, source))
        return (booster, None) if with_estimator else booster
    parsed = _parse(data, sniff(data) if fmt is None else fmt, source)
    if isinstance(parsed, dict) and "learner" in parsed and "format" not in parsed:
        from .xgboost_import import from_xgboost

        booster = from_xgboost(cls, parsed)
        return (booster, None) if with_estimator else booster
    return gbm_json.from_dict(cls, parsed, source, with_estimator)


def _json_or_ubjson(data):
    """Whether ``data`` starts as a JSON object (after white space) or a UBJSON one (or is
    empty: refused as the JSON it is not)."""
    return not data.strip() or data.lstrip()[:1] == b"{"


def _parse(data, fmt, source):
    """The model file's content, parsed strictly from JSON text or UBJSON."""
    looks = sniff(data)
    if fmt == "json":
        if looks == "ubj":
            raise ValueError(f"{source} is not JSON text: it starts as a UBJSON (binary) "
                             "model does, '{' and a length marker; a UBJSON model file is "
                             "named .ubj")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{source} is not a gbm model file: it is not UTF-8 text") from None
        parse, error = (lambda: validation.parse(text)), validation.InvalidModel
    else:
        parse, error = (lambda: ubjson.loads(data, MAX_NESTING)), ubjson.UBJSONError
    try:
        return parse()
    except error as err:
        hint = ("; it starts as JSON text does ('{' then '\"'): a JSON model file is named "
                ".json" if fmt == "ubj" and data.lstrip()[:1] == b"{" else "")
        kind = "UBJSON " if fmt == "ubj" else ""
        raise ValueError(f"{source} is not a valid gbm {kind}model file: {err}{hint}") from None
