"""Least-squares estimators with scikit-learn's names and objectives: ``Ridge``, ``Lasso``,
``ElasticNet``. One solver (``gbm/linear/newton.py``, coordinate descent on the squared
loss) and one certificate serve all three; a 2-d ``y`` fits one output per column."""
import numpy as np
from sklearn.base import RegressorMixin

from ..kernels.linear_math import SQUARED
from .base import LinearBase, check_number, device_output
from .problem import Problem, allsum


class _LeastSquares(RegressorMixin, LinearBase):
    """Shared fit: ``_objective_scale(weights, collective)`` gives the rows' weights ``c``
    and ``_penalties()`` the (l1, l2) of the estimator's objective."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _fit(self, X, y, sample_weight, collective):
        self._check_common()
        l1, l2 = self._penalties()
        backend = self._backend(collective)
        X, y, weight = self._validate_fit(X, y, sample_weight, collective, multi_output=True,
                                          y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        targets = y if y.ndim == 2 else y[:, None]  # (n, n_targets), n = 0 on an empty rank
        problem = Problem(SQUARED, np.ascontiguousarray(targets),
                          self._objective_scale(weight, collective), targets.shape[1], l1, l2,
                          "free" if self.fit_intercept else "none")
        design = self._design(X, backend, n_outputs=targets.shape[1])
        result = self._solve_newton(problem, design, backend, self.max_iter or 100)
        coef, intercept = result.coef[:, :-1], result.coef[:, -1]
        if y.ndim == 1:
            self.coef_, self.intercept_ = coef[0].copy(), float(intercept[0])
        else:
            self.coef_, self.intercept_ = coef.copy(), intercept.copy()
        if not self.fit_intercept:
            self.intercept_ = 0.0 if y.ndim == 1 else np.zeros(targets.shape[1])
        self.n_iter_ = result.n_iter
        self.duality_gap_, self.objective_ = float(result.gap), float(result.primal)
        return self

    @device_output
    def predict(self, X):
        """Predictions (n_samples,) or (n_samples, n_targets)."""
        return self._margins(X)


class Ridge(_LeastSquares):
    """Least squares with an L2 penalty, scikit-learn's ``Ridge``:

        minimise  sum_i s_i (y_i - x_i w - b)^2 + alpha |w|^2

    Parameters
    ----------
    alpha : float > 0
    fit_intercept : bool (the intercept is not penalised)
    tol : float, relative duality gap at which to stop: the objective is within a factor
        ``1 + tol`` of the optimum (a certificate, not an iteration count)
    max_iter : int or None, Newton steps (None: 100)
    device : "cpu" or "cuda"; n_jobs : int or None, threads (None: all)
    max_device_memory : int or None, bytes of GPU memory the fit may use (``device="cuda"``
        only): data that do not fit are trained with duality-gap working sets

    Attributes
    ----------
    coef_ : (n_features,) or (n_targets, n_features); intercept_ : float or (n_targets,)
    n_iter_ : int; duality_gap_ : float (absolute, same scale as the objective);
    objective_ : float, the objective at ``coef_``
    """

    def __init__(self, alpha=1.0, *, fit_intercept=True, max_iter=None, tol=1e-4, device="cpu",
                 n_jobs=None, max_device_memory=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.device = device
        self.n_jobs = n_jobs
        self.max_device_memory = max_device_memory

    def _penalties(self):
        alpha = check_number("alpha", self.alpha, low=0.0, low_open=True)
        return 0.0, 2.0 * alpha  # l2 / 2 |w|^2 = alpha |w|^2

    def _objective_scale(self, weight, collective):
        return 2.0 * weight  # c_i / 2 r_i^2 = s_i r_i^2


class ElasticNet(_LeastSquares):
    """Least squares with L1 and L2 penalties, scikit-learn's ``ElasticNet``:

        minimise  1 / (2 sum_i s_i) sum_i s_i (y_i - x_i w - b)^2
                  + alpha l1_ratio |w|_1 + alpha (1 - l1_ratio) / 2 |w|^2

    Parameters
    ----------
    alpha : float > 0; l1_ratio : float in [0, 1]
    fit_intercept, tol, device, n_jobs : as ``Ridge``; max_iter : Newton steps (1000; None: 100)

    Attributes: as ``Ridge``.
    """

    def __init__(self, alpha=1.0, *, l1_ratio=0.5, fit_intercept=True, max_iter=1000, tol=1e-4,
                 device="cpu", n_jobs=None, max_device_memory=None):
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.device = device
        self.n_jobs = n_jobs
        self.max_device_memory = max_device_memory

    def _penalties(self):
        alpha = check_number("alpha", self.alpha, low=0.0, low_open=True)
        ratio = check_number("l1_ratio", self.l1_ratio, low=0.0, high=1.0)
        return alpha * ratio, alpha * (1.0 - ratio)

    def _objective_scale(self, weight, collective):
        total = float(allsum(np.sum(weight), collective))
        if total <= 0.0:
            raise ValueError("sample_weight is zero for every row; at least one weight must "
                             "be positive")
        return weight / total


class Lasso(ElasticNet):
    """Least squares with an L1 penalty, scikit-learn's ``Lasso``:

        minimise  1 / (2 sum_i s_i) sum_i s_i (y_i - x_i w - b)^2 + alpha |w|_1

    Parameters and attributes: as ``ElasticNet`` without ``l1_ratio``.
    """

    def __init__(self, alpha=1.0, *, fit_intercept=True, max_iter=1000, tol=1e-4, device="cpu",
                 n_jobs=None, max_device_memory=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.device = device
        self.n_jobs = n_jobs
        self.max_device_memory = max_device_memory

    def _penalties(self):
        return check_number("alpha", self.alpha, low=0.0, low_open=True), 0.0
