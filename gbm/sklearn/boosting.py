"""scikit-learn estimators: validate, convert, call ``train``. Nothing else lives here.

A fit is a transaction: it works on a copy of the estimator, and the copy's fitted
attributes (``FITTED_ATTRIBUTES``) replace the estimator's only when training has completed, under
one lock. A fit that raises or is interrupted (a bad parameter or eval set, a callback's
exception, Ctrl-C) leaves the previous model, width and labels as they were; two threads
fitting one estimator each leave a whole fit, never a mix. Predictions read the fitted
state once, under the same lock.
"""
import threading
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from . import files as estimator_io
from .multilabel import as_array, encode_multilabel, is_multilabel, multilabel_predict
from .parameters import (BOOSTING_PARAMS, N_POSITIONAL, RANKER_PARAMS, RANKER_POSITIONAL,
                         RANKING_PARAMS, estimator_init)
from ..data.categorical import as_frame, category_columns, encode_X
from ..data.dmatrix import replace_missing
from ..data.eval_sets import fit_eval_specs
from ..data.inputs import (check_sample_weight, check_X, check_y, checked_already,
                           is_device_array, to_host)
from ..data.intervals import check_intervals
from ..metrics import get_metric
from ..objectives import OBJECTIVES
from ..params import SURVIVAL
from ..data.queries import pop_qid
from ..data.sparse import is_sparse_input
from ..training.loop import train

# Estimator argument -> training parameter (the same name unless listed).
_TREE_PARAMS = ("learning_rate", "max_depth", "max_leaves", "grow_policy", "min_child_weight",
                "reg_lambda", "reg_alpha", "gamma", "max_delta_step", "subsample",
                "colsample_bytree", "colsample_bylevel", "colsample_bynode", "max_bin",
                "base_score", "n_jobs", "random_state", "device", "eval_metric",
                "interaction_constraints", "monotone_constraints", "num_parallel_tree",
                "max_cat_to_onehot", "max_cat_threshold", "tree_method")
# Parameters of one objective, and XGBoost's optional settings: passed on only when set.
_OBJECTIVE_PARAMS = ("quantile_alpha", "huber_slope", "tweedie_variance_power",
                     "scale_pos_weight", "verbosity", "validate_parameters", "expectile_alpha",
                     "aft_loss_distribution", "aft_loss_distribution_scale")
_REGRESSION_OBJECTIVES = ("reg:squarederror", "reg:absoluteerror", "reg:quantileerror",
                          "reg:pseudohubererror", "count:poisson", "reg:gamma", "reg:tweedie",
                          "reg:logistic", "reg:squaredlogerror", "reg:expectileerror",
                          "survival:cox", "survival:aft")
_CLASSIFICATION_OBJECTIVES = ("binary:logistic", "multi:softprob", "multi:softmax")
# DART's parameters (booster="dart"): passed on only when set, as XGBoost's estimators do.
_DART_PARAMS = ("booster", "rate_drop", "one_drop", "skip_drop", "sample_type",
                "normalize_type")
# Several outputs (gbm.tree.vector_leaf): passed on only when set, as XGBoost's estimators do.
_MULTI_PARAMS = ("multi_strategy", "gradient_projection", "projection_dim")
# What a fit sets; replaced together when a fit completes.
FITTED_ATTRIBUTES = ("_Booster", "n_features_in_", "feature_names_in_", "classes_", "n_classes_",
           "_label_encoder")
_STATE_LOCK = threading.Lock()  # module-wide: a lock on the estimator would not pickle


def check_n_estimators(n_estimators):
    """Raises ``ValueError`` unless ``n_estimators`` is an integer >= 1 (a bool is not
    one); every estimator's fit checks it before training, the Dask ones too."""
    if isinstance(n_estimators, bool) or not isinstance(n_estimators, (int, np.integer)) \
            or n_estimators < 1:
        raise ValueError(f"n_estimators must be an integer >= 1, got {n_estimators!r}")


