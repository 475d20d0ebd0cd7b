"""XGBoost's JSON model format, both ways: ``to_xgboost`` writes what
``xgboost.Booster(model_file=path)`` loads, ``from_xgboost`` reads a gbm ``Booster`` back.

The two tree models are the same thing written differently (see docs/model_format.md and
XGBoost's ``doc/model.schema``):

* a split sends ``x < threshold`` left in both, missing values to ``default_left``; at a
  leaf XGBoost keeps the value (learning rate applied) in ``split_conditions``;
* a categorical split sends the categories in its set right in both (gbm: a bitset of
  indices into the model's ``categories``; XGBoost: a list of the codes it reads). A
  feature whose categories are non-negative integers below 65,536 (a numeric column named
  in ``categorical_features``, or a ``category`` column of such integers) is written *by
  value*: XGBoost's codes are the values themselves, which is how it reads a NumPy
  matrix's categorical column, and its ``cats`` block lists ``0 .. max``, with which
  XGBoost 3.1 and later re-code a DataFrame's ``category`` column by label to the same
  values. Other categories (strings) are written by code: their labels go in the ``cats``
  block (XGBoost then re-codes a DataFrame's column by label, as gbm does), and a NumPy
  matrix must hold their codes. A category gbm did not see at fit takes the missing-value
  branch in gbm and, in XGBoost, the left branch (not in the set). The model's own
  category lists go in the learner's ``gbm_categories`` attribute, so an import gives
  back the same categories;
* gbm keeps the starting margin per output group; XGBoost (3.1 on) a ``base_score`` per
  output in prediction space, which its objective turns into the margin with its
  inverse link (logit for ``binary:logistic``, log for Poisson, gamma and Tweedie).

XGBoost sums leaf values in float32 and gbm in float64, so predictions agree to float32
rounding, not bit for bit. A single-output model is written with a scalar ``base_score``
(which XGBoost 2 reads too); several outputs with different starting margins need the
list form of XGBoost 3.1 or later.
"""
import json
import math
import os

import numpy as np

from .atomic import write_atomic
from ..data.categorical import MAX_CATEGORIES
from ..kernels.layout import cat_words
from .validation import MAX_CUTS
from ..params import validate_params
from ..tree.structure import Tree

# objectives whose margin is the log of the prediction (the rest: logistic, identity)
_LOG_LINK = ("count:poisson", "reg:gamma", "reg:tweedie")
_ROOT_PARENT = 2147483647  # XGBoost's "no parent"


def _margin_to_base_score(objective, margin):
    if objective == "binary:logistic":
        return 1.0 / (1.0 + math.exp(-margin))
    if objective in _LOG_LINK:
        return math.exp(margin)
    return margin


def _base_score_to_margin(objective, score):
    if objective == "binary:logistic":
        if not 0.0 < score < 1.0:
            raise ValueError(f"base_score {score} of a binary:logistic model is not in (0, 1)")
        return math.log(score / (1.0 - score))
    if objective in _LOG_LINK:
        if not score > 0.0:
            raise ValueError(f"base_score {score} of a {objective} model is not positive")
        return math.log(score)
    return score


def _num(v):
    """A number as XGBoost writes parameters: a string, shortest float32 repr."""
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return repr(float(np.float32(v)))


def _objective_block(params):
    name = params["objective"]
    block = {"name": name}
    if name in ("reg:squarederror", "reg:gamma", "binary:logistic"):
        block["reg_loss_param"] = {"scale_pos_weight": _num(float(params.get("scale_pos_weight", 1.0)))}
    elif name == "reg:quantileerror":
        alphas = np.atleast_1d(params["quantile_alpha"])
        block["quantile_loss_param"] = {"quantile_alpha": "[" + ",".join(_num(a) for a in alphas) + "]"}
    elif name == "reg:pseudohubererror":
        block["pseudo_huber_param"] = {"huber_slope": _num(params["huber_slope"])}
    elif name == "count:poisson":
        block["poisson_regression_param"] = {"max_delta_step": _num(params["max_delta_step"])}
    elif name == "reg:tweedie":
        block["tweedie_regression_param"] = {
            "tweedie_variance_power": _num(params["tweedie_variance_power"])}
    elif name.startswith("multi:"):
        block["softmax_multiclass_param"] = {"num_class": str(params["num_class"])}
    elif name.startswith("rank:"):
        block["lambdarank_param"] = {
            "lambdarank_pair_method": params["lambdarank_pair_method"],
            "lambdarank_num_pair_per_sample": str(params["lambdarank_num_pair_per_sample"]),
            "ndcg_exp_gain": _num(params["ndcg_exp_gain"]),
            "lambdarank_normalization": _num(params["lambdarank_normalization"]),
            "lambdarank_score_normalization": _num(params["lambdarank_score_normalization"]),
            "lambdarank_unbiased": "0", "lambdarank_bias_norm": "1"}
    return block


