"""gbm: deterministic histogram gradient boosting (Numba CPU kernels)."""
from . import threading_layer  # noqa: F401  (first: picks Numba's layer before any kernel runs)
from . import callback
from .booster import Booster, train
from .forest import GBMRFClassifier, GBMRFRegressor
from .sklearn import GBMClassifier, GBMRanker, GBMRegressor

__version__ = "0.1.0"
__all__ = ["Booster", "train", "callback", "GBMClassifier", "GBMRanker", "GBMRegressor",
           "GBMRFClassifier", "GBMRFRegressor", "__version__"]
