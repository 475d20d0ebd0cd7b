"""``gbm.cv``: k-fold cross-validation with ``xgboost.cv``'s arguments and results.

Each fold's model is the one ``gbm.train`` gives on the fold's training rows with the same
parameters (``gbm.training.fold_threads`` trains the folds side by side, round by round);
after each round the folds' scores on their training and test rows are averaged into
the results, and cv's callbacks (printing, early stopping on the mean test score, the
caller's) see the round. Which rows each fold holds: ``gbm.training.folds``.
"""
import threading

import numpy as np

from ..callback import EarlyStopping, EvaluationMonitor, TrainingCallback
from ..collective import LOCAL
from ..data.inputs import check_X, to_host
from ..data.queries import group_ptr
from ..data.training_data import training_data
from ..metrics.names import check_metric_name
from ..objectives import get_objective
from ..params import ALIASES, params_dict, validate_params
from .callbacks import CallbackContainer
from .fold_threads import FoldRounds, fold_slots, one_at_a_time
from .folds import check_nfold, fold_dmatrix, split_rows
from .arguments import XGBOOST_CV_ORDER, check_patience, check_period, check_rounds
from .arguments import either_spelling, with_feature_weights, xgboost_positional
from .loop import train
from .prepare import labels_and_params

SETS = ("train", "test")  # each fold's eval sets, named as xgboost.cv names them


class CVPack:
    """One fold, as cv's callbacks see it (``CVBooster.cvfolds``): ``dtrain`` and
    ``dtest`` (``gbm.DMatrix``, after ``fpreproc``), ``params`` (the fold's) and ``bst``
    (the fold's ``gbm.Booster``, being trained)."""

    def __init__(self, dtrain, dtest, params):
        self.dtrain, self.dtest, self.params, self.bst = dtrain, dtest, params, None


class CVBooster:
    """What cv's callbacks get as the "booster" (xgboost.cv's ``_PackedBooster``).

    Attributes
    ----------
    cvfolds : list of CVPack
    evals_result : dict, ``{"train" | "test": {metric: [(mean, std) per round]}}``, the
        callbacks' ``evals_log``
    best_iteration, best_score : set by early stopping (None until then)
    """

    def __init__(self, cvfolds):
        self.cvfolds = cvfolds
        self.evals_result = {}
        self.best_iteration = self.best_score = None

    @property
    def num_boosted_rounds(self):
        """Rounds trained so far (every fold has trained as many)."""
        bst = self.cvfolds[0].bst
        return 0 if bst is None else bst.num_boosted_rounds


