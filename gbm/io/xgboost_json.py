"""XGBoost's JSON model format, both ways: ``to_xgboost`` writes what
``xgboost.Booster(model_file=path)`` loads; ``gbm.io.xgboost_import.from_xgboost`` reads
a gbm ``Booster`` back (after ``gbm.io.xgboost_checks`` has checked every field it reads).

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
* a DART model (``booster="dart"``) is written as XGBoost's ``dart`` booster: the tree
  model inside it as ``gbtree``, and each tree's weight in ``weight_drop`` (float32,
  XGBoost's type): the form XGBoost writes up to 3.2, which 3.3 and 3.4 still read;
* gbm keeps the starting margin per output group; XGBoost (3.1 on) a ``base_score`` per
  output in prediction space, which its objective turns into the margin with its
  inverse link (logit for ``binary:logistic`` and ``reg:logistic``, log for Poisson,
  gamma, Tweedie and the survival objectives; for ``reg:expectileerror`` with several
  levels, the predictions of every level, ``gbm.objectives.expectile``).

XGBoost sums leaf values in float32 and gbm in float64, so predictions agree to float32
rounding, not bit for bit. A single-output model is written with a scalar ``base_score``
(which XGBoost 2 reads too); several outputs with different starting margins need the
list form of XGBoost 3.1 or later.
"""
import json
import math

import numpy as np

from .atomic import write_atomic
from ..data.categorical import MAX_CATEGORIES
from ..objectives.expectile import margins_to_scores

# objectives whose margin is the log of the prediction (the rest: logistic, identity)
LOG_LINK = ("count:poisson", "reg:gamma", "reg:tweedie", "survival:cox", "survival:aft")
# objectives whose margin is the logit of their base_score
LOGIT_LINK = ("binary:logistic", "reg:logistic")
_ROOT_PARENT = 2147483647  # XGBoost's "no parent"


def base_scores(params, margins):
    """XGBoost's ``base_score`` values (prediction space) of gbm's base margins."""
    objective = params["objective"]
    if expectile_levels(params) > 1:  # the levels' predictions (one target)
        return margins_to_scores(margins)
    return [_margin_to_base_score(objective, float(m)) for m in margins]


def expectile_levels(params):
    """The number of ``reg:expectileerror`` levels, whose base scores are cumulative
    (0 for another objective)."""
    if params["objective"] != "reg:expectileerror":
        return 0
    return len(np.atleast_1d(params["expectile_alpha"]))


def _margin_to_base_score(objective, margin):
    if objective in LOGIT_LINK:
        return 1.0 / (1.0 + math.exp(-margin))
    if objective in LOG_LINK:
        return math.exp(margin)
    return margin


def _num(v):
    """A number as XGBoost writes parameters: a string, shortest float32 repr."""
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return repr(float(np.float32(v)))


def objective_block(params):
    """XGBoost's ``learner.objective`` block of a gbm model's parameters."""
    name = params["objective"]
    block = {"name": name}
    if name in ("reg:squarederror", "reg:gamma") + LOGIT_LINK + ("binary:logitraw",):
        block["reg_loss_param"] = {"scale_pos_weight": _num(float(params.get("scale_pos_weight", 1.0)))}
    elif name == "reg:quantileerror":
        alphas = np.atleast_1d(params["quantile_alpha"])
        block["quantile_loss_param"] = {"quantile_alpha": "[" + ",".join(_num(a) for a in alphas) + "]"}
    elif name == "reg:expectileerror":
        alphas = np.atleast_1d(params["expectile_alpha"])
        block["expectile_loss_param"] = {
            "expectile_alpha": "[" + ",".join(_num(a) for a in alphas) + "]"}
    elif name == "reg:pseudohubererror":
        block["pseudo_huber_param"] = {"huber_slope": _num(params["huber_slope"])}
    elif name == "count:poisson":
        block["poisson_regression_param"] = {"max_delta_step": _num(params["max_delta_step"])}
    elif name == "reg:tweedie":
        block["tweedie_regression_param"] = {
            "tweedie_variance_power": _num(params["tweedie_variance_power"])}
    elif name == "survival:aft":
        block["aft_loss_param"] = {
            "aft_loss_distribution": params["aft_loss_distribution"],
            "aft_loss_distribution_scale": _num(params["aft_loss_distribution_scale"])}
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


def by_value(categories):
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
    for labels, written_by_value in zip(categories, by_value(categories)):
        labels = labels or []
        if written_by_value:  # the codes are the values: every value up to the largest is one
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


def _category_arrays(tree, categories, written_by_value):
    """XGBoost's ``categories``, ``categories_nodes``, ``categories_segments`` and
    ``categories_sizes`` of a tree's categorical splits (each set's codes, or values for a
    feature written by value)."""
    cat_nodes, cat_segments, cat_sizes, cat_values = [], [], [], []
    for node in np.flatnonzero(tree.split_type == 1).tolist():
        chosen = tree.node_categories(node)  # gbm codes: XGBoost's, unless by value
        feature = int(tree.split_feature[node])
        if feature < len(written_by_value) and written_by_value[feature]:
            chosen = sorted(int(categories[feature][c]) for c in chosen)
        cat_nodes.append(node)
        cat_segments.append(len(cat_values))
        cat_sizes.append(len(chosen))
        cat_values.extend(chosen)
    return {"categories": cat_values, "categories_nodes": cat_nodes,
            "categories_segments": cat_segments, "categories_sizes": cat_sizes}


