"""``LogisticRegression`` with scikit-learn's names and objective: binary (one
coefficient row, sigmoid) for 2 classes, multinomial (softmax over one row per class)
for more."""
import numpy as np
from scipy.special import expit, log_softmax
from sklearn.base import ClassifierMixin

from ..kernels.linear_math import LOGISTIC, MULTINOMIAL
from .base import LinearBase, check_number, device_output
from .classes import class_weights, encode_labels
from .problem import Problem

_PENALTIES = ("l2", "l1", "elasticnet")


class LogisticRegression(ClassifierMixin, LinearBase):
    """Logistic regression, solved by proximal Newton with a duality-gap certificate.

        minimise  C sum_i s_i cw_{y_i} loss_i + (1 - r) / 2 |W|^2 + r |W|_1

    with ``r`` = 0 ("l2"), 1 ("l1") or ``l1_ratio`` ("elasticnet"); ``loss_i`` the
    logistic loss (2 classes, ``W`` one row) or the multinomial one (one row per class).
    The intercept is not penalised.

    Parameters
    ----------
    penalty : "l2", "l1" or "elasticnet"
    C : float > 0, inverse regularisation strength
    l1_ratio : float in [0, 1], used by "elasticnet" (required then)
    tol : float >= 0, relative duality gap at which to stop (the objective is then within
        a factor ``1 + tol`` of the optimum)
    fit_intercept : bool
    class_weight : None, "balanced" or dict {label: weight}
    max_iter : int, Newton steps
    device : "cpu" or "cuda"; n_jobs : int or None, threads (None: all)
    max_device_memory : int or None, bytes of GPU memory the fit may use (``device="cuda"``
        only): data that do not fit are trained with duality-gap working sets

    Attributes
    ----------
    classes_ : (n_classes,); coef_ : (1, n_features) or (n_classes, n_features);
    intercept_ : (1,) or (n_classes,) (multinomial intercepts are centred: they are only
    defined up to a common shift); n_iter_ : int array (1,), Newton steps;
    duality_gap_ : float, absolute, in the objective's scale; objective_ : float
    """

    def __init__(self, penalty="l2", *, C=1.0, l1_ratio=None, tol=1e-4, fit_intercept=True,
                 class_weight=None, max_iter=100, device="cpu", n_jobs=None,
                 max_device_memory=None):
        self.penalty = penalty
        self.C = C
        self.l1_ratio = l1_ratio
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.device = device
        self.n_jobs = n_jobs
        self.max_device_memory = max_device_memory

    def _penalties(self):
        if self.penalty not in _PENALTIES:
            raise ValueError(f"penalty must be one of {list(_PENALTIES)}, got {self.penalty!r} "
                             "(an unpenalised fit has no duality-gap certificate: use a large C)")
        if self.penalty == "l2":
            return 0.0, 1.0
        if self.penalty == "l1":
            return 1.0, 0.0
        if self.l1_ratio is None:
            raise ValueError("l1_ratio must be set (a number in [0, 1]) when penalty='elasticnet'")
        ratio = check_number("l1_ratio", self.l1_ratio, low=0.0, high=1.0)
        return ratio, 1.0 - ratio

    def _fit(self, X, y, sample_weight, collective):
        self._check_common()
        l1, l2 = self._penalties()
        C = check_number("C", self.C, low=0.0, low_open=True)
        backend = self._backend(collective)
        X, y, weight = self._validate_fit(X, y, sample_weight, collective)
        encoded = encode_labels(self, y, collective)
        per_class = class_weights(self.class_weight, self.classes_, encoded, weight, collective)
        c = C * weight * per_class[encoded]
        n_classes = self.classes_.shape[0]
        if n_classes == 2:
            loss, n_outputs = LOGISTIC, 1
            targets = np.where(encoded == 1, 1.0, -1.0)[:, None]
        else:
            loss, n_outputs = MULTINOMIAL, n_classes
            targets = encoded.astype(np.float64)[:, None]
        problem = Problem(loss, targets, c, n_outputs, l1, l2,
                          "free" if self.fit_intercept else "none")
        result = self._solve_newton(problem, self._design(X, backend, n_outputs=n_outputs),
                                    backend, self.max_iter)
        self.coef_ = result.coef[:, :-1].copy()
        intercept = result.coef[:, -1].copy() if self.fit_intercept else np.zeros(n_outputs)
        if n_outputs > 1:
            intercept -= intercept.mean()  # softmax is unchanged by a common shift
        self.intercept_ = intercept
        self.n_iter_ = np.array([result.n_iter])
        self.duality_gap_, self.objective_ = float(result.gap), float(result.primal)
        return self

    @device_output
    def predict_log_proba(self, X):
        """Log class probabilities, (n_samples, n_classes)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([-np.logaddexp(0.0, scores), -np.logaddexp(0.0, -scores)])
        return log_softmax(scores, axis=1)

    @device_output
    def predict_proba(self, X):
        """Class probabilities, (n_samples, n_classes)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            positive = expit(scores)
            return np.column_stack([1.0 - positive, positive])
        return np.exp(log_softmax(scores, axis=1))

    @device_output
    def decision_function(self, X):
        """Margins ``X coef_^T + intercept_``: (n_samples,) for two classes, else
        (n_samples, n_classes)."""
        return self._margins(X)

    @device_output
    def predict(self, X):
        """Predicted class labels, (n_samples,)."""
        scores = self.decision_function(X)
        index = (scores > 0).astype(np.int64) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[index]
