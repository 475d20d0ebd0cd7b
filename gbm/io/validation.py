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
"""
import math

import numpy as np

from ..data.categorical import MAX_CATEGORIES
from ..objectives import get_objective
from ..params import RUN_SETTINGS, SPEC, validate_params
from ..kernels.layout import cat_words
from ..tree.structure import CAT_WORDS, NODE_FIELDS, Tree
from . import strict_json

FORMAT = "gbm-model"
READABLE = (1, 2, 3, 4)
MAX_NESTING = 16  # gbm writes at most 4 levels (trees -> tree -> cat_bits -> words)
MAX_TREE_DEPTH = 1 << 20  # levels; a chain that deep is 2 million nodes
MAX_CUTS = 1023  # bin edges per numeric feature: max_bin <= 1024, see gbm.bins.binning
MAX_CATEGORICAL_CUTS = MAX_CATEGORIES - 1  # a categorical feature's: one per code but 0
FLOAT32_MAX = float(np.finfo(np.float32).max)

_REQUIRED = {"format", "version", "params", "n_features", "feature_names", "base_margin",
             "cuts", "trees"}
_OPTIONAL = {"best_iteration", "best_score"}
_V4_OPTIONAL = {"estimator", "weight_drop", "feature_types", "attributes"}
FEATURE_TYPES = ("q", "i", "int", "float", "c")  # XGBoost's feature type codes
_CATEGORICAL_TREE_FIELDS = {"split_type", "cat_bits"}


class InvalidModel(ValueError):
    """A model file's content breaks one of the checks; the message says which."""


# --- the JSON text ---------------------------------------------------------------------

def parse(text):
    """JSON ``text`` to Python objects, strictly (``gbm.io.strict_json``)."""
    try:
        return strict_json.parse(text, MAX_NESTING)
    except strict_json.StrictJSONError as err:
        raise InvalidModel(str(err)) from None


# --- helpers -----------------------------------------------------------------------------

def _kind(value):
    return "null" if value is None else type(value).__name__


