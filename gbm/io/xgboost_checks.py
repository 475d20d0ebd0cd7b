"""Every check an XGBoost JSON model passes before gbm builds anything from it;
``gbm.io.xgboost_import`` builds the Booster from what ``check_model`` returns.

An XGBoost model file may come from anyone, and the import allocates per feature, per
output group, per tree, per node and per category from what the file says. So every
size, index and count it reads is checked against the file's other fields, and against
limits, before anything is built from it:

* a count the file declares without listing its items is at most what its lists hold,
  or ``MAX_DECLARED``: ``num_feature`` (listed by ``feature_names`` / ``feature_types``
  when they are given, which then have that many entries), the output groups
  (``num_class`` / ``num_target``, which agree with the objective; listed by
  ``base_score`` and the trees);
* one entry per tree in ``tree_info``, ``weight_drop`` (dart; each weight >= 0),
  ``num_trees``; each
  tree checked by ``gbm.io.xgboost_trees`` (node arrays of ``num_nodes`` entries, a walk
  from the root that reaches each node once, split features below ``num_feature``,
  category values below ``MAX_CATEGORIES``); a numeric split never on a categorical
  feature; a category code inside its feature's ``cats`` labels;
* numbers finite (float32, XGBoost's type), strings that hold numbers parse.

A failure raises ``ValueError`` naming the field, the tree's index for a tree's field.
"""
import json
import math
import re
from dataclasses import dataclass

import numpy as np

from ..data.categorical import MAX_CATEGORIES
from ..objectives import OBJECTIVES, get_objective
from ..objectives.expectile import scores_to_margins
from ..params import validate_params
from . import strict_json
from . import xgboost_fields as fields
from .xgboost_json import LOG_LINK, LOGIT_LINK, by_value, expectile_levels
from .xgboost_trees import check_tree, leaf_vector_size

MAX_DECLARED = 1 << 20  # features or output groups a file may declare without listing

_OBJECTIVE_PARAMS = {  # XGBoost objective parameter block -> gbm parameter names
    "quantile_loss_param": ("quantile_alpha",),
    "expectile_loss_param": ("expectile_alpha",),
    "pseudo_huber_param": ("huber_slope",),
    "tweedie_regression_param": ("tweedie_variance_power",),
    "poisson_regression_param": ("max_delta_step",),
    "softmax_multiclass_param": ("num_class",),
    "lambdarank_param": ("lambdarank_pair_method", "lambdarank_num_pair_per_sample",
                         "ndcg_exp_gain", "lambdarank_normalization",
                         "lambdarank_score_normalization"),
    "aft_loss_param": ("aft_loss_distribution", "aft_loss_distribution_scale"),
}
# lambdarank_num_pair_per_sample as XGBoost saves it when not set (uint32's largest value)
_NOT_SET = str(2**32 - 1)
_FLAGS = ("ndcg_exp_gain", "lambdarank_normalization", "lambdarank_score_normalization")
_NUM = "learner_model_param.num_feature"


@dataclass
class CheckedModel:
    params: dict            # gbm's, validated
    n_features: int
    feature_names: list     # or None
    categorical: set        # features with feature type "c" or a categorical split
    labels: dict            # categorical feature -> its labels in the cats block
    saved: list             # gbm's own category lists (gbm_categories), or None
    base_margin: list       # one per output group
    trees: list             # CheckedTree
    groups: list            # each tree's output group
    weights: list           # each tree's dart weight, or None (then params.booster is "dart")
    iteration_indptr: list
    best_iteration: int     # or None
    best_score: float       # or None