@xgboost_positional(XGBOOST_CV_ORDER)
def cv(params, X=None, y=None, num_boost_round=10, *, nfold=None, stratified=False,
       folds=None, metrics=(), obj=None, maximize=None, early_stopping_rounds=None,
       fpreproc=None, as_pandas=True, verbose_eval=None, show_stdv=True, seed=0,
       callbacks=None, shuffle=True, custom_metric=None, feval=None, dtrain=None,
       sample_weight=None, group=None, qid=None, base_margin=None, feature_names=None,
       categorical_features=None):
    """Cross-validation, as ``xgboost.cv``: train one model per fold and score every
    round on each fold's training and test rows.

    Parameters
    ----------
    params : dict (or a list of (name, value) pairs, as XGBoost takes)
        ``gbm.train``'s parameters; ``n_jobs`` threads are shared among the folds.
    X : a ``gbm.DMatrix``, or a feature matrix (n_samples, n_features) as ``gbm.train``
        takes it (then ``y``, and ``sample_weight``, ``group``, ``qid``, ``base_margin``,
        ``feature_names``, ``categorical_features`` as keywords). ``dtrain=`` is XGBoost's
        keyword for it; ``cv(params, dtrain, 50)`` works as in XGBoost.
    num_boost_round : int
    nfold : int >= 2, default 3
        Folds to make; with ``folds`` given, leave it out (or give their number).
    stratified : bool
        Folds with the labels' class proportions (scikit-learn's ``StratifiedKFold``,
        shuffled by ``seed``, as XGBoost); not with query groups.
    folds : splitter or list of (train_idx, test_idx)
        The folds to use, as given: a scikit-learn-style splitter (``KFold``,
        ``StratifiedKFold``, ``GroupKFold``: its ``split(y, y)``, with query groups
        ``split(y, y, groups)``), or one pair of row-index arrays per fold. Over
        ``stratified`` when both are given (as XGBoost).
    metrics : str or list of str
        Metrics to score (instead of ``params["eval_metric"]``; default: those, else the
        objective's metric).
    obj : callable, optional
        A user's objective, as ``gbm.train``'s.
    custom_metric : callable, optional
        A user's metric, as ``gbm.train``'s; ``feval`` is its older name. Scored after
        the metrics, so that early stopping watches it.
    maximize : bool, optional
        Whether larger is better for early stopping's metric (default: by its name).
    early_stopping_rounds : int, optional
        Stop when the mean test score of the last metric has not improved for this many
        rounds; the results then end at the best round (as XGBoost's).
    fpreproc : callable, optional
        ``fpreproc(dtrain, dtest, params) -> (dtrain, dtest, params)``, applied to each
        fold's ``gbm.DMatrix`` pair and parameters before training.
    as_pandas : bool
        A pandas DataFrame (when pandas is installed), else a dict of lists.
    verbose_eval : bool or int, optional
        Print the mean scores every round (True) or every N rounds; None or False: not.
    show_stdv : bool
        Print each mean with its standard deviation (``mean+std``).
    seed : int
        Seed of the folds (``numpy.random.RandomState(seed)``: the folds xgboost.cv draws
        with the same seed; see gbm/training/folds.py). Not the model's ``random_state``.
    callbacks : list of gbm.callback.TrainingCallback
        Run before cv's printing and early stopping, with a ``CVBooster`` as the booster
        and ``(mean, std)`` pairs as scores (xgboost.cv's convention).
    shuffle : bool
        Shuffle the rows (or query groups) before cutting them into folds.

    Returns
    -------
    pandas.DataFrame or dict of lists
        One row (entry) per round, columns ``"train-<metric>-mean"``,
        ``"train-<metric>-std"``, ``"test-<metric>-mean"``, ``"test-<metric>-std"`` for
        each metric (the built-in ones, then a custom metric's): the mean and the
        population standard deviation (``numpy.std``, as XGBoost) over the folds.
    """
    params, metrics = _cv_params(params, metrics)
    data, num_boost_round = training_data(X, y, num_boost_round, dtrain, sample_weight,
                                          group, qid, base_margin, feature_names,
                                          categorical_features, None)
    params = with_feature_weights(params, data.dmatrix)  # each fold samples with them
    if hasattr(data.X, "mapper") and hasattr(data.X, "matrix"):  # gbm.bins.quantile.BinnedRows
        # each fold's model is gbm.train's on the fold's training rows, which learns its
        # bin edges from those rows; a QuantileDMatrix keeps the edges of all the rows and
        # no values to learn others from: its folds' models could not be cv's on the
        # arrays (XGBoost refuses cv on a QuantileDMatrix too)
        raise ValueError(
            "cv on a QuantileDMatrix is not supported: each fold learns its bin edges from "
            "its own training rows, and a QuantileDMatrix holds only the bins of the edges "
            "of all its rows (not the values), so its folds would train other models than "
            "cv on the same data in memory. Pass the arrays (or a DMatrix of them); for data "
            "larger than memory, train each fold yourself: a QuantileDMatrix (or "
            "ExtMemQuantileDMatrix) of the fold's training rows, its test rows with ref= "
            "that matrix, and gbm.train gives the fold's model of cv")
    check_rounds(num_boost_round)
    custom_metric = either_spelling("custom_metric", custom_metric, "feval", feval)
    nfold = check_nfold(nfold, folds)
    scored = dict(params, eval_metric=metrics) if metrics else params
    labels, ptr, p = _checked_rows(data, scored)
    get_objective(p).check_labels(labels)  # an error names the row as the caller numbers it
    packs = _packs(data, params, metrics, split_rows(labels.shape[0], nfold, labels, ptr,
                                                     stratified=stratified, folds=folds,
                                                     shuffle=shuffle, seed=seed),
                   ptr, fpreproc)
    container = CallbackContainer([], _cv_callbacks(callbacks, verbose_eval, show_stdv,
                                                    early_stopping_rounds, maximize),
                                  LOCAL, (0, num_boost_round))
    # the built-in metrics' count (else the objective's one metric): a custom one's follow
    n_builtin = len(validate_params(packs[0].params)["eval_metric"] or [None])
    slots, train_fold = _fold_training(packs, data, p, num_boost_round, obj, custom_metric)
    booster, results = CVBooster(packs), {}
    with FoldRounds(len(packs), slots, train_fold) as rounds:
        for pack, bst in zip(packs, rounds.ready()):
            pack.bst = bst
        booster = container.before_training(booster)
        for epoch in range(num_boost_round):
            stop = container.before_iteration(booster, epoch)
            rounds.start(epoch, stop)
            if stop:
                break
            _record(results, booster, _aggregate(rounds.scores(epoch), n_builtin))
            stop = container.after_iteration(booster, epoch)
            rounds.end(epoch, stop)
            if stop:
                if booster.best_iteration is not None:  # the results end at the best round
                    results = {k: v[:booster.best_iteration + 1] for k, v in results.items()}
                break
    container.after_training(booster)
    return _as_frame(results) if as_pandas else results


