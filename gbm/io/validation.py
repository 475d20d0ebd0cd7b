"""Every check a model file's content passes before anything runs on it.

A model file may come from anyone, and the prediction, leaf and TreeSHAP kernels index
arrays with what it holds (Numba does no bounds checks). So the loader proves, before it
builds a Booster, everything those kernels rely on:

* the JSON (``gbm.io.strict_json``): nested at most ``MAX_NESTING`` levels, numbers
  finite and within float64 and int64, no key twice in an object;
* exact types: an integer field holds JSON integers and a number field JSON numbers,
  never strings, booleans or null; parameters are in the canonical form gbm writes;
* each tree is a tree: children come after their parent, the right child is the left
  one + 1, and every node but the root is the child of exactly one node, so a walk from
  the root ends at a leaf after at most ``depth`` steps; the depth (from that structure)
  is at most ``MAX_TREE_DEPTH``;
* ranges: split features, groups, category sets, float32 fields, round boundaries,
  ``best_iteration``, a DART model's tree weights (``weight_drop``: one per tree, finite,
  >= 0, present exactly when ``params.booster`` is "dart"); and the largest leaf values
  of all trees (times their weights) plus the base margin sum to a finite number, so no
  prediction overflows.

A failure raises ``InvalidModel`` (a ``ValueError``) whose message names the field;
``docs/model_format.md`` lists them. ``gbm.io.gbm_json`` turns it into the user's error.
The file's fields are checked here, its trees in ``gbm.io.tree_checks``, each JSON value
read as its exact type by ``gbm.io.typed_json``.
"""
import numpy as np

from ..data.categorical import MAX_CATEGORIES
from ..objectives import get_objective
from ..params import RUN_SETTINGS, SPEC, validate_params
from . import strict_json
from .tree_checks import CATEGORICAL_TREE_FIELDS, check_prediction_range, check_trees
from .typed_json import (FLOAT32_MAX, InvalidModel, json_float32, json_integer, json_kind,
                         json_numbers, same_json)
from .typed_json import MAX_NESTING, parse  # noqa: F401  (the loaders read them here)

FORMAT = "gbm-model"
READABLE = (1, 2, 3, 4)
MAX_CUTS = 1023  # bin edges per numeric feature: max_bin <= 1024, see gbm.bins.binning
MAX_CATEGORICAL_CUTS = MAX_CATEGORIES - 1  # a categorical feature's: one per code but 0

_REQUIRED = {"format", "version", "params", "n_features", "feature_names", "base_margin",
             "cuts", "trees"}
_OPTIONAL = {"best_iteration", "best_score"}
_V4_OPTIONAL = {"estimator", "weight_drop", "feature_types", "attributes"}
FEATURE_TYPES = ("q", "i", "int", "float", "c")  # XGBoost's feature type codes


# --- top-level fields ---------------------------------------------------------------------

def check_header(d):
    """``format``, ``version`` and the set of fields; returns the version."""
    if type(d) is not dict or d.get("format") != FORMAT:
        raise InvalidModel(f"'format' is not {FORMAT!r} (a model from another library?)")
    version = d.get("version")
    if type(version) is not int or version not in READABLE:
        raise InvalidModel(f"version {version!r} is not supported (this gbm reads "
                           f"{', '.join(map(str, READABLE))})")
    trees = d.get("trees") if type(d.get("trees")) is list else []
    if version < 3 and ("categories" in d or any(
            type(t) is dict and CATEGORICAL_TREE_FIELDS & t.keys() for t in trees)):
        raise InvalidModel(f"categorical fields in a version {version} file (they came in "
                           "version 3)")
    required = _REQUIRED | ({"iteration_indptr"} if version >= 2 else set())
    missing = required - d.keys()
    if missing:
        raise InvalidModel(f"missing fields {sorted(missing)}")
    known = required | _OPTIONAL | ({"categories"} if version >= 3 else set()) | (
        _V4_OPTIONAL if version >= 4 else set())
    unknown = d.keys() - known
    if unknown:
        raise InvalidModel(f"unknown fields {sorted(unknown)} in a version {version} file")
    return version


