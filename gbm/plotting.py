"""Plots with matplotlib: feature importances, one tree, learning curves; and one tree
as a Graphviz graph (``to_graphviz``, XGBoost's).

Each matplotlib function draws on ``ax`` (a new figure's axes when None) and returns the
Axes. matplotlib is imported when a function is called (``pip install matplotlib``, in the
dev extra), and so is the ``graphviz`` package by ``to_graphviz`` (``pip install
graphviz``, the ``graphviz`` extra), so ``import gbm`` stays light.
"""
import warnings

import numpy as np


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ImportError("gbm's plots need matplotlib: pip install matplotlib") from err
    return plt


def _axes(ax, figsize=None):
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=figsize)
    return ax


def _booster(model):
    """A gbm Booster from a Booster or a fitted estimator."""
    if hasattr(model, "get_booster"):
        return model.get_booster()
    if hasattr(model, "get_score") and hasattr(model, "trees"):
        return model
    raise TypeError(f"expected a gbm Booster or a fitted gbm estimator, got {type(model).__name__}")


def plot_importance(model, ax=None, importance_type="weight", max_num_features=None,
                    title="Feature importance", xlabel="Importance score", ylabel="Features",
                    show_values=True, height=0.6, color=None, grid=True):
    """Horizontal bars of the features' importances, largest on top.

    Parameters
    ----------
    model : Booster, fitted estimator, or dict (feature name -> importance, as
        ``Booster.get_score`` returns)
    importance_type : "weight" (default, as XGBoost's ``plot_importance``), "gain",
        "cover", "total_gain" or "total_cover" (see ``Booster.get_score``)
    max_num_features : int, optional; only the largest ones
    title, xlabel, ylabel : str; the axes' texts (XGBoost's defaults; ``xlabel`` None:
        the importance type's name)
    show_values : bool; write each bar's value at its end

    Returns
    -------
    matplotlib.axes.Axes
    """
    scores = model if isinstance(model, dict) else _booster(model).get_score(importance_type=importance_type)
    if not scores:
        raise ValueError("the model has no split, so no feature importance to plot")
    items = sorted(scores.items(), key=lambda kv: kv[1])
    if max_num_features is not None:
        if int(max_num_features) < 1:
            raise ValueError(f"max_num_features must be >= 1, got {max_num_features}")
        items = items[-int(max_num_features):]
    names, values = [k for k, _ in items], np.array([v for _, v in items], dtype=float)
    ax = _axes(ax, figsize=(6, max(2.5, 0.35 * len(items) + 1)))
    ylocs = np.arange(len(items))
    ax.barh(ylocs, values, height=height, align="center", color=color)
    if show_values:
        for y, v in zip(ylocs, values):
            text = f"{v:.0f}" if importance_type == "weight" else f"{v:.3g}"
            ax.text(v, y, " " + text, va="center")
    ax.set_yticks(ylocs)
    ax.set_yticklabels(names)
    ax.set_xlim(0, values.max() * 1.15 if values.max() > 0 else 1)
    ax.set_ylim(-1, len(items))
    ax.set_xlabel(xlabel if xlabel is not None else importance_type.replace("_", " "))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(grid, axis="x", alpha=0.3)
    return ax


_SHOWN_OUTPUTS = 4  # a vector leaf's label: its first values, then how many in all


def _leaf_label(value, precision):
    """A leaf's value, or (a vector leaf, multi_output_tree) its first values and count."""
    if np.ndim(value) == 0:
        return f"leaf\n{value:.{precision}g}"
    shown = ", ".join(f"{v:.{precision}g}" for v in value[:_SHOWN_OUTPUTS])
    more = f", ... ({len(value)} values)" if len(value) > _SHOWN_OUTPUTS else ""
    return f"leaf\n[{shown}{more}]"


def _node_label(booster, tree, node, names, precision):
    if tree.left_child[node] < 0:
        return _leaf_label(tree.value[node], precision)
    feature = int(tree.split_feature[node])
    name = names[feature]
    if tree.split_type[node] == 1:  # categories in the set go right
        codes = tree.node_categories(node)
        labels = booster.categories[feature] if booster.categories else None
        shown = [str(labels[c]) if labels else str(c) for c in codes]
        text = ", ".join(shown[:4]) + (", ..." if len(shown) > 4 else "")
        return f"{name}\nnot in {{{text}}}"
    return f"{name} < {float(tree.threshold[node]):.{precision}g}"


