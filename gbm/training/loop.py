"""The boosting loop ``train``.

The loop is written once for one rank of a possibly distributed fit: every quantity that
depends on all rows (categories, bin edges, gradient maxima, histograms, base scores,
leaf quantiles, metrics, stop decisions) goes through the backend's collective, which is
a no-op locally. ``gbm.collective.ThreadGroup`` runs it over several ranks in one process.
"""
import numpy as np

from ..objectives.adaptive import refresh_leaves
from ..runtime.backend import get_backend
from ..data.binning import BinMapper
from ..model.booster import Booster, _load_init_model
from ..data.categorical import check_same_categorical, encode_X, fit_categories
from ..collective import LOCAL
from ..tree.constraints import (interaction_matrix, parse_interaction_constraints,
                          parse_monotone_constraints)
from ..data import compat
from ..runtime import compile_ahead
from ..data.inputs import feature_names_of, to_host
from ..data.dmatrix import DMatrix
from .evaluation import EvalSet, Evaluator, unpack_eval
from ..tree.grower import HistogramBuffers, TreeData, TreeGrower
from ..tree.group_threads import GroupRunner
from ..tree.lockstep import Lockstep, use_lockstep
from ..tree.margins import add_tree, all_rows
from ..objectives.multi_target import check_targets, n_targets
from ..objectives.pointwise import get_objective
from ..params import validate_params
from ..tree.quantize import GPAIR_DTYPE, quantize
from ..data.queries import training_queries
from ..tree.sampling import ColumnSampler, row_sample