def _by_value(categories):
    """Per feature, whether XGBoost gets its categories by value (non-negative integers
    below ``MAX_CATEGORIES``: XGBoost's code for category ``v`` is ``v``) rather than by
    code (the category's index in gbm's list)."""
    return [bool(labels) and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                 and 0 <= v < MAX_CATEGORIES for v in labels)
            for labels in (categories or [])]


def _cats_block(categories, n_features):
    """XGBoost's (3.1 on) stored categories, with which it re-codes a DataFrame's category
    columns to the codes the trees use: per feature UTF-8 strings cut at offsets, or int64
    values (array type 15), ``0 .. max`` for a feature written by value; empty for numeric
    features. Written only when every categorical feature's labels are all strings or all
    integers; else empty (XGBoost then reads category codes as they come)."""
    empty = {"enc": [], "feature_segments": [], "sorted_idx": []}
    if categories is None:
        return empty
    enc, segments, sorted_idx = [], [0], []
    for labels, by_value in zip(categories, _by_value(categories)):
        labels = labels or []
        if by_value:  # the codes are the values: every value up to the largest is one
            labels = list(range(max(labels) + 1))
        if all(isinstance(v, str) for v in labels):
            raw = [v.encode("utf-8") for v in labels]
            offsets = np.concatenate(([0], np.cumsum([len(r) for r in raw]))).tolist() if raw else []
            enc.append({"offsets": offsets, "values": list(b"".join(raw))})
        elif all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in labels):
            enc.append({"type": 15, "values": [int(v) for v in labels]})
        else:
            return empty
        sorted_idx += sorted(range(len(labels)), key=lambda i: labels[i])
        segments.append(segments[-1] + len(labels))
    return {"enc": enc, "feature_segments": segments, "sorted_idx": sorted_idx}


def _tree_to_xgboost(tree, tree_id, n_features, categories=None, by_value=()):
    leaf = tree.left_child < 0
    n = tree.n_nodes
    parents = np.full(n, _ROOT_PARENT, dtype=np.int64)
    inner = np.flatnonzero(~leaf)
    parents[tree.left_child[inner]] = inner
    parents[tree.right_child[inner]] = inner
    conditions = np.where(leaf, tree.value, tree.threshold).astype(np.float32)
    cat_nodes, cat_segments, cat_sizes, cat_values = [], [], [], []
    for node in np.flatnonzero(tree.split_type == 1).tolist():
        chosen = tree.node_categories(node)  # gbm codes: XGBoost's, unless by value
        feature = int(tree.split_feature[node])
        if feature < len(by_value) and by_value[feature]:
            chosen = sorted(int(categories[feature][c]) for c in chosen)
        cat_nodes.append(node)
        cat_segments.append(len(cat_values))
        cat_sizes.append(len(chosen))
        cat_values.extend(chosen)
        conditions[node] = 0.0  # unused at a categorical node
    return {
        "base_weights": tree.value.astype(np.float32).tolist(),
        "categories": cat_values, "categories_nodes": cat_nodes,
        "categories_segments": cat_segments, "categories_sizes": cat_sizes,
        "default_left": tree.default_left.astype(int).tolist(),
        "id": tree_id,
        "left_children": tree.left_child.astype(int).tolist(),
        "loss_changes": tree.gain.astype(np.float32).tolist(),
        "parents": parents.tolist(),
        "right_children": tree.right_child.astype(int).tolist(),
        "split_conditions": conditions.tolist(),
        "split_indices": np.where(leaf, 0, tree.split_feature).astype(int).tolist(),
        "split_type": tree.split_type.astype(int).tolist(),
        "sum_hessian": tree.cover.astype(np.float32).tolist(),
        "tree_param": {"num_deleted": "0", "num_feature": str(n_features),
                       "num_nodes": str(n), "size_leaf_vector": "1"},
    }