def check_params(params, version):
    """The validated parameters; the file's must already be in their canonical form. The
    run settings (n_jobs, device) are not model fields: files before version 4 recorded
    them, and they are ignored; a version 4 file must not hold them."""
    if type(params) is not dict:
        raise InvalidModel(f"params must be an object, got {json_kind(params)}")
    settings = [name for name in RUN_SETTINGS if name in params]
    if settings and version >= 4:
        raise InvalidModel(f"params holds the run settings {settings}, which version 4 files "
                           "leave out (they are not part of a model)")
    params = {name: value for name, value in params.items() if name not in RUN_SETTINGS}
    unknown = [name for name in params if name not in SPEC]
    if unknown:
        raise InvalidModel(f"params holds {unknown}, which are not canonical parameter names")
    try:
        validated = validate_params(params)
    except (TypeError, ValueError) as err:
        raise InvalidModel(f"params: {err}") from None
    for name, value in params.items():
        if not same_json(value, validated[name]):
            raise InvalidModel(f"params.{name} is {value!r}, not in the form gbm writes "
                               f"({validated[name]!r})")
    return validated


def check_feature_names(names, n_features):
    if names is not None and (type(names) is not list or len(names) != n_features
                              or not all(type(n) is str for n in names)):
        raise InvalidModel(f"feature_names must be null or {n_features} strings")
    return names


def check_feature_types(types, n_features):
    """Absent/null, or one of XGBoost's type codes (``FEATURE_TYPES``) per feature."""
    if types is not None and (type(types) is not list or len(types) != n_features
                              or not all(type(t) is str and t in FEATURE_TYPES for t in types)):
        raise InvalidModel(f"feature_types must be null or {n_features} of the codes "
                           f"{list(FEATURE_TYPES)}")
    return types


def check_attributes(attributes):
    """Absent, or an object of string values (a Booster's ``set_attr`` attributes)."""
    if attributes is None:
        return {}
    if type(attributes) is not dict or not all(type(v) is str for v in attributes.values()):
        raise InvalidModel("attributes must be an object whose values are strings")
    return dict(attributes)


def check_base_margin(values, n_groups, params):
    base = json_numbers(values, "base_margin")
    if base.shape != (n_groups,):
        raise InvalidModel(f"base_margin has {base.size} values, expected {n_groups}, one "
                           f"per output group ({_groups_source(params)})")
    return base


def _groups_source(params):
    """Which parameter sets the output groups, as a message says it."""
    if params["objective"].startswith("multi:"):
        return f"params.num_class is {params['num_class']}"
    if params["objective"] == "reg:quantileerror":
        return "one per level of params.quantile_alpha"
    if params["objective"] == "reg:expectileerror":
        return "one per level of params.expectile_alpha"
    if params.get("num_target", 1) > 1:
        return f"params.num_target is {params['num_target']}"
    return f"params.objective {params['objective']} has one"


def check_cuts_count(cuts, n_features):
    """One list of bin edges per feature: checked first, so that nothing is built per
    feature for an ``n_features`` that the file's own ``cuts`` do not back."""
    if type(cuts) is not list or len(cuts) != n_features:
        raise InvalidModel(f"cuts must be a list of {n_features} lists (one per feature); "
                           f"n_features is {n_features}")


def check_cuts(cuts, n_categories=None):
    """Per feature, float32 bin edges, strictly increasing: at most ``MAX_CUTS`` for a
    numeric feature, ``MAX_CATEGORICAL_CUTS`` for a categorical one (``n_categories``
    >= 0; None: every feature numeric). ``check_cuts_count`` has checked the count."""
    out = []
    for f, values in enumerate(cuts):
        if type(values) is list and not values:  # a feature never split on: no edge to check
            out.append(np.zeros(0, dtype=np.float32))
            continue
        arr = json_float32(values, f"cuts[{f}]")
        if n_categories is not None and n_categories[f] >= 0:
            # codes 0 .. n - 1 need at most n - 1 edges (an imported model may have none)
            most = min(MAX_CATEGORICAL_CUTS, max(0, int(n_categories[f]) - 1))
            if arr.size > most:
                raise InvalidModel(f"cuts[{f}] has {arr.size} bin edges; a categorical "
                                   f"feature with {n_categories[f]} categories has at most "
                                   f"{most} (categories[{f}] has {n_categories[f]} labels)")
        elif arr.size > MAX_CUTS:
            raise InvalidModel(f"cuts[{f}] has {arr.size} bin edges; at most {MAX_CUTS}")
        if (np.diff(arr) <= 0).any():
            raise InvalidModel(f"cuts[{f}] is not strictly increasing (as float32)")
        out.append(arr)
    return out