def train(params, X=None, y=None, num_boost_round=10, sample_weight=None, evals=(),
          verbose_eval=False, feature_names=None, init_model=None, early_stopping_rounds=None,
          maximize=None, obj=None, custom_metric=None, callbacks=(), group=None, qid=None,
          categorical_features=None, *, base_margin=None, evals_result=None, feval=None,
          xgb_model=None, dtrain=None, _collective=LOCAL, _row_ids=None,
          _early_stopping_state=None):
    """Train a gradient-boosted tree model.

    Parameters
    ----------
    params : dict
        Hyperparameters, XGBoost names (see ``gbm.params.SPEC``).
    X : array-like (n_samples, n_features); NaN = missing; or a ``gbm.DMatrix``
        A DMatrix brings its labels, weights, base margins, query groups, feature names and
        categorical features (``feature_types`` "c"); XGBoost's ``train(params, dtrain,
        100)`` works (the integer after a DMatrix is the round count).
    y : array-like (n_samples,), or (n_samples, n_targets) for several regression targets
    num_boost_round : int
        Boosting rounds; each adds ``params["num_parallel_tree"]`` trees per output group,
        grown from the same gradients with their own row and column samples, each
        scaled by ``learning_rate / num_parallel_tree`` (as XGBoost does): one round with
        ``num_parallel_tree > 1`` and ``learning_rate=1`` is a random forest.
    sample_weight : array-like (n_samples,), optional
        Row weights; for ranking objectives one weight per query group (n_groups,).
    evals : sequence of (X, y, name), (X, y, sample_weight, name), (DMatrix, name) or dict
        Sets scored after every round with ``params["eval_metric"]`` (default: the
        objective's metric), into ``booster.evals_result``. A dict entry has keys ``X``,
        ``y``, ``name`` and optionally ``sample_weight``, ``group``, ``qid``,
        ``base_margin``: the form for ranking eval sets, which need their own query groups.
    verbose_eval : bool or int
        Print a line of scores every round (True), every N rounds (an int N; the last
        round is printed too), or never, as XGBoost does.
    base_margin : array-like (n_samples,) or (n_samples, n_groups), optional
        Each row's starting margin, used instead of the model's base margin (an offset,
        e.g. log exposure for ``count:poisson``; or another model's margins). Predict
        with the same ``base_margin`` for those rows.
    evals_result : dict, optional
        Filled with the eval scores (``booster.evals_result``), as XGBoost does.
    feval : callable, optional
        XGBoost's older name of ``custom_metric``.
    xgb_model : Booster or path, optional
        XGBoost's name of ``init_model``.
    dtrain : DMatrix, optional
        XGBoost's keyword for the training data (instead of ``X``).
    early_stopping_rounds : int, optional
        Stop when the last metric on the last eval set has not improved for this many
        rounds; ``booster.best_iteration`` and ``best_score`` tell the best round. All
        trees trained are kept.
    maximize : bool, optional
        Whether larger is better for that metric (default: by metric, e.g. AUC).
    obj : callable, optional
        A user-defined objective ``obj(margin, y, sample_weight) -> (grad, hess)``, with
        ``margin`` of shape (n,) (or (n, num_class)) and results of the same shape,
        weights applied by the function. ``params["objective"]`` still sets the starting
        margin, the label checks and how margins become predictions. XGBoost's form
        ``obj(predt, dtrain)`` (two parameters) is accepted too: ``dtrain`` is a
        ``gbm.DMatrix`` with ``get_label()`` and ``get_weight()``.
    custom_metric : callable, optional
        ``custom_metric(y, prediction, sample_weight) -> (name, value)``, scored on every
        eval set after the built-in metrics (so it drives early stopping). XGBoost's form
        ``custom_metric(predt, dmatrix)`` is accepted too; its ``predt`` is the margin when
        ``obj`` is given (as XGBoost), else the prediction. Either may return a list of
        ``(name, value)`` pairs.
    callbacks : sequence of gbm.callback.TrainingCallback
        Hooks around the training and every round (``after_iteration`` returning True
        stops training), e.g. ``gbm.callback.ProgressBar()``.
    feature_names : list of str, optional
        Taken from a DataFrame's columns when not given.
    categorical_features : list of int or str, or bool mask, optional
        Features to treat as categorical, besides pandas ``category`` columns (which
        always are): column indices, feature names, or one bool per feature. Their
        numeric values must be non-negative integers or NaN. See gbm.data.categorical and
        ``max_cat_to_onehot`` / ``max_cat_threshold``.
    init_model : Booster or path, optional
        Continue training this model: its trees stay, and new rounds start from its
        predictions. Training 10 rounds and then 5 more on the same data and parameters
        gives the same model as training 15 at once.
    group : array-like of int (n_groups,), optional
        Sizes of consecutive query groups (rows of a query are consecutive); needed by
        ``rank:pairwise`` and ``rank:ndcg``, checked and unused by other objectives.
    qid : array-like of int (n_samples,), optional
        Instead of ``group``: the query id of each row, sorted (non-decreasing).

    Returns
    -------
    Booster

    ``_collective`` and ``_row_ids`` are for distributed training (gbm.dask): this rank's
    collective, and the index of each of its rows in the whole data set.
    """
    args = compat.training_data(X, y, num_boost_round, dtrain, sample_weight, group, qid,
                                base_margin, feature_names, categorical_features)
    X, y, num_boost_round, dmatrix = args["X"], args["y"], args["num_boost_round"], args["dmatrix"]
    sample_weight, group, qid = args["sample_weight"], args["group"], args["qid"]
    base_margin, feature_names = args["base_margin"], args["feature_names"]
    categorical_features = args["categorical_features"]
    init_model = _one_of("init_model", init_model, "xgb_model", xgb_model)
    custom_metric = _one_of("custom_metric", custom_metric, "feval", feval)
    if evals_result is not None and not isinstance(evals_result, dict):
        raise TypeError(f"evals_result must be a dict to fill, got {type(evals_result).__name__}")
    p = validate_params(params)
    collective = _collective
    shard = collective.world_size > 1  # this rank holds a part of the rows (maybe none)
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, (int, np.integer)) \
            or num_boost_round < 0:
        raise ValueError(f"num_boost_round must be an integer >= 0, got {num_boost_round!r}")
    backend = get_backend(p["device"], p["n_jobs"], _collective)
    if backend.name == "cpu":
        compile_ahead.prepare()  # an empty compile cache: filled by several processes
    backend.workspace = {}  # a round's large arrays reuse the last round's memory
    names = feature_names if feature_names is not None else feature_names_of(X)
    init = None
    if init_model is not None:  # continue with the model's categories
        init = _load_init_model(init_model)
        if categorical_features is not None:
            check_same_categorical(init.categories, categorical_features, X, names)
        X = encode_X(X, init.categories, shard=shard)
        categories = init.categories
    else:
        X, categories = fit_categories(X, categorical_features, names, collective=collective)
    if names is not None and len(names) != X.shape[1]:
        raise ValueError(f"feature_names has {len(names)} names but X has {X.shape[1]} columns")
    if backend.name == "cpu":  # GPU input to a CPU fit: copied to the host once
        X = to_host(X)
    y = check_targets(y, X.shape[0])
    p = _with_targets(p, params, y)
    objective = get_objective(p)
    queries, w = training_queries(objective, group, qid, sample_weight, X.shape[0], shard)
    y = objective.check_labels(y)
    w_grad = w  # the gradients' weights: scale_pos_weight scales the positive rows'
    if p["scale_pos_weight"] != 1.0:
        w_grad = np.where(y == 1.0, w * p["scale_pos_weight"], w)
    row_ids = np.arange(X.shape[0]) if _row_ids is None else np.asarray(_row_ids, np.int64)
    n_rows_total = int(collective.allreduce(np.array([X.shape[0]], np.int64), "sum")[0])
    if shard:  # the checks a rank cannot make alone
        if n_rows_total == 0:
            raise ValueError("X has 0 rows on every worker; training needs at least one")
        if not _agree(collective, (w > 0).any()):
            raise ValueError("sample_weight is zero for every row of every worker; at least "
                             "one weight must be positive")
    leaf_alphas = getattr(objective, "leaf_alphas", None) if obj is None else None
    with backend.threads():
        data, mapper = _bin(X, w, categories, names, p, backend, row_ids, n_rows_total)
    # a round's groups' trees: on small tables in lockstep, a level of all of them per
    # kernel call (gbm/tree/lockstep.py); otherwise concurrently in threads where that pays
    # (gbm/tree/group_threads.py), each thread with its own levels' histograms
    lockstep = (Lockstep(data, objective.n_groups, backend)
                if use_lockstep(p, backend, objective.n_groups, data, leaf_alphas is not None)
                else None)
    runner = GroupRunner(backend, 1 if lockstep else objective.n_groups,
                         lambda: HistogramBuffers(backend.xp))
    with backend.threads(), runner:
        _check_init_model(init, p, X.shape[1], names)
        if init is not None:
            base = init.base_margin
            names = names if names is not None else init.feature_names
        elif p["base_score"] is None:
            base = objective.base_margin(y, None if sample_weight is None and w_grad is w
                                         else w_grad, collective)
        else:
            base = objective.base_score_to_margin(p["base_score"])
        booster = Booster(p, X.shape[1], names, base, mapper.cuts, categories)
        xp = backend.xp  # the fit's arrays live where the backend's kernels run
        # margins group-major: each output group's column is contiguous for the kernels;
        # the objectives see the (n_rows, n_groups) view ``by_group.T``
        by_group = xp.repeat(xp.asarray(base, dtype=np.float64)[:, None], X.shape[0], axis=1)
        first_round = 0
        if init is not None:
            for tree, group_ in zip(init.trees, init.tree_group):
                booster.add_tree(tree, group_)
            booster.iteration_indptr = list(init.iteration_indptr)
            start = xp.asarray(init._predict_checked(X, output_margin=True)).reshape(
                X.shape[0], init.n_groups)
            by_group = xp.ascontiguousarray(start.T)
            first_round = init.num_boosted_rounds
        if base_margin is not None:  # each row's own start instead of the base margin
            start = compat.check_base_margin(base_margin, X.shape[0], booster.n_groups)
            by_group = xp.ascontiguousarray(by_group - xp.asarray(base)[:, None]
                                            + xp.asarray(start))
        eval_sets = [_eval_set(e, i, queries, shard, booster, mapper, backend)
                     for i, e in enumerate(evals)]
        metric = compat.metric_function(custom_metric, raw_margin=obj is not None)
        evaluator = Evaluator(eval_sets, p["eval_metric"] or [objective.default_metric], objective,
                              _check_patience(early_stopping_rounds), maximize, verbose_eval,
                              metric, p)
        if _early_stopping_state is not None:  # a resumed fit (gbm.dask.checkpoint)
            evaluator.resume(booster, *_early_stopping_state)
        if obj is not None:
            obj = compat.objective_function(obj, dmatrix if dmatrix is not None else
                                            DMatrix._of_labels(y, sample_weight, base_margin))
        if queries is not None:
            objective.bind(queries, backend, row_ids)
        y_fit, w_fit = backend.asarray(y), backend.asarray(w_grad)  # on the device
        callbacks = list(callbacks)
        for cb in callbacks:  # e.g. a progress bar's total
            plan = getattr(cb, "plan_rounds", None)
            if plan is not None:
                plan(first_round, first_round + num_boost_round)
        for cb in callbacks:
            booster = cb.before_training(booster)
        # whether a callback may ask to stop, on any rank (rank 0 alone saves checkpoints):
        # without one, the rounds need not agree on the callbacks' stop requests
        stoppable = _agree(collective, bool(callbacks))
        for round_ in range(first_round, first_round + num_boost_round):
            asked = [cb.before_iteration(booster, round_, booster.evals_result) for cb in callbacks]
            if stoppable and _agree(collective, any(asked)):
                break
            margin = by_group.T
            if obj is not None:
                grad, hess = _call_objective(obj, margin, y, w_grad, backend)
            elif queries is not None:  # ranking: pairs may be drawn per round
                grad, hess = objective.gradients(margin, y_fit, w_fit, backend, round_=round_)
            else:
                grad, hess = objective.gradients(margin, y_fit, w_fit, backend)
            # group-major: no copy when the objective wrote them so (gbm.objectives.gradients)
            grad, hess = xp.ascontiguousarray(grad.T), xp.ascontiguousarray(hess.T)

            def grow(group_, group_backend, buffers):
                residual = None  # absolute / quantile loss: leaves become residual quantiles
                if leaf_alphas is not None:
                    y_group = y if y.ndim == 1 else y[:, group_]
                    residual = (y_group - backend.to_host(by_group[group_]), leaf_alphas[group_])
                return _grow_group(data, grad[group_], hess[group_], by_group[group_], group_,
                                   round_, residual, row_ids, n_rows_total,
                                   None if sample_weight is None else w, p, group_backend,
                                   buffers)

            new_trees = []
            if lockstep is not None:
                by_round = [[tree] for tree in lockstep.grow_round(
                    grad, hess, by_group, round_, row_ids, n_rows_total, p,
                    runner.buffers())]
            else:
                by_round = runner.map(grow, range(objective.n_groups))
            for group_, trees in enumerate(by_round):
                for tree in trees:
                    booster.add_tree(tree, group_)
                new_trees += trees
            booster.end_round()
            stop = evaluator.after_round(booster, new_trees, backend)
            asked = [cb.after_iteration(booster, round_, booster.evals_result) for cb in callbacks]
            if stop or (stoppable and _agree(collective, any(asked))):
                break
        evaluator.finish(collective)
        for cb in callbacks:
            booster = cb.after_training(booster)
    if evals_result is not None:
        evals_result.clear()
        evals_result.update({name: {m: list(v) for m, v in scores.items()}
                             for name, scores in booster.evals_result.items()})
    return booster


