"""Readable views of a model's trees: XGBoost-style text and JSON dumps, and a DataFrame.

Features are named by a feature map file (``fmap``: XGBoost's ``<index> <name> <type>``
lines, ``gbm.model.dot.read_feature_map``), else by the model's ``feature_names`` and
``feature_types``, else ``f0``, ``f1``, ...; names are escaped as XGBoost escapes them
(``gbm.model.dot.escape``: quotes, backslashes, control characters). A feature typed ``i``
(indicator) prints its split without a threshold (``[name] yes=...,no=...``, "yes" the
branch its present values take), one typed ``int`` its threshold rounded up to an integer,
as XGBoost's dumps do.
"""
import errno
import json
import math
import os

import numpy as np

from ..data.uri import MissingFileError
from .dot import escape, read_feature_map


def feature_info(booster, fmap=""):
    """``(names, types)`` for the dumps and importances: from the feature map file
    ``fmap`` (a path; "" for none), else the model's (names ``f{i}`` when it has none;
    types None). ``ValueError`` when they do not list one entry per feature; a missing
    ``fmap`` raises ``FileNotFoundError`` (also a ``ValueError``, as XGBoost's)."""
    n = booster.n_features
    if fmap is not None and os.fspath(fmap) != "":
        path = os.path.expanduser(os.fspath(fmap))
        try:
            names, types = read_feature_map(path)
        except FileNotFoundError:
            raise MissingFileError(errno.ENOENT, "no feature map file (fmap)", path) from None
        if len(names) != n:
            raise ValueError(f"fmap {path!r} lists {len(names)} features but the model has {n}")
        return names, types
    names, types = booster.feature_names, booster.feature_types
    for what, values in (("feature_names", names), ("feature_types", types)):
        if values is not None and len(values) != n:
            raise ValueError(f"the booster's {what} has {len(values)} entries but the model "
                             f"has {n} features")
    return (names or [f"f{i}" for i in range(n)]), types


def _kind(types, f):
    return None if types is None else types[f]


def _integer_threshold(threshold):
    """An ``int`` feature's threshold as XGBoost prints it: rounded up to an integer."""
    return int(math.ceil(float(np.float32(threshold))))


def _categories(booster, tree, node):
    """The categories of a categorical node's set (they go to the right child): the
    labels seen at fit, e.g. the integers of a numeric categorical column."""
    labels = booster.categories[tree.split_feature[node]]
    return [labels[c] for c in tree.node_categories(node)]


def _leaf_text(value):
    """A leaf's value as text: one number, or a vector leaf's ``[v0,v1,...]``."""
    if getattr(value, "ndim", 0):
        return "[" + ", ".join(f"{float(v):.9g}" for v in value) + "]"  # XGBoost's form
    return f"{value:.9g}"


def _node_line(booster, tree, node, depth, with_stats, info):
    indent = "\t" * depth
    if tree.left_child[node] < 0:
        stats = f",cover={tree.cover[node]:.6g}" if with_stats else ""
        return f"{indent}{node}:leaf={_leaf_text(tree.value[node])}{stats}"
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    missing = left if tree.default_left[node] else right
    stats = f",gain={tree.gain[node]:.6g},cover={tree.cover[node]:.6g}" if with_stats else ""
    f = int(tree.split_feature[node])
    name, kind = escape(info[0][f]), _kind(info[1], f)
    if tree.split_type[node] == 1:  # XGBoost's form: the set goes to "yes", the right child
        cats = ",".join(str(c) for c in _categories(booster, tree, node))
        return (f"{indent}{node}:[{name}:{{{cats}}}] yes={right},no={left},"
                f"missing={missing}{stats}")
    if kind == "i":  # an indicator: "yes" is the branch of its present values
        return f"{indent}{node}:[{name}] yes={left + right - missing},no={missing}{stats}"
    threshold = (_integer_threshold(tree.threshold[node]) if kind == "int"
                 else f"{float(tree.threshold[node]):.9g}")
    return (f"{indent}{node}:[{name}<{threshold}] yes={left},no={right},"
            f"missing={missing}{stats}")


