"""gbm: deterministic histogram gradient boosting (Numba CPU kernels).

``import gbm`` is light: the scikit-learn estimators (and with them scikit-learn, SciPy
and pandas) and the plots (gbm.plotting, matplotlib) load on first use of their names.
"""
from . import threading_layer  # noqa: F401  (first: picks Numba's layer before any kernel runs)
from . import callback
from .booster import Booster
from .dmatrix import DMatrix, QuantileDMatrix
from .training import train

__version__ = "0.1.0"
__all__ = ["Booster", "DMatrix", "QuantileDMatrix", "train", "callback", "GBMClassifier",
           "GBMRanker", "GBMRegressor", "GBMRFClassifier", "GBMRFRegressor", "plot_importance",
           "plot_tree", "plot_metric", "__version__"]

_LAZY = {"GBMClassifier": "sklearn", "GBMRanker": "sklearn", "GBMRegressor": "sklearn",
         "GBMRFClassifier": "forest", "GBMRFRegressor": "forest",
         "plot_importance": "plotting", "plot_tree": "plotting", "plot_metric": "plotting"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'gbm' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