def to_xgboost(booster):
    """The model as a dict in XGBoost's JSON model schema (``json.dumps`` it to save)."""
    params = booster.params
    objective = params["objective"]
    scores = [_margin_to_base_score(objective, float(m)) for m in booster.base_margin]
    if len(set(scores)) == 1:
        base_score = _num(scores[0])  # scalar: readable by XGBoost 2 as well
    else:
        base_score = "[" + ",".join(_num(s) for s in scores) + "]"
    multiclass = objective.startswith("multi:")
    n_targets = 1 if multiclass else booster.n_groups
    categories = booster.categories
    learner = {
        "attributes": {},
        "feature_names": list(booster.feature_names or []),
        "feature_types": [],
        "gradient_booster": {"name": "gbtree", "model": {
            "gbtree_model_param": {"num_parallel_tree": str(params["num_parallel_tree"]),
                                   "num_trees": str(len(booster.trees))},
            "iteration_indptr": [int(i) for i in booster.iteration_indptr],
            "tree_info": [int(g) for g in booster.tree_group],
            "trees": [_tree_to_xgboost(t, i, booster.n_features, categories,
                                       _by_value(categories))
                      for i, t in enumerate(booster.trees)],
            "cats": _cats_block(categories, booster.n_features),
        }},
        "learner_model_param": {
            "base_score": base_score, "boost_from_average": "0",
            "num_class": str(params["num_class"]) if multiclass else "0",
            "num_feature": str(booster.n_features), "num_target": str(n_targets)},
        "objective": _objective_block(params),
    }
    if categories is not None:
        learner["feature_types"] = ["c" if c is not None else "float" for c in categories]
        if any(_by_value(categories)):  # gbm's lists, for from_xgboost (XGBoost keeps them)
            learner["attributes"]["gbm_categories"] = json.dumps(categories)
    if booster.best_iteration is not None:
        learner["attributes"]["best_iteration"] = str(booster.best_iteration)
        if booster.best_score is not None:
            learner["attributes"]["best_score"] = repr(float(booster.best_score))
    return {"learner": learner, "version": [3, 1, 0]}


def save_xgboost(booster, path):
    """Write ``to_xgboost(booster)`` to ``path`` atomically (``gbm.io.atomic``)."""
    write_atomic(path, json.dumps(to_xgboost(booster), allow_nan=False))


# ---------------------------------------------------------------- import

_OBJECTIVE_PARAMS = {  # XGBoost objective parameter block -> gbm parameter names
    "quantile_loss_param": ("quantile_alpha",),
    "pseudo_huber_param": ("huber_slope",),
    "tweedie_regression_param": ("tweedie_variance_power",),
    "poisson_regression_param": ("max_delta_step",),
    "softmax_multiclass_param": ("num_class",),
    "lambdarank_param": ("lambdarank_pair_method", "lambdarank_num_pair_per_sample",
                         "ndcg_exp_gain", "lambdarank_normalization",
                         "lambdarank_score_normalization"),
}


def _parse_numbers(text):
    """XGBoost's number strings: ``"5E-1"`` or ``"[1E0,2E0]"`` -> list of floats."""
    text = str(text).strip()
    if text.startswith("["):
        return [float(v) for v in text[1:-1].split(",") if v.strip()]
    return [float(text)]


def _param_value(name, text):
    if name == "quantile_alpha":
        values = _parse_numbers(text)
        return values[0] if len(values) == 1 else values
    if name in ("num_class", "lambdarank_num_pair_per_sample"):
        return int(text)
    if name in ("ndcg_exp_gain", "lambdarank_normalization", "lambdarank_score_normalization"):
        return str(text) not in ("0", "false", "False")
    if name == "lambdarank_pair_method":
        return str(text)
    return float(text)


