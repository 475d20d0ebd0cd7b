"""gbm: deterministic histogram gradient boosting (Numba CPU kernels)."""
from . import callback
from .booster import Booster, train
from .forest import GBMRFClassifier, GBMRFRegressor
from .sklearn import GBMClassifier, GBMRegressor

__version__ = "0.1.0"
__all__ = ["Booster", "train", "callback", "GBMClassifier", "GBMRegressor", "GBMRFClassifier",
           "GBMRFRegressor", "__version__"]
