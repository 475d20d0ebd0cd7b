"""A model file's bytes: read from a path (``MissingFileError`` when there is none), and
their encoding told from their first bytes: UBJSON (binary JSON) or JSON text, as
XGBoost's reader tells them. Shared by gbm's model files (``gbm.io.model_file``) and the
import of XGBoost's (``gbm.io.xgboost_import``)."""
import errno
import os

from ..data.uri import MissingFileError

# the byte after a UBJSON object's "{": a key's length marker, a count, a type or a no-op
_UBJSON_SECOND = frozenset(b"iUIlL#$N")


def sniff(data):
    """"ubj" when ``data`` starts as a UBJSON object does (``{`` then a length marker),
    else "json"."""
    return "ubj" if data[:1] == b"{" and data[1:2] and data[1] in _UBJSON_SECOND else "json"


def read_bytes(path):
    """A file's bytes; ``MissingFileError`` when there is none."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise MissingFileError(errno.ENOENT, "no model file", os.fspath(path)) from None
