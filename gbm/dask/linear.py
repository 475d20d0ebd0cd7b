"""The linear models (``gbm.linear``) trained on a Dask cluster, over row shards.

``DaskLogisticRegression``, ``DaskRidge``, ``DaskLasso``, ``DaskElasticNet`` and
``DaskLinearSVC`` take their local twins' parameters plus ``client`` (None: the default
client). ``fit`` takes dask arrays (dense or SciPy-sparse chunks) or DataFrames, chunked
along the rows. It runs as the tree training does (``gbm.dask.spmd``): each worker fits
on the partitions it already holds, one long task per worker, with the worker-to-worker
collective; that is the local estimator's own ``_fit`` over the rank's rows, whose
solvers agree through the collective (averaged proximal Newton steps, or CoCoA+ for the
dual solver: ``docs/linear.md``). The result is certified like a local fit:
``duality_gap_ <= tol * objective_`` for the objective over all rows, so it is within
``tol`` of the local fit's optimum. A fit that loses workers (``max_recoveries``, as
``gbm.dask.train``'s: ``gbm.dask.recovery``) fits again from the start on the workers
left, certified the same way; ``recoveries_`` lists its recoveries. ``predict`` (and
``decision_function``, ``predict_proba``) are lazy, one task per partition;
``to_local()`` returns the local estimator with the same coefficients.

Import them from ``gbm.dask``.
"""
import hashlib

import numpy as np

from . import data as dask_data, recovery
from .wrappers import dask_init, map_rows
from .spmd import alive_workers, run_ranks, worker_threads
from ..collective import CollectiveError
from ..linear import ElasticNet, Lasso, LinearSVC, LogisticRegression, Ridge

_DASK_ARGS = {"client": None, "max_recoveries": recovery.DEFAULT_MAX_RECOVERIES}
_DASK_FITTED = ("recoveries_",)  # fitted here, not by the local estimator
COLLECTIVE_TIMEOUT_S = 300.0  # one exchange's wait for the other ranks (a hung worker)


def _fitted_names(estimator):
    """The fitted attributes of a linear estimator (``coef_``, ``classes_``, ...)."""
    return [k for k in vars(estimator) if k.endswith("_") and not k.startswith("_")]


def _fit_rank(collective, share, local_class, params):
    """One rank's fit (``run_ranks``'s body): ``(fitted attributes or None, digest)``."""
    if params.get("n_jobs") is None:  # Numba threads: the worker's share of the machine
        params = dict(params, n_jobs=worker_threads())
    X, y = dask_data.assemble(share, "X"), dask_data.assemble(share, "y")
    weight = dask_data.assemble(share, "sample_weight")
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    if weight is not None and hasattr(weight, "to_numpy"):
        weight = weight.to_numpy()
    estimator = local_class(**params)._fit(X, y, weight, collective)
    fitted = {k: getattr(estimator, k) for k in _fitted_names(estimator)}
    digest = hashlib.sha256(np.ascontiguousarray(estimator.coef_).tobytes()
                            + np.ascontiguousarray(estimator.intercept_).tobytes()).hexdigest()
    return (fitted if collective.rank == 0 else None), digest


class _RowsOf:
    """A prediction method over one partition; an empty partition gives an empty result
    (scikit-learn's input check refuses zero rows)."""

    def __init__(self, method, n_out, dtype):
        self.method, self.n_out, self.dtype = method, n_out, dtype

    def __call__(self, part):
        if part.shape[0] == 0:
            return np.empty((0,) if self.n_out is None else (0, self.n_out), dtype=self.dtype)
        return self.method(part)


