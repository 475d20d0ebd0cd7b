"""A cold compile cache filled by several processes at once.

With an empty cache (a fresh install, or any kernel source changed: ``kernels/jit.py``),
the first fit compiles its kernels one after the other, about 20 s of one core's time
(Numba's typing and lowering are Python, its LLVM passes single-threaded). Before that
fit, ``prepare()`` compiles the kernels every fit of float data needs (``STANDARD``)
in this process and in up to three more at the same time, each writing Numba's cache,
then waits for them: the fit loads what the others compiled. The compiled code and so
the model are the same; only the wall time changes (a first 1,000-row classifier and
regressor fit and predict on 2 CPUs: 21.6 s in one process, 13.2 s over two).

Kernels a fit can do without while they compile (``compile_later``: the whole-tree
kernel, ``gbm.tree.whole_tree``, whose level-by-level twin is in ``STANDARD``) are not
waited for: the first fit with a cold cache takes the other path while one background
process compiles them, and a later fit takes them once they are in the cache. A cold
first fit is then no slower than before they existed.

Best effort: a helper process that fails, or is still busy when this process has taken
twice its own time (``_WAIT_S`` at most), is left alone, and the fit compiles whatever
is still missing itself. Nothing is started when the cache already holds every kernel
in the list, with one CPU, when ``sys.executable`` is not a Python (an embedding
program), or with ``GBM_COMPILE_PROCESSES=1`` (the number of processes, this one
included; default: the CPUs, at most 4).
"""
import importlib
import json
import os
import pickle
import subprocess
import sys
import threading
import time

from numba.core import types

from ..kernels import catalog

_WAIT_S = 300.0  # the longest wait for the helper processes
_START_S = 0.9  # a helper process's CPU seconds before it compiles (see groups)


def _c(dtype, ndim):
    return types.Array(dtype, ndim, "C")


_F32_2, _F64_1, _F64_2 = _c(types.float32, 2), _c(types.float64, 1), _c(types.float64, 2)
_I8_1, _I32_1, _U8_1 = _c(types.int8, 1), _c(types.int32, 1), _c(types.uint8, 1)
_I64_1, _I64_2, _I64_3 = _c(types.int64, 1), _c(types.int64, 2), _c(types.int64, 3)
_U8_2, _U32_2 = _c(types.uint8, 2), _c(types.uint32, 2)
_I64 = types.int64
_F64_2A = types.Array(types.float64, 2, "A")  # strided (every other float of the pairs)

def _cpu(kernel, signature, seconds, compiled=None):
    """An entry of ``STANDARD``: ``(module, function, argument types, compile seconds)`` of
    CPU kernel ``kernel``, its module as ``kernels/catalog.py`` places it; ``compiled``: the
    compiled function of a kernel that is a Python wrapper around one."""
    return (f"gbm.kernels.cpu.{catalog.module_of('cpu', kernel)}", compiled or kernel, signature,
            seconds)


