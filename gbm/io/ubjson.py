"""UBJSON (Universal Binary JSON, ubjson.org, draft 12), the binary JSON XGBoost writes to
``.ubj`` model files: an encoder and a strict decoder of our own.

A value is a one-byte type marker and its payload, big-endian: ``Z`` null, ``T`` / ``F``
booleans, ``i`` int8, ``U`` uint8, ``I`` int16, ``l`` int32, ``L`` int64, ``d`` float32,
``D`` float64, ``C`` an ASCII character, ``S`` a string (an integer length, then UTF-8
bytes), ``[ ... ]`` an array, ``{ ... }`` an object (each key an integer length and UTF-8
bytes, without the ``S``). ``N`` is a no-op. A container may open with ``$`` and a type
(every element that type, no per-element marker) and ``#`` and a count; with a count it
has no closing marker.

``dumps`` writes a list of numbers of one Python type (all ``int`` or all ``float``) as a
typed array: float64 (exact), or the narrowest integer type that holds every element;
``typed_arrays=False`` writes every element with its marker (what a reader that expects
plain JSON arrays takes). Other values are written with their own markers: an int in the
narrowest integer type, a float as float64, so a decoded value equals the encoded one,
bit for bit, and keeps its Python type (1 and 1.0 stay apart, as in JSON text).

``loads`` refuses, with a ``UBJSONError`` (a ``ValueError``) that names the byte offset
and, inside containers, the path (``trees[2].threshold``): containers nested deeper than
the caller's limit, NaN and the infinities, a key twice in one object, counts beyond the
bytes left (so a forged count cannot ask for memory the data does not back), bytes that
are not UTF-8, high-precision numbers (``H``), typed containers of non-numeric types, and
bytes after the value. These are the checks ``gbm.io.strict_json`` makes of JSON text.
"""
import math
import struct

import numpy as np

from .strict_json import path_name

# marker -> (big-endian NumPy dtype, byte size) of the fixed-size number types
_NUMBERS = {b"i": ">i1", b"U": ">u1", b"I": ">i2", b"l": ">i4", b"L": ">i8",
            b"d": ">f4", b"D": ">f8"}
_SIZES = {marker: np.dtype(dtype).itemsize for marker, dtype in _NUMBERS.items()}
_INTEGERS = (b"i", b"U", b"I", b"l", b"L")
# the narrowest integer type holding [low, high]: (marker, low, high), narrowest first
_INT_RANGES = ((b"U", 0, 255), (b"i", -128, 127), (b"I", -(1 << 15), (1 << 15) - 1),
               (b"l", -(1 << 31), (1 << 31) - 1), (b"L", -(1 << 63), (1 << 63) - 1))


class UBJSONError(ValueError):
    """Bytes that ``loads`` refuses, or a value ``dumps`` cannot write; the message says
    what and where."""


# --- encoding ----------------------------------------------------------------------------

def _int_marker(low, high):
    for marker, lo, hi in _INT_RANGES:
        if lo <= low and high <= hi:
            return marker
    raise UBJSONError(f"the integer {low if low < -(1 << 63) else high} is outside the "
                      "64-bit range UBJSON holds")


def _int_bytes(value):
    marker = _int_marker(value, value)
    return marker + np.array(value, dtype=_NUMBERS[marker]).tobytes()


def _length_bytes(n):
    """A length or count: always int64 (``L``), as XGBoost writes them and its reader
    requires for object keys."""
    return b"L" + struct.pack(">q", n)


def _string_bytes(text):
    raw = text.encode("utf-8")
    return _length_bytes(len(raw)) + raw


def _typed_array(values):
    """A list of numbers of one Python type as a typed array, or None."""
    kinds = set(map(type, values))
    if kinds == {float}:
        if not np.isfinite(values).all():
            return None  # written element by element, where the bad one is named
        marker = b"D"
    elif kinds == {int}:
        marker = _int_marker(min(values), max(values))
    else:
        return None
    payload = np.asarray(values, dtype=_NUMBERS[marker]).tobytes()
    return b"[$" + marker + b"#" + _length_bytes(len(values)) + payload


def _encode(value, out, typed_arrays, path):
    if value is None:
        out.append(b"Z")
    elif value is True or value is False:
        out.append(b"T" if value else b"F")
    elif type(value) is int:
        out.append(_int_bytes(value))
    elif type(value) is float:
        if not math.isfinite(value):
            raise UBJSONError(f"cannot write the non-finite number {value}"
                              f"{f' (at {path_name(path)})' if path else ''}")
        out.append(b"D" + struct.pack(">d", value))
    elif type(value) is str:
        out.append(b"S" + _string_bytes(value))
    elif type(value) in (list, tuple):
        typed = _typed_array(value) if typed_arrays and value else None
        if typed is not None:
            out.append(typed)
            return
        out.append(b"[")
        for i, item in enumerate(value):
            _encode(item, out, typed_arrays, path + (i,))
        out.append(b"]")
    elif type(value) is dict:
        out.append(b"{")
        for key, item in value.items():
            if type(key) is not str:
                raise UBJSONError(f"object keys must be strings, got {key!r}")
            out.append(_string_bytes(key))
            _encode(item, out, typed_arrays, path + (key,))
        out.append(b"}")
    else:
        raise UBJSONError(f"cannot write a {type(value).__name__} as UBJSON"
                          f"{f' (at {path_name(path)})' if path else ''}")


def dumps(value, typed_arrays=True):
    """``value`` (dicts with string keys, lists, str, int, float, bool, None) as UBJSON
    bytes; ``typed_arrays``: lists of numbers of one type as typed arrays."""
    out = []
    _encode(value, out, typed_arrays, ())
    return b"".join(out)