def _with_targets(p, params, y):
    """``p`` with ``num_target`` set from the columns of ``y`` (several: one output group
    per target); a ``num_target`` the user gave must agree."""
    k = n_targets(y)
    given = params.get("num_target") if isinstance(params, dict) else None
    if given is not None and p["num_target"] != k:
        raise ValueError(f"num_target={p['num_target']} but y has {k} column(s); leave "
                         "num_target out, it is taken from y")
    return p if k == p["num_target"] else validate_params(dict(params or {}, num_target=k))


def _one_of(name, value, other_name, other):
    """An argument XGBoost spells differently: either spelling, not both."""
    if value is not None and other is not None:
        raise TypeError(f"{name} and {other_name} are the same argument; pass one")
    return other if value is None else value


def _agree(collective, flag):
    """True on every rank when ``flag`` is True on any (a stop asked by one callback)."""
    return bool(collective.allreduce(np.array([bool(flag)], dtype=np.uint8), "max")[0])


def _bin(X, w, categories, names, p, backend, row_ids, n_rows_total):
    """Bin edges (the same for any split of the rows), the binned rows and the features'
    layout and constraints: ``(TreeData, BinMapper)``."""
    n_categories = None if categories is None else np.array(
        [-1 if c is None else len(c) for c in categories], dtype=np.int64)
    mapper = BinMapper(p["max_bin"], p["bin_sample_size"], p["random_state"])
    mapper.fit(X, w, n_rows_total=n_rows_total, n_threads=backend.n_threads,
               n_categories=n_categories, row_ids=row_ids, collective=backend.collective)
    bins = mapper.transform(X, backend.kernels, backend.xp, fitted_on_X=True)
    is_categorical = np.zeros(X.shape[1], dtype=np.uint8)
    if categories is not None:
        is_categorical[[f for f, c in enumerate(categories) if c is not None]] = 1
    monotone = parse_monotone_constraints(p["monotone_constraints"], names, X.shape[1])
    if monotone is not None and (monotone[is_categorical == 1] != 0).any():
        f = int(np.flatnonzero((monotone != 0) & (is_categorical == 1))[0])
        raise ValueError(f"monotone_constraints puts a constraint on feature "
                         f"{names[f] if names else f}, which is categorical; categories "
                         "have no order, so only numeric features can be monotone")
    interaction = interaction_matrix(
        parse_interaction_constraints(p["interaction_constraints"], names, X.shape[1]), X.shape[1])
    data = TreeData(bins, backend.xp.ascontiguousarray(bins.T), mapper.n_bins, mapper.feature_offsets,
                    mapper.padded_cuts(), is_categorical,
                    np.zeros(X.shape[1], np.int8) if monotone is None else monotone, interaction)
    return data, mapper