def _layout(tree):
    """(x, depth) of every node: leaves at consecutive x in left-to-right order, an inner
    node centred over its children."""
    x, depth = np.zeros(tree.n_nodes), np.zeros(tree.n_nodes, dtype=int)
    next_leaf = [0]

    def place(node, d):
        depth[node] = d
        left = int(tree.left_child[node])
        if left < 0:
            x[node] = next_leaf[0]
            next_leaf[0] += 1
            return
        right = int(tree.right_child[node])
        place(left, d + 1)
        place(right, d + 1)
        x[node] = (x[left] + x[right]) / 2

    place(0, 0)  # recursion depth = tree depth: small for the trees worth drawing
    return x, depth


def _tree_index(tree_index, tree_idx, num_trees):
    """``plot_tree``'s tree, by whichever of its three names was given (not two)."""
    given = [(n, v) for n, v in (("tree_idx", tree_idx), ("num_trees", num_trees))
             if v is not None]
    if len(given) > 1 or (given and tree_index != 0):
        names = ["tree_index"] * (tree_index != 0) + [n for n, _ in given]
        raise TypeError(f"{' and '.join(names)} name the same tree; give one")
    return given[0][1] if given else tree_index


def plot_tree(model, tree_index=0, ax=None, precision=4, fontsize=8, feature_names=None, *,
              tree_idx=None, num_trees=None):
    """Draw one tree: a box per node with its split (``feature < threshold``, or for a
    categorical split the categories that go right) or leaf value; edges say which way
    the test's yes / no and missing values go.

    Parameters
    ----------
    model : Booster or fitted estimator
    tree_index : int; the tree's index in ``booster.trees`` (a round holds
        ``num_parallel_tree`` trees per output group)
    tree_idx, num_trees : int, optional; XGBoost's names of ``tree_index`` (3.0's and
        the older one): at most one of the three is given
    precision : int; significant digits of thresholds and leaf values

    Returns
    -------
    matplotlib.axes.Axes
    """
    tree_index = _tree_index(tree_index, tree_idx, num_trees)
    booster = _booster(model)
    n_trees = len(booster.trees)
    if not isinstance(tree_index, (int, np.integer)) or not -n_trees <= tree_index < n_trees:
        raise ValueError(f"tree_index must be an int in [0, {n_trees}), got {tree_index!r}")
    tree = booster.trees[tree_index]
    names = feature_names or booster.feature_names or [f"f{i}" for i in range(booster.n_features)]
    x, depth = _layout(tree)
    width, levels = max(x.max() + 1, 1), depth.max() + 1
    ax = _axes(ax, figsize=(min(2.0 + 1.6 * width, 40), 1.0 + 1.3 * levels))
    box = dict(boxstyle="round,pad=0.3", fc="white", ec="0.3")
    leaf_box = dict(boxstyle="round,pad=0.3", fc="#e8f0fe", ec="0.3")
    for node in range(tree.n_nodes):
        left = int(tree.left_child[node])
        if left >= 0:
            right = int(tree.right_child[node])
            missing_left = bool(tree.default_left[node])
            for child, text in ((left, "yes"), (right, "no")):
                if missing_left == (child == left):
                    text += ", missing"
                ax.annotate("", xy=(x[child], -depth[child]), xytext=(x[node], -depth[node]),
                            arrowprops=dict(arrowstyle="-", color="0.5"))
                ax.text((x[node] + x[child]) / 2, -(depth[node] + depth[child]) / 2, text,
                        ha="center", va="center", fontsize=fontsize - 1, color="0.3",
                        bbox=dict(fc="white", ec="none", pad=0.5))
        ax.text(x[node], -depth[node], _node_label(booster, tree, node, names, precision),
                ha="center", va="center", fontsize=fontsize,
                bbox=leaf_box if left < 0 else box)
    ax.set_xlim(-0.7, width - 0.3)
    ax.set_ylim(-levels + 0.5, 0.5)
    ax.set_axis_off()
    ax.set_title(f"tree {tree_index} (output group {booster.tree_group[tree_index]})")
    return ax


