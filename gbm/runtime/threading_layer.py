"""Numba's threading layer, chosen once, before any gbm kernel compiles or runs.

gbm needs a layer that is both fork-safe and thread-safe:

* **fork**: many tools (``multiprocessing`` on Linux, joblib's fallbacks, web servers)
  fork a process that has already trained. GNU OpenMP (Numba's ``omp`` layer on Linux)
  cannot run parallel code in such a child: it aborts ("fork() called from a process
  already using GNU OpenMP"), and a ``multiprocessing.Pool`` parent then waits forever.
* **threads**: several Python threads may fit or predict at once (the kernels release the
  GIL). Numba's ``workqueue`` layer aborts the process when two threads launch parallel
  kernels at the same time.

Intel TBB (Numba's ``tbb`` layer, Numba's own "safe" choice) is both; it comes from the
``tbb`` package on PyPI, a dependency of gbm. pip puts ``libtbb.so.12`` in
``<prefix>/lib``, where the dynamic loader does not look, so Numba cannot find it by
itself: this module loads it by path, after which Numba's ``tbb`` layer (first in its
default order) loads. A layer the user chose with ``NUMBA_THREADING_LAYER`` is left alone.

This is the only place gbm touches the choice of layer; ``gbm/__init__.py`` imports it
first.
"""
import ctypes
import importlib.metadata
import os
import sys
import warnings

import numba

SAFE_LAYER = "tbb"
_TBB_SONAME = "libtbb.so.12"
_MIN_TBB_INTERFACE = 12060  # TBB 2021.6, the oldest Numba's tbb layer accepts


def _tbb_library_path():
    """Path of ``libtbb.so.12`` installed by the ``tbb`` package, or None."""
    try:
        files = importlib.metadata.files("tbb") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name == _TBB_SONAME:
            path = str(file.locate())
            return path if os.path.exists(path) else None
    return None


def _load_tbb():
    """Load TBB so that Numba's ``tbb`` layer can link to it; True when it can."""
    if sys.platform.startswith("linux"):
        path = _tbb_library_path()
        try:  # by path when pip installed it; else as the system's loader finds it
            lib = ctypes.CDLL(path or _TBB_SONAME, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            return False
        version = lib.TBB_runtime_interface_version
        version.restype = ctypes.c_int
        if version() < _MIN_TBB_INTERFACE:
            return False
    try:
        from numba.np.ufunc import tbbpool  # noqa: F401  (links to libtbb)
    except ImportError:
        return False
    return True


def _launched_layer():
    """The layer Numba already runs (a parallel kernel ran before gbm was imported)."""
    try:
        return numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet
        return None


def select_threading_layer():
    """Make Numba use TBB, unless the user chose a layer or one already runs.

    Returns the layer asked for (``"tbb"``), or None when the choice was left to the user
    or to Numba.
    """
    chosen = os.environ.get("NUMBA_THREADING_LAYER", "").strip().lower()
    if _launched_layer() is not None:
        return None
    if chosen:
        # the user's choice stands; layers that may pick TBB still need the library loaded
        if chosen in ("tbb", "safe", "default"):
            _load_tbb()
        return None
    if not _load_tbb():
        warnings.warn(
            "gbm: Numba's TBB threading layer cannot be loaded (reinstall the 'tbb' package); "
            "Numba falls back to another layer, with which training in a fork child of a "
            "process that trained, or from several threads at once, can abort the process",
            RuntimeWarning, stacklevel=2)
        return None
    numba.config.THREADING_LAYER = SAFE_LAYER
    return SAFE_LAYER


select_threading_layer()
