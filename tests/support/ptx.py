"""Compiling CUDA kernels to PTX without a GPU, and reading the PTX: what
tests/test_cuda_ptx.py and tests/test_cuda_linear_ptx.py check (no fused multiply-add; every
plain product an exact scaling by a power of two). The fixtures are imported by those
files; they skip where NVVM / NVRTC cannot compile."""
import math
import re
import struct
from types import SimpleNamespace

import pytest


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.fixture(scope="module")
def compile_ptx(monkeypatch_module):
    """compile_ptx for sm_90 with no GPU: device functions called by a kernel are
    compiled for "the current device", so that device is given a compute capability."""
    import numba.cuda.dispatcher as dispatcher
    from numba import cuda, types

    monkeypatch_module.setattr(dispatcher, "get_current_device",
                               lambda: SimpleNamespace(compute_capability=(9, 0)))

    def compile_(fn, signature, device=False):
        return cuda.compile_ptx(fn, signature, device=device, cc=(9, 0))[0]

    try:
        compile_(lambda a, b: a * b + 1.0, (types.float64, types.float64), device=True)
    except Exception as err:  # no NVVM / NVRTC on this machine
        pytest.skip(f"cannot compile PTX here: {type(err).__name__}: {err}"[:300])
    return compile_


def _power_of_two_immediate(line):
    """Whether a ``mul.f64 d, a, 0dXXXXXXXXXXXXXXXX;`` multiplies by a power of two."""
    match = re.search(r"0d([0-9A-Fa-f]{16})", line)
    if not match:
        return False
    value = abs(struct.unpack(">d", bytes.fromhex(match.group(1)))[0])
    return value > 0 and math.frexp(value)[0] == 0.5


def power_of_two_registers(lines):
    """Float registers that hold a power of two built from its bits, as NVVM 12 inlines
    ``math.ldexp``: ``mov.b64 %fd, {lo, hi}`` with ``lo`` 0 and ``hi`` ``(k << 20) +
    0x3FF00000`` (the bits of 2**k), and products of such registers. A register counts
    only when every instruction that writes it is of that form."""
    defs = {}
    for line in lines:
        parts = line.rstrip(";").replace(",", " ").replace("{", " ").replace("}", " ").split()
        if len(parts) >= 2 and parts[1].startswith("%"):
            defs.setdefault(parts[1], []).append(parts)

    def every(register, form):
        return register in defs and all(form(d) for d in defs[register])

    def zero(r):
        return every(r, lambda d: d[0] == "mov.u32" and d[2:] == ["0"])

    def high(r):
        return every(r, lambda d: d[0] == "add.s32" and d[3:] == ["1072693248"] and every(
            d[2], lambda e: e[0] == "shl.b32" and e[3:] == ["20"]))

    pow2 = set()
    while True:  # products of powers of two are powers of two: to a fixed point
        found = {r for r in defs if r not in pow2 and every(r, lambda d: (
            d[0] == "mov.b64" and len(d) == 4 and zero(d[2]) and high(d[3])) or (
            d[0] == "mul.f64" and len(d) == 4 and d[2] in pow2 and d[3] in pow2))}
        if not found:
            return pow2
        pow2 |= found


def exact_scaling(line, pow2):
    """A ``mul.f64`` by a power of two (an immediate, or a register built as one)."""
    operands = line.rstrip(";").replace(",", " ").split()[2:]
    return _power_of_two_immediate(line) or any(r in pow2 for r in operands)