# (module, kernel, argument types, compile seconds: CPU seconds, each module's entries in
# turn in a fresh process with an empty cache, 2026-12-05; a module's later entries cost
# less, their helpers already compiled): what a fit of float
# data (up to 256 bins, no categories; binary, regression and the other pointwise
# objectives) and its predict compile, in the order a classifier's fit first calls them.
# tests/test_compile_ahead.py checks the list against a fit's own signatures.
STANDARD = (
    _cpu("add_exact_parts", (_I64_2, _I64_2), 0.4),
    _cpu("bin_values", (_F32_2, _F32_2, _I32_1, _U8_2), 1.0),
    # one output group writes its gradients into the pairs' slots (gbm.training.rounds):
    # the logistic loss's kernel for them, the others' into strided views; the pairs
    # converted in place
    _cpu("logistic_pair_gradients", (_F64_1, _F64_1, _F64_1, _F64_2, _I64, _F64_1), 1.6,
         compiled="_logistic_pair_gradients"),
    _cpu("pointwise_gradients", (_I64, _F64_2, _F64_1, _F64_1, _F64_1, _F64_2A, _F64_2A, _I64),
         1.6, compiled="_pointwise_gradients"),
    _cpu("max_abs_pairs", (_I64_2,), 0.7),
    _cpu("quantize_pairs_in_place", (_I64_2, _F64_1), 0.7),
    _cpu("build_histograms", (_U8_2, _I64_2, _I32_1, _I64_1, _I64_1, _I32_1, _I64_3, _I64), 2.4),
    _cpu("evaluate_splits",
         (_I64_3, _I32_1, _I64, types.none, _I64_2, _U8_2, _I8_1, _F64_2, _F64_2, _F64_1, _I64,
          _I64, _F64_1, _I32_1, _I32_1, _U8_1, _I64_2, _U32_2), 4.8),
    _cpu("node_weights", (_I64_2, _F64_2, _F64_2, _F64_1, _F64_1), 0.1),
    _cpu("partition_rows",
         (_U8_2, _I32_1, _I64_1, _I64_1, _I32_1, _I32_1, _U8_1, _U8_1, _U32_2, _I32_1, _I32_1,
          _I64_1), 2.4),
    _cpu("add_split_values",
         (_U8_2, _I32_1, _I64_1, _I64_1, _I32_1, _I32_1, _U8_1, _U8_1, _U32_2, _I32_1, _F64_1,
          _F64_1, _F64_1), 1.0),
    _cpu("add_leaf_values", (_I32_1, _I64_1, _I64_1, _F64_1, _F64_1), 0.1),
    _cpu("predict", (_F32_2, _I32_1, _U32_2, _F64_1, _I64_1, _I32_1, _I32_1, _F64_2), 2.3),
)


def _dispatcher(entry):
    module, name = entry[0], entry[1]
    return getattr(importlib.import_module(module), name)