def _read_source(source):
    """The model dict from an ``xgboost.Booster``, a path, JSON text or a dict."""
    if isinstance(source, dict):
        return source
    if hasattr(source, "save_raw"):  # an xgboost.Booster
        return json.loads(bytes(source.save_raw(raw_format="json")).decode("utf-8"))
    if hasattr(source, "get_booster"):  # an xgboost estimator
        return _read_source(source.get_booster())
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode("utf-8")
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return json.loads(source)
    path = os.fspath(source)
    if not str(path).endswith(".json"):
        try:  # UBJSON or the old binary format: let xgboost read it
            import xgboost
        except ImportError:
            raise ValueError(f"{path}: only XGBoost's JSON models (.json) load without "
                             "xgboost installed; install xgboost, or save the model as .json") from None
        return _read_source(xgboost.Booster(model_file=path))
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _renumber(tree):
    """XGBoost node ids -> gbm's order: breadth first, children after their parent, right
    child = left child + 1. Returns the old id of each new node."""
    order, queue = [], [0]
    while queue:
        node = queue.pop(0)
        order.append(node)
        left = tree["left_children"][node]
        if left != -1:
            queue += [left, tree["right_children"][node]]
    return order


def _cat_labels(model, learner, feature):
    """gbm category labels of an XGBoost categorical feature, and a map from the values
    XGBoost matches to gbm codes."""
    cats = model.get("cats") or {}
    enc = (cats.get("enc") or [])
    if feature < len(enc) and enc[feature].get("values"):
        entry = enc[feature]
        offsets, values = entry.get("offsets") or [], entry["values"]
        if offsets:  # strings: UTF-8 bytes cut at offsets
            raw = bytes(values)
            labels = [raw[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:])]
        else:
            labels = [v if isinstance(v, str) else (int(v) if float(v).is_integer() else float(v))
                      for v in values]
        return labels, None
    return None, None


def from_xgboost(cls, source):
    """A gbm ``Booster`` (class ``cls``) from an XGBoost model: an ``xgboost.Booster`` or
    estimator, a path to a ``.json`` (or, with xgboost installed, ``.ubj``) model file, its
    JSON text, or the parsed dict. Raises ``ValueError`` for what gbm cannot represent."""
    from . import gbm_json

    learner, gb, lmp, obj = _learner_parts(_read_source(source))
    booster_kind, model = _tree_model(gb)
    params = _imported_params(obj, model)
    n_features = int(lmp["num_feature"])
    n_groups, base_margin = _imported_base_margin(lmp, params["objective"])
    raw_trees = model["trees"]
    groups = [int(g) for g in model.get("tree_info", [0] * len(raw_trees))]
    weight_drop = gb.get("weight_drop") if booster_kind == "dart" else None
    feature_types = learner.get("feature_types") or []
    thresholds, cat_values = _split_values(raw_trees, n_features)
    cuts = _imported_cuts(thresholds)
    categories, code_of = _imported_categories(model, learner, feature_types, cat_values,
                                               n_features)
    names = learner.get("feature_names") or None

    booster = cls(params, n_features, names, base_margin, cuts, categories)
    for i, t in enumerate(raw_trees):
        scale = 1.0 if weight_drop is None else float(weight_drop[i])
        booster.add_tree(_tree_from_xgboost(t, cuts, scale, code_of), groups[i])
    booster.iteration_indptr = _iteration_indptr(model, params, n_groups, len(raw_trees))
    attrs = learner.get("attributes") or {}
    if "best_iteration" in attrs:
        booster.best_iteration = int(attrs["best_iteration"])
        booster.best_score = float(attrs["best_score"]) if "best_score" in attrs else None
    # every check a gbm model file gets (a file from anyone must not crash the kernels)
    return gbm_json.loads(cls, gbm_json.dumps(booster), source="the imported XGBoost model")


def _learner_parts(d):
    """The learner of a parsed XGBoost model and its gradient booster, learner parameters
    and objective blocks."""
    try:
        learner = d["learner"]
        parts = (learner["gradient_booster"], learner["learner_model_param"],
                 learner["objective"])
    except (KeyError, TypeError):
        raise ValueError("not an XGBoost JSON model: it has no learner / gradient_booster / "
                         "learner_model_param / objective") from None
    return (learner,) + parts


def _tree_model(gb):
    """``(booster kind, tree model)`` of the gradient booster: a gbtree's model, or the
    gbtree inside a dart booster; other boosters (gblinear) are refused."""
    booster_kind = gb.get("name")
    if booster_kind not in ("gbtree", "dart"):
        raise ValueError(f"gbm imports tree models only; this XGBoost model's booster is "
                         f"{booster_kind!r}")
    return booster_kind, gb["model"] if booster_kind == "gbtree" else gb["gbtree"]["model"]


