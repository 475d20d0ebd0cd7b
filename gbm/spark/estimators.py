"""``SparkGBMRegressor``, ``SparkGBMClassifier``, ``SparkGBMRanker``: PySpark ML
estimators over gbm, with xgboost.spark's parameter names where it has the parameter
(``features_col``, ``label_col``, ``weight_col``, ``validation_indicator_col``,
``qid_col``, ``base_margin_col``, ``num_workers``, ``device``) and every parameter of
the local estimator (``gbm.GBMRegressor``, ...), of the same names and defaults.

``fit`` trains on ``num_workers`` barrier tasks (``gbm.spark.training``) and gives a
model whose ``get_booster()`` is gbm's ``Booster``: the model file ``gbm.train`` (or the
local estimator) writes on the collected rows, for any number of workers and any
partitioning. Models predict with a pandas UDF (``gbm.spark.predict``) and are saved and
loaded with Spark ML's writers and readers (``gbm.spark.io``); estimators and models work
in a ``Pipeline`` and a ``CrossValidator``.
"""
from pyspark.ml import Estimator, Model
from pyspark.ml.util import DefaultParamsReadable, DefaultParamsWritable

from ..cluster.progress import check_max_recoveries
from ..sklearn.boosting import GBMClassifier, GBMRanker, GBMRegressor, check_n_estimators
from ..sklearn.parameters import BOOSTING_PARAMS, RANKER_PARAMS
from . import io as spark_io
from .data import check_num_workers
from .params import CLASSIFIER_COLUMNS, CLUSTER, COLUMNS, RAW_COLUMN, params_class

_TRAINING_COLUMNS = ("features_col", "label_col", "weight_col", "base_margin_col",
                     "qid_col", "validation_indicator_col")
_Columns = params_class("_Columns", COLUMNS)
_Cluster = params_class("_Cluster", CLUSTER)
_Boosting = params_class("_BoostingParams", BOOSTING_PARAMS)
_Ranking = params_class("_RankingParams", RANKER_PARAMS)
_ClassifierColumns = params_class("_ClassifierColumns", CLASSIFIER_COLUMNS)
_RawColumn = params_class("_RawColumn", RAW_COLUMN)


class _SparkGBM(Estimator, DefaultParamsWritable, DefaultParamsReadable):
    """What the three estimators share; ``_local``: the local estimator class,
    ``_table``: its parameters, ``_model``: the model class."""

    _local = _table = _model = None

    def __init__(self, **kwargs):
        super().__init__()
        self.setParams(**kwargs)

    def setParams(self, **kwargs):
        """Set parameters by name (``TypeError`` for a name the estimator has not)."""
        unknown = [k for k in kwargs if not self.hasParam(k)]
        if unknown:
            raise TypeError(f"{type(self).__name__} got unexpected parameter(s) {unknown}; "
                            "see docs/distributed.md (Spark) for its parameters")
        self._set(**kwargs)
        return self

    def gbm_params(self):
        """The local estimator's parameters, as set here."""
        return {name: self.getOrDefault(name) for name, _ in self._table}

    def _fit(self, dataset):
        from .training import fit_booster

        num_workers = check_num_workers(self.getOrDefault("num_workers"))
        max_recoveries = check_max_recoveries(self.getOrDefault("max_recoveries"))
        local = self._local(**self.gbm_params())
        check_n_estimators(local.n_estimators)
        if isinstance(local, GBMRanker):
            local._check_objective()
            if self.getOrDefault("qid_col") is None:
                raise ValueError("qid_col is needed to fit a SparkGBMRanker: the query id "
                                 "column (rows of a query consecutive)")
        columns = {name: self.getOrDefault(name) for name in _TRAINING_COLUMNS}
        booster, classes, recoveries = fit_booster(
            dataset, local, columns, num_workers, max_recoveries,
            float(self.getOrDefault("collective_timeout")))
        model = self._model(booster, classes)
        model.recoveries_ = recoveries
        return self._copyValues(model)


class _SparkGBMModel(Model, spark_io.GBMWritable, spark_io.GBMReadable):
    """A fitted model: ``get_booster()`` gives gbm's ``Booster``; ``transform`` adds the
    prediction columns; ``recoveries_``: one dict per lost task the fit went on after."""

    def __init__(self, booster=None, classes=None):
        super().__init__()
        self._booster, self.classes_ = booster, classes
        self.recoveries_ = []

    def get_booster(self):
        return self._booster

    def _transform(self, dataset):
        from .predict import predict_frame

        return predict_frame(self, dataset)


class SparkGBMRegressorModel(_SparkGBMModel, _Columns, _Cluster, _Boosting, _RawColumn):
    """A fitted ``SparkGBMRegressor``."""


class SparkGBMClassifierModel(_SparkGBMModel, _Columns, _Cluster, _Boosting,
                              _ClassifierColumns):
    """A fitted ``SparkGBMClassifier``: ``classes_`` holds the labels (the prediction
    column gives one of them; probability and raw prediction vectors in their order)."""


class SparkGBMRankerModel(_SparkGBMModel, _Columns, _Cluster, _Ranking, _RawColumn):
    """A fitted ``SparkGBMRanker``: the prediction is the ranking score (the margin)."""


class SparkGBMRegressor(_SparkGBM, _Columns, _Cluster, _Boosting, _RawColumn):
    """``gbm.GBMRegressor`` trained on Spark (see the module docstring); labels a
    numeric column."""

    _local, _table, _model = GBMRegressor, BOOSTING_PARAMS, SparkGBMRegressorModel


class SparkGBMClassifier(_SparkGBM, _Columns, _Cluster, _Boosting, _ClassifierColumns):
    """``gbm.GBMClassifier`` trained on Spark: labels a numeric column (two classes train
    ``binary:logistic``, more ``multi:softprob``); the model adds ``prediction``,
    ``probability`` and ``rawPrediction`` columns, as Spark's classifiers do."""

    _local, _table, _model = GBMClassifier, BOOSTING_PARAMS, SparkGBMClassifierModel


class SparkGBMRanker(_SparkGBM, _Columns, _Cluster, _Ranking, _RawColumn):
    """``gbm.GBMRanker`` trained on Spark: ``qid_col`` needed, a query's rows
    consecutive; ``weight_col`` one weight per query (the same on its rows)."""

    _local, _table, _model = GBMRanker, RANKER_PARAMS, SparkGBMRankerModel