def _cached(entry):
    """Whether Numba's cache index lists this entry's signature (read, not loaded). If
    Numba's cache internals cannot tell, the entry counts as cached: nothing is started."""
    dispatcher = _dispatcher(entry)
    try:
        cache = dispatcher._cache
        key = cache._index_key(entry[2], dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 - another Numba's internals: behave as without this
        return True


def _processes():
    value = os.environ.get("GBM_COMPILE_PROCESSES")
    if value is not None:
        try:
            return max(1, int(value))
        except ValueError:
            raise ValueError("GBM_COMPILE_PROCESSES must be an integer >= 1, "
                             f"got {value!r}") from None
    affinity = getattr(os, "sched_getaffinity", None)  # Linux; elsewhere every CPU counts
    cpus = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    if not os.path.basename(sys.executable or "").lower().startswith("python"):
        return 1  # an embedding program (a server, a frozen app): no Python to start
    return min(cpus, 4)


def groups(indices, n):
    """``indices`` of ``STANDARD`` in ``n`` groups of about equal compile time; group 0 is
    this process's. A module's entries stay together (they share helpers, which a process
    compiles once: ``node_weights`` alone 0.6 s CPU, after ``evaluate_splits`` 0.1), the
    modules longest first, each to the least loaded group (the helpers' start-up
    counted)."""
    families = {}
    for i in indices:
        families.setdefault(STANDARD[i][0], []).append(i)
    # a helper process starts behind this one by its start-up (Python, gbm and Numba
    # imported: 0.6-0.9 s CPU on the loaded machine where the figures above were measured)
    loads = [[0.0 if g == 0 else _START_S, []] for g in range(n)]
    for family in sorted(families.values(), key=lambda f: -sum(STANDARD[i][3] for i in f)):
        least = min(loads, key=lambda group: group[0])
        least[0] += sum(STANDARD[i][3] for i in family)
        least[1].extend(family)
    return [sorted(group) for _, group in loads if group]


def compile_entries(indices):
    """Compile these entries of ``STANDARD`` here. One that fails is left to the fit, which
    compiles it with its real arguments (and says what is wrong)."""
    for i in indices:
        try:
            _dispatcher(STANDARD[i]).compile(STANDARD[i][2])
        except Exception:  # noqa: BLE001 - best effort: see the module's text
            pass


def compile_over_processes(indices, n):
    """Compile these entries of ``STANDARD`` in this process and ``n - 1`` more at once;
    returns when all are done (or after ``_WAIT_S``)."""
    mine, *theirs = groups(indices, n)
    helpers = []
    for group in theirs:
        try:
            helpers.append(subprocess.Popen(
                [sys.executable, "-c", _CHILD, json.dumps(sys.path), __file__, *map(str, group)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))
        except OSError:
            pass  # no process to be had: the fit compiles these itself
    started = time.monotonic()
    compile_entries(mine)
    # the groups take about as long as each other: a helper still busy after twice this
    # process's time (or _WAIT_S) is left to finish alone
    deadline = started + min(_WAIT_S, max(10.0, 2 * (time.monotonic() - started)))
    for process in helpers:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass


_prepared = False
_lock = threading.Lock()


def prepare():
    """Before the first CPU fit of this process: compile the missing ``STANDARD`` kernels
    over several processes (see the module's text). Later calls do nothing; a call while
    another thread prepares waits for it."""
    global _prepared
    with _lock:
        if not _prepared:
            _prepare()
            _prepared = True


def _prepare():
    n = _processes()
    missing = [i for i, entry in enumerate(STANDARD) if not _cached(entry)] if n > 1 else []
    if len(missing) > 1:
        compile_over_processes(missing, n)


_background = {}  # (module, name, signature) -> the process compiling it


def ready(module, name, signature):
    """Whether kernel ``module.name`` is compiled for ``signature`` (a tuple of Numba
    types) in this process, or in Numba's cache (loaded at its first call)."""
    dispatcher = _dispatcher((module, name))
    overloads = getattr(dispatcher, "overloads", None)
    if overloads is None:  # NUMBA_DISABLE_JIT: a plain function
        return False
    return signature in overloads or _cached((module, name, signature))


def compile_later(module, name, signature):
    """Have kernel ``module.name`` compiled for ``signature`` without waiting: returns
    whether it is ready now (see ``ready``). When it is not, one background process
    (per kernel and signature, per process) compiles it into the cache; without helper
    processes (``GBM_COMPILE_PROCESSES=1``, one CPU, an embedding program) it is compiled
    here, now, and is ready."""
    if ready(module, name, signature):
        return True
    if getattr(_dispatcher((module, name)), "overloads", None) is None:
        return False
    key = (module, name, signature)
    with _lock:
        if key in _background:
            return False
        if _processes() > 1:
            try:
                _background[key] = subprocess.Popen(
                    [sys.executable, "-c", _LATER_CHILD, json.dumps(sys.path), __file__,
                     pickle.dumps(key).hex()],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL)
                return False
            except OSError:
                pass  # no process to be had: compile here
    _dispatcher(key).compile(signature)
    return True


def compile_pickled(text):
    """A background process's work: compile the kernel of ``compile_later``'s key (its
    pickle, as hex text)."""
    module, name, signature = pickle.loads(bytes.fromhex(text))
    _dispatcher((module, name)).compile(signature)


# a helper process imports gbm as this one does (its sys.path) and compiles only when it
# found this very file: another gbm would fill another cache (or be another version)
_CHILD = """
import json, os, sys
sys.path[:] = json.loads(sys.argv[1])
from gbm.runtime import compile_ahead
if os.path.samefile(compile_ahead.__file__, sys.argv[2]):
    compile_ahead.compile_entries([int(i) for i in sys.argv[3:]])
"""

# a kernel compiled for later fits yields the CPUs to the fit running now (and to the
# first fit's own compiles): the lowest priority, where the system allows it
_LATER_CHILD = """
import json, os, sys
try:
    os.nice(19)
except (AttributeError, OSError):
    pass
sys.path[:] = json.loads(sys.argv[1])
from gbm.runtime import compile_ahead
if os.path.samefile(compile_ahead.__file__, sys.argv[2]):
    compile_ahead.compile_pickled(sys.argv[3])
"""
