"""``LinearSVC`` with scikit-learn's (liblinear's) names and objective.

    minimise  1/2 |w|^2 + C sum_i s_i cw_i l(y_i (w . x_i + b))      (penalty "l2")
              |w|_1    + C sum_i s_i cw_i l(...)                        (penalty "l1")

with ``l`` the hinge or squared hinge, one-vs-rest for more than 2 classes. As in
liblinear, the intercept is a feature of value ``intercept_scaling`` whose coefficient is
penalised like the others, and in one-vs-rest the class weight applies to the positive
class only (the rest keep weight 1).
"""
import numpy as np
from sklearn.base import ClassifierMixin

from ..kernels.linear_math import HINGE, SQUARED_HINGE
from .base import LinearBase, check_number, device_output
from .classes import class_weights, encode_labels
from .problem import Problem


class LinearSVC(ClassifierMixin, LinearBase):
    """Linear support vector classifier with a duality-gap certificate.

    Parameters
    ----------
    penalty : "l2" or "l1" ("l1" with the squared hinge only)
    loss : "squared_hinge" or "hinge"
    dual : "auto", True or False. The L2 problems are solved by dual coordinate ascent
        (``True``; always for the hinge) or by proximal Newton on the primal (``False``;
        "auto" picks it for the squared hinge); "l1" by proximal Newton.
    tol : float >= 0, relative duality gap at which to stop
    C : float > 0
    multi_class : "ovr" (one-vs-rest)
    fit_intercept : bool; intercept_scaling : float > 0, the intercept feature's value
    class_weight : None, "balanced" or dict {label: weight}
    random_state : int or None, seed of the dual solver's row order
    max_iter : int, epochs (dual) or Newton steps (primal)
    device : "cpu" or "cuda"; n_jobs : int or None, threads (None: all)
    max_device_memory : int or None, bytes of GPU memory the fit may use (``device="cuda"``
        only): data that do not fit are trained with duality-gap working sets

    Attributes
    ----------
    classes_; coef_ : (1, n_features) or (n_classes, n_features); intercept_ : (1,) or
    (n_classes,), 0.0 without an intercept; n_iter_ : int, the most over the binary
    problems; duality_gap_, objective_ : floats, summed over the binary problems
    """

    def __init__(self, penalty="l2", loss="squared_hinge", *, dual="auto", tol=1e-4, C=1.0,
                 multi_class="ovr", fit_intercept=True, intercept_scaling=1.0, class_weight=None,
                 random_state=None, max_iter=1000, device="cpu", n_jobs=None,
                 max_device_memory=None):
        self.penalty = penalty
        self.loss = loss
        self.dual = dual
        self.tol = tol
        self.C = C
        self.multi_class = multi_class
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.random_state = random_state
        self.max_iter = max_iter
        self.device = device
        self.n_jobs = n_jobs
        self.max_device_memory = max_device_memory

    def _solver(self):
        """"dual" or "newton", after checking the argument combination."""
        if self.penalty not in ("l1", "l2"):
            raise ValueError(f"penalty must be 'l1' or 'l2', got {self.penalty!r}")
        if self.loss not in ("hinge", "squared_hinge"):
            raise ValueError(f"loss must be 'hinge' or 'squared_hinge', got {self.loss!r}")
        if self.multi_class != "ovr":
            raise ValueError(f"multi_class must be 'ovr' (one-vs-rest), got {self.multi_class!r};"
                             " crammer_singer is not supported")
        if self.dual not in ("auto", True, False):
            raise ValueError(f"dual must be 'auto', True or False, got {self.dual!r}")
        if self.penalty == "l1":
            if self.loss == "hinge":
                raise ValueError("penalty='l1' with loss='hinge' is not supported "
                                 "(use loss='squared_hinge')")
            if self.dual is True:
                raise ValueError("penalty='l1' needs dual=False or 'auto'")
            return "newton"
        if self.loss == "hinge":
            if self.dual is False:
                raise ValueError("loss='hinge' needs dual=True or 'auto'")
            return "dual"
        return "dual" if self.dual is True else "newton"

    def _fit(self, X, y, sample_weight, collective):
        self._check_common()
        solver = self._solver()
        C = check_number("C", self.C, low=0.0, low_open=True)
        scaling = check_number("intercept_scaling", self.intercept_scaling, low=0.0,
                               low_open=True)
        seed = 0 if self.random_state is None else check_number(
            "random_state", self.random_state, low=0, integer=True)
        backend = self._backend(collective)
        X, y, weight = self._validate_fit(X, y, sample_weight, collective)
        encoded = encode_labels(self, y, collective)
        per_class = class_weights(self.class_weight, self.classes_, encoded, weight, collective)
        n_classes = self.classes_.shape[0]
        if n_classes == 2:  # one problem, classes_[1] positive, both classes weighted
            tasks = [(encoded == 1, C * weight * per_class[encoded])]
        else:  # one-vs-rest: liblinear weights the positive class only
            tasks = [(encoded == k, C * weight * np.where(encoded == k, per_class[k], 1.0))
                     for k in range(n_classes)]
        scale = scaling if self.fit_intercept else 0.0
        design = self._design(X, backend, "rows" if solver == "dual" else "columns")
        loss = HINGE if self.loss == "hinge" else SQUARED_HINGE
        results = []
        for positive, c in tasks:
            signs = np.where(positive, 1.0, -1.0)
            if solver == "dual":
                result = self._solve_dual(loss, signs, c, design, backend, scale,
                                          self.max_iter, seed)
            else:
                l1, l2 = (1.0, 0.0) if self.penalty == "l1" else (0.0, 1.0)
                problem = Problem(SQUARED_HINGE, signs[:, None], c, 1, l1, l2,
                                  "penalized" if self.fit_intercept else "none", scaling)
                result = self._solve_newton(problem, design, backend, self.max_iter)
            results.append(result)
        coef = np.vstack([r.coef for r in results])
        self.coef_ = coef[:, :-1].copy()
        self.intercept_ = coef[:, -1] * scale if self.fit_intercept else 0.0
        self.n_iter_ = max(r.n_iter for r in results)
        self.duality_gap_ = float(sum(r.gap for r in results))
        self.objective_ = float(sum(r.primal for r in results))
        return self

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
