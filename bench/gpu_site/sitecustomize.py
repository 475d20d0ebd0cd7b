"""gbm from a checkout without installing it (``bench/gpu_check.sh`` on a machine with no
package index): with this folder and the checkout's root on ``PYTHONPATH``, ``import gbm``
finds ``gbm/`` and ``import gbm.kernels`` the top-level ``kernels/`` folder, as setup.py's
``package_dir`` maps it for an installed gbm. Python imports ``sitecustomize`` at start-up in
every process, so spawned Dask workers and test subprocesses get the mapping too.

One repair of the image's packages, made only in these processes: numba-cuda (0.30.4 and
before) registers an overload of ``numpy.row_stack``, which NumPy 2.5 removed (an alias of
``numpy.vstack`` since 2.0): its CUDA target then fails to import and no kernel compiles.
Before numba-cuda's array module loads, NumPy gets the alias back.

A ``sitecustomize`` that this file hides (one later on ``sys.path``, e.g. a distribution's)
still runs, after the mapping is in place."""
import importlib.abc
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_KERNELS = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "kernels")


class _KernelsFinder(importlib.abc.MetaPathFinder):
    """``gbm.kernels`` is the package in ``kernels/``; its submodules are then found by
    the usual path finder through that package's ``__path__``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "numba.cuda.np.arrayobj":
            _numpy_row_stack()
        if fullname != "gbm.kernels":
            return None
        return importlib.util.spec_from_file_location(
            fullname, os.path.join(_KERNELS, "__init__.py"),
            submodule_search_locations=[_KERNELS])


def _numpy_row_stack():
    import numpy

    if not hasattr(numpy, "row_stack"):
        numpy.row_stack = numpy.vstack


def _run_the_hidden_sitecustomize():
    for entry in sys.path:
        folder = os.path.abspath(entry or os.curdir)
        path = os.path.join(folder, "sitecustomize.py")
        if folder != _HERE and os.path.isfile(path):
            with open(path, encoding="utf-8") as source:
                code = compile(source.read(), path, "exec")
            exec(code, {"__name__": "sitecustomize", "__file__": path})  # noqa: S102
            return


if os.path.isfile(os.path.join(_KERNELS, "__init__.py")):
    sys.meta_path.insert(0, _KernelsFinder())
_run_the_hidden_sitecustomize()