def _fold_training(packs, data, p, num_boost_round, obj, custom_metric):
    """``(slots, train_fold)``: how many folds compute at once, and ``train_fold(k, hook)``,
    fold k's ``gbm.train`` (on its share of the threads, ``hook`` its last callback)."""
    cells = max(pack.dtrain.num_row() * pack.dtrain.num_col() for pack in packs)
    slots, threads = fold_slots(p["device"], p["n_jobs"], len(packs), cells)
    lock = threading.Lock()
    obj, custom_metric = one_at_a_time(obj, lock), one_at_a_time(custom_metric, lock)
    # the folds' DMatrix carry the data's feature types; categorical_features= goes as given
    categorical = (None if data.dmatrix is not None and data.dmatrix.feature_types is not None
                   else data.categorical_features)

    def train_fold(k, hook):
        pack = packs[k]
        params = pack.params if threads[k] is None else _set(pack.params, "n_jobs", threads[k])
        return train(params, pack.dtrain, num_boost_round=num_boost_round,
                     evals=[(pack.dtrain, SETS[0]), (pack.dtest, SETS[1])], obj=obj,
                     custom_metric=custom_metric, callbacks=[hook],
                     categorical_features=categorical)

    return slots, train_fold


def _record(results, booster, aggregated):
    """Append a round's ``(set-metric, mean, std)`` to the results and to the callbacks'
    log (``booster.evals_result``)."""
    for key, mean, std in aggregated:
        results.setdefault(key + "-mean", []).append(mean)
        results.setdefault(key + "-std", []).append(std)
        name, metric = key.split("-", 1)
        booster.evals_result.setdefault(name, {}).setdefault(metric, []).append((mean, std))


def _cv_params(params, metrics):
    """``(params, metrics)``: the parameters as a dict without ``eval_metric`` (what
    ``fpreproc`` gets, as in XGBoost), and the metric names (``metrics``, else the
    parameters' ``eval_metric``) checked."""
    params = dict(params_dict(params))  # XGBoost's list of pairs: eval_metric accumulates
    from_params = params.pop("eval_metric", None)
    if isinstance(metrics, str):
        metrics = [metrics]
    if metrics is None or not isinstance(metrics, (list, tuple)):
        raise TypeError(f"metrics must be a metric name or a list of them, got {metrics!r}")
    if not metrics and from_params is not None:
        metrics = [from_params] if isinstance(from_params, str) else list(from_params)
    for i, name in enumerate(metrics):
        try:
            check_metric_name(name)
        except ValueError as err:
            raise ValueError(f"metrics[{i}]: {err}") from None
    return params, list(metrics)


def _set(params, name, value):
    """``params`` with ``name`` set to ``value``, its aliases (``nthread``) dropped."""
    out = {key: v for key, v in params.items() if ALIASES.get(key, key) != name}
    out[name] = value
    return out