def _imported_params(obj, model):
    """gbm's training parameters (validated) from XGBoost's objective blocks and the tree
    model's ``num_parallel_tree``."""
    from ..objectives import OBJECTIVES

    objective = obj["name"]
    if objective not in OBJECTIVES:
        raise ValueError(f"gbm has no objective {objective!r} (it has {sorted(OBJECTIVES)}), so "
                         "this XGBoost model cannot be imported")
    params = {"objective": objective,
              "num_parallel_tree": int(model["gbtree_model_param"].get("num_parallel_tree", 1))}
    for block, names in _OBJECTIVE_PARAMS.items():
        for name in names:
            if name in obj.get(block, {}):
                params[name] = _param_value(name, obj[block][name])
    if objective == "reg:quantileerror" and "quantile_alpha" not in params:
        params["quantile_alpha"] = 0.5
    return validate_params(params)


def _imported_base_margin(lmp, objective):
    """``(n_groups, base_margin)``: the output groups, and each one's starting margin from
    XGBoost's ``base_score`` (one for all, or one per output)."""
    n_groups = int(lmp.get("num_class", 0)) or int(lmp.get("num_target", 1)) or 1
    scores = _parse_numbers(lmp["base_score"])
    if len(scores) == 1:
        scores = scores * n_groups
    if len(scores) != n_groups:
        raise ValueError(f"base_score has {len(scores)} values for {n_groups} outputs")
    return n_groups, [_base_score_to_margin(objective, float(np.float32(s))) for s in scores]


def _split_values(raw_trees, n_features):
    """Per feature, the thresholds of its numeric splits (float32) and the category
    values of its categorical splits, over all trees (they become cuts and labels)."""
    thresholds = [set() for _ in range(n_features)]
    cat_values = [set() for _ in range(n_features)]
    for t in raw_trees:
        if int(t["tree_param"].get("size_leaf_vector", "1")) > 1:
            raise ValueError("vector-leaf trees (multi_strategy='multi_output_tree') have no "
                             "gbm equivalent")
        cat_nodes = set(t.get("categories_nodes", []))
        for node, (left, feat, cond) in enumerate(zip(t["left_children"], t["split_indices"],
                                                      t["split_conditions"])):
            if left == -1:
                continue
            if node in cat_nodes:
                k = t["categories_nodes"].index(node)
                start, size = t["categories_segments"][k], t["categories_sizes"][k]
                cat_values[feat].update(int(v) for v in t["categories"][start:start + size])
            else:
                thresholds[feat].add(np.float32(cond))
    return thresholds, cat_values


def _imported_cuts(thresholds):
    """Each feature's bin edges: its split thresholds, sorted (float32)."""
    cuts = []
    for f, values in enumerate(thresholds):
        if len(values) > MAX_CUTS:  # gbm's bin edges: max_bin <= MAX_CUTS + 1
            raise ValueError(f"feature {f} is split at {len(values)} thresholds; a gbm model "
                             f"holds at most {MAX_CUTS} per feature (max_bin {MAX_CUTS + 1})")
        cuts.append(np.array(sorted(values), dtype=np.float32))
    return cuts


def _imported_categories(model, learner, feature_types, cat_values, n_features):
    """``(categories, code_of)``: gbm's category labels per feature (None for a numeric
    one; None for all when none is categorical) and, for the features gbm exported by
    value, a dict from XGBoost's codes (the values) to gbm's codes (else None)."""
    categories = [None] * n_features
    code_of = [None] * n_features  # features written by value: XGBoost's code -> gbm's
    saved = _saved_categories(learner, n_features)
    for f in range(n_features):
        is_cat = (f < len(feature_types) and feature_types[f] == "c") or cat_values[f]
        if not is_cat:
            continue
        labels, _ = _cat_labels(model, learner, f)
        if labels is None:
            top = max(cat_values[f]) + 1 if cat_values[f] else 1
            labels = list(range(top))  # the values XGBoost matched, as numeric labels
        own = saved[f] if saved is not None else None
        if own is not None and _by_value([own])[0] and labels == list(range(len(labels))) \
                and cat_values[f] <= set(own):  # gbm's export by value: its own labels back
            labels = list(own)
            code_of[f] = {v: i for i, v in enumerate(own)}
        if len(labels) > MAX_CATEGORIES:  # codes are uint16 bins
            raise ValueError(f"feature {f} has {len(labels)} categories; gbm holds at most "
                             f"{MAX_CATEGORIES}")
        categories[f] = labels
    if all(c is None for c in categories):
        categories = None
    return categories, code_of