class _GBMBase(BaseEstimator):
    """Shared constructor (``gbm.sklearn.parameters``: defaults are XGBoost's) and fit
    plumbing."""

    __init__ = estimator_init(BOOSTING_PARAMS, N_POSITIONAL)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True  # kept sparse; absent entries are missing values
        return tags

    def _train_params(self):
        params = {name: getattr(self, name) for name in _TREE_PARAMS}
        for name in _OBJECTIVE_PARAMS + _DART_PARAMS + _MULTI_PARAMS:  # None: the default
            value = getattr(self, name, None)  # absent too: GBMRanker has no pointwise ones
            if value is not None:
                params[name] = value
        return params

    def _objective(self, allowed, default):
        """The ``objective`` argument, checked against the estimator's kind."""
        objective = getattr(self, "objective", None)
        if objective is None:
            return default
        if objective not in allowed:
            raise ValueError(f"objective must be one of {list(allowed)} for "
                             f"{type(self).__name__}, got {objective!r}")
        return objective

    def _boost_rounds(self):
        """Rounds ``fit`` trains: ``n_estimators`` (a random forest trains one)."""
        return int(self.n_estimators)

    def _validate_X(self, X, reset, raw=False, encode=None):
        """X as float32 (gbm.data's rules and errors), with scikit-learn's bookkeeping of
        ``n_features_in_`` and ``feature_names_in_`` done on the original input.

        ``raw``: check, but return ``X`` itself (categorical input, which ``train``
        encodes). ``encode`` (predict): a Booster; categorical columns become its codes.
        Entries equal to the ``missing`` parameter become NaN first.
        """
        X = replace_missing(X, getattr(self, "missing", None))
        if raw:
            check_X(X, allow_category=True)
        elif encode is not None:
            converted = encode_X(X, encode.categories)
        else:
            converted = check_X(X)
        validate_data(self, X, reset=reset, skip_check_array=True)
        return X if raw else converted

    def _categorical_input(self, X):
        return self.categorical_features is not None or bool(category_columns(as_frame(X)))

    def fit(self, X, y, sample_weight=None, xgb_model=None, eval_set=None,
            sample_weight_eval_set=None, verbose=False, callbacks=(), base_margin=None,
            base_margin_eval_set=None):
        """Fit on X (n_samples, n_features) and y (n_samples,) (regressors: also
        (n_samples, n_targets), one output per target); returns self.

        ``sample_weight`` (n_samples,), optional: non-negative row weights.
        ``xgb_model``, optional: a fitted estimator, ``gbm.Booster`` or model file path
        to continue training from (``n_estimators`` more rounds).
        ``eval_set``, optional: list of ``(X, y)`` scored after every round (named
        ``validation_0``, ...), with weights from ``sample_weight_eval_set``; the last one
        drives ``early_stopping_rounds``. ``verbose``: print the scores every round
        (True) or every N rounds (an int N).
        ``callbacks``: gbm.callback.TrainingCallback objects (e.g. ``ProgressBar()``),
        after those of the constructor's ``callbacks``.
        ``base_margin`` (n_samples,) or (n_samples, n_outputs), optional: each row's
        starting margin instead of the base score (an offset); ``base_margin_eval_set``:
        one such array per eval set. Predict with ``base_margin=`` for those rows.
        """
        evals = dict(eval_set=eval_set, sample_weight_eval_set=sample_weight_eval_set,
                     base_margin_eval_set=base_margin_eval_set)
        return self._fit(X, y, evals, xgb_model, verbose, sample_weight=sample_weight,
                         callbacks=callbacks, base_margin=base_margin)

    def _fit(self, X, y, evals, xgb_model, verbose, **train_kwargs):
        """The fit every estimator shares, as a transaction (see the module docstring):
        ``_fit_state`` on a copy, then the copy's fitted attributes replace this one's."""
        work = object.__new__(type(self))
        work.__dict__.update({k: v for k, v in self.__dict__.items() if k not in FITTED_ATTRIBUTES})
        work._fit_state(X, y, evals, xgb_model, verbose, **train_kwargs)
        fitted = {name: work.__dict__[name] for name in FITTED_ATTRIBUTES if name in work.__dict__}
        with _STATE_LOCK:
            for name in FITTED_ATTRIBUTES:
                self.__dict__.pop(name, None)
            self.__dict__.update(fitted)
        return self

    def _fitted_state(self, *names):
        """The fitted attributes ``names``, read together (no fit commits in between)."""
        check_is_fitted(self, "_Booster")
        with _STATE_LOCK:
            return tuple(getattr(self, name) for name in names)

    def _fit_state(self, X, y, evals, xgb_model, verbose, **train_kwargs):
        """Check, encode y, call ``train``; sets the ``FITTED_ATTRIBUTES`` attributes on ``self``
        (a copy of the user's estimator).

        ``evals``: ``fit``'s eval-set arguments (``eval_set``, ``sample_weight_eval_set``,
        ...: ``gbm.data.eval_sets.fit_eval_specs``), checked and encoded as the training
        data is; ``train_kwargs`` go to ``train``."""
        check_n_estimators(self.n_estimators)
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        raw = self._categorical_input(X)
        # categorical input is encoded by train; sparse input is checked here but converted
        # by train too, which lets its copy of the values go once they are binned (held
        # here, it would stay beside the bins through every round)
        X = self._validate_X(X, reset=True, raw=raw or is_sparse_input(X))
        # labels are checked and encoded on the host (GPU labels: one copy), as in train
        y, extra_params = self._encode_y(self._column_y(to_host(y)))
        params = dict(self._train_params(), **extra_params)
        names = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else None
        if isinstance(xgb_model, _GBMBase):
            xgb_model = xgb_model.get_booster()
        train_kwargs["callbacks"] = list(self.callbacks or []) + list(
            train_kwargs.get("callbacks") or [])
        evals = fit_eval_specs(**evals, prepare=lambda spec: self._prepare_eval(spec, raw))
        # X and the eval sets' converted here: train need not test their values again
        with checked_already(X, *(getattr(spec, "X", None) for spec in evals or ())):
            self._Booster = train(params, X, y, num_boost_round=self._boost_rounds(),
                                  feature_names=names, init_model=xgb_model, evals=evals,
                                  verbose_eval=verbose,
                                  early_stopping_rounds=self.early_stopping_rounds,
                                  categorical_features=self.categorical_features,
                                  **train_kwargs)
        return self

    def _prepare_eval(self, spec, raw):
        """An eval set checked and encoded as the training data is (``raw``: its X goes to
        ``train`` unencoded, as categorical input does)."""
        spec.y = self._encode_eval_y(self._column_y(to_host(spec.y)))
        spec.X = self._validate_X(spec.X, reset=False, raw=raw)
        return spec

    def _column_y(self, y):
        """y as one column (regressors also take several, see GBMRegressor)."""
        return column_or_1d(y, warn=True)

    def _encode_eval_y(self, y):
        return y

    def evals_result(self):
        """Scores per eval set and metric, one per round: {"validation_0": {"rmse": [...]}}."""
        return self.get_booster().evals_result

    def _early_stopping_result(self, name):
        value = getattr(self.get_booster(), name)
        if value is None:
            raise AttributeError(f"{name} is only set when early stopping is used")
        return value

    best_iteration = property(lambda self: self._early_stopping_result("best_iteration"),
                              doc="Best round (0-based) found by early stopping.")
    best_score = property(lambda self: self._early_stopping_result("best_score"),
                          doc="Score of the best round found by early stopping.")

    @property
    def feature_importances_(self):
        """Each feature's importance divided by the sum over features (float64,
        (n_features,)): of the kind ``importance_type`` names ("weight", "gain", "cover",
        "total_gain", "total_cover"; see ``Booster.get_score``); None = "total_gain".
        XGBoost's estimators default to "gain" (the mean gain of a feature's splits), which
        ranks features differently (docs/coming_from_xgboost.md)."""
        booster = self.get_booster()
        gains = booster.get_score(importance_type=self.importance_type or "total_gain")
        names = booster.feature_names or [f"f{i}" for i in range(booster.n_features)]
        out = np.array([gains.get(name, 0.0) for name in names])
        total = out.sum()
        return out / total if total > 0 else out

    def get_booster(self):
        """The fitted ``gbm.Booster``."""
        check_is_fitted(self, "_Booster")
        return self._Booster

    def _predict_margin(self, X, output_margin, iteration_range=None, base_margin=None):
        """Predictions of the trees up to the best round when early stopping found one
        (XGBoost's estimators do the same), else of all trees."""
        return self._predict_with(self._fitted_state("_Booster")[0], X, output_margin,
                                  iteration_range, base_margin)

    def _predict_with(self, booster, X, output_margin, iteration_range=None, base_margin=None):
        """``iteration_range`` None: up to the best round (see above); else the rounds
        ``[begin, end)`` (``(0, 0)``: all), as ``Booster.predict``."""
        if iteration_range is None:
            best = booster.best_iteration
            iteration_range = ((0, best + 1) if best is not None and self.early_stopping_rounds
                               else (0, 0))
        # _validate_X has converted X and checked its columns: no second pass over it;
        # _predict_checked checks the width against this booster itself
        return booster._predict_checked(self._validate_X(X, reset=False, encode=booster),
                                        output_margin=output_margin,
                                        iteration_range=iteration_range, base_margin=base_margin)

    def save_model(self, path):
        """Write the fitted estimator to a JSON model file: the booster's file (see
        docs/model_format.md) with an ``estimator`` section holding this class, its
        parameters, the input's width and column names and a classifier's labels;
        ``load_model`` reads it back into an estimator of the same class. Parameters
        without a JSON form (callbacks, ``missing=NaN``) are not recorded."""
        booster = self.get_booster()
        estimator_io.save(self, booster, path)

    def load_model(self, path):
        """Become the estimator saved at ``path`` by ``save_model`` (its parameters and
        fitted state); returns self. A file written by another estimator class raises
        ``ValueError``; a plain booster file (``Booster.save_model``) loads when its
        objective fits this estimator."""
        params, fitted = estimator_io.read(self, path)
        self.set_params(**params)
        with _STATE_LOCK:
            for name in FITTED_ATTRIBUTES:
                self.__dict__.pop(name, None)
            self.__dict__.update(fitted)
        return self


