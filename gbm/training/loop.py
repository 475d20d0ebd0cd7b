"""The boosting loop ``train``.

Written once for one rank of a possibly distributed fit (``collective``): the set-up is
``gbm.training.prepare``, a round is ``gbm.training.rounds``, and the eval sets' scores,
printing, early stopping and the caller's hooks are callbacks (``gbm.callback``, run by
``gbm.training.callbacks``). ``gbm.collective.ThreadGroup`` runs ranks in one process.
"""

from ..collective import LOCAL
from ..data.compat import metric_function
from ..data.training_data import training_data
from .callbacks import CallbackContainer
from .evaluation import Evaluation, LastScoreStopping, RoundMonitor
from .arguments import XGBOOST_TRAIN_ORDER, check_patience, check_period, either_spelling
from .arguments import with_feature_weights, xgboost_positional
from ..params import params_dict
from .prepare import Fit
from .rounds import grow_round
from .vector_round import grow_vector_round


@xgboost_positional(XGBOOST_TRAIN_ORDER)
def train(params, X=None, y=None, num_boost_round=10, sample_weight=None, evals=(),
          verbose_eval=False, feature_names=None, init_model=None, early_stopping_rounds=None,
          maximize=None, obj=None, custom_metric=None, callbacks=(), group=None, qid=None,
          categorical_features=None, *, base_margin=None, evals_result=None, feval=None,
          xgb_model=None, dtrain=None, collective=None, row_ids=None):
    """Train a gradient-boosted tree model.

    Parameters
    ----------
    params : dict, or XGBoost's list of (name, value) pairs
        Hyperparameters, XGBoost names (see ``gbm.params.SPEC``); numbers may be text.
    X : array-like (n_samples, n_features); NaN = missing; or a ``gbm.DMatrix``
        A DMatrix brings its labels, weights, base margins, query groups, feature names,
        categorical features (``feature_types`` "c") and feature weights. After a DMatrix
        the positional arguments are XGBoost's: ``train(params, dtrain, 100, evals)``
        (round count, evals, obj, maximize, early_stopping_rounds, evals_result,
        verbose_eval, xgb_model, callbacks, custom_metric).
    y : array-like (n_samples,), or (n_samples, n_targets) for several regression targets,
        or (n_samples, 2) for survival:aft: each row's [lower, upper] interval of times
        (or a DMatrix's ``label_lower_bound`` / ``label_upper_bound``; see
        ``gbm.data.intervals``); survival:cox: signed times (negative: censored)
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
        ``base_margin``, ``row_ids``, ``label_lower_bound``, ``label_upper_bound``: the
        form for ranking eval sets, which need their own query groups (see
        ``gbm.data.eval_sets``). Names must differ.
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
        stops training), e.g. ``gbm.callback.ProgressBar()``; run after ``train``'s own
        (the eval sets' scores, ``verbose_eval``'s ``EvaluationMonitor``,
        ``early_stopping_rounds``' ``EarlyStopping``).
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

    collective : a gbm.collective collective, optional
        This process's part in a distributed fit (``gbm.dask`` passes one per worker, and
        ``gbm.collective.ThreadGroup`` runs ranks as threads): every quantity that depends
        on all rows (categories, bin edges, gradient maxima, histograms, base scores, leaf
        quantiles, metrics, stop requests) is agreed through it. None: a local fit.
    row_ids : array-like of int (n_samples,), optional
        Each row's index in the whole data set when X is one part of it (with
        ``collective``); row sampling and the bin edges' row sample are keyed by it, so the
        parts train the model the whole data trains. Default: 0 .. n_samples - 1.

    Returns
    -------
    Booster
    """
    data, num_boost_round = training_data(X, y, num_boost_round, dtrain, sample_weight, group,
                                          qid, base_margin, feature_names,
                                          categorical_features, row_ids)
    params = with_feature_weights(params_dict(params), data.dmatrix)
    init_model = either_spelling("init_model", init_model, "xgb_model", xgb_model)
    custom_metric = either_spelling("custom_metric", custom_metric, "feval", feval)
    if evals_result is not None and not isinstance(evals_result, dict):
        raise TypeError(f"evals_result must be a dict to fill, got {type(evals_result).__name__}")
    collective = LOCAL if collective is None else collective
    fit = Fit(params, data, num_boost_round, init_model, obj, collective)
    with fit:
        booster = fit.start()
        own = _own_callbacks(fit, fit.eval_sets(evals, booster), verbose_eval,
                             early_stopping_rounds, maximize, custom_metric, obj is not None)
        rounds = (fit.first_round, fit.first_round + num_boost_round)
        hooks = CallbackContainer(own, callbacks, collective, rounds)
        booster = hooks.before_training(booster)
        # multi_strategy="multi_output_tree": one vector-leaf tree per round
        grow = grow_vector_round if fit.grower.vector is not None else grow_round
        for round_ in range(*rounds):
            if hooks.before_iteration(booster, round_):
                break
            grow(fit, booster, round_)
            if hooks.after_iteration(booster, round_):
                break
        booster = hooks.after_training(booster)
    if evals_result is not None:
        evals_result.clear()
        evals_result.update({name: {m: list(v) for m, v in scores.items()}
                             for name, scores in booster.evals_result.items()})
    return booster


def _own_callbacks(fit, eval_sets, verbose_eval, early_stopping_rounds, maximize,
                   custom_metric, custom_objective):
    """``train``'s callbacks: the eval sets' scores, then printing (on the first rank),
    then early stopping."""
    metric = metric_function(custom_metric, raw_margin=custom_objective,
                             intervals=fit.objective.interval_labels)
    patience = check_patience(early_stopping_rounds)
    period = check_period(verbose_eval)
    if patience is not None and not eval_sets:
        raise ValueError("early_stopping_rounds needs at least one eval set (evals / eval_set)")
    names = fit.params["eval_metric"] or (
        [] if fit.params["disable_default_eval_metric"] else [fit.objective.default_metric])
    if patience is not None and not names and metric is None:
        raise ValueError("early_stopping_rounds needs a metric: disable_default_eval_metric "
                         "is set, with no eval_metric and no custom_metric")
    evaluation = Evaluation(eval_sets, names, fit.objective, fit.backend, metric, fit.params)
    own = [evaluation]
    if period and eval_sets and fit.collective.rank == 0:
        own.append(RoundMonitor(period, evaluation))
    if patience is not None:
        # with a user's metric, lower is better unless said otherwise (as XGBoost)
        own.append(LastScoreStopping(patience, evaluation, maximize=(
            False if maximize is None and metric is not None else maximize)))
    return own
