"""XGBoost's JSON model format read into a gbm ``Booster``: ``from_xgboost``.

The file is parsed (at most ``MAX_NESTING`` levels deep), every field it is read by is
checked by ``gbm.io.xgboost_checks`` before anything is built from it, and the model
built here then passes every check of a gbm model file (``gbm.io.gbm_json.loads``). See
``gbm.io.xgboost_json`` for how the two formats map onto each other:

* nodes are renumbered breadth first (children after their parent, right = left + 1);
* each feature's bin edges are its split thresholds over all trees (float32, sorted);
* a categorical feature gets the labels of the ``cats`` block, else gbm's own lists
  (``gbm_categories``, when the model is gbm's export and its sets hold only those
  values), else XGBoost's codes ``0 .. max`` as numeric labels;
* the tree weights of a model trained with dropout (``weight_drop``: of XGBoost's
  ``dart`` booster up to 3.2, of its ``gbtree`` booster from 3.3) stay tree weights: the
  model is a gbm dart model (``booster="dart"``), whose training can be continued.
"""
import json
import math
import os

import numpy as np

from ..kernels.layout import cat_words
from ..tree.structure import Tree
from . import strict_json, ubjson
from .model_bytes import read_bytes, sniff
from .validation import MAX_CUTS
from .xgboost_checks import check_model
from .xgboost_json import by_value

MAX_NESTING = 32  # XGBoost writes 7 levels (learner -> ... -> tree -> tree_param)


def from_xgboost(cls, source):
    """A gbm ``Booster`` (class ``cls``) from an XGBoost model: an ``xgboost.Booster`` or
    estimator, a path to its model file (``.json`` or ``.ubj``: read by their first bytes,
    without xgboost; XGBoost's old binary format only through an installed xgboost that
    reads it), the bytes of its ``save_raw``, its JSON text, or the parsed dict. Raises ``ValueError`` for what gbm cannot represent and
    for a malformed model, naming the field."""
    from . import gbm_json

    model = check_model(_read_source(source))
    cuts = _imported_cuts(model.trees, model.n_features)
    categories, code_of = _imported_categories(model)
    booster = cls(model.params, n_features=model.n_features, feature_names=model.feature_names,
                  base_margin=model.base_margin, cuts=cuts, categories=categories)
    for i, (tree, group) in enumerate(zip(model.trees, model.groups)):
        weight = 1.0 if model.weights is None else model.weights[i]
        booster.add_tree(_tree_from_xgboost(tree, cuts, code_of), group, weight)
    booster.iteration_indptr = model.iteration_indptr
    booster.best_iteration = model.best_iteration
    booster.best_score = model.best_score if model.best_iteration is not None else None
    # every check a gbm model file gets (a file from anyone must not crash the kernels)
    return gbm_json.loads(cls, gbm_json.dumps(booster), source="the imported XGBoost model")


def _json_int(text):
    """A JSON integer; one too long for any field reads as an infinity, which every
    field refuses by name (instead of Python's limit on integer digits)."""
    if len(text) <= 24:
        return int(text)
    return -math.inf if text.startswith("-") else math.inf


def _parse(text):
    depth = strict_json.nesting_depth(text)
    if depth > MAX_NESTING:
        raise ValueError(f"the XGBoost model's JSON nests {depth} levels deep; a model nests "
                         f"at most {MAX_NESTING}")
    try:
        return json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as err:
        raise ValueError(f"the XGBoost model is not valid JSON ({err})") from None


def _read_source(source):
    """The model dict from an ``xgboost.Booster`` or estimator, a dict, JSON text, the
    bytes of ``save_raw`` or a path to a model file (JSON or UBJSON by their first bytes,
    read without xgboost)."""
    if isinstance(source, dict):
        return source
    if hasattr(source, "save_raw"):  # an xgboost.Booster
        return _parse(bytes(source.save_raw(raw_format="json")).decode("utf-8"))
    if hasattr(source, "get_booster"):  # an xgboost estimator
        return _read_source(source.get_booster())
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _parse_bytes(bytes(source), "the XGBoost model's bytes")
    if isinstance(source, str) and source.lstrip().startswith("{"):
        return _parse(source)
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"an XGBoost model is an xgboost.Booster or estimator, a path, JSON "
                        f"text, bytes or a dict; got {type(source).__name__}")
    path = os.path.expanduser(os.fspath(source))
    return _parse_bytes(read_bytes(path), path)


def _parse_bytes(data, where):
    """A model file's content: UBJSON, JSON text, or XGBoost's old binary format (read
    only through an installed xgboost that still reads it)."""
    if sniff(data) == "ubj":
        try:
            return ubjson.loads(data, MAX_NESTING)
        except ubjson.UBJSONError as err:
            raise ValueError(f"{where} is not a valid XGBoost UBJSON model: {err}") from None
    if data.lstrip()[:1] == b"{":
        try:
            return _parse(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise ValueError(f"{where} is not an XGBoost JSON model: it is not UTF-8 "
                             "text") from None
    return read_old_binary(data, where)


def read_old_binary(data, where):
    """The model dict of ``data`` in XGBoost's old binary format (neither JSON nor
    UBJSON), through the installed xgboost: gbm does not read that format, and XGBoost
    3.1 dropped it. ``where`` names the file in the messages."""
    advice = ("load it with an xgboost that reads it (before 3.1) and save it there as "
              ".json or .ubj, which gbm reads")
    try:
        import xgboost
    except ImportError:
        raise ValueError(f"{where} is neither JSON nor UBJSON: XGBoost's old binary model "
                         f"format is read only through an installed xgboost; {advice}") from None
    try:
        booster = xgboost.Booster(model_file=bytearray(data))
    except Exception as err:  # xgboost's XGBoostError, whatever its version names it
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"{where} is neither JSON nor UBJSON, and the installed xgboost "
                         f"{getattr(xgboost, '__version__', '')} cannot read it as XGBoost's "
                         f"old binary model format ({first}); {advice}") from None
    return _read_source(booster)