def _integer(value, name, low, high):
    if type(value) is not int or not low <= value <= high:
        raise InvalidModel(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    return value


def _numbers(values, name):
    """A list of JSON numbers as float64."""
    if type(values) is not list:
        raise InvalidModel(f"{name} must be a list of numbers, got {_kind(values)}")
    if not set(map(type, values)) <= {int, float}:
        bad = next(v for v in values if type(v) not in (int, float))
        raise InvalidModel(f"{name} holds {bad!r}; expected numbers")
    return np.array(values, dtype=np.float64)


def _integers(values, name, dtype):
    """A list of JSON integers in ``dtype``'s range, as ``dtype``."""
    if type(values) is not list:
        raise InvalidModel(f"{name} must be a list of integers, got {_kind(values)}")
    if not set(map(type, values)) <= {int}:
        bad = next(v for v in values if type(v) is not int)
        raise InvalidModel(f"{name} holds {bad!r}; expected integers")
    arr = np.array(values, dtype=np.int64)
    info = np.iinfo(dtype)
    out = (arr < info.min) | (arr > info.max)
    if out.any():
        raise InvalidModel(f"{name} holds {int(arr[out][0])}, outside [{info.min}, {info.max}]")
    return arr.astype(dtype)


def _float32(values, name):
    arr = _numbers(values, name)
    out = np.abs(arr) > FLOAT32_MAX
    if out.any():
        raise InvalidModel(f"{name} holds {float(arr[out][0])!r}, beyond float32's range")
    return arr.astype(np.float32)


def _same_json(a, b):
    """Equal values of equal JSON types all the way down (1 is not 1.0 nor True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    return a == b


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
            type(t) is dict and _CATEGORICAL_TREE_FIELDS & t.keys() for t in trees)):
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
        raise InvalidModel(f"params must be an object, got {_kind(params)}")
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
        if not _same_json(value, validated[name]):
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
    base = _numbers(values, "base_margin")
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
        arr = _float32(values, f"cuts[{f}]")
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
                               f"{_kind(labels)}")
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
    arr = _numbers(weights, "weight_drop")
    if arr.size != n_trees:
        raise InvalidModel(f"weight_drop has {arr.size} weights, expected {n_trees}, one per "
                           f"tree (trees holds {n_trees})")
    bad = np.flatnonzero(~(arr >= 0) | (arr > FLOAT32_MAX))
    if bad.size:
        raise InvalidModel(f"weight_drop[{int(bad[0])}] is {float(arr[bad[0]])!r}; a tree "
                           f"weight is a number from 0 to {FLOAT32_MAX:.7g}")
    return arr.tolist()


def check_prediction_range(trees, base_margin, weights=None):
    """No sum of leaf values can overflow: the largest of every tree (times its weight,
    for a dart model) and the base margin add up to a finite float64."""
    total = float(np.abs(base_margin).max(initial=0.0))
    for i, tree in enumerate(trees):
        scale = 1.0 if weights is None else weights[i]
        total += float(np.abs(tree.value[tree.left_child < 0]).max()) * scale
        if not math.isfinite(total):
            raise InvalidModel("leaf values so large that a prediction overflows: the largest "
                               "leaf value of every tree and the base margin sum beyond "
                               f"float64's range (at trees[{i}].value, with base_margin and "
                               "the trees before)")


# --- trees -------------------------------------------------------------------------------

def check_trees(trees, version, n_features, n_groups, n_categories, n_outputs=None):
    """The trees as ``Tree`` objects and their groups. ``n_outputs``: a vector-leaf
    model's (``multi_strategy="multi_output_tree"``) outputs, each tree's ``value`` a list
    of ``n_outputs`` numbers per node and its group 0 (``n_groups`` is then 1)."""
    if type(trees) is not list:
        raise InvalidModel(f"trees must be a list of tree objects, got {_kind(trees)}")
    checked = [check_tree(td, i, version, n_features, n_groups, n_categories, n_outputs)
               for i, td in enumerate(trees)]
    if len(checked) % n_groups:
        raise InvalidModel(f"{len(checked)} trees is not a multiple of {n_groups} groups")
    return [t for t, _ in checked], [g for _, g in checked]


def _vector_values(rows, path, k):
    """A vector-leaf tree's ``value``: one list of ``k`` numbers per node."""
    if type(rows) is not list or not all(type(r) is list and len(r) == k for r in rows):
        raise InvalidModel(f"{path} must be a list of lists of {k} numbers (one value per "
                           "output at each node of a multi_output_tree model)")
    values = np.array([_numbers(r, path) for r in rows], dtype=np.float64)
    return values.reshape(len(rows), k)


def check_tree(td, i, version, n_features, n_groups, n_categories, n_outputs=None):
    name = f"trees[{i}]"
    if type(td) is not dict:
        raise InvalidModel(f"{name} must be an object, got {_kind(td)}")
    missing = (set(NODE_FIELDS) | {"group"}) - td.keys()
    if missing:
        raise InvalidModel(f"{name} misses fields {sorted(missing)}")
    unknown = td.keys() - set(NODE_FIELDS) - {"group"} - (
        _CATEGORICAL_TREE_FIELDS if version >= 3 else set())
    if unknown:
        raise InvalidModel(f"{name} has unknown fields {sorted(unknown)}")
    if len(_CATEGORICAL_TREE_FIELDS & td.keys()) == 1:
        raise InvalidModel(f"{name} has one of split_type and cat_bits without the other")
    arrays = {}
    for field, dtype in NODE_FIELDS.items():
        path = f"{name}.{field}"
        if field == "value" and n_outputs is not None:
            arrays[field] = _vector_values(td[field], path, n_outputs)
        elif dtype == np.float64:
            arrays[field] = _numbers(td[field], path)
        elif dtype == np.float32:
            arrays[field] = _float32(td[field], path)
        else:
            arrays[field] = _integers(td[field], path, dtype)
    if "split_type" in td:
        arrays["split_type"] = _integers(td["split_type"], f"{name}.split_type", np.uint8)
    n = arrays["split_feature"].size
    for field, arr in arrays.items():
        if arr.shape[0] != n:
            raise InvalidModel(f"{name} has node arrays of different lengths: {field} has "
                               f"{arr.size} entries, split_feature {n}")
    if n == 0:
        raise InvalidModel(f"{name} has no nodes")
    group = td["group"]
    if type(group) is not int or not 0 <= group < n_groups:
        raise InvalidModel(f"{name} has group {group!r}, expected an int in [0, {n_groups})")
    _check_structure(arrays["left_child"], arrays["right_child"], name)
    _check_node_values(arrays, name, n_features)
    if "cat_bits" in td:
        arrays["cat_bits"] = _cat_bits(td["cat_bits"], f"{name}.cat_bits")
    tree = Tree(**arrays)
    _check_categorical_nodes(tree, n_categories, name)
    depth = tree.depth()
    if depth > MAX_TREE_DEPTH:
        raise InvalidModel(f"{name} is {depth} levels deep; at most {MAX_TREE_DEPTH}")
    return tree, group


def _check_structure(left, right, name):
    """A tree: children after their parent and inside the tree, right = left + 1, -1 at
    leaves, and every node but the root the child of exactly one node."""
    n = left.size
    inner = left != -1
    ids = np.arange(n)
    bad = inner & ((left <= ids) | (left >= n - 1))  # the right child, left + 1, is < n too
    if bad.any():
        node = int(np.flatnonzero(bad)[0])
        raise InvalidModel(f"{name}.left_child[{node}] is {int(left[node])}: a child index must "
                           f"be above its parent's and both children inside the tree's {n} nodes "
                           "(-1 at leaves)")
    if (right[~inner] != -1).any() or (right[inner] != left[inner] + 1).any():
        node = int(np.flatnonzero(np.where(inner, right != left + 1, right != -1))[0])
        raise InvalidModel(f"{name} has inconsistent children: a right child must be its left "
                           f"sibling + 1, and -1 at leaves (right_child[{node}] is "
                           f"{int(right[node])}, left_child[{node}] is {int(left[node])})")
    parents = np.bincount(np.concatenate([left[inner], left[inner] + 1]), minlength=n)
    shared = np.flatnonzero(parents > 1)
    if shared.size:
        raise InvalidModel(f"{name}: node {int(shared[0])} is the child of "
                           f"{int(parents[shared[0]])} nodes; in a tree every node but the root "
                           "has one parent (left_child, and right_child = left_child + 1)")
    orphans = np.flatnonzero(parents[1:] == 0) + 1
    if orphans.size:
        raise InvalidModel(f"{name}: node {int(orphans[0])} is no node's child, so the root "
                           "does not reach it (left_child, and right_child = left_child + 1)")


def _check_node_values(arrays, name, n_features):
    inner = arrays["left_child"] >= 0
    feature = arrays["split_feature"]
    outside = inner & ((feature < 0) | (feature >= n_features))
    if outside.any():
        node = int(np.flatnonzero(outside)[0])
        raise InvalidModel(f"{name} splits on a feature outside [0, {n_features}) "
                           f"(split_feature[{node}] is {int(feature[node])}; n_features is "
                           f"{n_features})")
    if (feature[~inner] != -1).any():
        node = int(np.flatnonzero(~inner & (feature != -1))[0])
        raise InvalidModel(f"{name}.split_feature must be -1 at leaves (split_feature[{node}] "
                           f"is {int(feature[node])}, left_child[{node}] is -1)")
    if (arrays["default_left"] > 1).any():
        raise InvalidModel(f"{name}.default_left must hold 0 or 1")


def _cat_bits(rows, path):
    """Rows of one width: ``CAT_WORDS`` words, or more (up to the words of
    ``MAX_CATEGORIES`` codes) in a tree that splits features with more categories."""
    most = cat_words(MAX_CATEGORIES)
    width = len(rows[0]) if type(rows) is list and rows and type(rows[0]) is list else CAT_WORDS
    if type(rows) is not list or not CAT_WORDS <= width <= most or any(
            type(r) is not list or len(r) != width for r in rows):
        raise InvalidModel(f"{path} must be a list of lists of integers, all of one length "
                           f"from {CAT_WORDS} to {most}")
    words = _integers([w for r in rows for w in r], path, np.uint32)
    return words.reshape(len(rows), width)


def _check_categorical_nodes(tree, n_categories, name):
    """``split_type`` 0/1, 1 at inner nodes on categorical features only; one non-empty
    set per categorical node, with no code beyond its feature's categories."""
    if (tree.split_type > 1).any():
        raise InvalidModel(f"{name} has a split_type that is not 0 or 1 per node")
    is_cat = tree.split_type == 1
    if (is_cat & (tree.left_child < 0)).any():
        node = int(np.flatnonzero(is_cat & (tree.left_child < 0))[0])
        raise InvalidModel(f"{name} has a leaf marked as a categorical split (split_type[{node}] "
                           f"is 1, left_child[{node}] is -1)")
    numeric = np.flatnonzero(~is_cat & (tree.left_child >= 0))
    on_cat = numeric[n_categories[tree.split_feature[numeric]] >= 0]
    if on_cat.size:
        node = int(on_cat[0])
        feature = int(tree.split_feature[node])
        raise InvalidModel(f"{name} node {node} is a numeric split on categorical feature "
                           f"{feature} (split_type[{node}] is 0, split_feature[{node}] is "
                           f"{feature}, categories[{feature}] has {n_categories[feature]} "
                           "labels)")
    if tree.cat_bits.shape[0] != int(is_cat.sum()):
        raise InvalidModel(f"{name} has {tree.cat_bits.shape[0]} rows of cat_bits, expected "
                           f"{int(is_cat.sum())}: one set per categorical node (split_type 1)")
    for row, node in enumerate(np.flatnonzero(is_cat)):
        feature = int(tree.split_feature[node])
        n = int(n_categories[feature])
        if n < 0:
            raise InvalidModel(f"{name} node {node} is a categorical split on numeric feature "
                               f"{feature} (split_type[{node}] is 1, split_feature[{node}] is "
                               f"{feature}; categories has no labels for it)")
        bits = np.unpackbits(tree.cat_bits[row].view(np.uint8), bitorder="little")
        if not bits.any():
            raise InvalidModel(f"{name} node {node} has a bad category set: it is empty "
                               f"(cat_bits row {row})")
        if bits[n:].any():
            code = n + int(np.flatnonzero(bits[n:])[0])
            raise InvalidModel(f"{name} node {node} has a bad category set: it holds code "
                               f"{code}, beyond the feature's {n} categories (cat_bits row "
                               f"{row}; split_feature[{node}] is {feature}, whose "
                               f"categories[{feature}] has {n} labels)")


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
        raise InvalidModel(f"estimator must be an object, got {_kind(section)}")
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
        _integer(section["n_features_in"], "estimator.n_features_in", n_features, n_features)
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
    n_features = _integer(d["n_features"], "n_features", 1, np.iinfo(np.int32).max)
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
