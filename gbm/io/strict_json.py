"""JSON text parsed strictly, for model files that may come from anyone.

``parse`` refuses, with a ``StrictJSONError`` (a ``ValueError``) that says where:

* nesting deeper than the caller's limit, found before parsing (``nesting_depth``), so
  that deep nesting cannot exhaust the parser's stack;
* ``NaN`` and the infinities, numbers beyond float64's range and integers outside int64;
* a key twice in one object.

The first pass parses with hooks that raise at the first such value; only then does a
second pass mark the bad values instead and look for the first one, to name its place
(``trees[2].threshold[5]``), so a valid file is read once.
"""
import json
import math
import re

import numpy as np

INT64 = (-(1 << 63), (1 << 63) - 1)

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class StrictJSONError(ValueError):
    """JSON text that ``parse`` refuses; the message says what and where."""


def nesting_depth(text):
    """How deep arrays and objects nest in JSON ``text`` (brackets inside strings do not
    count)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    codes = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


# --- what is refused: each check returns the reason, or None --------------------------

def _float_problem(s):
    if not math.isfinite(float(s)):
        return f"it holds the number {s}, beyond float64's range"
    return None


def _int_problem(s):
    if len(s) > 20 or not INT64[0] <= int(s) <= INT64[1]:
        shown = s if len(s) <= 24 else f"{s[:20]}... ({len(s)} digits)"
        return f"it holds the integer {shown}, outside the 64-bit range"
    return None


def _constant_problem(name):
    return f"it holds the non-finite number {name}"


def first_repeat(values):
    """The first value of ``values`` equal to an earlier one, or None; a set, so that a
    file's 65,536 labels cost linear time, not quadratic (a list's ``in`` took 17 s)."""
    seen = set()
    return next((v for v in values if v in seen or seen.add(v)), None)


def _object_problem(pairs):
    twice = first_repeat(k for k, _ in pairs)
    return None if twice is None else f"it holds the key {twice!r} twice in one object"


# --- pass 1: raise at the first problem ------------------------------------------------

class _Found(Exception):
    pass


def _raising(problem, convert):
    def hook(value):
        if problem(value) is not None:
            raise _Found()
        return convert(value)
    return hook


_STRICT = dict(parse_float=_raising(_float_problem, float),
               parse_int=_raising(_int_problem, int),
               parse_constant=_raising(_constant_problem, float),
               object_pairs_hook=_raising(_object_problem, dict))


# --- pass 2: mark the problems, then find the first -------------------------------------

class _Bad:
    def __init__(self, reason):
        self.reason = reason


class _BadObject(dict):
    reason = None


def _marking(problem, convert):
    def hook(value):
        reason = problem(value)
        return _Bad(reason) if reason is not None else convert(value)
    return hook


def _marked_object(pairs):
    reason = _object_problem(pairs)
    if reason is None:
        return dict(pairs)
    obj = _BadObject(pairs)
    obj.reason = reason
    return obj


_MARKING = dict(parse_float=_marking(_float_problem, float),
                parse_int=_marking(_int_problem, int),
                parse_constant=_marking(_constant_problem, float),
                object_pairs_hook=_marked_object)


def path_name(path):
    """``("trees", 2, "threshold")`` -> ``trees[2].threshold``."""
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


def _first_bad(value, path=()):
    """``(path, reason)`` of the first marked value in document order, or None."""
    if isinstance(value, (_Bad, _BadObject)):
        return path, value.reason
    items = value.items() if isinstance(value, dict) else (
        enumerate(value) if isinstance(value, list) else ())
    for key, item in items:
        found = _first_bad(item, path + (key,))
        if found is not None:
            return found
    return None


def parse(text, max_nesting):
    """JSON ``text`` to Python objects, strictly (see the module docstring)."""
    depth = nesting_depth(text)
    if depth > max_nesting:
        raise StrictJSONError(f"its JSON nests {depth} levels deep; a model file nests at "
                              f"most {max_nesting}")
    try:
        return json.loads(text, **_STRICT)
    except json.JSONDecodeError as err:
        raise StrictJSONError(f"invalid or truncated JSON ({err})") from None
    except _Found:
        pass
    path, reason = _first_bad(json.loads(text, **_MARKING))
    where = f" (at {path_name(path)})" if path else ""
    raise StrictJSONError(reason + where)
