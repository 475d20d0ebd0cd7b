"""Readable views of a model's trees: XGBoost-style text and JSON dumps, and a DataFrame."""
import json


def _feature(booster, f):
    return booster.feature_names[f] if booster.feature_names else f"f{f}"


def _categories(booster, tree, node):
    """The categories of a categorical node's set (they go to the right child): the
    labels seen at fit, e.g. the integers of a numeric categorical column."""
    labels = booster.categories[tree.split_feature[node]]
    return [labels[c] for c in tree.node_categories(node)]


def _node_text(booster, tree, node, depth, lines, with_stats):
    indent = "\t" * depth
    if tree.left_child[node] < 0:
        stats = f",cover={tree.cover[node]:.6g}" if with_stats else ""
        lines.append(f"{indent}{node}:leaf={tree.value[node]:.9g}{stats}")
        return
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    missing = left if tree.default_left[node] else right
    stats = f",gain={tree.gain[node]:.6g},cover={tree.cover[node]:.6g}" if with_stats else ""
    name = _feature(booster, tree.split_feature[node])
    if tree.split_type[node] == 1:  # XGBoost's form: the set goes to "yes", the right child
        cats = ",".join(str(c) for c in _categories(booster, tree, node))
        lines.append(f"{indent}{node}:[{name}:{{{cats}}}] yes={right},no={left},"
                     f"missing={missing}{stats}")
    else:
        lines.append(f"{indent}{node}:[{name}<{float(tree.threshold[node]):.9g}] yes={left},"
                     f"no={right},missing={missing}{stats}")
    _node_text(booster, tree, left, depth + 1, lines, with_stats)
    _node_text(booster, tree, right, depth + 1, lines, with_stats)


def _node_json(booster, tree, node, depth):
    if tree.left_child[node] < 0:
        return {"nodeid": node, "leaf": float(tree.value[node]), "cover": float(tree.cover[node])}
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    categorical = tree.split_type[node] == 1
    yes, no = (right, left) if categorical else (left, right)
    condition = _categories(booster, tree, node) if categorical else float(tree.threshold[node])
    return {"nodeid": node, "depth": depth, "split": _feature(booster, tree.split_feature[node]),
            "split_condition": condition, "yes": yes, "no": no,
            "missing": left if tree.default_left[node] else right,
            "gain": float(tree.gain[node]), "cover": float(tree.cover[node]),
            "children": [_node_json(booster, tree, left, depth + 1),
                         _node_json(booster, tree, right, depth + 1)]}


def get_dump(booster, dump_format="text", with_stats=False):
    """One string per tree: XGBoost's text form (``0:[f2<1.5] yes=1,no=2,missing=1``) or
    its JSON form (nested ``children``). A categorical split reads
    ``0:[f0:{1,3}] yes=2,no=1,missing=1``: rows whose category is listed go to ``yes``
    (the right child), as in XGBoost; the JSON form's ``split_condition`` is that list."""
    if dump_format not in ("text", "json"):
        raise ValueError(f"dump_format must be 'text' or 'json', got {dump_format!r}")
    out = []
    for tree in booster.trees:
        if dump_format == "json":
            out.append(json.dumps(_node_json(booster, tree, 0, 0)))
        else:
            lines = []
            _node_text(booster, tree, 0, 0, lines, with_stats)
            out.append("\n".join(lines) + "\n")
    return out


def trees_to_dataframe(booster):
    """A pandas DataFrame with a row per node, XGBoost's columns: Tree, Node, ID, Feature
    ("Leaf" at leaves), Split, Yes, No, Missing, Gain (the leaf value at leaves), Cover,
    Category (a categorical split's list of categories, which go to ``Yes``; NaN
    elsewhere). At a categorical split, Split is NaN."""
    import pandas as pd

    rows = []
    for t, tree in enumerate(booster.trees):
        for node in range(tree.n_nodes):
            leaf = tree.left_child[node] < 0
            left, right = int(tree.left_child[node]), int(tree.right_child[node])
            missing = left if tree.default_left[node] else right
            categorical = tree.split_type[node] == 1
            yes, no = (right, left) if categorical else (left, right)
            rows.append({
                "Tree": t, "Node": node, "ID": f"{t}-{node}",
                "Feature": "Leaf" if leaf else _feature(booster, tree.split_feature[node]),
                "Split": float("nan") if leaf or categorical else float(tree.threshold[node]),
                "Yes": None if leaf else f"{t}-{yes}", "No": None if leaf else f"{t}-{no}",
                "Missing": None if leaf else f"{t}-{missing}",
                "Gain": float(tree.value[node] if leaf else tree.gain[node]),
                "Cover": float(tree.cover[node]),
                "Category": _categories(booster, tree, node) if categorical else float("nan"),
            })
    return pd.DataFrame(rows)
