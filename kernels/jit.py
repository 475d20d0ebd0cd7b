"""The one decorator of the CPU kernels, and where their compiled code is cached.

Numba keys a cached kernel on the timestamp of the file that defines it, not of the files
it calls into: a kernel that inlines ``split_math`` (or any shared helper) would keep the
old code after only the helper changed (verified with Numba 0.68). So the cache folder is
keyed by a hash of every source file under ``kernels/`` (but ``kernels/cuda/``) and Numba's version: change any
of them and every kernel compiles afresh into a new folder; a stale kernel cannot be
loaded. The folder is ``$NUMBA_CACHE_DIR/gbm-kernels-<hash>`` when ``NUMBA_CACHE_DIR`` is
set, else ``~/.cache/gbm/kernels-<hash>`` (``$XDG_CACHE_HOME`` if set); if it cannot be
created, Numba falls back to its own locations. Other libraries' Numba functions are not
affected: the folder is set only while gbm's kernels are decorated.
"""
import hashlib
import os
from pathlib import Path

import numba
import numba.core.registry

_ROOT = Path(__file__).resolve().parent


def sources_hash(root=_ROOT):
    """A digest of every kernel source file under ``root`` (names and contents) and of
    Numba's version."""
    digest = hashlib.sha256(numba.__version__.encode())
    for path in sorted(Path(root).rglob("*.py")):
        if path.relative_to(root).parts[0] == "cuda":
            continue  # the CUDA kernels are not CPU kernels' code: editing them keeps this cache
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _cache_dir():
    key = sources_hash()
    base = os.environ.get("NUMBA_CACHE_DIR")
    if base:
        return os.path.join(base, f"gbm-kernels-{key}")
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(home, "gbm", f"kernels-{key}")


CACHE_DIR = _cache_dir()


def kernel(fn=None, *, parallel=False, inline="never", error_model="python", fastmath=False):
    """``numba.njit(nogil=True, cache=True)`` with gbm's cache folder.

    ``nogil``: kernels run while other Python threads (a Dask worker's event loop, a
    collective) keep working. ``parallel``: the kernel has ``prange`` loops; the caller
    sets the thread count (``Backend.threads``). ``error_model="numpy"``: division by zero
    gives inf/NaN instead of raising. ``fastmath``: Numba's fast-math flags (e.g.
    ``{"reassoc"}``: a float reduction loop may be vectorised, its terms added in SIMD
    lanes; the order then depends on the compiled code only, never on the thread count).
    Usable bare (``@kernel``) or with options (``@kernel(parallel=True)``).
    """
    def decorate(function):
        return _dispatcher(numba.core.registry.CPUDispatcher, function,
                           _options(parallel, inline, error_model, fastmath))

    return decorate if fn is None else decorate(fn)


def helper(fn=None, *, parallel=False, inline="never", error_model="python", fastmath=False):
    """``kernel`` for a function that only other kernels call: compiled without the two
    entry points that let Python (and C) call it. Numba builds, optimises and emits those
    wrappers for every compiled function; for the first fit's kernels, most of them
    helpers, that was about a seventh of a cold compile (first 1,000-row fit + predict
    with an empty cache, 25.5 s -> 22.0 s measured). Called from Python (a test), a
    helper runs a twin compiled with the wrappers, so it gives the compiled result, never
    a crash. Same options as ``kernel``.
    """
    def decorate(function):
        options = _options(parallel, inline, error_model, fastmath)
        return _dispatcher(_Helper, function,
                           dict(options, no_cpython_wrapper=True, no_cfunc_wrapper=True))

    return decorate if fn is None else decorate(fn)


def _options(parallel, inline, error_model, fastmath):
    return dict(nopython=True, nogil=True, parallel=parallel, inline=inline,
                error_model=error_model, fastmath=fastmath, boundscheck=None)


def _dispatcher(cls, function, options):
    if numba.config.DISABLE_JIT:
        return function
    saved = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = CACHE_DIR  # read when caching is set up
    try:
        compiled = cls(py_func=function, locals={}, targetoptions=options)
        compiled.enable_caching()
        return compiled
    finally:
        numba.config.CACHE_DIR = saved


class _Helper(numba.core.registry.CPUDispatcher):
    """A helper's dispatcher: other kernels call its wrapper-less code; a call from Python
    goes to a twin with wrappers (not cached: Numba's cache index does not tell the two
    apart), compiled on the first such call."""

    def __call__(self, *args, **kwargs):
        twin = self.__dict__.get("_twin")
        if twin is None:
            options = {k: v for k, v in self.targetoptions.items()
                       if k not in ("no_cpython_wrapper", "no_cfunc_wrapper")}
            twin = self.__dict__["_twin"] = numba.core.registry.CPUDispatcher(
                py_func=self.py_func, locals={}, targetoptions=options)
        return twin(*args, **kwargs)