# --- decoding ----------------------------------------------------------------------------

class _Reader:
    """A cursor over the bytes; every read checks that the bytes are there."""

    def __init__(self, data, max_nesting):
        self.data, self.pos, self.max_nesting = data, 0, max_nesting

    def fail(self, message, path=(), at=None):
        where = f" (in {path_name(path)})" if path else ""
        raise UBJSONError(f"at byte {self.pos if at is None else at}: {message}{where}")

    def take(self, n, path):
        if n > len(self.data) - self.pos:
            self.fail(f"the data ends after {len(self.data)} bytes, {n} more were expected",
                      path)
        start = self.pos
        self.pos += n
        return self.data[start:self.pos]

    def marker(self, path, skip_noop=True):
        m = bytes(self.take(1, path))
        while skip_noop and m == b"N":
            m = bytes(self.take(1, path))
        return m

    def number(self, marker, path):
        raw = self.take(_SIZES[marker], path)
        value = np.frombuffer(raw, dtype=_NUMBERS[marker])[0].item()
        if type(value) is float and not math.isfinite(value):
            self.pos -= _SIZES[marker]
            self.fail(f"the non-finite number {value}", path)
        return value

    def length(self, path, what="a length"):
        at = self.pos
        marker = self.marker(path)
        if marker not in _INTEGERS:
            self.fail(f"{what} must be an integer (i, U, I, l or L), got marker {marker!r}",
                      path, at)
        n = self.number(marker, path)
        if n < 0:
            self.fail(f"{what} is negative ({n})", path, at)
        return n

    def text(self, path):
        n = self.length(path, "a string's length")
        raw = self.take(n, path)
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            self.pos -= n
            self.fail("a string that is not UTF-8", path)

    def value(self, depth, path, marker=None):
        marker = self.marker(path) if marker is None else marker
        if marker in _NUMBERS:
            return self.number(marker, path)
        if marker in (b"Z", b"T", b"F"):
            return {b"Z": None, b"T": True, b"F": False}[marker]
        if marker == b"S":
            return self.text(path)
        if marker == b"C":
            char = self.take(1, path)[0]
            if char > 127:
                self.fail(f"a character (C) must be ASCII, got byte {char}", path)
            return chr(char)
        if marker in (b"[", b"{"):
            if depth + 1 > self.max_nesting:
                self.fail(f"containers nest deeper than {self.max_nesting} levels", path)
            return (self.array if marker == b"[" else self.object)(depth + 1, path)
        if marker == b"H":
            self.fail("a high-precision number (H), which a model file never holds", path)
        self.pos -= 1
        self.fail(f"{marker!r} is not a UBJSON type marker", path)

    def header(self, path):
        """A container's optional ``$type`` and ``#count``: ``(type or None, count or
        None)``; a typed container must hold fixed-size numbers."""
        kind = count = None
        if self.data[self.pos:self.pos + 1] == b"$":
            self.pos += 1
            kind = bytes(self.take(1, path))
            if kind not in _NUMBERS:
                self.pos -= 1
                self.fail(f"a typed container of {kind!r}; only numbers (i, U, I, l, L, d, "
                          "D) are taken", path)
            if self.data[self.pos:self.pos + 1] != b"#":
                self.fail("a typed container ($) without its count (#)", path)
        if self.data[self.pos:self.pos + 1] == b"#":
            self.pos += 1
            count = self.length(path, "a container's count")
            # each element takes at least one byte (its marker), or its type's size
            least = _SIZES[kind] if kind is not None else 1
            if count * least > len(self.data) - self.pos:
                self.fail(f"a container's count {count} exceeds what the "
                          f"{len(self.data) - self.pos} bytes left can hold", path)
        return kind, count

    def array(self, depth, path):
        kind, count = self.header(path)
        if kind is not None:
            raw = self.take(count * _SIZES[kind], path)
            values = np.frombuffer(raw, dtype=_NUMBERS[kind])
            if values.dtype.kind == "f" and not np.isfinite(values).all():
                self.fail("a non-finite number", path + (int(np.flatnonzero(
                    ~np.isfinite(values))[0]),))
            return values.tolist()
        out = []
        while count is None or len(out) < count:
            marker = self.marker(path + (len(out),))
            if count is None and marker == b"]":
                return out
            out.append(self.value(depth, path + (len(out),), marker))
        return out

    def object(self, depth, path):
        kind, count = self.header(path)
        out = {}
        while count is None or len(out) < count:
            if count is None:
                while self.data[self.pos:self.pos + 1] == b"N":
                    self.pos += 1
                if self.data[self.pos:self.pos + 1] == b"}":
                    self.pos += 1
                    return out
            key = self.text(path)
            if key in out:
                self.fail(f"the key {key!r} twice in one object", path)
            out[key] = (self.number(kind, path + (key,)) if kind is not None
                        else self.value(depth, path + (key,)))
        return out


def loads(data, max_nesting):
    """UBJSON ``data`` (bytes-like) to Python objects, strictly (see the module
    docstring); containers nest at most ``max_nesting`` levels."""
    reader = _Reader(memoryview(bytes(data)), max_nesting)
    value = reader.value(0, ())
    while reader.pos < len(reader.data) and reader.data[reader.pos:reader.pos + 1] == b"N":
        reader.pos += 1
    if reader.pos != len(reader.data):
        reader.fail(f"{len(reader.data) - reader.pos} bytes after the end of the value")
    return value