def _grow_group(data, grad, hess, column, group, round_, residual, row_ids, n_rows_total,
                weights, p, backend, buffers):
    """Grow one round's trees of one output group (``num_parallel_tree`` of them, sharing
    the round's gradients, as XGBoost does) and add their leaf values to ``column`` (the
    group's margins, contiguous, updated in place); returns the trees, for the caller to
    add to the booster in group order."""
    gpair, scales = quantize(grad, hess, backend, n_rows_total,
                             out=backend.buffer("gpair", (grad.shape[0], 2), GPAIR_DTYPE))
    n_parallel = p["num_parallel_tree"]
    # Each parallel tree's leaves carry learning_rate / num_parallel_tree, so a round
    # adds learning_rate times the mean of its trees (XGBoost scales them the same way).
    tree_params = p if n_parallel == 1 else dict(p, learning_rate=p["learning_rate"] / n_parallel)
    xp = backend.xp
    trees = []
    for parallel in range(n_parallel):
        kept = row_sample(p["random_state"], round_, group, row_ids, p["subsample"], parallel)
        rows = (all_rows(backend, row_ids.shape[0]) if kept is None
                else backend.asarray(np.flatnonzero(kept).astype(np.int32)))
        columns = ColumnSampler(p, data.n_features, round_, group, parallel)
        # without a leaf refresh, the last level's leaves go straight into the margins
        grower = TreeGrower(data, gpair, scales, rows, tree_params, backend, columns, buffers,
                            column=column if residual is None else None)
        (tree,), rows, starts, ends, values = grower.grow()
        if residual is not None:
            values = refresh_leaves(values, backend.to_host(rows), starts, ends, residual[0],
                                    residual[1], tree_params["learning_rate"], weights,
                                    backend.collective)
            tree.value[grower.leaf_ids[0]] = values
        with backend.threads(rows.shape[0]):
            backend.kernels.add_leaf_values(rows, starts, ends, values, column)
            if kept is not None:  # rows left out of the sample: walk them through the tree
                add_tree(backend, data, tree, np.flatnonzero(~kept), column)
        trees.append(tree)
    return trees


