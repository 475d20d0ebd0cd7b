"""scikit-learn estimators: boosting (``GBMRegressor``, ``GBMClassifier``, ``GBMRanker``)
and random forests (``GBMRFRegressor``, ``GBMRFClassifier``)."""
from .boosting import GBMClassifier, GBMRanker, GBMRegressor
from .forest import GBMRFClassifier, GBMRFRegressor

__all__ = ["GBMClassifier", "GBMRanker", "GBMRegressor", "GBMRFClassifier", "GBMRFRegressor"]