class GBMRegressor(RegressorMixin, _GBMBase):
    """Gradient-boosted trees for regression, XGBoost's parameter names.

    Parameters
    ----------
    objective : str, default None (= "reg:squarederror")
        "reg:squarederror", "reg:absoluteerror", "reg:quantileerror",
        "reg:pseudohubererror", "count:poisson", "reg:gamma", "reg:tweedie",
        "reg:logistic", "reg:squaredlogerror", "reg:expectileerror", "survival:cox" or
        "survival:aft" (see Survival below).
    quantile_alpha, huber_slope, tweedie_variance_power, expectile_alpha,
    aft_loss_distribution, aft_loss_distribution_scale : optional
        The objective's own parameter (None: its default; ``reg:expectileerror`` needs
        ``expectile_alpha``). With a list of ``quantile_alpha`` (or ``expectile_alpha``)
        levels, ``predict`` returns one column per level.
    n_estimators : int, default 100
        Boosting rounds.
    learning_rate, max_depth, max_leaves, grow_policy, min_child_weight, reg_lambda,
    reg_alpha, gamma, max_delta_step, subsample, colsample_bytree, colsample_bylevel,
    colsample_bynode, max_bin, base_score, n_jobs, random_state, device,
    num_parallel_tree, max_cat_to_onehot, max_cat_threshold
        As in ``docs/parameters.md`` (the same meaning as in XGBoost).
    booster, rate_drop, one_drop, skip_drop, sample_type, normalize_type : optional
        ``booster="dart"`` trains with DART's dropout, which the others control (None:
        XGBoost's defaults; see ``docs/parameters.md``).
    categorical_features : list of int or str, or bool mask, optional
        Features to treat as categorical besides pandas ``category`` columns (see
        ``gbm.train``).
    enable_categorical : bool
        Accepted for XGBoost compatibility; it changes nothing: gbm always treats pandas
        ``category`` columns as categorical.

    The parameters from ``n_estimators`` to ``monotone_constraints`` may be passed by
    position, in the signature's order; the others by keyword only.

    Survival: with ``objective="survival:cox"``, ``y`` holds XGBoost's signed times (a
    positive label is an event at that time, a negative one censored at its absolute
    value) and ``predict`` the hazard ratios ``exp(margin)``. With
    ``objective="survival:aft"``, ``y`` has shape (n_samples, 2): each row's ``[lower,
    upper]`` interval of times (``upper = inf``: right-censored; ``lower = 0``:
    left-censored; equal: an exact time), eval sets' ``y`` alike, and ``predict`` the
    times ``exp(margin)``. For both, ``score`` is minus the objective's metric
    (``cox-nloglik`` / ``aft-nloglik``: higher is better), so ``cross_val_score`` and
    ``GridSearchCV`` work unchanged.

    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of str, when fitted on a DataFrame with string column names
    """

    def _encode_y(self, y):
        return y, {"objective": self._objective(_REGRESSION_OBJECTIVES, "reg:squarederror")}

    def score(self, X, y, sample_weight=None):
        """R^2 of ``predict(X)`` against ``y`` (scikit-learn's); for ``survival:cox`` and
        ``survival:aft``, minus the objective's metric (``cox-nloglik``, unweighted as
        XGBoost's, or the weighted ``aft-nloglik``) of the model's margins on (X, y)."""
        params = self._fitted_state("_Booster")[0].params
        objective = params["objective"]
        if objective not in SURVIVAL:
            return super().score(X, y, sample_weight=sample_weight)
        margin = self.predict(X, output_margin=True)
        y = self._column_y(to_host(y))
        if objective == "survival:aft":
            y = check_intervals(y, margin.shape[0])
        else:
            y = check_y(y, margin.shape[0])
        w = None if sample_weight is None else check_sample_weight(sample_weight, y.shape[0])
        metric = get_metric(OBJECTIVES[objective].default_metric, params)
        return -metric(y, to_host(margin), w)

    def _column_y(self, y):
        """y (n_samples,), or (n_samples, n_targets): one output per target (XGBoost's
        one_output_per_tree), predictions then (n_samples, n_targets)."""
        arr = y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)
        if arr.ndim == 2 and arr.shape[1] > 1:
            return arr
        return column_or_1d(y, warn=True)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def predict(self, X, output_margin=False, iteration_range=None, base_margin=None):
        """Predicted values, float64 (n_samples,); (n_samples, k) for ``k`` quantile levels
        or ``k`` targets (a ``y`` of shape (n_samples, k) at fit).

        ``output_margin``: the raw margins (before the objective's link).
        ``iteration_range``: use rounds ``[begin, end)`` only; None: up to the best round
        found by early stopping, else all. ``base_margin``: as in ``fit``.
        """
        return self._predict_margin(X, output_margin, iteration_range, base_margin)


