"""Readable views of a model's trees: XGBoost-style text and JSON dumps, and a DataFrame."""
import json


def _feature(booster, f):
    return booster.feature_names[f] if booster.feature_names else f"f{f}"


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


def _node_line(booster, tree, node, depth, with_stats):
    indent = "\t" * depth
    if tree.left_child[node] < 0:
        stats = f",cover={tree.cover[node]:.6g}" if with_stats else ""
        return f"{indent}{node}:leaf={_leaf_text(tree.value[node])}{stats}"
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    missing = left if tree.default_left[node] else right
    stats = f",gain={tree.gain[node]:.6g},cover={tree.cover[node]:.6g}" if with_stats else ""
    name = _feature(booster, tree.split_feature[node])
    if tree.split_type[node] == 1:  # XGBoost's form: the set goes to "yes", the right child
        cats = ",".join(str(c) for c in _categories(booster, tree, node))
        return (f"{indent}{node}:[{name}:{{{cats}}}] yes={right},no={left},"
                f"missing={missing}{stats}")
    return (f"{indent}{node}:[{name}<{float(tree.threshold[node]):.9g}] yes={left},"
            f"no={right},missing={missing}{stats}")


def _tree_text(booster, tree, with_stats):
    """The text dump's lines, depth first (an explicit stack: any depth works)."""
    lines, stack = [], [(0, 0)]
    while stack:
        node, depth = stack.pop()
        lines.append(_node_line(booster, tree, node, depth, with_stats))
        left = int(tree.left_child[node])
        if left >= 0:
            stack += [(left + 1, depth + 1), (left, depth + 1)]  # left is written first
    return "\n".join(lines) + "\n"


def _node_fields(booster, tree, node, depth):
    """A node of the JSON dump without its children."""
    if tree.left_child[node] < 0:
        value = tree.value[node]
        leaf = value.tolist() if getattr(value, "ndim", 0) else float(value)
        return {"nodeid": node, "leaf": leaf, "cover": float(tree.cover[node])}
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    categorical = tree.split_type[node] == 1
    yes, no = (right, left) if categorical else (left, right)
    condition = _categories(booster, tree, node) if categorical else float(tree.threshold[node])
    return {"nodeid": node, "depth": depth, "split": _feature(booster, tree.split_feature[node]),
            "split_condition": condition, "yes": yes, "no": no,
            "missing": left if tree.default_left[node] else right,
            "gain": float(tree.gain[node]), "cover": float(tree.cover[node])}


def _tree_json(booster, tree):
    """The JSON dump: nested ``children``, the text ``json.dumps`` gives for the nested
    objects, written piece by piece (an explicit stack: any depth works)."""
    parts, stack = [], [(0, 0)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        node, depth = item
        head = json.dumps(_node_fields(booster, tree, node, depth))
        left = int(tree.left_child[node])
        if left < 0:
            parts.append(head)
            continue
        parts.append(head[:-1] + ', "children": [')
        stack += ["]}", (left + 1, depth + 1), ", ", (left, depth + 1)]
    return "".join(parts)


def get_dump(booster, dump_format="text", with_stats=False):
    """One string per tree: XGBoost's text form (``0:[f2<1.5] yes=1,no=2,missing=1``) or
    its JSON form (nested ``children``). A categorical split reads
    ``0:[f0:{1,3}] yes=2,no=1,missing=1``: rows whose category is listed go to ``yes``
    (the right child), as in XGBoost; the JSON form's ``split_condition`` is that list.
    ``"dot"``: each tree's Graphviz text, as ``gbm.to_graphviz`` writes it."""
    if dump_format not in ("text", "json", "dot"):
        raise ValueError(f"dump_format must be 'text', 'json' or 'dot', got {dump_format!r}")
    if dump_format == "dot":  # Graphviz, as gbm.to_graphviz (XGBoost's "dot" dump)
        from .dot import tree_to_dot

        names = booster.feature_names or [f"f{i}" for i in range(booster.n_features)]
        return [tree_to_dot(tree, names, with_stats=with_stats) for tree in booster.trees]
    if dump_format == "json":
        return [_tree_json(booster, tree) for tree in booster.trees]
    return [_tree_text(booster, tree, with_stats) for tree in booster.trees]


def _node_row(booster, t, tree, node):
    """A node's row of ``trees_to_dataframe`` (a leaf's Gain is its value: the caller
    sets it, one output at a time for a vector leaf)."""
    leaf = tree.left_child[node] < 0
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    missing = left if tree.default_left[node] else right
    categorical = tree.split_type[node] == 1
    yes, no = (right, left) if categorical else (left, right)
    return {
        "Tree": t, "Node": node, "ID": f"{t}-{node}",
        "Feature": "Leaf" if leaf else _feature(booster, tree.split_feature[node]),
        "Split": float("nan") if leaf or categorical else float(tree.threshold[node]),
        "Yes": None if leaf else f"{t}-{yes}", "No": None if leaf else f"{t}-{no}",
        "Missing": None if leaf else f"{t}-{missing}",
        "Gain": float("nan") if leaf else float(tree.gain[node]),
        "Cover": float(tree.cover[node]),
        "Category": _categories(booster, tree, node) if categorical else float("nan"),
    }


def _tree_rows(booster, t, tree, vector):
    """The rows of one tree, node by node; a vector leaf gives one row per output
    (``Target`` its index, ``Gain`` that output's value), a split one row (``Target``
    missing: the split serves every output)."""
    rows = []
    for node in range(tree.n_nodes):
        row = _node_row(booster, t, tree, node)
        if tree.left_child[node] >= 0:
            rows.append(dict(row, Target=None) if vector else row)
        elif vector:
            rows += [dict(row, Target=j, Gain=float(v)) for j, v in enumerate(tree.value[node])]
        else:
            rows.append(dict(row, Gain=float(tree.value[node])))
    return rows


def trees_to_dataframe(booster):
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

    vector = any(tree.n_outputs > 1 for tree in booster.trees)
    rows = [row for t, tree in enumerate(booster.trees)
            for row in _tree_rows(booster, t, tree, vector)]
    frame = pd.DataFrame(rows)
    if not vector:
        return frame
    columns = ["Tree", "Target"] + [c for c in frame.columns if c not in ("Tree", "Target")]
    return frame[columns].astype({"Target": "Int64"})