def _tree_text(booster, tree, with_stats, info):
    """The text dump's lines, depth first (an explicit stack: any depth works)."""
    lines, stack = [], [(0, 0)]
    while stack:
        node, depth = stack.pop()
        lines.append(_node_line(booster, tree, node, depth, with_stats, info))
        left = int(tree.left_child[node])
        if left >= 0:
            stack += [(left + 1, depth + 1), (left, depth + 1)]  # left is written first
    return "\n".join(lines) + "\n"


def _node_fields(booster, tree, node, depth, with_stats, info):
    """A node of the JSON dump without its children; gain and cover with ``with_stats``."""
    if tree.left_child[node] < 0:
        value = tree.value[node]
        leaf = value.tolist() if getattr(value, "ndim", 0) else float(value)
        stats = {"cover": float(tree.cover[node])} if with_stats else {}
        return {"nodeid": node, "leaf": leaf, **stats}
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    missing = left if tree.default_left[node] else right
    f = int(tree.split_feature[node])
    kind, categorical = _kind(info[1], f), tree.split_type[node] == 1
    out = {"nodeid": node, "depth": depth, "split": info[0][f]}
    if kind == "i" and not categorical:  # an indicator, as the text form
        out.update(yes=left + right - missing, no=missing)
    else:
        yes, no = (right, left) if categorical else (left, right)
        out["split_condition"] = (_categories(booster, tree, node) if categorical
                                  else _integer_threshold(tree.threshold[node]) if kind == "int"
                                  else float(tree.threshold[node]))
        out.update(yes=yes, no=no, missing=missing)
    if with_stats:
        out.update(gain=float(tree.gain[node]), cover=float(tree.cover[node]))
    return out