def check_model(d):
    """The checked parts of a parsed XGBoost JSON model ``d``."""
    learner, gb, lmp, obj = _learner_parts(d)
    booster_kind, model = _tree_model(gb)
    params = _imported_params(obj, model)
    raw_trees = fields.as_list(fields.get(model, "trees", "trees"), "trees")
    n_trees = _tree_count(model, len(raw_trees))
    names = _listed(learner, "feature_names")
    types = _listed(learner, "feature_types")
    n_features = _n_features(lmp, names, types)
    params, n_outputs = _output_params(raw_trees, lmp, params)
    n_groups, base_margin = _base_margin(lmp, params, n_trees)
    # a vector-leaf model: one tree per round for every output (tree_info all 0)
    tree_groups = 1 if n_outputs > 1 else n_groups
    if n_trees % tree_groups:
        raise ValueError(f"trees has {n_trees} trees, not a multiple of the model's "
                         f"{tree_groups} outputs (learner_model_param.num_class "
                         f"{lmp.get('num_class', '0')}, num_target {lmp.get('num_target', '1')}"
                         "): each round grows a tree for every output")
    groups = _tree_groups(model, n_trees, tree_groups)
    weights = (_tree_weights(gb, n_trees) if booster_kind == "dart"
               else _tree_weights(gb if "weight_drop" in gb else model, n_trees,
                                  required=False))
    if weights is not None:
        params = validate_params(dict(params, booster="dart"))
    indptr = _iteration_indptr(model, params, tree_groups, n_trees)
    trees = [check_tree(t, f"trees[{i}]", n_features, n_outputs)
             for i, t in enumerate(raw_trees)]
    categorical = _categorical_features(trees, types)
    labels = _cat_labels(model, categorical, n_features)
    _check_category_codes(trees, labels)
    attrs = _attributes(learner)
    best_iteration, best_score = _best(attrs, len(indptr) - 1)
    return CheckedModel(params, n_features, names or None, categorical, labels,
                        _saved_categories(attrs, n_features), base_margin, trees, groups,
                        weights, indptr, best_iteration, best_score)


# --- the learner --------------------------------------------------------------------------

def _learner_parts(d):
    """The learner and its gradient booster, learner parameters and objective."""
    if type(d) is not dict or type(d.get("learner")) is not dict:
        raise ValueError("not an XGBoost JSON model: it has no learner object")
    learner = d["learner"]
    parts = []
    for key in ("gradient_booster", "learner_model_param", "objective"):
        if key not in learner:
            raise ValueError(f"not an XGBoost JSON model: learner.{key} is missing")
        parts.append(fields.as_object(learner[key], f"learner.{key}"))
    return (learner, *parts)


def _tree_model(gb):
    """``(booster kind, tree model)``: a gbtree's model, or the gbtree inside a dart
    booster; other boosters (gblinear) are refused."""
    kind = gb.get("name")
    if kind not in ("gbtree", "dart"):
        raise ValueError(f"gradient_booster.name is {kind!r}: gbm imports tree models only "
                         "(gbtree, dart)")
    path = "gradient_booster"
    if kind == "dart":
        path += ".gbtree"
        gb = fields.as_object(fields.get(gb, "gbtree", path), path)
    return kind, fields.as_object(fields.get(gb, "model", f"{path}.model"), f"{path}.model")