class _DaskLinear:
    """What the Dask linear estimators share: fit over the cluster, lazy predictions,
    ``to_local``."""

    _local = None  # the local estimator class

    def fit(self, X, y, sample_weight=None):
        """Fit on dask collections: X (n_samples, n_features), y (n_samples,) (or
        (n_samples, n_targets) for the regressors) and optional ``sample_weight``,
        partitioned as X; returns self."""
        import distributed

        dask_data.check_dask(X, "X")
        dask_data.check_dask(y, "y")
        max_recoveries = recovery.check_max_recoveries(self.max_recoveries)
        for name in _fitted_names(self):  # a new fit: nothing of the last one's
            delattr(self, name)
        client = self.client if self.client is not None else distributed.default_client()
        addresses = sorted(alive_workers(client))  # not the cache (gbm.dask.training.train)
        if not addresses:
            raise ValueError("the Dask cluster has no workers")
        data = dask_data.layout(client, X, y, sample_weight)
        params = self._local_params()

        def attempt(addresses, resume):  # no state: a recovery fits again from the start
            shares = data.shares(client, addresses)
            return run_ranks(client, addresses, _fit_rank,
                             [(share, self._local, params) for share in shares],
                             COLLECTIVE_TIMEOUT_S, name="gbm-linear")

        results, recoveries = recovery.run(client, addresses, attempt, [data], max_recoveries,
                                           COLLECTIVE_TIMEOUT_S)
        results = [r for r in results if r is not None]
        if len({digest for _, digest in results}) != 1:
            raise CollectiveError("the ranks ended with different coefficients; please report "
                                  "this")
        for name, value in results[0][0].items():
            setattr(self, name, value)
        self.recoveries_ = recoveries
        return self

    def _local_params(self):
        return {k: v for k, v in self.get_params().items() if k not in _DASK_ARGS}

    def to_local(self):
        """The local estimator (``gbm.linear``) with this one's parameters and fit."""
        local = self._local(**self._local_params())
        for name in _fitted_names(self):
            if name not in _DASK_FITTED:
                setattr(local, name, getattr(self, name))
        return local

    def _lazy(self, X, method, n_out=None, dtype=np.float64):
        return map_rows(dask_data.check_dask(X, "X"),
                         _RowsOf(getattr(self.to_local(), method), n_out, dtype), n_out, dtype)

    def _n_scores(self):
        """Columns of ``decision_function`` / ``predict``: None for one output."""
        coef = np.asarray(self.coef_)
        return None if coef.ndim == 1 or coef.shape[0] == 1 else coef.shape[0]


class _DaskClassifier(_DaskLinear):
    def decision_function(self, X):
        """Lazy margins: (n_samples,) for two classes, else (n_samples, n_classes)."""
        return self._lazy(X, "decision_function", self._n_scores())

    def predict(self, X):
        """Lazy predicted labels, (n_samples,)."""
        return self._lazy(X, "predict", dtype=self.classes_.dtype)


class _DaskRegressor(_DaskLinear):
    def predict(self, X):
        """Lazy predictions: (n_samples,) or (n_samples, n_targets)."""
        return self._lazy(X, "predict", self._n_scores())


class DaskLogisticRegression(_DaskClassifier, LogisticRegression):
    """``gbm.linear.LogisticRegression`` trained on a Dask cluster (its parameters plus
    ``client``); ``predict_proba`` and ``predict_log_proba`` are lazy too."""

    _local = LogisticRegression
    __init__ = dask_init(LogisticRegression, _DASK_ARGS)

    def predict_proba(self, X):
        """Lazy class probabilities, (n_samples, n_classes)."""
        return self._lazy(X, "predict_proba", len(self.classes_))

    def predict_log_proba(self, X):
        """Lazy log class probabilities, (n_samples, n_classes)."""
        return self._lazy(X, "predict_log_proba", len(self.classes_))


class DaskLinearSVC(_DaskClassifier, LinearSVC):
    """``gbm.linear.LinearSVC`` trained on a Dask cluster (its parameters plus ``client``).
    The dual solver runs as CoCoA+ over the workers, which needs more epochs than one
    rank (docs/linear.md)."""

    _local = LinearSVC
    __init__ = dask_init(LinearSVC, _DASK_ARGS)


class DaskRidge(_DaskRegressor, Ridge):
    """``gbm.linear.Ridge`` trained on a Dask cluster (its parameters plus ``client``)."""

    _local = Ridge
    __init__ = dask_init(Ridge, _DASK_ARGS)


class DaskLasso(_DaskRegressor, Lasso):
    """``gbm.linear.Lasso`` trained on a Dask cluster (its parameters plus ``client``)."""

    _local = Lasso
    __init__ = dask_init(Lasso, _DASK_ARGS)


class DaskElasticNet(_DaskRegressor, ElasticNet):
    """``gbm.linear.ElasticNet`` trained on a Dask cluster (its parameters plus ``client``)."""

    _local = ElasticNet
    __init__ = dask_init(ElasticNet, _DASK_ARGS)