def _checked_rows(data, params):
    """``(labels, query_ptr, p)``: the labels (NumPy; survival:aft's intervals, (n, 2)) and
    query-group offsets of the whole data, checked here so that an error names the rows as
    the caller numbers them, and the validated ``params`` (``num_target`` from the labels)."""
    n_rows = check_X(data.X, allow_category=True).shape[0]
    labels, p = labels_and_params(data, validate_params(params), params, n_rows)
    labels = np.asarray(to_host(labels))
    ptr = group_ptr(data.group, data.qid, n_rows)
    w = data.sample_weight
    if w is not None and np.ndim(w) > 0:
        allowed = (n_rows,) if ptr is None else (n_rows, ptr.shape[0] - 1)
        if np.ndim(w) != 1 or len(w) not in allowed:
            per = "" if ptr is None else f" (or one per query group, {ptr.shape[0] - 1})"
            raise ValueError(f"sample_weight has shape {np.shape(w)}; expected one weight per "
                             f"row, {n_rows}{per}")
    return labels, ptr, p


def _packs(data, params, metrics, folds, ptr, fpreproc):
    """One ``CVPack`` per fold, after ``fpreproc``; the fold's parameters score
    ``metrics`` (when given: over an ``eval_metric`` of ``fpreproc``'s)."""
    if fpreproc is not None and not callable(fpreproc):
        raise TypeError(f"fpreproc must be callable, got {fpreproc!r}")
    packs = []
    for k, fold in enumerate(folds):
        dtrain, dtest = fold_dmatrix(data, fold.train, ptr), fold_dmatrix(data, fold.test, ptr)
        fold_params = dict(params)
        if fpreproc is not None:
            dtrain, dtest, fold_params = fpreproc(dtrain, dtest, dict(params))
        if metrics:
            fold_params = _set(fold_params, "eval_metric", list(metrics))
        packs.append(CVPack(dtrain, dtest, fold_params))
    return packs


def _cv_callbacks(callbacks, verbose_eval, show_stdv, early_stopping_rounds, maximize):
    """The caller's callbacks, then printing, then early stopping (xgboost.cv's order)."""
    given = [] if callbacks is None else list(dict.fromkeys(callbacks))
    for cb in given:
        if not isinstance(cb, TrainingCallback):
            raise TypeError(f"callbacks must be gbm.callback.TrainingCallback instances, got "
                            f"{type(cb).__name__}")
    period = check_period(verbose_eval)
    if period:
        given.append(EvaluationMonitor(period, show_stdv=show_stdv))
    patience = check_patience(early_stopping_rounds)
    if patience is not None:
        given.append(EarlyStopping(patience, maximize=maximize))
    return given


def _aggregate(fold_scores, n_builtin):
    """``[(set-metric, mean, std), ...]`` over the folds, in xgboost.cv's order: the
    built-in metrics on train, then on test, then a custom metric's on train and test.
    ``fold_scores``: each fold's ``[(set, metric, score), ...]``, per set the built-in
    metrics then the custom ones."""
    first = [(name, metric) for name, metric, _ in fold_scores[0]]
    for k, scores in enumerate(fold_scores):
        if [(name, metric) for name, metric, _ in scores] != first:
            raise ValueError(f"fold {k} scored {[s[:2] for s in scores]} but fold 0 {first}; "
                             "a custom metric must return the same names on every fold")
    per_set = {name: [i for i, (n, _) in enumerate(first) if n == name] for name in SETS}
    order = ([i for name in SETS for i in per_set[name][:n_builtin]]
             + [i for name in SETS for i in per_set[name][n_builtin:]])
    out = []
    for i in order:
        values = np.array([scores[i][2] for scores in fold_scores], dtype=np.float64)
        name, metric = first[i]
        out.append((f"{name}-{metric}", float(np.mean(values)), float(np.std(values))))
    return out


def _as_frame(results):
    """The results as a pandas DataFrame, or as they are without pandas (as XGBoost)."""
    try:
        import pandas as pd
    except ImportError:
        return results
    return pd.DataFrame.from_dict(results)
