"""Estimator model files: the booster's JSON file with an ``estimator`` section that
records what the booster alone does not know: the estimator's class, its constructor
parameters, the input width and column names, and a classifier's labels (``classes_``,
strings included). The best iteration, feature names and categories are the booster's
own fields. ``gbm.io.validation.check_estimator`` validates the section on load.

A file without the section (written by ``Booster.save_model`` or ``gbm.train``) loads
into an estimator whose kind fits its objective; a classifier's labels are then 0..k-1.
"""
import math

import numpy as np

from ..io import model_file
from ..model.booster import Booster
from ..io.validation import ESTIMATORS
from ..params import MULTICLASS, RANKING, REGRESSION, SURVIVAL


def estimator_class_name(cls):
    """The gbm estimator class ``cls`` is (or derives from): the name a file records."""
    for klass in cls.__mro__:
        if klass.__name__ in ESTIMATORS and klass.__module__.startswith("gbm."):
            return klass.__name__
    raise TypeError(f"{cls.__name__} is not a gbm estimator")


def _json_value(value):
    """``value`` as plain JSON (lists for tuples and arrays, Python numbers), or a
    ``_SKIP`` marker when it has no JSON form (a callback object, NaN)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else _SKIP
    if isinstance(value, (list, tuple, np.ndarray)):
        items = [_json_value(v) for v in (value.tolist() if isinstance(value, np.ndarray)
                                          else value)]
        return _SKIP if any(v is _SKIP for v in items) else items
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        items = {k: _json_value(v) for k, v in value.items()}
        return _SKIP if any(v is _SKIP for v in items.values()) else items
    return _SKIP


_SKIP = object()


def estimator_section(est):
    """The ``estimator`` section of a fitted estimator's file. Parameters without a JSON
    form (callbacks, ``missing=NaN``) are left out: a loaded estimator keeps its own."""
    params = {}
    for name, value in est.get_params(deep=False).items():
        value = _json_value(value)
        if value is not _SKIP:
            params[name] = value
    section = {"class": estimator_class_name(type(est)), "params": params,
               "n_features_in": int(est.n_features_in_)}
    if hasattr(est, "feature_names_in_"):
        section["feature_names_in"] = [str(n) for n in est.feature_names_in_]
    if hasattr(est, "classes_"):
        section["classes"] = est.classes_.tolist()
    return section


def save(est, booster, path):
    """Write ``booster`` with ``est``'s section (atomically, in the format the file's name
    chooses, as ``Booster.save_model``)."""
    model_file.save(booster, path, estimator=estimator_section(est))


def _classes_array(labels):
    """Labels as NumPy gives them: strings as str, ints as int64, floats, booleans."""
    return np.asarray(labels)


_KIND_OBJECTIVES = {"GBMRegressor": REGRESSION + SURVIVAL,
                    "GBMRFRegressor": REGRESSION + SURVIVAL,
                    "GBMClassifier": ("binary:logistic",) + MULTICLASS,
                    "GBMRFClassifier": ("binary:logistic",) + MULTICLASS,
                    "GBMRanker": RANKING}


def read(est, path):
    """``(params, fitted)`` for ``est`` from the file at ``path``: the constructor
    parameters to set and the fitted attributes (``_Booster``, ``n_features_in_``,
    ``feature_names_in_``, ``classes_``, ``n_classes_``, ``_label_encoder``).

    Raises ``ValueError`` when the file was written by another kind of estimator, or
    (a booster file) its objective does not fit this one.
    """
    booster, section = model_file.load(Booster, path, with_estimator=True)
    expected = estimator_class_name(type(est))
    fitted = {"_Booster": booster, "n_features_in_": booster.n_features}
    objective = booster.params["objective"]
    if section is None:
        if objective not in _KIND_OBJECTIVES[expected]:
            raise ValueError(f"{path} holds a model with objective {objective!r}, which a "
                             f"{expected} cannot use (it takes {list(_KIND_OBJECTIVES[expected])})")
        params = {}
        is_classifier = hasattr(type(est), "predict_proba")
        classes = list(range(max(2, booster.n_groups))) if is_classifier else None
    else:
        if section["class"] != expected:
            raise ValueError(f"{path} holds a fitted {section['class']}, not a {expected}; "
                             f"load it with gbm.{section['class']}().load_model(path)")
        names = set(est.get_params(deep=False))
        params = {k: v for k, v in section["params"].items() if k in names}
        classes = section.get("classes")
        if section.get("feature_names_in") is not None:
            fitted["feature_names_in_"] = np.array(section["feature_names_in"], dtype=object)
    if classes is not None:
        from sklearn.preprocessing import LabelEncoder

        encoder = LabelEncoder()
        encoder.classes_ = _classes_array(classes)
        fitted.update(classes_=encoder.classes_, n_classes_=len(classes),
                      _label_encoder=encoder)
        if objective == "binary:logistic" and booster.n_groups > 1:  # multi-label
            fitted.update(classes_=np.array([0, 1]), n_classes_=2, _label_encoder=None)
    return params, fitted