def _vector_tree_to_xgboost(tree, tree_id, n_features, categories=None, written_by_value=()):
    """A vector-leaf tree (``multi_strategy="multi_output_tree"``) in XGBoost's form of
    its multi-target trees: ``base_weights`` every node's vector (n_nodes * k, row by
    row), ``leaf_weights`` the leaves' vectors in node order, and at a leaf
    ``right_children`` its index among the leaves (``left_children`` -1); categorical
    splits as in a one-output tree."""
    leaf = tree.left_child < 0
    n, k = tree.value.shape
    leaves = np.flatnonzero(leaf)
    parents = np.full(n, _ROOT_PARENT, dtype=np.int64)
    inner = np.flatnonzero(~leaf)
    parents[tree.left_child[inner]] = inner
    parents[tree.right_child[inner]] = inner
    right = tree.right_child.astype(np.int64).copy()
    right[leaves] = np.arange(leaves.size)
    return {
        "base_weights": tree.value.astype(np.float32).ravel().tolist(),
        **_category_arrays(tree, categories, written_by_value),
        "default_left": tree.default_left.astype(int).tolist(),
        "id": tree_id,
        "leaf_weights": tree.value[leaves].astype(np.float32).ravel().tolist(),
        "left_children": tree.left_child.astype(int).tolist(),
        "loss_changes": tree.gain.astype(np.float32).tolist(),
        "parents": parents.tolist(),
        "right_children": right.tolist(),
        "split_conditions": np.where(leaf, 0.0, tree.threshold).astype(np.float32).tolist(),
        "split_indices": np.where(leaf, 0, tree.split_feature).astype(int).tolist(),
        "split_type": tree.split_type.astype(int).tolist(),
        "sum_hessian": tree.cover.astype(np.float32).tolist(),
        "tree_param": {"num_deleted": "0", "num_feature": str(n_features),
                       "num_nodes": str(n), "size_leaf_vector": str(k)},
    }


def _tree_to_xgboost(tree, tree_id, n_features, categories=None, written_by_value=()):
    if tree.value.ndim == 2 and tree.value.shape[1] > 1:
        return _vector_tree_to_xgboost(tree, tree_id, n_features, categories,
                                       written_by_value)
    tree = tree.output(0)  # one output: XGBoost's one-output tree
    leaf = tree.left_child < 0
    n = tree.n_nodes
    parents = np.full(n, _ROOT_PARENT, dtype=np.int64)
    inner = np.flatnonzero(~leaf)
    parents[tree.left_child[inner]] = inner
    parents[tree.right_child[inner]] = inner
    conditions = np.where(leaf, tree.value, tree.threshold).astype(np.float32)
    conditions[tree.split_type == 1] = 0.0  # unused at a categorical node
    return {
        "base_weights": tree.value.astype(np.float32).tolist(),
        **_category_arrays(tree, categories, written_by_value),
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
    scores = base_scores(params, booster.base_margin)
    if len(set(scores)) == 1:
        base_score = _num(scores[0])  # scalar: readable by XGBoost 2 as well
    else:
        base_score = "[" + ",".join(_num(s) for s in scores) + "]"
    multiclass = objective.startswith("multi:")
    n_targets = 1 if multiclass else booster.n_groups
    categories = booster.categories
    gradient_booster = {"name": "gbtree", "model": {
        "gbtree_model_param": {"num_parallel_tree": str(params["num_parallel_tree"]),
                               "num_trees": str(len(booster.trees))},
        "iteration_indptr": [int(i) for i in booster.iteration_indptr],
        "tree_info": [int(g) for g in booster.tree_group],
        "trees": [_tree_to_xgboost(t, i, booster.n_features, categories,
                                   by_value(categories))
                  for i, t in enumerate(booster.trees)],
        "cats": _cats_block(categories, booster.n_features),
    }}
    if booster.weight_drop is not None:
        gradient_booster = {"name": "dart", "gbtree": gradient_booster, "weight_drop": [
            float(np.float32(w)) for w in booster.weight_drop]}
    learner = {
        "attributes": {},
        "feature_names": list(booster.feature_names or []),
        "feature_types": [],
        "gradient_booster": gradient_booster,
        "learner_model_param": {
            "base_score": base_score, "boost_from_average": "0",
            "num_class": str(params["num_class"]) if multiclass else "0",
            "num_feature": str(booster.n_features), "num_target": str(n_targets)},
        "objective": objective_block(params),
    }
    if categories is not None:
        learner["feature_types"] = ["c" if c is not None else "float" for c in categories]
        if any(by_value(categories)):  # gbm's lists, for from_xgboost (XGBoost keeps them)
            learner["attributes"]["gbm_categories"] = json.dumps(categories)
    if booster.best_iteration is not None:
        learner["attributes"]["best_iteration"] = str(booster.best_iteration)
        if booster.best_score is not None:
            learner["attributes"]["best_score"] = repr(float(booster.best_score))
    return {"learner": learner, "version": [3, 1, 0]}


def save_xgboost(booster, path):
    """Write ``to_xgboost(booster)`` to ``path`` atomically (``gbm.io.atomic``)."""
    write_atomic(path, json.dumps(to_xgboost(booster), allow_nan=False))
