"""Model files: versioned JSON that loads without executing code (no pickle).

The schema is documented in ``docs/model_format.md``; what a file must satisfy to load is
checked in ``gbm.io.validation``. Every float is written with Python's shortest
round-tripping repr, so a loaded model predicts bit for bit the same. A model is saved
atomically: serialised first, written to a temporary file in the target's folder, then
renamed over the target, so a failure never leaves a truncated or emptied file.
"""
import json
import math
import os

from . import validation
from .atomic import write_atomic
from .validation import FORMAT, InvalidModel

from ..params import OMITTED_AT_DEFAULT, RUN_SETTINGS, SPEC

# 1: the first format; 2 added iteration_indptr (rounds of num_parallel_tree trees per
# group); 3 added categorical features ("categories", trees' "split_type" / "cat_bits");
# 4 leaves the run settings n_jobs and device out of "params". A DART model (params
# "booster": "dart") adds "weight_drop", its trees' weights, in a version 4 file: other
# models' files are as before.
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
    if estimator is not None:
        d["estimator"] = estimator
    return d


def check_model_path(path):
    """Refuse a file name that promises another format than gbm's JSON."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix in (".ubj", ".ubjson", ".bin", ".deprecated"):
        raise ValueError(f"cannot save to {os.fspath(path)!r}: gbm writes JSON model files "
                         f"only, not {suffix} (XGBoost's binary formats); use a .json path")


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


def dumps(booster, estimator=None):
    """The model file's text; ``ValueError`` when the model holds NaN or infinity."""
    where = _first_non_finite(booster)
    if where is not None:
        raise ValueError(f"cannot save this model: its {where} holds NaN or infinity, which "
                         "a model file cannot hold (training overflowed: check the labels, "
                         "weights and learning_rate)")
    return json.dumps(to_dict(booster, estimator), allow_nan=False)


def save(booster, path, estimator=None):
    """Write atomically: the old file stays whole until the new one is complete."""
    text = dumps(booster, estimator)  # first: a model that cannot be written leaves the file alone
    write_atomic(path, text)


def load(cls, path, with_estimator=False):
    """A Booster from a file; ``with_estimator``: ``(booster, estimator section or None)``."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a gbm model file: it is not UTF-8 text") from None
    return loads(cls, text, source=str(path), with_estimator=with_estimator)


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
        parts = validation.check_model(validation.parse(text))
    except InvalidModel as err:
        raise ValueError(f"{source} is not a valid gbm model file: {err}") from None
    booster = cls(parts["params"], parts["n_features"], parts["feature_names"],
                  parts["base_margin"], parts["cuts"], parts["categories"])
    for tree, group in zip(parts["trees"], parts["groups"]):
        booster.add_tree(tree, group)
    if parts["weight_drop"] is not None:
        booster.set_tree_weights(parts["weight_drop"])
    booster.iteration_indptr = parts["iteration_indptr"]
    booster.best_iteration = parts["best_iteration"]
    booster.best_score = parts["best_score"]
    return (booster, parts["estimator"]) if with_estimator else booster
