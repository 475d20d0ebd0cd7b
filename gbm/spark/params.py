"""The Spark estimators' parameters: xgboost.spark's column and cluster parameters, and
every parameter of the local estimator (``gbm.sklearn.parameters``), as Spark ML
``Param``s of the same names, declared once from those tables.

Spark's ``Params`` keep a ``Param`` per class attribute; ``params_class`` builds a mixin
with one attribute per table entry, so ``SparkGBMRegressor(max_depth=4)``,
``est.getOrDefault("max_depth")``, ``est.copy({est.max_depth: 3})`` and
``ParamGridBuilder().addGrid(est.max_depth, [3, 6])`` all work as for Spark's own
estimators. Values are checked by ``fit`` (gbm's own checks, the messages of the local
estimators).
"""
from pyspark.ml.param import Param, Params, TypeConverters

from ..cluster.progress import DEFAULT_MAX_RECOVERIES

# name: (default, doc); xgboost.spark's names where it has the parameter
COLUMNS = {
    "features_col": ("features", "a vector column, an array column, or a list of numeric "
                     "columns (one feature each)"),
    "label_col": ("label", "the label column"),
    "weight_col": (None, "a column of row weights (a ranker's: the same within a query)"),
    "validation_indicator_col": (None, "a boolean column: True rows are the eval set "
                                 "'validation' (early stopping's), not trained on"),
    "qid_col": (None, "the query id column (rankers): rows of a query consecutive"),
    "base_margin_col": (None, "a column of each row's starting margin"),
    "prediction_col": ("prediction", "the prediction column"),
    "pred_contrib_col": (None, "a column of SHAP contributions (features + bias), "
                         "or None"),
    "pred_leaf_col": (None, "a column of each tree's leaf index, or None"),
}
CLUSTER = {
    "num_workers": (1, "the training's ranks: one barrier task each, every task in one "
                    "stage, so at most the cluster's task slots"),
    "max_recoveries": (DEFAULT_MAX_RECOVERIES, "how many times one fit goes on after a "
                       "lost task (a killed Python worker, a lost executor): from the "
                       "last completed round, with the uninterrupted model"),
    "collective_timeout": (300.0, "seconds one exchange between the ranks waits for the "
                           "others (the backstop for a hung task)"),
}
CLASSIFIER_COLUMNS = {
    "probability_col": ("probability", "the class probabilities (a vector column)"),
    "raw_prediction_col": ("rawPrediction", "the raw margins (a vector column)"),
}
RAW_COLUMN = {"raw_prediction_col": (None, "the raw margins (a column), or None")}


def params_class(name, table, typed=None):
    """A ``Params`` mixin named ``name`` with a ``Param`` per ``(name, default)`` of
    ``table`` (a dict name -> (default, doc), or gbm's (name, default) pairs), and their
    defaults. ``typed``: type converters by name (others keep the value as given)."""
    items = table.items() if isinstance(table, dict) else [(n, (d, None)) for n, d in table]
    typed = typed or {}
    attrs, defaults = {}, {}
    for pname, (default, doc) in items:
        attrs[pname] = Param(Params._dummy(), pname,
                             doc or f"gbm's {pname} (docs/parameters.md)",
                             typeConverter=typed.get(pname, TypeConverters.identity))
        defaults[pname] = default

    def __init__(self):
        super(cls, self).__init__()
        self._setDefault(**defaults)

    attrs["__init__"] = __init__
    attrs["_defaults_table"] = defaults
    cls = type(name, (Params,), attrs)
    return cls


TYPED = {"num_workers": TypeConverters.identity, "label_col": TypeConverters.toString,
         "prediction_col": TypeConverters.toString}