def _label_codes(y):
    """A fitted ``LabelEncoder`` of ``y`` (one column of class labels) and ``y``'s codes,
    float64 (n,), as ``check_classification_targets(y)``, ``LabelEncoder().fit(y)`` and
    its ``transform(y)`` give them.

    Integer labels of a range at most about twice their count: one count of each value
    of the range (the classes are the values seen, in order; a label's code is the number of
    classes below it). Other numeric labels: one pass of ``np.unique`` (the classes,
    sorted, as the encoder's) and a binary search of each label among them.
    scikit-learn's three calls each find the distinct labels again (50,000 labels 0/1:
    int64 2.6-2.9 ms -> 0.16 ms by the table; float64 0.93 -> 0.43 ms by ``np.unique``).
    Float labels that are not whole numbers (or not finite) are what scikit-learn calls
    continuous: its check then raises its own error. Other labels (strings, objects): the
    three calls."""
    if y.ndim == 1 and y.dtype.kind in "iu" and y.size:
        lo, hi = y.min(), y.max()
        if int(hi) - int(lo) <= 2 * y.size + 1024:  # a table of the range: no sort
            # each label's place in the range, in a type that holds it (int8 -100 .. 100:
            # y - lo would wrap in int8)
            offset = ((y - lo).astype(np.intp) if y.dtype.kind == "u"
                      else y.astype(np.int64) - np.int64(lo))
            seen = np.bincount(offset, minlength=int(hi) - int(lo) + 1) > 0
            encoder = LabelEncoder()
            encoder.classes_ = ((np.flatnonzero(seen).astype(np.uint64) + np.uint64(lo))
                                .astype(y.dtype)  # y's byte order kept (">u4" stays ">u4")
                                if y.dtype.kind == "u"
                                else (np.flatnonzero(seen) + np.int64(lo)).astype(y.dtype))
            code = np.cumsum(seen) - 1  # a value's index among the classes
            _warn_many_classes(encoder.classes_.size, y.size)
            return encoder, code[offset].astype(np.float64)
    if y.ndim == 1 and y.dtype.kind in "iuf" and y.size:
        classes = np.unique(y)
        if y.dtype.kind == "f":
            with np.errstate(invalid="ignore"):  # inf and NaN cast to garbage: "continuous"
                whole = np.isfinite(classes).all() and np.array_equal(
                    classes, classes.astype(np.int64))
            if not whole:
                check_classification_targets(y)  # raises for continuous (or non-finite) y
        encoder = LabelEncoder()
        encoder.classes_ = classes
        _warn_many_classes(classes.size, y.size)
        return encoder, np.searchsorted(classes, y).astype(np.float64)
    check_classification_targets(y)
    encoder = LabelEncoder().fit(y)
    return encoder, encoder.transform(y).astype(np.float64)