def _tree_json(booster, tree, with_stats, info):
    """The JSON dump: nested ``children``, the text ``json.dumps`` gives for the nested
    objects, written piece by piece (an explicit stack: any depth works)."""
    parts, stack = [], [(0, 0)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        node, depth = item
        head = json.dumps(_node_fields(booster, tree, node, depth, with_stats, info),
                          ensure_ascii=False)
        left = int(tree.left_child[node])
        if left < 0:
            parts.append(head)
            continue
        parts.append(head[:-1] + ', "children": [')
        stack += ["]}", (left + 1, depth + 1), ", ", (left, depth + 1)]
    return "".join(parts)


def get_dump(booster, fmap="", with_stats=False, dump_format="text"):
    """One string per tree: XGBoost's text form (``0:[f2<1.5] yes=1,no=2,missing=1``) or
    its JSON form (nested ``children``; ``gain`` and ``cover`` with ``with_stats``). A
    categorical split reads ``0:[f0:{1,3}] yes=2,no=1,missing=1``: rows whose category is
    listed go to ``yes`` (the right child), as in XGBoost; the JSON form's
    ``split_condition`` is that list. ``"dot"``: each tree's Graphviz text, as
    ``gbm.to_graphviz`` writes it. ``fmap``: a feature map file (see the module
    docstring)."""
    if dump_format not in ("text", "json", "dot"):
        raise ValueError(f"dump_format must be 'text', 'json' or 'dot', got {dump_format!r}")
    if not isinstance(with_stats, (bool, np.bool_)):
        raise TypeError(f"with_stats must be True or False, got {with_stats!r}")
    info = feature_info(booster, check_fmap(fmap, ("text", "json", "dot"), "dump_format",
                                            "(fmap, with_stats, dump_format)"))
    if dump_format == "dot":  # Graphviz, as gbm.to_graphviz (XGBoost's "dot" dump)
        from .dot import tree_to_dot

        return [tree_to_dot(tree, info[0], info[1], with_stats=bool(with_stats))
                for tree in booster.trees]
    if dump_format == "json":
        return [_tree_json(booster, tree, with_stats, info) for tree in booster.trees]
    return [_tree_text(booster, tree, with_stats, info) for tree in booster.trees]


def check_fmap(fmap, options, option, order):
    """``fmap`` as given, after telling one of ``options`` (a value of the argument
    ``option``) given first, as gbm's former argument ``order`` had it, from a feature map
    path: a ``ValueError`` says how to write the call now."""
    if not isinstance(fmap, (str, os.PathLike)):
        raise TypeError(f"fmap must be a path to a feature map file or '', got "
                        f"{type(fmap).__name__}")
    if fmap in options and not os.path.exists(fmap):
        raise ValueError(f"fmap is {fmap!r}, a value of {option}, not a feature map file: the "
                         f"arguments are {order}, as XGBoost's; pass {option}={fmap!r}")
    return fmap


def dump_model(booster, fout, fmap="", with_stats=False, dump_format="text"):
    """Write ``get_dump``'s trees to ``fout`` (a path, or an open text file): the text form
    with a ``booster[i]:`` line before each tree, the JSON form as one JSON array."""
    dumps = get_dump(booster, fmap, with_stats, dump_format)
    if dump_format == "json":
        text = "[\n" + ",\n".join(dumps) + "\n]"
    else:
        text = "".join(f"booster[{i}]:\n{d}" for i, d in enumerate(dumps))
    if isinstance(fout, (str, os.PathLike)):
        with open(os.path.expanduser(os.fspath(fout)), "w", encoding="utf-8") as fh:
            fh.write(text)
    elif hasattr(fout, "write"):
        fout.write(text)
    else:
        raise TypeError(f"fout must be a path or a file open for writing, got "
                        f"{type(fout).__name__}")


def _node_row(booster, t, tree, node, names):
    """A node's row of ``trees_to_dataframe`` (a leaf's Gain is its value: the caller
    sets it, one output at a time for a vector leaf)."""
    leaf = tree.left_child[node] < 0
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    missing = left if tree.default_left[node] else right
    categorical = tree.split_type[node] == 1
    yes, no = (right, left) if categorical else (left, right)
    return {
        "Tree": t, "Node": node, "ID": f"{t}-{node}",
        "Feature": "Leaf" if leaf else names[tree.split_feature[node]],
        "Split": float("nan") if leaf or categorical else float(tree.threshold[node]),
        "Yes": None if leaf else f"{t}-{yes}", "No": None if leaf else f"{t}-{no}",
        "Missing": None if leaf else f"{t}-{missing}",
        "Gain": float("nan") if leaf else float(tree.gain[node]),
        "Cover": float(tree.cover[node]),
        "Category": _categories(booster, tree, node) if categorical else float("nan"),
    }


def _tree_rows(booster, t, tree, vector, names):
    """The rows of one tree, node by node; a vector leaf gives one row per output
    (``Target`` its index, ``Gain`` that output's value), a split one row (``Target``
    missing: the split serves every output)."""
    rows = []
    for node in range(tree.n_nodes):
        row = _node_row(booster, t, tree, node, names)
        if tree.left_child[node] >= 0:
            rows.append(dict(row, Target=None) if vector else row)
        elif vector:
            rows += [dict(row, Target=j, Gain=float(v)) for j, v in enumerate(tree.value[node])]
        else:
            rows.append(dict(row, Gain=float(tree.value[node])))
    return rows


def trees_to_dataframe(booster, fmap=""):
    """A pandas DataFrame with a row per node, XGBoost's columns: Tree, Node, ID, Feature
    ("Leaf" at leaves), Split, Yes, No, Missing, Gain (the leaf value at leaves), Cover,
    Category (a categorical split's list of categories, which go to ``Yes``; NaN
    elsewhere). At a categorical split, Split is NaN.

    A vector-leaf model (``multi_strategy="multi_output_tree"``) gets XGBoost 3.4's
    layout: a ``Target`` column after ``Tree`` (nullable ``Int64``), one row per output
    at each leaf (``Target`` the output's index, ``Gain`` its value, the leaf's other
    fields repeated) and one row per split with ``Target`` missing (a split serves every
    output); rows ordered by Tree, Node, Target."""
    import pandas as pd

    names = feature_info(booster, fmap)[0]
    vector = any(tree.n_outputs > 1 for tree in booster.trees)
    rows = [row for t, tree in enumerate(booster.trees)
            for row in _tree_rows(booster, t, tree, vector, names)]
    frame = pd.DataFrame(rows)
    if not vector:
        return frame
    columns = ["Tree", "Target"] + [c for c in frame.columns if c not in ("Tree", "Target")]
    return frame[columns].astype({"Target": "Int64"})