def check_categories(categories, n_features):
    """Absent/null, or one entry per feature: null, or at most ``MAX_CATEGORIES``
    distinct labels (strings or numbers)."""
    if categories is None:
        return None
    if type(categories) is not list or len(categories) != n_features:
        raise InvalidModel(f"categories must be null or a list of {n_features} entries")
    for f, labels in enumerate(categories):
        if labels is None:
            continue
        if type(labels) is not list:
            raise InvalidModel(f"categories[{f}] must be null or a list of labels, got "
                               f"{json_kind(labels)}")
        bad = [v for v in labels if type(v) not in (str, int, float)]
        if bad:
            raise InvalidModel(f"categories[{f}] holds {bad[0]!r}; labels are strings or "
                               "numbers")
        if len(labels) > MAX_CATEGORIES:
            raise InvalidModel(f"categories[{f}] has {len(labels)} labels; at most "
                               f"{MAX_CATEGORIES}")
        twice = strict_json.first_repeat(labels)
        if twice is not None:
            raise InvalidModel(f"categories[{f}] holds the label {twice!r} twice")
    if all(c is None for c in categories):
        raise InvalidModel("categories lists no categorical feature; write null instead")
    return categories


def check_indptr(indptr, n_trees, n_groups):
    """Round boundaries: from 0 to the tree count, each round a positive multiple of the
    group count (num_parallel_tree trees per group)."""
    ok = (type(indptr) is list and indptr and all(type(i) is int for i in indptr)
          and indptr[0] == 0 and indptr[-1] == n_trees
          and all(b > a and (b - a) % n_groups == 0 for a, b in zip(indptr, indptr[1:])))
    if not ok:
        raise InvalidModel(f"iteration_indptr must rise from 0 to the tree count {n_trees} in "
                           f"steps that are multiples of {n_groups} groups (trees holds "
                           f"{n_trees})")
    return list(indptr)


def check_best(best_iteration, best_score, n_rounds):
    if best_iteration is not None and (type(best_iteration) is not int
                                       or not 0 <= best_iteration < n_rounds):
        raise InvalidModel(f"best_iteration must be null or a round in [0, {n_rounds}), got "
                           f"{best_iteration!r} (iteration_indptr has {n_rounds} rounds)")
    if best_score is not None and type(best_score) not in (int, float):
        raise InvalidModel(f"best_score must be null or a number, got {best_score!r}")
    return best_iteration, best_score


def check_weights(weights, params, n_trees):
    """A DART model's tree weights (``params.booster`` "dart"): one finite number >= 0 per
    tree, as float64; None for other models, which must not have them."""
    if params["booster"] != "dart":
        if weights is not None:
            raise InvalidModel(f"weight_drop is given, but params.booster is "
                               f"{params['booster']!r}; only a dart model has tree weights")
        return None
    if weights is None:
        raise InvalidModel("weight_drop is missing: a dart model (params.booster 'dart') "
                           "has one weight per tree")
    arr = json_numbers(weights, "weight_drop")
    if arr.size != n_trees:
        raise InvalidModel(f"weight_drop has {arr.size} weights, expected {n_trees}, one per "
                           f"tree (trees holds {n_trees})")
    bad = np.flatnonzero(~(arr >= 0) | (arr > FLOAT32_MAX))
    if bad.size:
        raise InvalidModel(f"weight_drop[{int(bad[0])}] is {float(arr[bad[0]])!r}; a tree "
                           f"weight is a number from 0 to {FLOAT32_MAX:.7g}")
    return arr.tolist()


ESTIMATORS = ("GBMRegressor", "GBMClassifier", "GBMRanker", "GBMRFRegressor",
              "GBMRFClassifier")
_ESTIMATOR_FIELDS = {"class", "params", "n_features_in", "feature_names_in", "classes"}
_JSON_SCALARS = (str, int, float, bool, type(None))


