"""One tree as Graphviz DOT text, in XGBoost's form (its ``GraphvizGenerator``: what
``xgboost.to_graphviz`` hands to ``graphviz.Source``).

A split node reads ``name<threshold`` (``name`` alone for an indicator feature of a
feature map), a categorical one ``name:{codes}`` (the category codes of its set, which go
to the right child, as XGBoost prints them); leaves read ``leaf=value``. Edges are
labelled "yes" / "no" (at a categorical split the left child is "no": its set goes
right), with ", missing" on the side missing values take, which is drawn in
``yes_color`` (the other in ``no_color``), as XGBoost does. Numbers are printed as
XGBoost prints its float32 fields (``_number``).
"""
import os

import numpy as np

YES_COLOR, NO_COLOR = "#0000FF", "#FF0000"  # XGBoost's defaults
_FEATURE_TYPES = ("i", "q", "int", "float", "c")


def read_feature_map(path):
    """A feature map file (XGBoost's ``fmap``): one ``<index> <name> <type>`` per line,
    indices 0, 1, 2, ... in order; type ``i`` (indicator), ``q``, ``int``, ``float`` or
    ``c``. Returns (names, types) as lists of str."""
    names, types = [], []
    with open(os.fspath(path), encoding="utf-8") as f:
        fields = f.read().split()
    if len(fields) % 3:
        raise ValueError(f"fmap {path!s}: each feature needs '<index> <name> <type>'; "
                         f"{len(fields)} fields do not divide into such triples")
    for at in range(0, len(fields), 3):
        index, name, kind = fields[at:at + 3]
        if index != str(len(names)):
            raise ValueError(f"fmap {path!s}: feature {len(names)} is listed as {index!r}; "
                             "indices must be 0, 1, 2, ... in order")
        if kind not in _FEATURE_TYPES:
            raise ValueError(f"fmap {path!s}: feature {index} has type {kind!r}; use one of "
                             f"{list(_FEATURE_TYPES)} (i: indicator, q: quantity)")
        names.append(name)
        types.append(kind)
    return names, types


def escape(text):
    """A name as XGBoost writes it into a quoted label (its ``EscapeU8``)."""
    out = []
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\" if text[i + 1:i + 2] == "u" else "\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch in "\b\f\n\r\t":
            out.append({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif ord(ch) <= 0x1F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _number(value):
    """As XGBoost prints its float32 fields: 9 significant digits of the float32 value
    (a gbm model's float64 leaf values and statistics are rounded to float32 first, as
    its XGBoost export stores them)."""
    return f"{float(np.float32(value)):.9g}"


def _attributes(params):
    """``key="value" `` for each entry, in key order (XGBoost keeps them in a std::map)."""
    if params is None:
        return ""
    if not isinstance(params, dict):
        raise TypeError(f"node parameters must be a dict of graphviz attributes, got "
                        f"{type(params).__name__}")
    return "".join(f'{key}="{value}" ' for key, value in sorted(params.items()))


def _edge(node, child, branch, missing, colors):
    color = colors[0] if missing else colors[1]
    label = branch + (", missing" if missing else "")
    return f'    {node} -> {child} [label="{label}" color="{color}"]\n'


def _split(tree, node, names, types, with_stats, params, colors):
    """A split node's line and its two edges."""
    feature = int(tree.split_feature[node])
    name = escape(names[feature]) if feature < len(names) else f"f{feature}"
    left, right = int(tree.left_child[node]), int(tree.right_child[node])
    missing = left if tree.default_left[node] else right
    stats = (f"\ngain={_number(tree.gain[node])}\ncover={_number(tree.cover[node])}"
             if with_stats else "")
    if tree.split_type[node] == 1:
        condition = ":{" + ",".join(str(c) for c in tree.node_categories(node)) + "}"
        branches = ("no", "yes")
    else:
        indicator = feature < len(types) and types[feature] == "i"
        condition = "" if indicator else "<" + _number(tree.threshold[node])
        branches = ("yes", "no")
    return (f'    {node} [ label="{name}{condition}{stats}" {params}]\n'
            + _edge(node, left, branches[0], missing == left, colors)
            + _edge(node, right, branches[1], missing == right, colors))


def _leaf(tree, node, with_stats, params):
    stats = f"\ncover={_number(tree.cover[node])}" if with_stats else ""
    value = tree.value[node]
    text = ("[" + ",".join(_number(v) for v in value) + "]" if getattr(value, "ndim", 0)
            else _number(value))
    return f'    {node} [ label="leaf={text}{stats}" {params}]\n'


def tree_to_dot(tree, feature_names, feature_types=None, rankdir=None, yes_color=None,
                no_color=None, condition_node_params=None, leaf_node_params=None,
                with_stats=False, graph_attrs=None):
    """The DOT text of ``tree`` (a ``gbm.tree.structure.Tree``), XGBoost's to the byte.

    Parameters
    ----------
    tree : Tree
    feature_names : list of str; a feature past its end is named ``f<index>``
    feature_types : list of str or None, a feature map's types (``i``: no threshold shown)
    rankdir : str or None; a graph attribute after XGBoost's ``rankdir=TB``
    yes_color, no_color : str or None; the colours of the missing values' edge and the
        other (XGBoost's names and defaults, #0000FF and #FF0000)
    condition_node_params, leaf_node_params : dict or None; graphviz attributes of the
        split and leaf nodes
    with_stats : bool; gain and cover at splits, cover at leaves
    graph_attrs : dict or None; more graph attributes, ``graph [ key="value" ]``

    Returns
    -------
    str
    """
    colors = (YES_COLOR if yes_color is None else str(yes_color),
              NO_COLOR if no_color is None else str(no_color))
    split_params = _attributes(condition_node_params)
    leaf_params = _attributes(leaf_node_params)
    attrs = dict(graph_attrs or {})
    if rankdir is not None:
        attrs["rankdir"] = rankdir
    header = "".join(f'    graph [ {key}="{value}" ]\n' for key, value in sorted(attrs.items()))
    types = feature_types or []
    parts, stack = [], [0]  # depth first, the left subtree first, as XGBoost's recursion
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            parts.append(node)
            continue
        left = int(tree.left_child[node])
        if left < 0:
            parts.append(_leaf(tree, node, with_stats, leaf_params))
            continue
        parts.append(_split(tree, node, feature_names, types, with_stats, split_params, colors))
        # XGBoost joins a split, its left subtree and its right subtree with blank lines
        stack += [int(tree.right_child[node]), "\n", left, "\n"]
    return "digraph {\n    graph [ rankdir=TB ]\n" + header + "\n" + "".join(parts) + "}"
