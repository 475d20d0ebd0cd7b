"""Twin of ``cpu/elementwise.py``: ``elementary.python`` (plain Python floats) element by
element; ``log_into`` ignores ``bits`` (the kernel's shortcut must give ``log``'s bits)."""
from ..elementary import python as _elementary


def exp_into(x, out):
    out[:] = [_elementary.exp(float(v)) for v in x]


def log_into(x, bits, out):
    out[:] = [_elementary.log(float(v)) for v in x]


def log2_into(x, out):
    out[:] = [_elementary.log2(float(v)) for v in x]