def _iteration_indptr(model, params, n_groups, n_trees):
    """Where each boosting round's trees start: XGBoost's ``iteration_indptr``, or (older
    files without it) one round per ``num_parallel_tree * n_groups`` trees."""
    indptr = model.get("iteration_indptr")
    if not indptr:
        step = params["num_parallel_tree"] * n_groups
        indptr = list(range(0, n_trees + 1, step))
    return [int(i) for i in indptr]


def _saved_categories(learner, n_features):
    """gbm's category lists from the ``gbm_categories`` attribute an export writes, or
    None (absent, or not a list per feature: XGBoost's attributes are anyone's to set,
    and the import then keeps XGBoost's codes as the categories)."""
    text = (learner.get("attributes") or {}).get("gbm_categories")
    if not isinstance(text, str):
        return None
    try:
        saved = json.loads(text)
    except ValueError:
        return None
    if not isinstance(saved, list) or len(saved) != n_features or not all(
            c is None or isinstance(c, list) for c in saved):
        return None
    return saved


def _tree_from_xgboost(t, cuts, scale, code_of=None):
    """One XGBoost tree as a gbm ``Tree``; ``code_of[f]``: for a feature written by value,
    a dict from XGBoost's codes (the values) to gbm's codes."""
    order = _renumber(t)
    new_id = {old: new for new, old in enumerate(order)}
    n = len(order)
    sets = {}  # categorical node (XGBoost id) -> its gbm codes
    for k, node in enumerate(t.get("categories_nodes", [])):
        start, size = t["categories_segments"][k], t["categories_sizes"][k]
        codes = [int(v) for v in t["categories"][start:start + size]]
        mapping = code_of[t["split_indices"][node]] if code_of else None
        sets[node] = [mapping[v] for v in codes] if mapping else codes
    # one bitset width per tree: the words its highest code needs (at least 256 bits)
    width = cat_words(max((max(c) for c in sets.values() if c), default=0) + 1)
    arrays = {name: np.zeros(n, dtype=dtype) for name, dtype in (
        ("split_feature", np.int32), ("split_bin", np.int32), ("threshold", np.float32),
        ("default_left", np.uint8), ("left_child", np.int32), ("right_child", np.int32),
        ("value", np.float64), ("gain", np.float64), ("cover", np.float64),
        ("split_type", np.uint8))}
    bits = []
    for new, old in enumerate(order):
        left = t["left_children"][old]
        arrays["cover"][new] = t["sum_hessian"][old]
        if left == -1:
            arrays["split_feature"][new] = -1
            arrays["left_child"][new] = arrays["right_child"][new] = -1
            arrays["value"][new] = scale * float(t["split_conditions"][old])
            continue
        feat = t["split_indices"][old]
        arrays["split_feature"][new] = feat
        arrays["left_child"][new] = new_id[left]
        arrays["right_child"][new] = new_id[t["right_children"][old]]
        arrays["default_left"][new] = 1 if t["default_left"][old] else 0
        arrays["value"][new] = t["base_weights"][old] if "base_weights" in t else 0.0
        arrays["gain"][new] = t["loss_changes"][old]
        if old in sets:
            row = np.zeros(width, dtype=np.uint32)
            for code in sets[old]:
                row[code >> 5] |= np.uint32(1 << (code & 31))
            arrays["split_type"][new] = 1
            bits.append(row)
        else:
            threshold = np.float32(t["split_conditions"][old])
            arrays["threshold"][new] = threshold
            arrays["split_bin"][new] = int(np.searchsorted(cuts[feat], threshold))
    cat_bits = np.array(bits, dtype=np.uint32).reshape(-1, width)
    return Tree(cat_bits=cat_bits, **arrays)
