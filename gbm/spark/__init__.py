"""Training on a Spark cluster: ``SparkGBMRegressor``, ``SparkGBMClassifier`` and
``SparkGBMRanker``, PySpark ML estimators that train the model local gbm trains on the
same rows, on any number of barrier tasks, and go on after a lost task
(docs/distributed.md, "Spark").

Needs the ``spark`` extra: ``pip install 'detgbm[spark]'`` (from a checkout:
``pip install -e '.[spark]'``).
"""
try:
    import pyspark  # noqa: F401
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError("gbm.spark needs pyspark: pip install 'detgbm[spark]' (from a "
                      "checkout: pip install -e '.[spark]')") from err

from .estimators import (SparkGBMClassifier, SparkGBMClassifierModel,  # noqa: E402
                         SparkGBMRanker, SparkGBMRankerModel, SparkGBMRegressor,
                         SparkGBMRegressorModel)

__all__ = ["SparkGBMRegressor", "SparkGBMClassifier", "SparkGBMRanker",
           "SparkGBMRegressorModel", "SparkGBMClassifierModel", "SparkGBMRankerModel"]
