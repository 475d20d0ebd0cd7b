"""scikit-learn estimators over Dask collections: validate, convert, call ``gbm.dask.train``.

``DaskGBMRegressor``, ``DaskGBMClassifier`` and ``DaskGBMRanker`` take the parameters of
their local twins (``gbm.sklearn``) plus ``client`` (None: the default client),
``checkpoint_dir``, ``max_recoveries``, ``external_memory`` and ``cache_dir``
(``gbm.dask.train``'s; a fit's recoveries are in ``recoveries_``). ``fit`` takes dask arrays or DataFrames; ``predict`` and
``predict_proba`` are lazy, one task per partition, and ``to_local()`` returns the local
estimator with the same model. Import them from ``gbm.dask``.
"""
import numpy as np

from . import data as dask_data
from .recovery import DEFAULT_MAX_RECOVERIES
from .training import train
from .wrappers import dask_init, map_rows
from ..data.eval_sets import fit_eval_specs
from ..data.inputs import to_host
from ..data.queries import pop_qid
from ..sklearn.boosting import (FITTED_ATTRIBUTES, GBMClassifier, GBMRanker, GBMRegressor,
                               check_n_estimators)

_DASK_ARGS = {"client": None, "checkpoint_dir": None,
              "max_recoveries": DEFAULT_MAX_RECOVERIES, "external_memory": False,
              "cache_dir": None}


class _DaskMixin:
    _local = None  # the local estimator class

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_weight_eval_set=None,
            verbose=False, xgb_model=None, callbacks=(), base_margin=None,
            base_margin_eval_set=None):
        """Fit on dask collections (the regressor's and the classifier's; see their
        docstrings); returns self."""
        evals = dict(eval_set=eval_set, sample_weight_eval_set=sample_weight_eval_set,
                     base_margin_eval_set=base_margin_eval_set)
        return self._dask_fit(X, y, evals, xgb_model, verbose, callbacks,
                              sample_weight=sample_weight, base_margin=base_margin)

    def _dask_fit(self, X, y, evals, xgb_model, verbose, callbacks, **train_kwargs):
        """``evals``: ``fit``'s eval-set arguments (``gbm.data.eval_sets.fit_eval_specs``),
        their labels encoded as y's; ``train_kwargs`` go to ``gbm.dask.train``."""
        dask_data.check_dask(X, "X")
        check_n_estimators(self.n_estimators)
        for name in FITTED_ATTRIBUTES + ("recoveries_",):  # a new fit: nothing of the last one's
            self.__dict__.pop(name, None)
        y, extra = self._dask_encode_y(dask_data.check_dask(y, "y"))
        params = dict(self._train_params(), **extra)
        names = [str(c) for c in X.columns] if hasattr(X, "columns") else None
        if isinstance(xgb_model, _DaskMixin):
            xgb_model = xgb_model.get_booster()
        evals = fit_eval_specs(**evals, prepare=self._dask_prepare_eval)
        stats = {}
        booster = train(self.client, params, X, y, num_boost_round=self._boost_rounds(),
                        evals=evals, early_stopping_rounds=self.early_stopping_rounds,
                        checkpoint_dir=self.checkpoint_dir, feature_names=names,
                        init_model=xgb_model, verbose_eval=verbose, callbacks=callbacks,
                        categorical_features=self.categorical_features,
                        max_recoveries=self.max_recoveries,
                        external_memory=self.external_memory, cache_dir=self.cache_dir,
                        _stats=stats, **train_kwargs)
        self._Booster = booster
        self.recoveries_ = stats["recoveries"]  # one dict per lost worker the fit survived
        self.n_features_in_ = int(X.shape[1])
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        return self

    def _dask_encode_y(self, y):
        return self._encode_y(y)

    def to_local(self):
        """The local estimator (``gbm.sklearn``) with this one's parameters and model."""
        params = {k: v for k, v in self.get_params().items() if k not in _DASK_ARGS}
        local = self._local(**params)
        for name in FITTED_ATTRIBUTES:
            if name in self.__dict__:
                setattr(local, name, self.__dict__[name])
        return local

    def _lazy(self, X, method, n_out=None, dtype=np.float64):
        return map_rows(dask_data.check_dask(X, "X"), getattr(self.to_local(), method),
                         n_out, dtype)

    def _dask_prepare_eval(self, spec):
        spec.y = self._encode_eval_labels(spec.y)
        return spec

    def _encode_eval_labels(self, y):
        return y