def _imported_params(obj, model):
    """gbm's training parameters (validated) from XGBoost's objective blocks and the tree
    model's ``num_parallel_tree``."""
    name = fields.get(obj, "name", "objective.name")
    if type(name) is not str or name not in OBJECTIVES:
        raise ValueError(f"objective.name is {name!r}: gbm has no such objective (it has "
                         f"{sorted(OBJECTIVES)}), so this XGBoost model cannot be imported")
    tree_param = fields.as_object(fields.get(model, "gbtree_model_param", "gbtree_model_param"),
                                  "gbtree_model_param")
    params = {"objective": name, "num_parallel_tree": fields.count(
        tree_param.get("num_parallel_tree", "1"), "gbtree_model_param.num_parallel_tree", 1)}
    for block, names in _OBJECTIVE_PARAMS.items():
        values = fields.as_object(obj.get(block, {}), f"objective.{block}")
        for key in names:
            if key in values:
                params[key] = _param_value(key, values[key], f"objective.{block}.{key}")
    if name == "reg:quantileerror" and "quantile_alpha" not in params:
        params["quantile_alpha"] = 0.5
    try:
        return validate_params(params)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{err} (gbm's parameters from {_sources(str(err))})") from None


def _sources(message):
    """Where in XGBoost's model the gbm parameters a message names are read from."""
    paths = {"objective": "objective.name",
             "num_parallel_tree": "gbtree_model_param.num_parallel_tree"}
    paths.update({key: f"objective.{block}.{key}" for block, keys in _OBJECTIVE_PARAMS.items()
                  for key in keys})
    named = [path for key, path in paths.items() if re.search(rf"\b{key}\b", message)]
    return ", ".join(named) or "objective, gbtree_model_param"


def _param_value(key, value, path):
    if key in ("quantile_alpha", "expectile_alpha"):
        values = fields.reals(value, path)
        return values[0] if len(values) == 1 else values
    if key == "lambdarank_num_pair_per_sample" and str(value) == _NOT_SET:
        return None  # XGBoost's "not set": the pair method's default, as gbm's None
    if key in ("num_class", "lambdarank_num_pair_per_sample"):
        return fields.count(value, path, 0)
    if key in _FLAGS:
        return str(value) not in ("0", "false", "False")
    if key in ("lambdarank_pair_method", "aft_loss_distribution"):
        if type(value) is not str:
            raise ValueError(f"{path} is {value!r}, not a string")
        return value
    return fields.real(value, path)


def _listed(learner, key):
    """``feature_names`` or ``feature_types``: a list of strings, empty when absent."""
    value = learner.get(key)
    return [] if value is None else fields.strings(value, f"learner.{key}")


def _n_features(lmp, names, types):
    """``num_feature``: at least 1, and either the length of the feature names and types
    the file lists, or (with neither) at most ``MAX_DECLARED``."""
    n = fields.count(fields.get(lmp, "num_feature", _NUM), _NUM, 1)
    listed = max(len(names), len(types))
    if n > max(listed, MAX_DECLARED):
        raise ValueError(f"{_NUM} is {n}: a model that lists no feature names or types "
                         f"declares at most {MAX_DECLARED} features")
    for key, values in (("feature_names", names), ("feature_types", types)):
        if values and len(values) != n:
            raise ValueError(f"learner.{key} has {len(values)} entries, but {_NUM} is {n}")
    return n


# --- output groups and the base margin ------------------------------------------------------

def _output_params(raw_trees, lmp, params):
    """``(params, n_outputs)``: gbm's parameters for the model's outputs, and the size k
    of its leaf vectors (1: one-output trees). ``learner_model_param`` gives the outputs
    (``num_class``, else ``num_target``); those an objective does not make itself (its
    quantile or expectile levels, its classes) are targets, each with its trees
    (``num_target``: XGBoost's default ``multi_strategy``, a multi-label model too), or,
    for a model of vector-leaf trees (``multi_strategy="multi_output_tree"``: the first
    tree's ``size_leaf_vector`` k > 1; each tree's own size is checked against k), one
    vector tree for all of them. A model of 0 rounds is read as one tree per output (its
    predictions are the same)."""
    num_class = fields.count(lmp.get("num_class", "0"), "learner_model_param.num_class", 0)
    num_target = fields.count(lmp.get("num_target", "1"), "learner_model_param.num_target", 0)
    outputs = num_class or num_target or 1
    k = leaf_vector_size(raw_trees[0], "trees[0]") if raw_trees else 1
    if k > 1 and k != outputs:
        raise ValueError(f"trees[0].tree_param.size_leaf_vector is {k}, but the model has "
                         f"{outputs} outputs (learner_model_param.num_class {num_class}, "
                         f"num_target {num_target}): a vector leaf holds one value per output")
    extra = {"multi_strategy": "multi_output_tree"} if k > 1 else {}
    if not num_class and outputs > 1 and get_objective(params).n_groups == 1:
        extra["num_target"] = outputs  # several targets, not the objective's own outputs
    if not extra:
        return params, k
    try:
        return validate_params(dict(params, **extra)), k
    except (TypeError, ValueError) as err:
        kind = f"a vector-leaf model of {k} outputs" if k > 1 else \
            f"learner_model_param.num_target {num_target}"
        raise ValueError(f"{err} ({kind})") from None


def _base_margin(lmp, params, n_trees):
    """``(n_groups, base_margin)``: the output groups (``num_class``, else ``num_target``,
    as many as the objective has) and each one's starting margin from ``base_score``
    (one for all, or one per output). A model without trees whose ``boost_from_average``
    is set never estimated its base score: XGBoost then takes ``base_score`` as the margin
    itself, its objective's link not applied (``LearnerModelParam``'s "dummy" score),
    and so does gbm."""
    num_class = fields.count(lmp.get("num_class", "0"), "learner_model_param.num_class", 0)
    num_target = fields.count(lmp.get("num_target", "1"), "learner_model_param.num_target", 0)
    n_groups = num_class or num_target or 1
    path = "learner_model_param.base_score"
    scores = fields.reals(fields.get(lmp, "base_score", path), path)
    most = max(MAX_DECLARED, n_trees, len(scores))
    expected = get_objective(params).n_groups
    if n_groups > most or n_groups != expected:
        raise ValueError(f"learner_model_param gives {n_groups} outputs (num_class "
                         f"{num_class}, num_target {num_target}), but the objective "
                         f"{params['objective']} (its parameters) has {expected}"
                         + (f"; a model of {n_trees} trees and {len(scores)} base_score "
                            f"values has at most {most}" if n_groups > most else ""))
    if len(scores) not in (1, n_groups):
        raise ValueError(f"{path} has {len(scores)} values for {n_groups} outputs")
    if len(scores) == 1:
        scores = scores * n_groups
    if n_trees == 0 and str(lmp.get("boost_from_average", "1")) not in ("0", "false", "False"):
        return n_groups, [float(np.float32(s)) for s in scores]
    if expectile_levels(params) > 1:
        return n_groups, scores_to_margins([float(np.float32(s)) for s in scores]).tolist()
    return n_groups, [_base_score_to_margin(params["objective"], float(np.float32(s)))
                      for s in scores]


def _base_score_to_margin(objective, score):
    """XGBoost's ``base_score`` is in prediction space: its objective's inverse link gives
    the margin (logit for ``binary:logistic`` and ``reg:logistic``, log for Poisson,
    gamma, Tweedie and the survival objectives)."""
    if objective in LOGIT_LINK:
        if not 0.0 < score < 1.0:
            raise ValueError(f"learner_model_param.base_score {score} of a {objective} "
                             "model is not in (0, 1)")
        return math.log(score / (1.0 - score))
    if objective in LOG_LINK:
        if not score > 0.0:
            raise ValueError(f"learner_model_param.base_score {score} of a {objective} model "
                             "is not positive")
        return math.log(score)
    return score


# --- per-tree lists ------------------------------------------------------------------------

def _tree_count(model, n_trees):
    """The number of trees, as ``gbtree_model_param.num_trees`` says too (when given)."""
    param = model["gbtree_model_param"]
    if "num_trees" in param:
        path = "gbtree_model_param.num_trees"
        declared = fields.count(param["num_trees"], path, 0)
        if declared != n_trees:
            raise ValueError(f"{path} is {declared}, but trees has {n_trees} trees")
    return n_trees


def _tree_groups(model, n_trees, n_groups):
    """Each tree's output group (``tree_info``); absent: all 0, for one output only."""
    if "tree_info" not in model:
        if n_groups > 1:
            raise ValueError(f"tree_info is missing: a model of {n_groups} outputs needs "
                             "each tree's output group")
        return [0] * n_trees
    groups = fields.integers(model["tree_info"], "tree_info")
    if groups.size != n_trees:
        raise ValueError(f"tree_info has {groups.size} entries, but trees has {n_trees}")
    bad = np.flatnonzero((groups < 0) | (groups >= n_groups))
    if bad.size:
        raise ValueError(f"tree_info[{int(bad[0])}] is {int(groups[bad[0]])}, outside "
                         f"[0, {n_groups}) (the model's output groups)")
    return groups.tolist()


def _tree_weights(holder, n_trees, required=True):
    """Each tree's weight, ``weight_drop``, where XGBoost writes it: beside the tree model
    of a dart booster (up to 3.2; ``required``), of a gbtree booster (3.3) or inside the
    tree model (3.4), the last two after training with dropout; None when not required
    and absent. Beside wins over inside, as in XGBoost's loader."""
    if not required and "weight_drop" not in holder:
        return None
    weights = fields.float32s(fields.get(holder, "weight_drop", "weight_drop"), "weight_drop")
    if weights.size != n_trees:
        raise ValueError(f"weight_drop has {weights.size} entries, but trees has {n_trees}")
    if (weights < 0).any():
        at = int(np.flatnonzero(weights < 0)[0])
        raise ValueError(f"weight_drop[{at}] is {float(weights[at])!r}; a tree weight must "
                         "be >= 0")
    return weights.tolist()


def _iteration_indptr(model, params, n_groups, n_trees):
    """Where each boosting round's trees start: XGBoost's ``iteration_indptr`` (integers;
    gbm's model check proves that they rise from 0 to the tree count), or (older files
    without it) one round per ``num_parallel_tree * n_groups`` trees."""
    if model.get("iteration_indptr"):
        return fields.integers(model["iteration_indptr"], "iteration_indptr").tolist()
    step = params["num_parallel_tree"] * n_groups
    if n_trees % step:
        raise ValueError(f"trees has {n_trees} trees, not whole rounds of "
                         f"gbtree_model_param.num_parallel_tree ({params['num_parallel_tree']}) "
                         f"times {n_groups} outputs, and there is no iteration_indptr")
    return list(range(0, n_trees + 1, step))


# --- categorical features ------------------------------------------------------------------

def _categorical_features(trees, types):
    """Features of type ``"c"`` or with a categorical split; a numeric split on one of
    them is refused (gbm splits a categorical feature by category only)."""
    typed = {f for f, t in enumerate(types) if t == "c"}
    split_by_category = {}  # feature -> its first categorical split
    for i, tree in enumerate(trees):
        for node in tree.sets:
            split_by_category.setdefault(int(tree.arrays["split_indices"][node]),
                                         f"trees[{i}].split_indices[{node}]")
    categorical = typed | set(split_by_category)
    for i, tree in enumerate(trees):
        feature = tree.arrays["split_indices"]
        for node in tree.inner():
            f = int(feature[node])
            if node not in tree.sets and f in categorical:
                why = (f"learner.feature_types[{f}] is 'c'" if f in typed else
                       f"{split_by_category[f]}, a categorical split, is on it")
                raise ValueError(f"trees[{i}].split_indices[{node}] is {f}, a categorical "
                                 f"feature ({why}), at a numeric split (split_type 0, not "
                                 "in categories_nodes)")
    return categorical


def _cat_labels(model, categorical, n_features):
    """{categorical feature: its labels} from the ``cats`` block (XGBoost 3.1 on): per
    feature UTF-8 strings cut at offsets, or numbers; features without labels are left
    out (their codes are their labels)."""
    cats = fields.as_object(model.get("cats", {}), "cats")
    enc = fields.as_list(cats.get("enc", []), "cats.enc")
    if enc and len(enc) != n_features:
        raise ValueError(f"cats.enc has {len(enc)} entries, but {_NUM} is {n_features}")
    labels = {}
    for f in sorted(categorical) if enc else ():
        path = f"cats.enc[{f}]"
        found = _enc_labels(fields.as_object(enc[f], path), path)
        if found:
            labels[f] = found
    return labels


def _enc_labels(entry, path):
    values = fields.as_list(entry.get("values", []), f"{path}.values")
    offsets = fields.as_list(entry.get("offsets", []), f"{path}.offsets")
    if not values:
        return None
    labels = _string_labels(values, offsets, path) if offsets else _number_labels(values, path)
    if len(labels) > MAX_CATEGORIES:
        raise ValueError(f"{path}.values holds {len(labels)} categories; gbm holds at most "
                         f"{MAX_CATEGORIES}")
    twice = strict_json.first_repeat(labels)
    if twice is not None:
        raise ValueError(f"{path}.values holds the category {twice!r} twice")
    return labels


def _string_labels(values, offsets, path):
    raw = fields.integers(values, f"{path}.values")
    cuts = fields.integers(offsets, f"{path}.offsets")
    if ((raw < 0) | (raw > 255)).any():
        raise ValueError(f"{path}.values holds {int(raw[(raw < 0) | (raw > 255)][0])}, not "
                         "a byte of UTF-8 text")
    if cuts[0] != 0 or cuts[-1] != raw.size or (np.diff(cuts) < 0).any():
        raise ValueError(f"{path}.offsets must rise from 0 to the {raw.size} bytes of "
                         f"{path}.values")
    if cuts.size - 1 > MAX_CATEGORIES:
        raise ValueError(f"{path}.offsets holds {cuts.size - 1} categories; gbm holds at "
                         f"most {MAX_CATEGORIES}")
    text, bounds = raw.astype(np.uint8).tobytes(), cuts.tolist()
    try:
        return [text[a:b].decode("utf-8") for a, b in zip(bounds[:-1], bounds[1:])]
    except UnicodeDecodeError:
        raise ValueError(f"{path}.values is not UTF-8 text cut at {path}.offsets") from None


def _number_labels(values, path):
    labels = []
    for k, v in enumerate(values):
        if type(v) is str:
            labels.append(v)
        elif type(v) is int and -(1 << 63) <= v < (1 << 63):
            labels.append(v)
        elif type(v) is float and math.isfinite(v):
            labels.append(int(v) if v.is_integer() and abs(v) < 2 ** 63 else v)
        else:
            raise ValueError(f"{path}.values[{k}] is {v!r}, not a category label (a string, "
                             "a 64-bit integer or a finite number)")
    return labels


def _check_category_codes(trees, labels):
    """A categorical split's values are codes into its feature's labels, when the
    ``cats`` block lists them."""
    for i, tree in enumerate(trees):
        for node, values in tree.sets.items():
            f = int(tree.arrays["split_indices"][node])
            if f in labels and int(values.max()) >= len(labels[f]):
                raise ValueError(f"trees[{i}].categories holds {int(values.max())} at node "
                                 f"{node}, beyond the {len(labels[f])} categories that "
                                 f"cats.enc[{f}] lists for its feature (split_indices[{node}]"
                                 f" = {f}; cats.enc's values, cut at its offsets for strings)")


# --- attributes ----------------------------------------------------------------------------

def _attributes(learner):
    attrs = learner.get("attributes")
    return {} if attrs is None else fields.as_object(attrs, "learner.attributes")


def _best(attrs, n_rounds):
    """``best_iteration`` (a round of the model) and ``best_score`` (strings, as XGBoost
    keeps attributes)."""
    best_iteration = best_score = None
    if "best_iteration" in attrs:
        best_iteration = fields.count(attrs["best_iteration"], "attributes.best_iteration", 0)
        if best_iteration >= n_rounds:
            raise ValueError(f"attributes.best_iteration is {best_iteration}, but the model has "
                             f"{n_rounds} rounds (iteration_indptr, or the tree count)")
        if "best_score" in attrs:
            best_score = fields.real(attrs["best_score"], "attributes.best_score",
                                     limit=np.finfo(np.float64).max)
    return best_iteration, best_score


def _saved_categories(attrs, n_features):
    """gbm's category lists from the ``gbm_categories`` attribute an export writes, or
    None (absent, or not a list per feature: XGBoost's attributes are anyone's to set,
    and the import then keeps XGBoost's codes as the categories). A feature's list is
    used only when its labels are integers gbm exports by value, each once."""
    text = attrs.get("gbm_categories")
    if type(text) is not str or strict_json.nesting_depth(text) > 2:
        return None
    try:
        saved = json.loads(text)
    except ValueError:
        return None
    if type(saved) is not list or len(saved) != n_features:
        return None
    return [c if type(c) is list and by_value([c])[0] and len(set(c)) == len(c) else None
            for c in saved]
