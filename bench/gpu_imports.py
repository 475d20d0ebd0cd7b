"""Imports every module that ``bench/gpu_check.sh`` needs, with its version and where it
was found, and says which are missing (exit status 1), before the check spends its minutes:
gbm and ``gbm.kernels`` from this checkout, Numba's TBB threading layer, the CUDA packages
(a GPU that CuPy and numba-cuda both see, or Numba's CUDA simulator), NVVM, and the
libraries the tests and benchmarks import. xgboost may be missing (its parts may not all
have arrived): the check then runs gbm alone, so it is reported but not a failure."""
import importlib
import importlib.metadata
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# module -> distribution (for its version)
NEEDED = {"numpy": "numpy", "scipy": "scipy", "sklearn": "scikit-learn", "pandas": "pandas",
          "pyarrow": "pyarrow", "numba": "numba", "numba.cuda": "numba-cuda",
          "pytest": "pytest", "pytest_timeout": "pytest-timeout", "hypothesis": "hypothesis",
          "dask": "dask", "distributed": "distributed", "dask_cuda": "dask-cuda",
          "lightgbm": "lightgbm"}
OPTIONAL = {"xgboost": "xgboost"}


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def _try(module, dist):
    """(ok, line) for importing ``module``."""
    try:
        found = importlib.import_module(module)
    except Exception as err:  # noqa: BLE001 - reported: ImportError, or a library that fails to load
        return False, f"  {module}: MISSING ({type(err).__name__}: {err})"[:300]
    return True, f"  {module} {_version(dist)} ({Path(getattr(found, '__file__', '') or '?').parent})"


def _cuda_lines():
    """What numba-cuda and CuPy see: a GPU, or the simulator; NVVM's version."""
    from numba import config, cuda

    if config.ENABLE_CUDASIM:
        return True, ["  Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): no GPU used"]
    lines = []
    try:
        import cupy

        lines.append(f"  cupy {cupy.__version__}: {cupy.cuda.runtime.getDeviceCount()} GPU(s), "
                     f"CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}, driver "
                     f"{cupy.cuda.runtime.driverGetVersion()}")
    except Exception as err:  # noqa: BLE001
        return False, [f"  cupy: no GPU ({type(err).__name__}: {err})"]
    if not cuda.is_available():
        return False, lines + ["  numba.cuda.is_available() is False"]
    try:
        from numba.cuda.cudadrv.nvvm import NVVM

        lines.append(f"  numba-cuda sees {cuda.get_current_device().name}; NVVM "
                     f"{NVVM().get_version()}")
    except Exception as err:  # noqa: BLE001 - kernels cannot compile: say so now
        return False, lines + [f"  NVVM: not found ({type(err).__name__}: {err}); set CUDA_HOME"]
    return True, lines


def main():
    ok = True
    print("gbm from the checkout:")
    import gbm
    import gbm.kernels
    import numba

    for module in (gbm, gbm.kernels):
        inside = Path(module.__file__).resolve().is_relative_to(ROOT)
        ok &= inside
        print(f"  {module.__name__}: {module.__file__}" + ("" if inside else " NOT the checkout's"))
    gbm.train({"max_depth": 2}, [[0.0], [1.0], [2.0], [3.0]], [0.0, 1.0, 0.0, 1.0], 1)
    layer = numba.threading_layer()
    ok &= layer == "tbb"
    print(f"  Numba threading layer after a fit: {layer}" + ("" if layer == "tbb" else " (not tbb)"))
    print("libraries:")
    for module, dist in NEEDED.items():
        found, line = _try(module, dist)
        ok &= found
        print(line)
    for module, dist in OPTIONAL.items():
        print(_try(module, dist)[1] + " (optional)")
    print("CUDA:")
    found, lines = _cuda_lines()
    print("\n".join(lines))
    return 0 if ok and found else 1


if __name__ == "__main__":
    sys.exit(main())
