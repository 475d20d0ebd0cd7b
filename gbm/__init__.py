"""gbm: deterministic histogram gradient boosting (Numba CPU kernels).

``import gbm`` is light: the scikit-learn estimators (and with them scikit-learn, SciPy
and pandas) and the plots (gbm.plotting, matplotlib) load on first use of their names.
"""
import importlib.abc
import importlib.util
import sys

from .runtime import threading_layer  # noqa: F401  (first: picks Numba's layer before any kernel runs)
from . import callback, config
from .config import config_context, get_config, set_config
from .model.booster import Booster
from .data.dmatrix import DMatrix
from .bins.quantile import ExtMemQuantileDMatrix, QuantileDMatrix
from .data.iterator import DataIter
from .data.files import ParquetIter
from .training.loop import train
from .training.cv import cv

__version__ = "0.1.0"
__all__ = ["Booster", "DMatrix", "QuantileDMatrix", "train", "callback", "GBMClassifier",
           "GBMRanker", "GBMRegressor", "GBMRFClassifier", "GBMRFRegressor", "plot_importance",
           "plot_tree", "plot_metric", "to_graphviz", "__version__", "cv"]
__all__ += ["DataIter", "ExtMemQuantileDMatrix", "ParquetIter"]
__all__ += ["config", "config_context", "get_config", "set_config"]

_LAZY = {"GBMClassifier": "sklearn", "GBMRanker": "sklearn", "GBMRegressor": "sklearn",
         "GBMRFClassifier": "sklearn", "GBMRFRegressor": "sklearn",
         "plot_importance": "plotting", "plot_tree": "plotting", "plot_metric": "plotting",
         "to_graphviz": "plotting"}


# Modules that moved into subpackages, by the old names earlier docs cited (and scripts
# may use): each imports the module itself (``import gbm.dask_checkpoint`` is
# gbm.dask.checkpoint).
_MOVED = {"gbm.dask_checkpoint": "gbm.dask.checkpoint", "gbm.dask_heap": "gbm.dask.heap",
          "gbm.dask_sockets": "gbm.dask.sockets"}


_REAL_SPECS = {}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old name of ``_MOVED`` and loads it as the module it moved to."""

    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name in _MOVED else None

    def create_module(self, spec):
        module = importlib.import_module(_MOVED[spec.name])
        _REAL_SPECS[spec.name] = module.__spec__  # the machinery sets the alias's on it
        return module

    def exec_module(self, module):
        module.__spec__ = _REAL_SPECS[module.__spec__.name]


if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
    sys.meta_path.append(_MovedModules())


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'gbm' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