def _plain_json(value, depth=0):
    """A parameter value: JSON scalars, lists and string-keyed objects of them."""
    if type(value) in _JSON_SCALARS:
        return True
    if type(value) is list:
        return all(_plain_json(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain_json(v, depth + 1) for k, v in value.items())
    return False


def check_estimator(section, n_features, n_groups, binary=False):
    """The optional ``estimator`` section an estimator's ``save_model`` writes: its class,
    constructor parameters (JSON values), width, input feature names and, for
    classifiers, the class labels (one kind: all strings, all numbers or all booleans,
    each once, as many as the model's classes; ``binary``: a ``binary:logistic`` model,
    two classes whatever its output count, a multi-label classifier's ``[0, 1]``)."""
    if section is None:
        return None
    if type(section) is not dict:
        raise InvalidModel(f"estimator must be an object, got {json_kind(section)}")
    missing, unknown = {"class", "params"} - section.keys(), section.keys() - _ESTIMATOR_FIELDS
    if missing or unknown:
        raise InvalidModel(f"estimator has missing fields {sorted(missing)} or unknown fields "
                           f"{sorted(unknown)}")
    if section["class"] not in ESTIMATORS:
        raise InvalidModel(f"estimator.class must be one of {list(ESTIMATORS)}, got "
                           f"{section['class']!r}")
    params = section["params"]
    if type(params) is not dict or not _plain_json(params):
        raise InvalidModel("estimator.params must be an object of JSON values")
    if "n_features_in" in section:
        json_integer(section["n_features_in"], "estimator.n_features_in", n_features, n_features)
    names = section.get("feature_names_in")
    if names is not None and (type(names) is not list or len(names) != n_features
                              or not all(type(n) is str for n in names)):
        raise InvalidModel(f"estimator.feature_names_in must be null or {n_features} strings")
    classes = section.get("classes")
    if classes is not None:
        kinds = {bool if type(c) is bool else str if type(c) is str else float
                 for c in classes} if type(classes) is list else {None}
        bad_type = type(classes) is not list or not all(type(c) in (str, int, float, bool)
                                                        for c in classes)
        if bad_type or len(kinds) != 1:
            raise InvalidModel("estimator.classes must be a list of labels of one kind "
                               "(strings, numbers or booleans)")
        n_classes = 2 if binary else max(2, n_groups)
        if len(set(classes)) != len(classes) or len(classes) != n_classes:
            raise InvalidModel(f"estimator.classes must hold {n_classes} distinct "
                               f"labels (the model's classes), got {len(classes)}")
    return section


def check_model(d):
    """Check a parsed model file; returns its parts, checked, as a dict."""
    version = check_header(d)
    params = check_params(d["params"], version)
    n_features = json_integer(d["n_features"], "n_features", 1, np.iinfo(np.int32).max)
    check_cuts_count(d["cuts"], n_features)
    n_groups = get_objective(params).n_groups  # one source for the group count
    base_margin = check_base_margin(d["base_margin"], n_groups, params)
    categories = check_categories(d.get("categories"), n_features)
    n_categories = np.full(n_features, -1, dtype=np.int64)  # -1: a numeric feature
    for f, labels in enumerate(categories or []):
        n_categories[f] = -1 if labels is None else len(labels)
    # a vector-leaf model: one tree per round for every output group
    vector = params.get("multi_strategy") == "multi_output_tree"
    tree_groups = 1 if vector else n_groups
    trees, groups = check_trees(d["trees"], version, n_features, tree_groups, n_categories,
                                n_groups if vector else None)
    if version == 1:
        indptr = list(range(0, len(trees) + 1, tree_groups))
    else:
        indptr = check_indptr(d["iteration_indptr"], len(trees), tree_groups)
    best_iteration, best_score = check_best(d.get("best_iteration"), d.get("best_score"),
                                            len(indptr) - 1)
    weights = check_weights(d.get("weight_drop"), params, len(trees))
    check_prediction_range(trees, base_margin, weights)
    return {"params": params, "n_features": n_features,
            "feature_names": check_feature_names(d["feature_names"], n_features),
            "feature_types": check_feature_types(d.get("feature_types"), n_features),
            "attributes": check_attributes(d.get("attributes")),
            "base_margin": base_margin, "cuts": check_cuts(d["cuts"], n_categories),
            "categories": categories, "trees": trees, "groups": groups,
            "iteration_indptr": indptr, "best_iteration": best_iteration,
            "best_score": best_score, "weight_drop": weights,
            "estimator": check_estimator(d.get("estimator"), n_features, n_groups,
                                         params["objective"] == "binary:logistic")}
