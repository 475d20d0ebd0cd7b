"""What the linear estimators share: input checks, the backend, prediction, fit results.

GPU input (CuPy, or anything with ``__cuda_array_interface__``) is copied to the host
once where it enters (fit: X, y and sample_weight; the prediction methods: X): the input
checks and the solvers' host work run on NumPy, and on ``device="cuda"`` the solvers'
copy of X goes back to the device once (``Design``). Predictions on GPU input come back
as CuPy arrays, as the tree estimators' do, except labels CuPy cannot hold (strings).
"""
import functools
import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import (_num_samples, check_array, check_consistent_length,
                                      check_is_fitted, validate_data)

from ..runtime.backend import get_backend
from ..collective import LOCAL
from ..data.inputs import check_sample_weight, is_device_array, to_host
from . import dual_cd, newton, working_set
from .design import Design
from .problem import allsum

ACCEPT_SPARSE = ("csr", "csc")


def check_number(name, value, low=None, high=None, low_open=False, integer=False):
    """``value`` as float (int when ``integer``), or ValueError naming ``name``."""
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite {'integer' if integer else 'number'}, "
                         f"got {value!r}")
    if low is not None and (value <= low if low_open else value < low):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value!r}")
    return int(value) if integer else float(value)


def device_output(method):
    """Prediction method ``method(self, X)`` taking GPU input: X is copied to the host for
    the computation, and the result goes back to the device (CuPy) when X was there and
    the result is numeric."""
    @functools.wraps(method)
    def wrapper(self, X):
        if not is_device_array(X):
            return method(self, X)
        result = method(self, to_host(X))
        if result.dtype.kind not in "biuf":
            return result  # labels CuPy cannot hold (strings, objects)
        import cupy

        return cupy.asarray(result)
    return wrapper


class LinearBase(BaseEstimator):
    """Shared plumbing. ``_fit(X, y, sample_weight, collective)`` fits on this rank's rows
    (``collective``: how ranks holding other rows of the data agree; ``LOCAL`` alone).
    Subclasses set ``coef_``, ``intercept_``, ``n_iter_``,
    ``duality_gap_`` (absolute, in the estimator's objective) and ``objective_``."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features; dense, CSR or CSC, never densified), y and
        optional non-negative ``sample_weight`` (n_samples,); returns self."""
        return self._fit(X, y, sample_weight, LOCAL)

    def _backend(self, collective):
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda', got {self.device!r}")
        if self.n_jobs is not None:
            check_number("n_jobs", self.n_jobs, integer=True)
            if self.n_jobs == 0:
                raise ValueError("n_jobs must be a non-zero integer or None, got 0")
        return get_backend(self.device, self.n_jobs, collective)

    def _check_common(self):
        self._tol = check_number("tol", self.tol, low=0.0)
        if self.max_iter is not None:
            check_number("max_iter", self.max_iter, low=1, integer=True)

    def _validate_fit(self, X, y, sample_weight, collective, multi_output=False,
                      y_numeric=False):
        """Checked X (float64; CSR/CSC kept sparse), y and weights (ones when None). A
        rank of a distributed fit may hold no rows; the weights are checked as a whole
        then (one sum over the ranks)."""
        shard = collective.world_size > 1
        X, y, sample_weight = (to_host(a) for a in (X, y, sample_weight))
        if shard and multi_output and _num_samples(y) == 0:
            # scikit-learn checks a 2-d y for one row at least, whatever X's minimum
            X = validate_data(self, X, accept_sparse=ACCEPT_SPARSE, dtype=np.float64,
                              ensure_min_samples=0)
            y = check_array(y, ensure_2d=False, dtype=np.float64 if y_numeric else None,
                            ensure_min_samples=0, input_name="y")
            check_consistent_length(X, y)
        else:
            X, y = validate_data(self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=np.float64,
                                 multi_output=multi_output, y_numeric=y_numeric,
                                 ensure_min_samples=0 if shard else 1)
        weight = check_sample_weight(sample_weight, X.shape[0], shard=shard)
        if shard and not allsum(np.sum(weight), collective) > 0.0:
            raise ValueError("sample_weight is zero for every row; at least one weight must be "
                             "positive")
        return X, y, np.ascontiguousarray(weight, dtype=np.float64)

    def _design(self, X, backend, by="columns", n_outputs=1):
        """X for the solvers: a ``Design`` on ``backend``, or, on a device whose
        ``max_device_memory`` it does not fit, a ``working_set.HostData`` (X on the host,
        duality-gap working sets on the device)."""
        budget = self.max_device_memory
        if budget is not None:
            budget = check_number("max_device_memory", budget, low=1, integer=True)
        if budget is None or backend.name != "cuda":
            return Design(X, backend, by)
        host = working_set.host_design(X, backend, by)
        needed = (working_set.primal_bytes(host, n_outputs) if by == "columns"
                  else working_set.dual_bytes(host))
        if needed <= budget:
            return Design(X, backend, by)
        return working_set.HostData(host, backend, budget)

    def _solve_newton(self, problem, design, backend, max_iter):
        """``newton.solve`` on ``design`` (with working sets for ``HostData``)."""
        mode = getattr(self, "_mode", "auto")
        if isinstance(design, working_set.HostData):
            return working_set.newton(problem, design, self._tol, max_iter, mode)
        return newton.solve(problem, design, backend, self._tol, max_iter, mode=mode)

    def _solve_dual(self, loss, y, c, design, backend, intercept_scale, max_iter, seed):
        """``dual_cd.solve`` on ``design`` (with working sets for ``HostData``); warns if
        the certificate was not reached."""
        if isinstance(design, working_set.HostData):
            result = working_set.dual(loss, y, c, design, intercept_scale, self._tol, max_iter,
                                      seed)
        else:
            result = dual_cd.solve(loss, y, c, design, backend, intercept_scale, self._tol,
                                   max_iter, seed)
        newton.warn_unconverged(result, self._tol, "epochs")
        return result

    def _margins(self, X):
        """Margins ``X coef_^T + intercept_``: (n_samples,) for one output, else
        (n_samples, n_outputs)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse=ACCEPT_SPARSE, dtype=np.float64, reset=False)
        coef = np.atleast_2d(self.coef_)
        scores = safe_sparse_dot(X, coef.T, dense_output=True) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores
