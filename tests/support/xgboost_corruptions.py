"""Malformed XGBoost JSON models, one per check the importer makes (``CASES``: id, model,
kind, mutation, the message pattern), and the models they corrupt (``models()``): used by
tests/test_xgboost_import_checks.py. ``kind`` "dict" mutates the parsed model, "text" its
JSON text."""
import json
import math

import numpy as np


def models():
    """The parsed models the cases expect: "reg" (3 numeric features, no names, depth 3),
    "named" (4 named features), "multi" (3 classes), "dart", "stopped" (binary:logistic,
    early stopping), "cat" (features c: strings a..e, x: numeric, k: integers 3, 5, 9),
    "vleaf" (2 targets, multi_strategy="multi_output_tree": vector-leaf trees)."""
    import pandas as pd
    import xgboost as xgb

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    y = X[:, 0] + X[:, 1] ** 2
    frame = pd.DataFrame({"c": pd.Categorical(rng.choice(list("abcde"), 300)),
                          "x": X[:, 0], "k": pd.Categorical(rng.choice([3, 5, 9], 300))})
    yc = frame["c"].cat.codes.to_numpy() % 2 + frame["x"].to_numpy() + (frame["k"] == 5)

    def parsed(params, data, rounds=2, **kw):
        booster = xgb.train(params, data, rounds, **kw)
        return json.loads(bytes(booster.save_raw(raw_format="json")).decode("utf-8"))

    stop = X[:200, :3], y[:200] > 0.5, X[200:, :3], y[200:] > 0.5
    return {
        "reg": parsed({"max_depth": 3}, xgb.DMatrix(X[:, :3], label=y)),
        "named": parsed({"max_depth": 2}, xgb.DMatrix(X, label=y, feature_names=list("abcd"))),
        "multi": parsed({"max_depth": 2, "objective": "multi:softprob", "num_class": 3},
                        xgb.DMatrix(X, label=np.digitize(y, [0.0, 1.0]))),
        "dart": parsed({"max_depth": 2, "booster": "dart", "rate_drop": 0.5},
                       xgb.DMatrix(X, label=y), 3),
        "stopped": parsed({"max_depth": 2, "objective": "binary:logistic"},
                          xgb.DMatrix(stop[0], label=stop[1]), 30,
                          evals=[(xgb.DMatrix(stop[2], label=stop[3]), "v")],
                          early_stopping_rounds=2, verbose_eval=False),
        "cat": parsed({"max_depth": 2, "max_cat_to_onehot": 1, "tree_method": "hist"},
                      xgb.DMatrix(frame, label=yc, enable_categorical=True)),
        # one thread, 100 rows: little CPU time (a test limits the process's, models() in)
        "vleaf": parsed({"max_depth": 2, "tree_method": "hist", "nthread": 1,
                         "multi_strategy": "multi_output_tree"},
                        xgb.DMatrix(X[:100, :3], label=np.stack([y[:100], X[:100, 2]], 1))),
    }


def corrupted(case, base):
    """The JSON text of ``case``'s corruption of the parsed models ``base``."""
    _, model, kind, mutate, _ = case
    d = json.loads(json.dumps(base[model]))
    if kind == "text":
        return mutate(json.dumps(d))
    mutate(d)
    return json.dumps(d)


# --- where things are ---------------------------------------------------------------------

def learner(d):
    return d["learner"]


def lmp(d):
    return d["learner"]["learner_model_param"]


def model(d):
    gb = d["learner"]["gradient_booster"]
    return gb["model"] if "model" in gb else gb["gbtree"]["model"]


def _vector_ranking(d):
    """A ranking objective over vector leaves: no such gbm model."""
    tree(d)["tree_param"]["size_leaf_vector"] = "2"
    learner(d)["learner_model_param"]["num_target"] = "2"
    learner(d)["objective"] = {"name": "rank:pairwise"}


def _bad_leaf_index(d):
    t = tree(d)
    t["right_children"][t["left_children"].index(-1)] = 99


def tree(d, i=0):
    return model(d)["trees"][i]


def enc(d, f):
    return model(d)["cats"]["enc"][f]


def cat_tree(d):
    """The first tree with a categorical split."""
    return next(t for t in model(d)["trees"] if t.get("categories_nodes"))


def _cat(mutate):
    return lambda d: mutate(cat_tree(d))


def _labels_of(d, f):
    entry = enc(d, f)
    return len(entry["offsets"]) - 1 if entry.get("offsets") else len(entry["values"])


def _code_past_labels(d):
    t = cat_tree(d)
    f = t["split_indices"][t["categories_nodes"][0]]
    t["categories"][t["categories_segments"][0]] = _labels_of(d, f)


def _lmp(key, value):
    return lambda d: lmp(d).__setitem__(key, value)


def _node(field, node, value, i=0):
    return lambda d: tree(d, i)[field].__setitem__(node, value)


def _parents(t):
    return {c: p for p, (a, b) in enumerate(zip(t["left_children"], t["right_children"]))
            for c in (a, b) if c != -1}


def _cycle(d):
    """A split below the root's children points back at its parent: a cycle."""
    t = tree(d)
    parent = _parents(t)
    node = next(n for n, left in enumerate(t["left_children"])
                if left != -1 and parent.get(n, 0) != 0)
    t["left_children"][node] = parent[node]


def _shared(d):
    """The root's right child is also its left child's left child."""
    t = tree(d)
    t["right_children"][0] = t["left_children"][t["left_children"][0]]


def _leaf(t):
    return t["left_children"].index(-1)


def _one_child(d):
    t = tree(d)
    t["right_children"][_leaf(t)] = 2


def _drop_tree_info(d):
    del model(d)["tree_info"]


def _unwhole_rounds(d):
    del model(d)["iteration_indptr"]
    model(d)["gbtree_model_param"]["num_parallel_tree"] = "3"


def _numeric_split_on_categorical(d):
    t = cat_tree(d)  # a numeric split moved to feature c (type "c")
    node = next(n for n, (left, kind) in enumerate(zip(t["left_children"], t["split_type"]))
                if left != -1 and kind == 0)
    t["split_indices"][node] = 0


def _many_thresholds(d):
    """1,024 copies of tree 0, each splitting its root at another threshold."""
    m = model(d)
    first = m["trees"][0]
    m["trees"] = []
    for k in range(1024):
        t = json.loads(json.dumps(first))
        t["split_conditions"][0] = float(np.float32(k / 1024))
        m["trees"].append(t)
    m["tree_info"] = [0] * 1024
    m["iteration_indptr"] = list(range(1025))
    m["gbtree_model_param"]["num_trees"] = "1024"


def _deep_text(text):
    return text.replace('"attributes": {}', '"attributes": {"x": ' + "[" * 40 + "]" * 40 + "}")


def _many_offsets(d):
    entry = enc(d, 0)
    entry["offsets"] = [0] * 65538 + [len(entry["values"])]


# (id, model, kind, mutation, message pattern), as tests/support/corruptions.py's CHECKS
CASES = [
    # the learner
    ("no_learner", "reg", "dict", lambda d: d.pop("learner"),
     r"not an XGBoost JSON model: it has no learner object"),
    ("learner_part_missing", "reg", "dict", lambda d: learner(d).pop("objective"),
     r"not an XGBoost JSON model: learner\.objective is missing"),
    ("gblinear", "reg", "dict",
     lambda d: learner(d)["gradient_booster"].__setitem__("name", "gblinear"),
     r"gradient_booster\.name is 'gblinear': gbm imports tree models only"),
    ("dart_gbtree_missing", "dart", "dict",
     lambda d: learner(d)["gradient_booster"].pop("gbtree"),
     r"gradient_booster\.gbtree is missing"),
    ("objective_name", "reg", "dict",
     lambda d: learner(d)["objective"].__setitem__("name", ["reg:squarederror"]),
     r"objective\.name is \['reg:squarederror'\]: gbm has no such objective"),
    ("objective_params", "multi", "dict",
     lambda d: learner(d)["objective"]["softmax_multiclass_param"].__setitem__("num_class", "1"),
     r"num_class must be >= 2 .*\(gbm's parameters from objective\.name, "
     r"objective\.softmax_multiclass_param\.num_class\)"),
    ("objective_block_not_object", "reg", "dict",
     lambda d: learner(d)["objective"].__setitem__("pseudo_huber_param", "huber_slope"),
     r"objective\.pseudo_huber_param must be an object, got str"),
    ("pair_method_not_string", "reg", "dict",
     lambda d: learner(d)["objective"].__setitem__("lambdarank_param",
                                                   {"lambdarank_pair_method": 3}),
     r"objective\.lambdarank_param\.lambdarank_pair_method is 3, not a string"),
    ("num_parallel_tree_text", "reg", "dict",
     lambda d: model(d)["gbtree_model_param"].__setitem__("num_parallel_tree", "two"),
     r"gbtree_model_param\.num_parallel_tree is 'two', not an integer"),
    # features
    ("num_feature_negative", "reg", "dict", _lmp("num_feature", "-1"),
     r"learner_model_param\.num_feature is -1, outside \[1, 2147483647\]"),
    ("num_feature_not_integer", "reg", "dict", _lmp("num_feature", "3.5"),
     r"learner_model_param\.num_feature is '3\.5', not an integer"),
    ("num_feature_too_long", "reg", "text",
     lambda text: text.replace('"num_feature": "3"', '"num_feature": ' + "9" * 30),
     r"learner_model_param\.num_feature is inf, not an integer"),
    ("num_feature_undeclared_limit", "reg", "dict", _lmp("num_feature", "1000000000"),
     r"learner_model_param\.num_feature is 1000000000: a model that lists no feature names "
     r"or types declares at most 1048576 features"),
    ("feature_names_count", "named", "dict", lambda d: learner(d)["feature_names"].pop(),
     r"learner\.feature_names has 3 entries, but learner_model_param\.num_feature is 4"),
    ("feature_names_not_strings", "named", "dict",
     lambda d: learner(d)["feature_names"].__setitem__(1, 3),
     r"learner\.feature_names\[1\] is 3, not a string"),
    # outputs and the base score
    ("num_class_disagrees", "multi", "dict", _lmp("num_class", "4"),
     r"learner_model_param gives 4 outputs \(num_class 4, num_target 1\), but the objective "
     r"multi:softprob \(its parameters\) has 3"),
    ("num_target_not_whole_rounds", "reg", "dict", _lmp("num_target", "3"),
     r"trees has 2 trees, not a multiple of the model's 3 outputs \(learner_model_param\."
     r"num_class 0, num_target 3\): each round grows a tree for every output"),
    ("num_target_of_ranking", "reg", "dict",
     lambda d: (lmp(d).__setitem__("num_target", "2"),
                learner(d).__setitem__("objective", {"name": "rank:pairwise"})),
     r"num_target > 1 .* \(learner_model_param\.num_target 2\)"),
    ("base_score_count", "multi", "dict", _lmp("base_score", "[5E-1,5E-1]"),
     r"learner_model_param\.base_score has 2 values for 3 outputs"),
    ("base_score_nan", "reg", "dict", _lmp("base_score", "nan"),
     r"learner_model_param\.base_score is 'nan'; it must be a finite number within float32's "
     r"range"),
    ("base_score_infinite_item", "multi", "dict", _lmp("base_score", "[1,inf,1]"),
     r"learner_model_param\.base_score\[1\] is 'inf'; it must be a finite number"),
    ("base_score_text", "reg", "dict", _lmp("base_score", "abc"),
     r"learner_model_param\.base_score is 'abc', not a number"),
    ("base_score_null", "reg", "dict", _lmp("base_score", None),
     r"learner_model_param\.base_score is None, not a number"),
    ("base_score_unclosed", "reg", "dict", _lmp("base_score", "[0.5"),
     r"learner_model_param\.base_score is '\[0\.5', not a number or a list of numbers"),
    ("base_score_logistic", "stopped", "dict", _lmp("base_score", "1.5"),
     r"learner_model_param\.base_score 1\.5 of a binary:logistic model is not in \(0, 1\)"),
    ("base_score_log_link", "reg", "dict",
     lambda d: (learner(d)["objective"].__setitem__("name", "count:poisson"),
                lmp(d).__setitem__("base_score", "-1")),
     r"learner_model_param\.base_score -1\.0 of a count:poisson model is not positive"),
    # per-tree lists
    ("trees_not_list", "reg", "dict", lambda d: model(d).__setitem__("trees", {}),
     r"trees must be a list, got dict"),
    ("num_trees", "reg", "dict",
     lambda d: model(d)["gbtree_model_param"].__setitem__("num_trees", "3"),
     r"gbtree_model_param\.num_trees is 3, but trees has 2 trees"),
    ("tree_info_missing", "multi", "dict", _drop_tree_info,
     r"tree_info is missing: a model of 3 outputs needs each tree's output group"),
    ("tree_info_count", "reg", "dict", lambda d: model(d)["tree_info"].pop(),
     r"tree_info has 1 entries, but trees has 2"),
    ("tree_info_range", "multi", "dict", lambda d: model(d)["tree_info"].__setitem__(0, 3),
     r"tree_info\[0\] is 3, outside \[0, 3\) \(the model's output groups\)"),
    ("weight_drop_short", "dart", "dict",
     lambda d: learner(d)["gradient_booster"]["weight_drop"].pop(),
     r"weight_drop has 2 entries, but trees has 3"),
    ("rounds_not_whole", "reg", "dict", _unwhole_rounds,
     r"trees has 2 trees, not whole rounds of gbtree_model_param\.num_parallel_tree \(3\) "
     r"times 1 outputs, and there is no iteration_indptr"),
    ("best_iteration_text", "stopped", "dict",
     lambda d: learner(d)["attributes"].__setitem__("best_iteration", "x"),
     r"attributes\.best_iteration is 'x', not an integer"),
    ("best_iteration_beyond_rounds", "stopped", "dict",
     lambda d: learner(d)["attributes"].__setitem__("best_iteration", "99"),
     r"attributes\.best_iteration is 99, but the model has \d+ rounds"),
    ("attributes_not_object", "reg", "dict", lambda d: learner(d).__setitem__("attributes", []),
     r"learner\.attributes must be an object, got list"),
    # a tree's arrays
    ("tree_param_not_object", "reg", "dict", lambda d: tree(d).__setitem__("tree_param", 5),
     r"trees\[0\]\.tree_param must be an object, got int"),
    ("vector_leaf", "reg", "dict",
     lambda d: tree(d)["tree_param"].__setitem__("size_leaf_vector", "2"),
     r"trees\[0\]\.tree_param\.size_leaf_vector is 2, but the model has 1 outputs"),
    ("vector_leaf_ranking", "reg", "dict", _vector_ranking,
     r"num_target > 1 .* \(a vector-leaf model of 2 outputs\)"),
    ("vector_leaf_sizes_differ", "vleaf", "dict",
     lambda d: tree(d, 1)["tree_param"].__setitem__("size_leaf_vector", "1"),
     r"trees\[1\]\.tree_param\.size_leaf_vector is 1, but the model's trees have 2"),
    ("vector_base_weights_short", "vleaf", "dict", lambda d: tree(d)["base_weights"].pop(),
     r"trees\[0\]\.base_weights has \d+ values; a tree of \d+ nodes with vectors of 2"),
    ("vector_leaf_weights_short", "vleaf", "dict", lambda d: tree(d)["leaf_weights"].pop(),
     r"trees\[0\]\.leaf_weights has \d+ values; the tree's \d+ leaves with vectors of 2"),
    ("vector_leaf_index", "vleaf", "dict", _bad_leaf_index,
     r"trees\[0\]\.right_children\[\d+\] is 99: a leaf of a vector-leaf tree holds its "
     r"own index"),
    ("sum_hessian_missing", "reg", "dict", lambda d: tree(d).pop("sum_hessian"),
     r"trees\[0\]\.sum_hessian is missing"),
    ("split_conditions_short", "reg", "dict", lambda d: tree(d)["split_conditions"].pop(),
     r"trees\[0\]\.split_conditions has \d+ entries, but trees\[0\]\.tree_param\.num_nodes "
     r"is \d+"),
    ("num_nodes_wrong", "reg", "dict",
     lambda d: tree(d)["tree_param"].__setitem__("num_nodes", "2000000000"),
     r"trees\[0\]\.left_children has \d+ entries, but trees\[0\]\.tree_param\.num_nodes is "
     r"2000000000"),
    ("left_children_text", "reg", "dict", _node("left_children", 0, "1"),
     r"trees\[0\]\.left_children\[0\] is '1', not an integer"),
    ("split_index_beyond_int64", "reg", "dict", _node("split_indices", 0, 2 ** 64),
     r"trees\[0\]\.split_indices\[0\] is 18446744073709551616, outside the 64-bit range"),
    ("default_left_two", "reg", "dict", _node("default_left", 0, 2),
     r"trees\[0\]\.default_left\[0\] is 2, not 0 or 1"),
    ("default_left_text", "reg", "dict", _node("default_left", 0, "yes"),
     r"trees\[0\]\.default_left\[0\] is 'yes', not 0 or 1"),
    ("sum_hessian_text", "reg", "dict", _node("sum_hessian", 0, "1"),
     r"trees\[0\]\.sum_hessian\[0\] is '1', not a number"),
    ("threshold_nan", "reg", "dict", _node("split_conditions", 0, math.nan),
     r"trees\[0\]\.split_conditions\[0\] is nan; it must be a finite number within float32's "
     r"range"),
    ("threshold_beyond_float32", "reg", "dict", _node("split_conditions", 0, 1e39),
     r"trees\[0\]\.split_conditions\[0\] is 1e\+39; it must be a finite number"),
    ("weight_drop_infinite", "dart", "dict",
     lambda d: learner(d)["gradient_booster"]["weight_drop"].__setitem__(1, math.inf),
     r"weight_drop\[1\] is inf; it must be a finite number"),
    ("weight_drop_negative", "dart", "dict",
     lambda d: learner(d)["gradient_booster"]["weight_drop"].__setitem__(2, -0.5),
     r"weight_drop\[2\] is -0\.5; a tree weight must be >= 0"),
    # a tree's structure
    ("child_past_end", "reg", "dict", _node("left_children", 0, 99),
     r"trees\[0\]\.left_children\[0\] is 99: a child must be a node of the tree's \d+ other "
     r"than the root"),
    ("child_is_root", "reg", "dict",
     lambda d: tree(d)["right_children"].__setitem__(tree(d)["left_children"][0], 0),
     r"trees\[0\]\.right_children\[\d+\] is 0: a child must be a node of the tree's"),
    ("cycle", "reg", "dict", _cycle,
     r"trees\[0\]\.left_children\[\d+\] is \d+, which trees\[0\]\.(left|right)_children\[\d+\] "
     r"already is: a node of a tree is reached once \(this is a cycle or a shared node\)"),
    ("shared_node", "reg", "dict", _shared,
     r"trees\[0\]\.left_children\[\d+\] is \d+, which trees\[0\]\.right_children\[0\] already "
     r"is"),
    ("leaf_with_one_child", "reg", "dict", _one_child,
     r"trees\[0\]\.left_children\[\d+\] is -1 and trees\[0\]\.right_children\[\d+\] is 2: a "
     r"leaf has -1 for both children"),
    ("split_index_past_num_feature", "reg", "dict", _node("split_indices", 0, 3),
     r"trees\[0\]\.split_indices\[0\] is 3, outside \[0, 3\): learner_model_param\.num_feature "
     r"is 3"),
    ("many_thresholds", "reg", "dict", _many_thresholds,
     r"split_conditions: feature \d+ is split at 1024 thresholds; a gbm model holds at most "
     r"1023"),
    # categorical splits
    ("category_arrays_incomplete", "cat", "dict", _cat(lambda t: t.pop("categories_sizes")),
     r"trees\[\d+\]\.categories_sizes is missing \(the tree has categories\)"),
    ("category_value_huge", "cat", "dict",
     _cat(lambda t: t["categories"].__setitem__(0, 2_000_000_000)),
     r"trees\[\d+\]\.categories\[0\] is 2000000000, outside \[0, 65536\)"),
    ("category_segments_count", "cat", "dict", _cat(lambda t: t["categories_segments"].pop()),
     r"trees\[\d+\]\.categories_segments has \d+ entries, but trees\[\d+\]\.categories_nodes "
     r"has \d+"),
    ("category_node_leaf", "cat", "dict",
     _cat(lambda t: t["categories_nodes"].__setitem__(0, _leaf(t))),
     r"trees\[\d+\]\.categories_nodes\[0\] is \d+: not a split node that the walk from the "
     r"root reaches"),
    ("category_slice", "cat", "dict",
     _cat(lambda t: t["categories_sizes"].__setitem__(0, len(t["categories"]) + 5)),
     r"trees\[\d+\]\.categories_segments\[0\] is \d+ and categories_sizes\[0\] is \d+: a "
     r"categorical split's set is a non-empty slice"),
    ("split_type_unmarked", "cat", "dict",
     _cat(lambda t: t["split_type"].__setitem__(t["categories_nodes"][0], 0)),
     r"trees\[\d+\]\.split_type\[\d+\] is 0, but node \d+ is in "
     r"trees\[\d+\]\.categories_nodes"),
    ("numeric_split_on_categorical", "cat", "dict", _numeric_split_on_categorical,
     r"trees\[\d+\]\.split_indices\[\d+\] is 0, a categorical feature "
     r"\(learner\.feature_types\[0\] is 'c'\), at a numeric split"),
    ("category_beyond_labels", "cat", "dict", _code_past_labels,
     r"trees\[\d+\]\.categories holds (\d+) at node \d+, beyond the \1 categories that "
     r"cats\.enc\[\d\] lists"),
    ("enc_count", "cat", "dict", lambda d: model(d)["cats"]["enc"].pop(),
     r"cats\.enc has 2 entries, but learner_model_param\.num_feature is 3"),
    ("enc_too_many", "cat", "dict",
     lambda d: enc(d, 2).__setitem__("values", list(range(65537))),
     r"cats\.enc\[2\]\.values holds 65537 categories; gbm holds at most 65536"),
    ("enc_twice", "cat", "dict", lambda d: enc(d, 2).__setitem__("values", [3, 5, 5]),
     r"cats\.enc\[2\]\.values holds the category 5 twice"),
    ("enc_label_nan", "cat", "dict", lambda d: enc(d, 2)["values"].__setitem__(0, math.nan),
     r"cats\.enc\[2\]\.values\[0\] is nan, not a category label"),
    ("enc_byte", "cat", "dict", lambda d: enc(d, 0)["values"].__setitem__(0, 300),
     r"cats\.enc\[0\]\.values holds 300, not a byte of UTF-8 text"),
    ("enc_offsets", "cat", "dict", lambda d: enc(d, 0)["offsets"].__setitem__(-1, 99),
     r"cats\.enc\[0\]\.offsets must rise from 0 to the 5 bytes of cats\.enc\[0\]\.values"),
    ("enc_offsets_too_many", "cat", "dict", _many_offsets,
     r"cats\.enc\[0\]\.offsets holds 65538 categories; gbm holds at most 65536"),
    ("enc_not_utf8", "cat", "dict", lambda d: enc(d, 0)["values"].__setitem__(0, 255),
     r"cats\.enc\[0\]\.values is not UTF-8 text cut at cats\.enc\[0\]\.offsets"),
    # the JSON text
    ("json_nesting", "reg", "text", _deep_text,
     r"the XGBoost model's JSON nests 4\d levels deep; a model nests at most 32"),
    ("json_syntax", "reg", "text", lambda text: text[: len(text) // 2],
     r"the XGBoost model is not valid JSON \("),
]
IDS = [c[0] for c in CASES]
assert len(set(IDS)) == len(IDS)
