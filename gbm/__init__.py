"""gbm: deterministic histogram gradient boosting (Numba CPU kernels).

``import gbm`` is light: the scikit-learn estimators (and with them scikit-learn, SciPy
and pandas) and the plots (gbm.plotting, matplotlib) load on first use of their names.
"""
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


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'gbm' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
