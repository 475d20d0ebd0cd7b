"""Readable views of a model's trees: XGBoost-style text and JSON dumps, and a DataFrame."""
import json


def _feature(booster, f):
    return booster.feature_names[f] if booster.feature_names else f"f{f}"


def _node_text(booster, tree, node, depth, lines, with_stats):
    indent = "\t" * depth
    if tree.left_child[node] < 0:
        stats = f",cover={tree.cover[node]:.6g}" if with_stats else ""
        lines.append(f"{indent}{node}:leaf={tree.value[node]:.9g}{stats}")
        return
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    missing = left if tree.default_left[node] else right
    stats = f",gain={tree.gain[node]:.6g},cover={tree.cover[node]:.6g}" if with_stats else ""
    lines.append(f"{indent}{node}:[{_feature(booster, tree.split_feature[node])}"
                 f"<{float(tree.threshold[node]):.9g}] yes={left},no={right},missing={missing}{stats}")
    _node_text(booster, tree, left, depth + 1, lines, with_stats)
    _node_text(booster, tree, right, depth + 1, lines, with_stats)


def _node_json(booster, tree, node, depth):
    if tree.left_child[node] < 0:
        return {"nodeid": node, "leaf": float(tree.value[node]), "cover": float(tree.cover[node])}
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    return {"nodeid": node, "depth": depth, "split": _feature(booster, tree.split_feature[node]),
            "split_condition": float(tree.threshold[node]), "yes": left, "no": right,
            "missing": left if tree.default_left[node] else right,
            "gain": float(tree.gain[node]), "cover": float(tree.cover[node]),
            "children": [_node_json(booster, tree, left, depth + 1),
                         _node_json(booster, tree, right, depth + 1)]}


def get_dump(booster, dump_format="text", with_stats=False):
    """One string per tree: XGBoost's text form (``0:[f2<1.5] yes=1,no=2,missing=1``) or
    its JSON form (nested ``children``)."""
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
    ("Leaf" at leaves), Split, Yes, No, Missing, Gain (the leaf value at leaves), Cover."""
    import pandas as pd

    rows = []
    for t, tree in enumerate(booster.trees):
        for node in range(tree.n_nodes):
            leaf = tree.left_child[node] < 0
            left, right = int(tree.left_child[node]), int(tree.right_child[node])
            missing = left if tree.default_left[node] else right
            rows.append({
                "Tree": t, "Node": node, "ID": f"{t}-{node}",
                "Feature": "Leaf" if leaf else _feature(booster, tree.split_feature[node]),
                "Split": float("nan") if leaf else float(tree.threshold[node]),
                "Yes": None if leaf else f"{t}-{left}", "No": None if leaf else f"{t}-{right}",
                "Missing": None if leaf else f"{t}-{missing}",
                "Gain": float(tree.value[node] if leaf else tree.gain[node]),
                "Cover": float(tree.cover[node]),
            })
    return pd.DataFrame(rows)