def _eval_set(entry, index, train_queries, shard, booster, mapper, backend):
    """An ``evals`` entry (a DMatrix one included) as an ``EvalSet``."""
    entry, base_margin = compat.eval_entry(entry, index)
    row_ids = None  # a distributed eval set's rows' global indices (gbm.dask)
    if isinstance(entry, dict) and "_row_ids" in entry:
        entry = dict(entry)
        row_ids = np.asarray(entry.pop("_row_ids"), dtype=np.int64)
    unpacked = _unpack_eval(entry, index, train_queries, shard)
    if base_margin is not None:
        base_margin = compat.check_base_margin(base_margin, np.shape(unpacked[2])[0],
                                               booster.n_groups,
                                               f"evals[{unpacked[0]!r}] base_margin")
    return EvalSet(*unpacked, booster, mapper, backend, base_margin=base_margin,
                   row_ids=row_ids)


def _unpack_eval(entry, index, train_queries, shard):
    """An ``evals`` entry; with a ranking objective it must carry its query groups."""
    unpacked = unpack_eval(entry, index, shard)
    if train_queries is not None and unpacked[4] is None:
        raise ValueError(f"evals[{index}] ({unpacked[0]!r}) has no query groups; with a ranking "
                         "objective pass it as a dict with 'group' or 'qid', e.g. "
                         "{'X': X, 'y': y, 'name': 'valid', 'qid': qid}")
    return unpacked