def plot_metric(evals_result, metric=None, dataset_names=None, ax=None, title=None,
                xlabel="round", ylabel=None, grid=True):
    """Learning curves: a metric per round for each eval set.

    Parameters
    ----------
    evals_result : dict (eval set name -> metric name -> list of values), as
        ``Booster.evals_result`` or an estimator's ``evals_result()``; or a Booster or
        fitted estimator holding one
    metric : str, optional; which metric (default: the first one recorded)
    dataset_names : list of str, optional; which eval sets (default: all)

    Returns
    -------
    matplotlib.axes.Axes
    """
    if not isinstance(evals_result, dict):
        if callable(getattr(evals_result, "evals_result", None)):
            evals_result = evals_result.evals_result()
        else:
            evals_result = getattr(evals_result, "evals_result", None)
        if not isinstance(evals_result, dict):
            raise TypeError("evals_result must be a dict, a Booster or a fitted estimator")
    if not evals_result:
        raise ValueError("evals_result is empty: train with eval sets (evals= or eval_set=)")
    names = list(evals_result) if dataset_names is None else list(dataset_names)
    for name in names:
        if name not in evals_result:
            raise ValueError(f"no eval set {name!r}; evals_result holds {list(evals_result)}")
    if metric is None:
        metric = next(iter(evals_result[names[0]]))
    ax = _axes(ax, figsize=(6, 4))
    for name in names:
        if metric not in evals_result[name]:
            raise ValueError(f"eval set {name!r} has no metric {metric!r}; it has "
                             f"{list(evals_result[name])}")
        values = evals_result[name][metric]
        ax.plot(np.arange(len(values)), values, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel if ylabel is not None else metric)
    ax.set_title(title if title is not None else f"{metric} per round")
    ax.legend()
    ax.grid(grid, alpha=0.3)
    return ax


def to_graphviz(model, *, fmap="", num_trees=None, rankdir=None, yes_color=None,
                no_color=None, condition_node_params=None, leaf_node_params=None,
                with_stats=False, tree_idx=0, **kwargs):
    """One tree as a ``graphviz.Source``, XGBoost's ``to_graphviz``: the same DOT text.

    Parameters
    ----------
    model : Booster or fitted estimator
    fmap : str or path, optional; a feature map file (``<index> <name> <type>`` per
        line, XGBoost's): its names replace the model's, and an indicator feature (type
        ``i``) is shown without its threshold
    num_trees : int, optional; the old name of ``tree_idx`` (deprecated in XGBoost 3.0:
        a FutureWarning, as there)
    rankdir : str, optional; graph direction, e.g. "LR" (default top to bottom)
    yes_color, no_color : str, optional; the colour of the edge missing values take
        (default "#0000FF") and of the other one ("#FF0000"), as XGBoost draws them
    condition_node_params, leaf_node_params : dict, optional; graphviz attributes of
        split and leaf nodes, e.g. ``{"shape": "box", "style": "filled"}``
    with_stats : bool; gain and cover at splits, cover at leaves (XGBoost before 3.4
        writes them at categorical splits even without it; gbm writes what 3.4 does)
    tree_idx : int; the tree's index in ``booster.trees`` (a round holds
        ``num_parallel_tree`` trees per output group)
    **kwargs : more graph attributes, e.g. ``size="8,8"``, written as
        ``graph [ key="value" ]`` (all of them; XGBoost 3.2 drops the first when
        ``rankdir`` is not given)

    Returns
    -------
    graphviz.Source; ``.source`` is the DOT text, ``.render()`` draws it (that needs the
    Graphviz ``dot`` program), and notebooks display it.

    Splits read ``feature<threshold`` or, categorical, ``feature:{codes}`` (the category
    codes of the set, which goes to the "yes" edge, the right child); the edge missing
    values follow says ", missing".
    """
    try:
        from graphviz import Source
    except ImportError as err:
        raise ImportError("gbm.to_graphviz needs the graphviz package: pip install graphviz "
                          "(or pip install 'detgbm[graphviz]'; rendering also needs "
                          "Graphviz's dot program)") from err
    from .model.dot import read_feature_map, tree_to_dot

    booster = _booster(model)
    if num_trees is not None:
        warnings.warn("The `num_trees` parameter is deprecated, use `tree_idx` instead.",
                      FutureWarning, stacklevel=2)
        if tree_idx not in (0, num_trees):
            raise ValueError("Both `num_trees` and `tree_idx` are used, prefer `tree_idx` "
                             "instead.")
        tree_idx = num_trees
    n_trees = len(booster.trees)
    if isinstance(tree_idx, bool) or not isinstance(tree_idx, (int, np.integer)) \
            or not -n_trees <= tree_idx < n_trees:
        raise ValueError(f"tree_idx must be an int in [0, {n_trees}), got {tree_idx!r}")
    if not isinstance(with_stats, (bool, np.bool_)):
        raise TypeError(f"with_stats must be True or False, got {with_stats!r}")
    if fmap:
        names, types = read_feature_map(fmap)
    else:
        names = booster.feature_names or [f"f{i}" for i in range(booster.n_features)]
        types = None
    text = tree_to_dot(booster.trees[tree_idx], names, types, rankdir=rankdir,
                       yes_color=yes_color, no_color=no_color,
                       condition_node_params=condition_node_params,
                       leaf_node_params=leaf_node_params, with_stats=bool(with_stats),
                       graph_attrs=kwargs)
    return Source(text)
