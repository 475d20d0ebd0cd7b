"""Model files' content: versioned JSON that loads without executing code (no pickle).

The schema is documented in ``docs/model_format.md``; what a file must satisfy to load is
checked in ``gbm.io.validation``. Every float is written with Python's shortest
round-tripping repr, so a loaded model predicts bit for bit the same. The same content
in UBJSON, and the files themselves (chosen by their names, written atomically), are
``gbm.io.model_file``'s.
"""
import json
import math

from . import validation
from .validation import FORMAT, InvalidModel

from ..params import OMITTED_AT_DEFAULT, RUN_SETTINGS, SPEC

# 1: the first format; 2 added iteration_indptr (rounds of num_parallel_tree trees per
# group); 3 added categorical features ("categories", trees' "split_type" / "cat_bits");
# 4 leaves the run settings n_jobs and device out of "params". A DART model (params
# "booster": "dart") adds "weight_drop", its trees' weights, in a version 4 file: other
# models' files are as before. So do "attributes" (a Booster's string attributes, set_attr)
# and "feature_types" (XGBoost's type codes of the training DMatrix), written only when set.
VERSION = 4


def _model_params(params):
    """The parameters a file records: not the run settings, and the parameters added
    after version 4 only when they differ from their default (so a model that does not
    use them writes the same file as before, and older files load with the default)."""
    return {k: v for k, v in params.items() if k not in RUN_SETTINGS
            and not (k in OMITTED_AT_DEFAULT and v == SPEC[k][0])}


def to_dict(booster, estimator=None):
    """The model file's content; ``estimator``: the optional section an estimator's
    ``save_model`` adds (its class, parameters and labels; see ``gbm.sklearn.files``)."""
    d = {
        "format": FORMAT,
        "version": VERSION,
        "params": _model_params(booster.params),
        "n_features": booster.n_features,
        "feature_names": booster.feature_names,
        "base_margin": booster.base_margin.tolist(),
        "cuts": [c.tolist() for c in booster.cuts],
        "best_iteration": booster.best_iteration,
        "best_score": booster.best_score,
        "iteration_indptr": list(booster.iteration_indptr),
        "trees": [dict(t.to_dict(), group=g) for t, g in zip(booster.trees, booster.tree_group)],
    }
    if booster.categories is not None:
        d["categories"] = booster.categories
    if booster.weight_drop is not None:
        d["weight_drop"] = list(booster.weight_drop)
    if booster.feature_types is not None:
        d["feature_types"] = list(booster.feature_types)
    if booster._attributes:
        d["attributes"] = dict(booster._attributes)
    if estimator is not None:
        d["estimator"] = estimator
    return d


def _first_non_finite(booster):
    """Where the model holds NaN or infinity (which JSON cannot hold), or None."""
    if not all(math.isfinite(v) for v in booster.base_margin.tolist()):
        return "base_margin"
    if booster.best_score is not None and not math.isfinite(booster.best_score):
        return "best_score"
    if not all(math.isfinite(v) for v in booster.weight_drop or []):
        return "weight_drop"
    for i, tree in enumerate(booster.trees):
        for field in ("value", "gain", "cover", "threshold"):
            values = getattr(tree, field)
            if not all(math.isfinite(v) for v in values.ravel().tolist()):
                return f"tree {i} {field}"
    return None


def checked_dict(booster, estimator=None):
    """``to_dict``, after checking that the model can be written: ``ValueError`` when it
    holds NaN or infinity, or feature names or types that do not fit its features."""
    where = _first_non_finite(booster)
    if where is not None:
        raise ValueError(f"cannot save this model: its {where} holds NaN or infinity, which "
                         "a model file cannot hold (training overflowed: check the labels, "
                         "weights and learning_rate)")
    for name in ("feature_names", "feature_types"):
        values = getattr(booster, name)
        if values is not None and len(values) != booster.n_features:
            raise ValueError(f"cannot save this model: its {name} has {len(values)} entries "
                             f"but the model has {booster.n_features} features")
    return to_dict(booster, estimator)


def dumps(booster, estimator=None):
    """The model file's text (``checked_dict``'s checks)."""
    return json.dumps(checked_dict(booster, estimator), allow_nan=False)


def loads(cls, text, source="model text", with_estimator=False):
    """A Booster from a model file's text; ``ValueError`` naming the problem when the text
    fails any check of ``gbm.io.validation``. ``with_estimator``: return
    ``(booster, estimator section or None)``."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{source} is not a gbm model file: it is not UTF-8 text") from None
    if not isinstance(text, str):
        raise TypeError(f"a model file's text must be str, got {type(text).__name__}")
    try:
        parsed = validation.parse(text)
    except InvalidModel as err:
        raise ValueError(f"{source} is not a valid gbm model file: {err}") from None
    return from_dict(cls, parsed, source, with_estimator)


def from_dict(cls, d, source="model", with_estimator=False):
    """A Booster from a model file's parsed content ``d`` (JSON or UBJSON), after every
    check of ``gbm.io.validation``; ``with_estimator`` as ``loads``'."""
    try:
        parts = validation.check_model(d)
    except InvalidModel as err:
        raise ValueError(f"{source} is not a valid gbm model file: {err}") from None
    booster = cls(parts["params"], n_features=parts["n_features"],
                  feature_names=parts["feature_names"], base_margin=parts["base_margin"],
                  cuts=parts["cuts"], categories=parts["categories"])
    for tree, group in zip(parts["trees"], parts["groups"]):
        booster.add_tree(tree, group)
    if parts["weight_drop"] is not None:
        booster.set_tree_weights(parts["weight_drop"])
    booster.iteration_indptr = parts["iteration_indptr"]
    booster.best_iteration = parts["best_iteration"]
    booster.best_score = parts["best_score"]
    booster.feature_types = parts["feature_types"]
    booster._attributes = parts["attributes"]
    return (booster, parts["estimator"]) if with_estimator else booster