def _imported_cuts(trees, n_features):
    """Each feature's bin edges: the thresholds of its numeric splits over all trees,
    sorted (float32)."""
    thresholds = {}  # only the features that are split on
    for tree in trees:
        feature, condition = tree.arrays["split_indices"], tree.arrays["split_conditions"]
        for node in tree.inner():
            if node not in tree.sets:
                thresholds.setdefault(int(feature[node]), set()).add(np.float32(condition[node]))
    empty = np.zeros(0, dtype=np.float32)
    cuts = [empty] * n_features
    for f, values in thresholds.items():
        if len(values) > MAX_CUTS:  # gbm's bin edges: max_bin <= MAX_CUTS + 1
            raise ValueError(f"split_conditions: feature {f} is split at {len(values)} "
                             f"thresholds; a gbm model holds at most {MAX_CUTS} per feature "
                             f"(max_bin {MAX_CUTS + 1})")
        cuts[f] = np.array(sorted(values), dtype=np.float32)
    return cuts


def _imported_categories(model):
    """``(categories, code_of)``: gbm's category labels per feature (None for a numeric
    one; None for all when none is categorical) and, for the features gbm exported by
    value, a dict from XGBoost's codes (the values) to gbm's codes (else None)."""
    if not model.categorical:
        return None, [None] * model.n_features
    used = {}  # feature -> the category values its splits use
    for tree in model.trees:
        for node, values in tree.sets.items():
            used.setdefault(int(tree.arrays["split_indices"][node]), set()).update(
                values.tolist())
    categories = [None] * model.n_features
    code_of = [None] * model.n_features  # features written by value: XGBoost's code -> gbm's
    for f in sorted(model.categorical):
        values = used.get(f, set())
        labels = model.labels.get(f)
        if labels is None:  # the values XGBoost matched, as numeric labels (< MAX_CATEGORIES)
            labels = list(range(max(values) + 1 if values else 1))
        own = model.saved[f] if model.saved is not None else None
        if own is not None and labels == list(range(len(labels))) and values <= set(own):
            labels = list(own)  # gbm's export by value: its own labels back
            code_of[f] = {v: i for i, v in enumerate(own)}
        categories[f] = labels
    return categories, code_of


def _node_values(tree, order):
    """gbm's node arrays other than the categorical ones, in gbm's node order."""
    a = tree.arrays
    old = np.asarray(order, dtype=np.int64)
    new_of = np.full(a["left_children"].size, -1, dtype=np.int64)
    new_of[old] = np.arange(old.size)
    left = a["left_children"][old]
    leaf = left == -1
    weight = a["base_weights"][old] if "base_weights" in a else np.zeros(old.size)
    condition = a["split_conditions"][old]
    if tree.values is not None:  # vector leaves: every node's vector (the leaves' values)
        value = tree.values[old].astype(np.float64)
    else:
        value = np.where(leaf, condition, weight).astype(np.float64)
    return {
        "split_feature": np.where(leaf, -1, a["split_indices"][old]).astype(np.int32),
        "left_child": np.where(leaf, -1, new_of[np.where(leaf, 0, left)]).astype(np.int32),
        "right_child": np.where(leaf, -1, new_of[np.where(leaf, 0, a["right_children"][old])]
                                ).astype(np.int32),
        "default_left": np.where(leaf, 0, a["default_left"][old]).astype(np.uint8),
        "value": value,
        "gain": np.where(leaf, 0.0, a["loss_changes"][old]).astype(np.float64),
        "cover": a["sum_hessian"][old].astype(np.float64),
        "threshold": np.where(leaf, 0.0, condition).astype(np.float32),
    }


def _tree_from_xgboost(tree, cuts, code_of):
    """One checked XGBoost tree as a gbm ``Tree``; ``code_of[f]``: for a feature written
    by value, a dict from XGBoost's codes (the values) to gbm's codes."""
    order = tree.order
    arrays = _node_values(tree, order)
    n = len(order)
    sets = {}  # categorical node (XGBoost id) -> its gbm codes
    for node, values in tree.sets.items():
        mapping = code_of[int(tree.arrays["split_indices"][node])]
        sets[node] = [mapping[v] for v in values.tolist()] if mapping else values.tolist()
    # one bitset width per tree: the words its highest code needs (at least 256 bits)
    width = cat_words(max((max(c) for c in sets.values()), default=0) + 1)
    arrays["split_bin"] = np.zeros(n, dtype=np.int32)
    arrays["split_type"] = np.zeros(n, dtype=np.uint8)
    bits = []
    for new, old in enumerate(order):
        feature = int(arrays["split_feature"][new])
        if feature < 0:
            continue
        if old in sets:
            row = np.zeros(width, dtype=np.uint32)
            for code in sets[old]:
                row[code >> 5] |= np.uint32(1 << (code & 31))
            arrays["split_type"][new] = 1
            arrays["threshold"][new] = 0.0
            bits.append(row)
        else:
            arrays["split_bin"][new] = int(np.searchsorted(cuts[feature], arrays["threshold"][new]))
    cat_bits = np.array(bits, dtype=np.uint32).reshape(-1, width)
    return Tree(cat_bits=cat_bits, **arrays)