def _encode_labels(part, classes):
    """Labels -> their index in ``classes`` (float64, on the host: training reads its
    labels there), on a partition."""
    values = np.asarray(to_host(part)).ravel()
    codes = np.searchsorted(classes, values)
    bad = (codes >= len(classes)) | (classes[np.minimum(codes, len(classes) - 1)] != values)
    if bad.any():
        raise ValueError(f"eval_set holds labels {sorted(set(values[bad].tolist()))} not seen in y")
    out = codes.astype(np.float64)
    if hasattr(part, "index"):
        import pandas as pd

        return pd.Series(out, index=part.index)
    return out


def _map_labels(y, classes):
    if dask_data.dask_kind(y) == "array":
        return y.map_blocks(_encode_labels, classes, dtype=np.float64,
                            meta=np.empty((0,), np.float64))
    return y.map_partitions(_encode_labels, classes, meta=(y.name, "f8"))


class DaskGBMRegressor(_DaskMixin, GBMRegressor):
    """``gbm.GBMRegressor`` trained on a Dask cluster (same parameters, plus ``client`` and
    ``checkpoint_dir``); ``fit(X, y, sample_weight=None, eval_set=None,
    sample_weight_eval_set=None, verbose=False, xgb_model=None, callbacks=(),
    base_margin=None, base_margin_eval_set=None)`` with dask collections (``base_margin``:
    each row's starting margin, partitioned as X, as for ``GBMRegressor.fit``);
    ``predict`` returns a lazy dask collection (``to_local()`` predicts with
    ``base_margin=``)."""

    _local = GBMRegressor
    __init__ = dask_init(GBMRegressor, _DASK_ARGS)

    def predict(self, X):
        n_groups = self.get_booster().n_groups
        return self._lazy(X, "predict", None if n_groups == 1 else n_groups)


class DaskGBMClassifier(_DaskMixin, GBMClassifier):
    """``gbm.GBMClassifier`` trained on a Dask cluster (see ``DaskGBMRegressor``); the
    classes are found on the cluster (only the distinct labels reach the client)."""

    _local = GBMClassifier
    __init__ = dask_init(GBMClassifier, _DASK_ARGS)

    def _dask_encode_y(self, y):
        import dask.array as da

        uniques = da.unique(y) if dask_data.dask_kind(y) == "array" else y.unique()
        classes = np.unique(np.asarray(to_host(uniques.compute())))
        _, extra = GBMClassifier._encode_y(self, classes)  # classes_, the label encoder
        return _map_labels(y, self.classes_), extra

    def _encode_eval_labels(self, y):
        return _map_labels(dask_data.check_dask(y, "eval_set y"), self.classes_)

    def predict_proba(self, X):
        return self._lazy(X, "predict_proba", len(self.classes_))

    def predict(self, X):
        return self._lazy(X, "predict", dtype=self.classes_.dtype)


class DaskGBMRanker(_DaskMixin, GBMRanker):
    """``gbm.GBMRanker`` trained on a Dask cluster (see ``DaskGBMRegressor``). ``qid`` (or
    a ``qid`` column of a dask DataFrame) is partitioned as X; ``group`` sizes and
    ``sample_weight`` (one per group) are NumPy arrays. A query group is never split
    between workers: partitions a group spans go to one worker."""

    _local = GBMRanker
    __init__ = dask_init(GBMRanker, _DASK_ARGS)

    def fit(self, X, y, *, group=None, qid=None, sample_weight=None, eval_set=None,
            eval_group=None, eval_qid=None, sample_weight_eval_set=None, verbose=False,
            xgb_model=None, callbacks=(), base_margin=None, base_margin_eval_set=None):
        self._check_objective()
        X, qid = pop_qid(X, qid)
        evals = dict(eval_set=eval_set, sample_weight_eval_set=sample_weight_eval_set,
                     base_margin_eval_set=base_margin_eval_set, eval_group=eval_group,
                     eval_qid=eval_qid)
        return self._dask_fit(X, y, evals, xgb_model, verbose, callbacks,
                              sample_weight=sample_weight, group=group, qid=qid,
                              base_margin=base_margin)

    def _dask_prepare_eval(self, spec):
        spec.X, spec.qid = pop_qid(spec.X, spec.qid)  # a dask DataFrame's qid column
        return spec

    def predict(self, X):
        X, _ = pop_qid(X, None)
        return self._lazy(X, "predict")