def _check_init_model(init, p, n_features, names):
    """The model to continue from, checked against the data."""
    if init is None:
        return
    if init.n_features != n_features:
        raise ValueError(f"init_model was trained on {init.n_features} features but X has {n_features}")
    same = ("objective", "num_class", "num_target") + (("quantile_alpha",) if p["objective"] == "reg:quantileerror"
                                         else ())
    for key in same:  # the output groups and their base margins must mean the same
        if init.params[key] != p[key]:
            raise ValueError(f"init_model was trained with {key}={init.params[key]!r}, "
                             f"not {p[key]!r}; continue with the same {key}")
    if names is not None and init.feature_names is not None and names != init.feature_names:
        raise ValueError(f"X has feature names {names} but init_model was trained with "
                         f"{init.feature_names}")


def _check_patience(rounds):
    if rounds is None:
        return None
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"early_stopping_rounds must be an integer >= 1 or None, got {rounds!r}")
    return int(rounds)


def _call_objective(obj, margin, y, w, backend):
    """Gradients from a user's objective, checked: same shape as the margin, finite. The
    function sees NumPy arrays (a copy of the margin from the device on a GPU)."""
    shape = margin.shape if margin.shape[1] > 1 else (margin.shape[0],)
    grad, hess = obj(np.array(backend.to_host(margin).reshape(shape), order="C"), y, w)
    out = []
    for name, value in (("gradient", grad), ("hessian", hess)):
        value = np.asarray(value, dtype=np.float64)
        if value.shape != shape:
            raise ValueError(f"the objective's {name} has shape {value.shape}, expected {shape}")
        if not np.isfinite(value).all():
            raise ValueError(f"the objective's {name} holds NaN or infinity")
        out.append(backend.asarray(value.reshape(margin.shape)))
    return out
