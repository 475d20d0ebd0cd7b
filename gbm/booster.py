"""The boosting loop ``train`` and the fitted ``Booster``."""
import numpy as np

from . import dump, model_io
from .adaptive import refresh_leaves
from .backend import get_backend
from .binning import BinMapper
from .categorical import check_same_categorical, encode_X, fit_categories
from .constraints import parse_interaction_constraints, parse_monotone_constraints
from .data import check_y, feature_names_of
from .evaluation import EvalSet, Evaluator, unpack_eval
from .explain import predict_contributions
from .grower import TreeGrower
from .objectives import get_objective
from .params import validate_params
from .quantize import quantize
from .queries import training_queries
from .sampling import ColumnSampler, row_sample
from .threads import numba_threads, resolve_n_threads, threads_for
from .tree import Forest


class Booster:
    """A fitted model: the trees, how to start and how to turn margins into predictions.

    Attributes
    ----------
    params : dict, the validated training parameters
    trees : list of Tree; ``tree_group[i]`` is the output column tree ``i`` adds to
    iteration_indptr : list of int; round ``r`` grew ``trees[iteration_indptr[r]:
        iteration_indptr[r + 1]]``: ``num_parallel_tree`` trees per output group, group by
        group (XGBoost's order and its ``iteration_indptr``)
    base_margin : float64 (n_groups,), the margin before any tree
    feature_names : list of str or None
    n_features : int
    cuts : list of float32 arrays, the bin edges the trees were grown on
    categories : list or None
        Per feature, None (numeric) or the categories seen at fit (strings or numbers;
        see gbm.categorical); None when no feature is categorical.
    evals_result : dict, eval set name -> metric name -> list of values per round
    """

    def __init__(self, params, n_features, feature_names, base_margin, cuts, categories=None):
        self.params = params
        self.categories = categories
        self.n_features = n_features
        self.feature_names = feature_names
        self.base_margin = np.asarray(base_margin, dtype=np.float64)
        self.cuts = cuts
        self.trees, self.tree_group = [], []
        self.iteration_indptr = [0]
        self.evals_result = {}
        self.best_iteration = None
        self.best_score = None
        self._forest = None

    @property
    def n_groups(self):
        return self.base_margin.shape[0]

    @property
    def num_boosted_rounds(self):
        """Rounds trained; a round holds ``num_parallel_tree`` trees per output group."""
        return len(self.iteration_indptr) - 1

    def add_tree(self, tree, group):
        """Append a tree of the round being grown; ``end_round`` closes the round.

        A tree whose values overflowed (NaN or infinity, e.g. from a huge learning_rate)
        raises ``FloatingPointError``: it would give NaN predictions and could not be saved.
        """
        if not (np.isfinite(tree.value).all() and np.isfinite(tree.gain).all()):
            raise FloatingPointError(
                f"tree {len(self.trees)} has NaN or infinite leaf values or gains: training "
                "overflowed; lower learning_rate or scale down the labels or weights")
        self.trees.append(tree)
        self.tree_group.append(group)
        self._forest = None

    def end_round(self):
        """Mark the trees added since the last round as one round."""
        self.iteration_indptr.append(len(self.trees))

    def forest(self, begin=0, end=None):
        """Trees of rounds ``[begin, end)`` packed for the prediction kernels."""
        end = self.num_boosted_rounds if end is None else end
        if begin == 0 and end == self.num_boosted_rounds:
            if self._forest is None:
                self._forest = Forest(self.trees, self.tree_group)
            return self._forest
        lo, hi = self.iteration_indptr[begin], self.iteration_indptr[end]
        return Forest(self.trees[lo:hi], self.tree_group[lo:hi])

    def _check_predict_X(self, X, name="X"):
        """``X`` checked against the model (names, categories, column count); ``name``
        says which argument it is in the messages."""
        names = feature_names_of(X)
        if names is not None and self.feature_names is not None and names != self.feature_names:
            raise ValueError(
                f"{name} has feature names {names} but the model was trained with "
                f"{self.feature_names}; pass columns with the same names in the same order"
            )
        X = encode_X(X, self.categories, name=name)
        if X.shape[1] != self.n_features:
            raise ValueError(
                f"{name} has {X.shape[1]} features, but the model was trained with {self.n_features}"
            )
        return X

    def predict(self, X, output_margin=False, iteration_range=(0, 0), n_jobs=None,
                pred_leaf=False, pred_contribs=False):
        """Predict for raw feature rows.

        Parameters
        ----------
        X : array-like (n_samples, n_features)
        output_margin : bool
            Return the raw margin (before the link function).
        iteration_range : (int, int)
            Use the trees of rounds ``[begin, end)``; ``(0, 0)`` = all rounds. A round is
            ``num_parallel_tree`` trees per output group.
        pred_leaf : bool
            Return the leaf each row reaches in each tree instead: int32
            (n_samples, n_trees), node ids within each tree (as in the model file).
        pred_contribs : bool
            Return each feature's contribution to each row's margin instead (exact
            TreeSHAP, Lundberg, Erion & Lee 2018, with node covers as weights; see
            ``gbm.explain``): float64 (n_samples, n_features + 1), or (n_samples,
            n_groups, n_features + 1) for several output groups. The last column is the
            bias (base margin plus each tree's cover-weighted mean leaf value); a row's
            columns sum to its ``output_margin=True`` prediction. ``output_margin`` does
            not apply (contributions are always margins); ``pred_leaf`` may not be set too.

        Returns
        -------
        ndarray of float64: (n_samples,) for one output group, (n_samples, n_groups) else
        """
        return self._predict_checked(self._check_predict_X(X), output_margin, iteration_range,
                                     n_jobs, pred_leaf, pred_contribs)

    def _predict_checked(self, X, output_margin=False, iteration_range=(0, 0), n_jobs=None,
                         pred_leaf=False, pred_contribs=False):
        """``predict`` for X already checked: float32, C order, ``n_features`` columns.

        The kernels index rows by ``n_features`` without bounds checks, so the width is
        checked here too, against this booster (a caller may hold another's checks).
        """
        if not (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype == np.float32
                and X.flags.c_contiguous and X.shape[1] == self.n_features):
            raise ValueError(
                f"X must be a C-ordered float32 matrix with {self.n_features} columns, the "
                f"model's feature count; got {getattr(X, 'shape', None)} "
                f"{getattr(X, 'dtype', type(X).__name__)}")
        begin, end = _check_iteration_range(iteration_range, self.num_boosted_rounds)
        forest = self.forest(begin, end)
        backend = get_backend(self.params["device"])
        if pred_contribs is not False:
            if not isinstance(pred_contribs, (bool, np.bool_)):
                raise TypeError(f"pred_contribs must be True or False, got {pred_contribs!r}")
            if pred_leaf:
                raise ValueError("pred_contribs=True and pred_leaf=True cannot be combined; "
                                 "ask for one kind of prediction at a time")
        if pred_contribs:
            return predict_contributions(self, X, forest, backend.kernels, n_jobs)
        k = backend.kernels
        if pred_leaf:
            leaves = np.empty((X.shape[0], forest.n_trees), dtype=np.int32)
            if forest.has_categorical:
                k.predict_leaf_categorical(X, forest.walk, forest.split_type, forest.cat_bits,
                                           forest.tree_offsets, forest.tree_depth, leaves)
            else:
                k.predict_leaf(X, forest.walk, forest.tree_offsets, forest.tree_depth, leaves)
            return leaves
        margin = np.tile(self.base_margin, (X.shape[0], 1))
        n_threads = resolve_n_threads(self.params["n_jobs"] if n_jobs is None else n_jobs)
        with numba_threads(threads_for(X.size * max(1, forest.n_trees // 8), n_threads)):
            if forest.has_categorical:
                k.predict_categorical(X, forest.walk, forest.split_type, forest.cat_bits,
                                      forest.value, forest.tree_offsets, forest.tree_group,
                                      forest.tree_depth, margin)
            else:
                k.predict(X, forest.walk, forest.value, forest.tree_offsets, forest.tree_group,
                          forest.tree_depth, margin)
        if output_margin:
            return margin[:, 0] if self.n_groups == 1 else margin
        return get_objective(self.params).transform(margin)

    def get_score(self, importance_type="weight"):
        """Feature importances as XGBoost reports them: a dict from feature name (or
        ``f{i}``) to a number, for the features used in at least one split.

        importance_type : "weight" (number of splits), "gain" / "cover" (mean loss
        reduction / mean hessian sum of those splits), "total_gain", "total_cover".
        """
        kinds = ("weight", "gain", "cover", "total_gain", "total_cover")
        if importance_type not in kinds:
            raise ValueError(f"importance_type must be one of {list(kinds)}, got {importance_type!r}")
        weight, total_gain, total_cover = (np.zeros(self.n_features) for _ in range(3))
        for tree in self.trees:
            inner = tree.left_child >= 0
            np.add.at(weight, tree.split_feature[inner], 1)
            np.add.at(total_gain, tree.split_feature[inner], tree.gain[inner])
            np.add.at(total_cover, tree.split_feature[inner], tree.cover[inner])
        used = weight > 0
        values = {"weight": weight, "total_gain": total_gain, "total_cover": total_cover,
                  "gain": np.divide(total_gain, weight, where=used, out=np.zeros_like(weight)),
                  "cover": np.divide(total_cover, weight, where=used, out=np.zeros_like(weight))}
        names = self.feature_names or [f"f{i}" for i in range(self.n_features)]
        return {names[f]: float(values[importance_type][f]) for f in np.flatnonzero(used)}

    def get_dump(self, dump_format="text", with_stats=False):
        """One string per tree, in XGBoost's text or JSON dump form (see gbm.dump)."""
        return dump.get_dump(self, dump_format, with_stats)

    def trees_to_dataframe(self):
        """A pandas DataFrame with one row per node (XGBoost's columns; see gbm.dump)."""
        return dump.trees_to_dataframe(self)

    def save_model(self, path):
        """Write the model as versioned JSON (see docs/model_format.md)."""
        model_io.save(self, path)

    @classmethod
    def load_model(cls, path):
        """Read a model written by ``save_model``; a bad file raises ``ValueError``."""
        return model_io.load(cls, path)

    def to_json(self):
        return model_io.dumps(self)

    @classmethod
    def from_json(cls, text):
        return model_io.loads(cls, text)


def _check_iteration_range(iteration_range, n_rounds):
    try:
        begin, end = (int(v) for v in iteration_range)
    except (TypeError, ValueError):
        raise TypeError(f"iteration_range must be a pair of ints, got {iteration_range!r}") from None
    if (begin, end) == (0, 0):
        return 0, n_rounds
    if not 0 <= begin < end <= n_rounds:
        raise ValueError(
            f"iteration_range {iteration_range} is outside the model's rounds [0, {n_rounds}]"
        )
    return begin, end


def train(params, X, y, num_boost_round=10, sample_weight=None, evals=(), verbose_eval=False,
          feature_names=None, init_model=None, early_stopping_rounds=None, maximize=None,
          obj=None, custom_metric=None, callbacks=(), group=None, qid=None,
          categorical_features=None):
    """Train a gradient-boosted tree model.

    Parameters
    ----------
    params : dict
        Hyperparameters, XGBoost names (see ``gbm.params.SPEC``).
    X : array-like (n_samples, n_features); NaN = missing
    y : array-like (n_samples,)
    num_boost_round : int
        Boosting rounds; each adds ``params["num_parallel_tree"]`` trees per output group,
        grown from the same gradients with their own row and column samples, each
        scaled by ``learning_rate / num_parallel_tree`` (as XGBoost does): one round with
        ``num_parallel_tree > 1`` and ``learning_rate=1`` is a random forest.
    sample_weight : array-like (n_samples,), optional
        Row weights; for ranking objectives one weight per query group (n_groups,).
    evals : sequence of (X, y, name), (X, y, sample_weight, name) or dict
        Sets scored after every round with ``params["eval_metric"]`` (default: the
        objective's metric), into ``booster.evals_result``. A dict entry has keys ``X``,
        ``y``, ``name`` and optionally ``sample_weight``, ``group``, ``qid``: the form for
        ranking eval sets, which need their own query groups.
    verbose_eval : bool
        Print one line of scores per round, as XGBoost does.
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
        margin, the label checks and how margins become predictions.
    custom_metric : callable, optional
        ``custom_metric(y, prediction, sample_weight) -> (name, value)``, scored on every
        eval set after the built-in metrics (so it drives early stopping).
    callbacks : sequence of gbm.callback.TrainingCallback
        Hooks around the training and every round (``after_iteration`` returning True
        stops training), e.g. ``gbm.callback.ProgressBar()``.
    feature_names : list of str, optional
        Taken from a DataFrame's columns when not given.
    categorical_features : list of int or str, or bool mask, optional
        Features to treat as categorical, besides pandas ``category`` columns (which
        always are): column indices, feature names, or one bool per feature. Their
        numeric values must be non-negative integers or NaN. See gbm.categorical and
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
    """
    p = validate_params(params)
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, (int, np.integer)) \
            or num_boost_round < 0:
        raise ValueError(f"num_boost_round must be an integer >= 0, got {num_boost_round!r}")
    names = feature_names if feature_names is not None else feature_names_of(X)
    if init_model is not None:  # continue with the model's categories
        init_model = _load_init_model(init_model)
        if categorical_features is not None:
            check_same_categorical(init_model.categories, categorical_features, X, names)
        X = encode_X(X, init_model.categories)
        categories = init_model.categories
    else:
        X, categories = fit_categories(X, categorical_features, names)
    if names is not None and len(names) != X.shape[1]:
        raise ValueError(f"feature_names has {len(names)} names but X has {X.shape[1]} columns")
    y = check_y(y, X.shape[0])
    objective = get_objective(p)
    queries, w = training_queries(objective, group, qid, sample_weight, X.shape[0])
    y = objective.check_labels(y)
    backend = get_backend(p["device"])
    n_threads = resolve_n_threads(p["n_jobs"])

    with numba_threads(n_threads):
        n_categories = None if categories is None else np.array(
            [-1 if c is None else len(c) for c in categories], dtype=np.int64)
        mapper = BinMapper(p["max_bin"], p["bin_sample_size"], p["random_state"])
        mapper.fit(X, w, n_threads=n_threads, n_categories=n_categories)
        bins = mapper.transform(X, backend.kernels)
        bins_by_feature = np.ascontiguousarray(bins.T)
        init = _check_init_model(init_model, p, X.shape[1], names)
        if init is not None:
            base = init.base_margin
            names = names if names is not None else init.feature_names
        elif p["base_score"] is None:
            base = objective.base_margin(y, None if sample_weight is None else w)
        else:
            base = objective.base_score_to_margin(p["base_score"])
        booster = Booster(p, X.shape[1], names, base, mapper.cuts, categories)
        margin = np.tile(base, (X.shape[0], 1))
        first_round = 0
        if init is not None:
            for tree, group in zip(init.trees, init.tree_group):
                booster.add_tree(tree, group)
            booster.iteration_indptr = list(init.iteration_indptr)
            margin = init._predict_checked(X, output_margin=True).reshape(X.shape[0], -1)
            first_round = init.num_boosted_rounds
        eval_sets = [EvalSet(*_unpack_eval(e, i, queries), booster, mapper, backend.kernels)
                     for i, e in enumerate(evals)]
        evaluator = Evaluator(eval_sets, p["eval_metric"] or [objective.default_metric], objective,
                              _check_patience(early_stopping_rounds), maximize, verbose_eval,
                              custom_metric, p)
        leaf_alphas = getattr(objective, "leaf_alphas", None) if obj is None else None
        if queries is not None:
            objective.bind(queries, backend.kernels, n_threads)
        row_ids = np.arange(X.shape[0])
        interaction_sets = parse_interaction_constraints(p["interaction_constraints"], names,
                                                         X.shape[1])
        monotone = parse_monotone_constraints(p["monotone_constraints"], names, X.shape[1])
        cat_features = None if categories is None else np.array(
            [f for f, c in enumerate(categories) if c is not None], dtype=np.int32)
        if monotone is not None and cat_features is not None and monotone[cat_features].any():
            f = int(cat_features[np.flatnonzero(monotone[cat_features])[0]])
            raise ValueError(f"monotone_constraints puts a constraint on feature "
                             f"{names[f] if names else f}, which is categorical; categories "
                             "have no order, so only numeric features can be monotone")
        callbacks = list(callbacks)
        n_parallel = p["num_parallel_tree"]
        # Each parallel tree's leaves carry learning_rate / num_parallel_tree, so a round
        # adds learning_rate times the mean of its trees (XGBoost scales them the same way).
        tree_params = (p if n_parallel == 1
                       else dict(p, learning_rate=p["learning_rate"] / n_parallel))
        for cb in callbacks:
            booster = cb.before_training(booster)
        for round_ in range(first_round, first_round + num_boost_round):
            if any([cb.before_iteration(booster, round_, booster.evals_result) for cb in callbacks]):
                break
            if obj is not None:
                grad, hess = _call_objective(obj, margin, y, w)
            elif queries is not None:  # ranking: pairs may be drawn per round
                grad, hess = objective.gradients(margin, y, w, round_=round_)
            else:
                grad, hess = objective.gradients(margin, y, w)
            new_trees = []
            for group in range(objective.n_groups):
                # The round's gradients are shared by its parallel trees (XGBoost's rule):
                # growing one tree does not change what the next one sees.
                shared_gpair, scales = quantize(grad[:, group], hess[:, group], backend.kernels)
                column = np.ascontiguousarray(margin[:, group])
                # absolute / quantile loss: leaves become quantiles of the round's residuals
                residual = None if leaf_alphas is None else y - column
                for parallel in range(n_parallel):
                    gpair = shared_gpair
                    kept = row_sample(p["random_state"], round_, group, row_ids, p["subsample"],
                                      parallel)
                    if kept is not None:
                        if n_parallel > 1:
                            gpair = shared_gpair.copy()
                        gpair[~kept] = 0  # rows left out add nothing to this tree's histograms
                    columns = ColumnSampler(p, X.shape[1], round_, group, parallel)
                    grower = TreeGrower(bins, bins_by_feature, mapper.n_bins, mapper.cuts, gpair,
                                        scales, tree_params, backend.kernels, n_threads, columns,
                                        interaction_sets, monotone, cat_features)
                    tree, rows, starts, ends, values = grower.grow()
                    if residual is not None:
                        values = refresh_leaves(values, rows, starts, ends, residual,
                                                leaf_alphas[group], tree_params["learning_rate"],
                                                None if sample_weight is None else w, kept)
                        tree.value[grower.leaf_ids] = values
                    with numba_threads(threads_for(rows.shape[0], n_threads)):
                        backend.kernels.add_leaf_values(rows, starts, ends, values, column)
                    booster.add_tree(tree, group)
                    new_trees.append(tree)
                margin[:, group] = column
            booster.end_round()
            stop = evaluator.after_round(booster, new_trees, backend.kernels)
            stop_asked = [cb.after_iteration(booster, round_, booster.evals_result) for cb in callbacks]
            if stop or any(stop_asked):
                break
        for cb in callbacks:
            booster = cb.after_training(booster)
    return booster


def _unpack_eval(entry, index, train_queries):
    """An ``evals`` entry; with a ranking objective it must carry its query groups."""
    unpacked = unpack_eval(entry, index)
    if train_queries is not None and unpacked[4] is None:
        raise ValueError(f"evals[{index}] ({unpacked[0]!r}) has no query groups; with a ranking "
                         "objective pass it as a dict with 'group' or 'qid', e.g. "
                         "{'X': X, 'y': y, 'name': 'valid', 'qid': qid}")
    return unpacked


def _load_init_model(init_model):
    return init_model if isinstance(init_model, Booster) else Booster.load_model(init_model)


def _check_init_model(init_model, p, n_features, names):
    """The model to continue from (a Booster, or a path to one), checked against the data."""
    if init_model is None:
        return None
    init = _load_init_model(init_model)
    if init.n_features != n_features:
        raise ValueError(f"init_model was trained on {init.n_features} features but X has {n_features}")
    same = ("objective", "num_class") + (("quantile_alpha",) if p["objective"] == "reg:quantileerror"
                                         else ())
    for key in same:  # the output groups and their base margins must mean the same
        if init.params[key] != p[key]:
            raise ValueError(f"init_model was trained with {key}={init.params[key]!r}, "
                             f"not {p[key]!r}; continue with the same {key}")
    if names is not None and init.feature_names is not None and names != init.feature_names:
        raise ValueError(f"X has feature names {names} but init_model was trained with "
                         f"{init.feature_names}")
    return init


def _check_patience(rounds):
    if rounds is None:
        return None
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"early_stopping_rounds must be an integer >= 1 or None, got {rounds!r}")
    return int(rounds)


def _call_objective(obj, margin, y, w):
    """Gradients from a user's objective, checked: same shape as the margin, finite."""
    shape = margin.shape if margin.shape[1] > 1 else (margin.shape[0],)
    grad, hess = obj(margin.reshape(shape).copy(), y, w)
    out = []
    for name, value in (("gradient", grad), ("hessian", hess)):
        value = np.asarray(value, dtype=np.float64)
        if value.shape != shape:
            raise ValueError(f"the objective's {name} has shape {value.shape}, expected {shape}")
        if not np.isfinite(value).all():
            raise ValueError(f"the objective's {name} holds NaN or infinity")
        out.append(value.reshape(margin.shape))
    return out