def _warn_many_classes(n_classes, n_samples):
    """``check_classification_targets``' warning for more classes than half the labels
    (from 21 labels), which it gives multiclass labels."""
    if n_classes > 2 and n_samples > 20 and n_classes > round(0.5 * n_samples):
        warnings.warn("The number of unique classes is greater than 50% of the number of "
                      "samples. `y` could represent a regression problem, not a "
                      "classification problem.", UserWarning, stacklevel=4)


def _is_multilabel_model(booster):
    """Whether ``booster`` is a multi-label classifier's (``binary:logistic``, several
    outputs)."""
    return booster.params["objective"] == "binary:logistic" and booster.n_groups > 1


class GBMClassifier(ClassifierMixin, _GBMBase):
    """Gradient-boosted trees for binary, multiclass and multi-label classification.

    Labels may be any values scikit-learn accepts (ints, strings, ...); ``classes_``
    holds them sorted. Two classes train ``binary:logistic``, more ``multi:softprob``.
    ``objective`` may be None (that choice), "binary:logistic", "multi:softprob" or
    "multi:softmax"; as in XGBoost, "binary:logistic" with more than two classes trains
    ``multi:softprob``, and either multiclass objective trains ``multi:softprob`` (the same
    trees; ``predict_proba`` needs probabilities). A ``y`` of shape (n_samples, k) of 0/1
    is multi-label (as in XGBoost): ``k`` ``binary:logistic`` outputs, ``classes_`` [0, 1],
    ``predict_proba`` and ``predict`` (n_samples, k) (``gbm.sklearn.multilabel``).
    Parameters as for ``GBMRegressor``.
    """

    def _column_y(self, y):
        """y as one column, or (n_samples, k) label indicators (multi-label)."""
        return as_array(y) if is_multilabel(y) else super()._column_y(y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True  # as XGBClassifier's
        return tags

    def _encode_eval_y(self, y):
        if self._label_encoder is None:  # multi-label
            if not is_multilabel(y) or y.shape[1] != self._n_labels:
                raise ValueError(f"eval_set y has shape {np.shape(y)}; the multi-label y "
                                 f"has {self._n_labels} columns")
            return encode_multilabel(y, None, "eval_set y")[0]
        unknown = set(np.unique(y)) - set(self.classes_)
        if unknown:
            raise ValueError(f"eval_set holds labels {sorted(unknown)} not seen in y")
        return self._label_encoder.transform(y).astype(np.float64)

    def _encode_y(self, y):
        if is_multilabel(y):  # (n_samples, k) indicators: k binary:logistic outputs
            self._label_encoder, self.classes_, self.n_classes_ = None, np.array([0, 1]), 2
            self._n_labels = y.shape[1]  # for the eval sets' check (not a fitted attribute)
            return encode_multilabel(y, getattr(self, "objective", None))
        self._label_encoder, encoded = _label_codes(y)
        self.classes_ = self._label_encoder.classes_
        self.n_classes_ = len(self.classes_)
        if self.n_classes_ < 2:
            raise ValueError(
                f"y contains only {self.n_classes_} class(es) {list(self.classes_)}; a classifier "
                "needs at least 2 classes"
            )
        objective = self._objective(_CLASSIFICATION_OBJECTIVES, None)
        if self.n_classes_ == 2 and objective in (None, "binary:logistic"):
            return encoded, {"objective": "binary:logistic"}
        return encoded, {"objective": "multi:softprob", "num_class": self.n_classes_}

    def predict_proba(self, X, iteration_range=None, base_margin=None):
        """Class probabilities, float64 (n_samples, n_classes), columns in ``classes_`` order.
        ``iteration_range``, ``base_margin``: as for ``GBMRegressor.predict``."""
        return self._proba(self._fitted_state("_Booster")[0], X, iteration_range, base_margin)

    def _proba(self, booster, X, iteration_range=None, base_margin=None):
        p = self._predict_with(booster, X, False, iteration_range, base_margin)
        if p.ndim == 1:  # binary; multi-label: (n_samples, k) already
            return np.column_stack([1.0 - p, p])
        return p

    def predict(self, X, output_margin=False, iteration_range=None, base_margin=None):
        """Most probable class label per row, (n_samples,), of ``classes_``'s dtype;
        with ``output_margin``, the raw margins instead: (n_samples,) for two classes
        (of the second), (n_samples, n_classes) else. ``iteration_range``,
        ``base_margin``: as for ``GBMRegressor.predict``. For GPU input the labels come
        back as a CuPy array, except labels CuPy cannot hold (strings): NumPy then."""
        booster, classes = self._fitted_state("_Booster", "classes_")
        if output_margin:
            return self._predict_with(booster, X, True, iteration_range, base_margin)
        # np.argmax of a CuPy array is CuPy's (NEP 18): the indices stay where proba is
        proba = self._proba(booster, X, iteration_range, base_margin)
        if _is_multilabel_model(booster):
            return multilabel_predict(to_host(proba), classes)
        index = np.argmax(proba, axis=1)
        if is_device_array(index):
            if classes.dtype.kind not in "biuf":
                return classes[to_host(index)]
            import cupy

            return cupy.asarray(classes)[index]
        return classes[index]


_RANK_PARAMS = ("objective",) + tuple(name for name, _ in RANKING_PARAMS)


class GBMRanker(_GBMBase):
    """Gradient-boosted trees for learning to rank (LambdaMART), XGBRanker's interface.

    Parameters
    ----------
    objective : "rank:ndcg" (default, as XGBRanker), "rank:pairwise" or "rank:map"
    lambdarank_pair_method, lambdarank_num_pair_per_sample, ndcg_exp_gain,
    lambdarank_normalization, lambdarank_score_normalization
        As in ``docs/parameters.md`` (XGBoost's meaning and defaults).
    Other parameters as for ``GBMRegressor``.

    Query groups are needed to fit, not to predict: ``fit(X, y, group=...)`` or
    ``qid=...`` (or a ``qid`` column of a DataFrame ``X``); rows of a query must be
    consecutive. ``sample_weight`` holds one weight per query group.
    """

    __init__ = estimator_init(RANKER_PARAMS, RANKER_POSITIONAL)

    def _train_params(self):
        params = super()._train_params()
        params.update({name: getattr(self, name) for name in _RANK_PARAMS})
        return params

    def fit(self, X, y, *, group=None, qid=None, sample_weight=None, eval_set=None,
            eval_group=None, eval_qid=None, sample_weight_eval_set=None, verbose=False,
            xgb_model=None, callbacks=(), base_margin=None, base_margin_eval_set=None):
        """Fit on X (n_samples, n_features), relevance labels y (n_samples,) and query
        groups; returns self.

        ``group`` (n_groups,): sizes of consecutive query groups; or ``qid``
        (n_samples,): the sorted query id of each row (or a ``qid`` column of X).
        ``sample_weight`` (n_groups,), optional: one weight per query group.
        ``eval_set``: list of ``(X, y)``, each with its groups in ``eval_group[i]`` or
        ``eval_qid[i]`` and group weights in ``sample_weight_eval_set[i]``; named
        ``validation_0``, ...; the last drives ``early_stopping_rounds``.
        ``verbose``, ``xgb_model``, ``callbacks``, ``base_margin``,
        ``base_margin_eval_set``: as for ``GBMRegressor.fit``.
        """
        self._check_objective()
        X, qid = _pop_host_qid(X, qid)
        evals = dict(eval_set=eval_set, sample_weight_eval_set=sample_weight_eval_set,
                     base_margin_eval_set=base_margin_eval_set, eval_group=eval_group,
                     eval_qid=eval_qid)
        return self._fit(X, y, evals, xgb_model, verbose, sample_weight=sample_weight,
                         group=group, qid=qid, callbacks=callbacks, base_margin=base_margin)

    def _encode_y(self, y):
        return y, {}  # the objective comes from the ranking parameters

    def _check_objective(self):
        if self.objective not in ("rank:ndcg", "rank:pairwise", "rank:map"):
            raise ValueError(f"{type(self).__name__} needs a ranking objective ('rank:ndcg', "
                             f"'rank:pairwise' or 'rank:map'), got objective={self.objective!r}")

    def _prepare_eval(self, spec, raw):
        X, spec.qid = _pop_host_qid(spec.X, spec.qid)  # a DataFrame's qid column
        spec.X = self._validate_X(X, reset=False, raw=raw)
        spec.y = column_or_1d(spec.y)
        return spec

    def predict(self, X, output_margin=True, iteration_range=None, base_margin=None):
        """Ranking scores, float64 (n_samples,): higher = ranked first within a query.
        A ``qid`` column of a DataFrame X is ignored. ``iteration_range``,
        ``base_margin``: as for ``GBMRegressor.predict`` (scores are margins, so
        ``output_margin`` changes nothing)."""
        X, _ = pop_qid(X, None)
        return self._predict_margin(X, True, iteration_range, base_margin)



def _pop_host_qid(X, qid):
    """``pop_qid``, a column taken from ``X`` as NumPy: local training reads qid on the
    host (NumPy cannot read a cuDF column implicitly)."""
    X, popped = pop_qid(X, qid)
    return X, (popped if popped is qid else popped.to_numpy())
