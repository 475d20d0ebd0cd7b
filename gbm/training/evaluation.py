"""Eval sets scored after every round: ``EvalSet`` keeps a set's margins up to date on
its bins, tree by tree (for a DART model, computed again from the start after a round
that changed earlier trees' weights), and the ``Evaluation`` callback scores every set with every
metric into the booster's ``evals_result`` (the ``evals_log`` later callbacks read).
``train``'s printing and early stopping (``RoundMonitor``, ``LastScoreStopping``) read the
round's scores as ``Evaluation`` made them, whatever else a caller's callback logs."""
import numpy as np

from ..callback import EarlyStopping, EvaluationMonitor, TrainingCallback
from ..data.categorical import check_same_categories
from ..data.inputs import to_host
from ..bins.quantile import BinnedRows
from ..data.sparse import SparseMatrix
from ..metrics import get_metric
from ..model.booster import add_raw_margins
from ..model.scoring import margin_view as _margin_view, score as _score
from ..model.vector_predict import add_binned_vector_margins, add_vector_margins
from ..tree.rebin import binned_margins, rebinned_trees, start_margins
from ..tree.structure import Forest


class EvalSet:
    """An eval set (a ``gbm.data.eval_sets.CheckedEval``) whose margins are updated tree
    by tree on its bins."""

    def __init__(self, checked, booster, mapper, backend):
        """``checked.base_margin``: float64 (n_groups, n_rows), each row's start instead of
        the model's base margin, or None. ``checked.row_ids``: int64 (n_rows,), this
        rank's rows' places in the whole eval set (several ranks; None: the ranks' rows in
        rank order are the eval set's)."""
        self.name, self.y, self.w, self.queries = (checked.name, checked.y, checked.weight,
                                                   checked.queries)
        self.row_ids = checked.row_ids
        # a continued model's trees (their split bins are bins of its own edges), as a
        # round that changes earlier trees' weights (DART) walks them again: on the raw
        # rows (``raw_walk``), or rebinned to this set's edges (``old_trees``)
        self.raw_walk, self.old_trees = False, None
        if isinstance(checked.X, BinnedRows):  # a QuantileDMatrix: binned already
            self._binned(checked, booster, mapper, backend)
            return
        self.X = booster._check_predict_X(checked.X, name=f"evals[{self.name!r}] X",
                                          shard=backend.collective.world_size > 1)
        if backend.name == "cpu":  # GPU input to a CPU fit: copied to the host once
            self.X = to_host(self.X)
        self.binned = True
        # a sparse eval set gets sparse bins (its leaves are the same in any layout)
        layout = "sparse" if isinstance(self.X, SparseMatrix) else "dense"
        try:
            self.bins = mapper.bin_matrix(self.X, layout, backend.kernels, backend.xp)
        except ValueError:  # missing values where the training data had none and 256 bins
            self.binned = False
        self.rows = backend.xp.arange(self.X.shape[0])
        self.base_margin = checked.base_margin
        self.margin = self._start(booster, backend, checked.base_margin)
        self.raw_walk = bool(booster.trees)
        # a DART model's tree weights that the margins hold (None: every weight 1)
        self.weights = None if booster.weight_drop is None else list(booster.weight_drop)

    def _binned(self, checked, booster, mapper, backend):
        """``__init__`` for an eval set binned before the fit: with the training edges."""
        X = checked.X
        if not _same_edges(X.mapper, mapper) or X.shape[1] != booster.n_features:
            raise ValueError(f"evals[{self.name!r}] is a QuantileDMatrix binned with other bin "
                             "edges than the training data's: the training data should be "
                             "used as a reference, QuantileDMatrix(..., ref=<the training "
                             "QuantileDMatrix or DMatrix>)")
        self.X, self.binned, self.bins = X, True, X.on_device(backend)
        self.rows = backend.xp.arange(X.shape[0])
        self.base_margin = checked.base_margin
        if booster.trees and _walks_vectors(booster):  # each vector tree walked once
            check_same_categories(booster.categories, X.categories, "the model")
            trees = rebinned_trees(booster.trees, X.mapper.cuts, booster.feature_names,
                                   "the model")
            self.margin = start_margins(
                backend, X.shape[0], booster.base_margin,
                None if checked.base_margin is None else backend.to_host(checked.base_margin).T,
                booster.n_groups)
            with backend.threads(X.shape[0] * X.shape[1]
                                 * max(1, len(trees) * booster.n_groups // 8)):
                add_binned_vector_margins(backend, self.bins, self.rows, trees, self.margin)
        elif booster.trees:  # a continued model: its trees on the bins (gbm.tree.rebin)
            check_same_categories(booster.categories, X.categories, "the model")
            self.old_trees = rebinned_trees(booster.trees, X.mapper.cuts,
                                            booster.feature_names, "the model")
            forest = Forest(self.old_trees, booster.tree_group, booster.weight_drop)
            self.margin = binned_margins(
                backend, self.bins, forest, booster.base_margin,
                None if checked.base_margin is None else backend.to_host(checked.base_margin).T,
                booster.n_groups)
        else:
            self.margin = self._start(booster, backend, checked.base_margin)
        self.weights = None if booster.weight_drop is None else list(booster.weight_drop)

    def _start(self, booster, backend, base_margin):
        if booster.trees:  # a model being continued: start from its predictions, on raw
            # values (its trees' split bins belong to the bin edges it was trained with),
            # summed from the rows' own start when they have one (an uninterrupted fit's bits)
            margin = booster._predict_checked(
                self.X, output_margin=True, base_margin=None if base_margin is None
                else backend.to_host(base_margin).T)
            return backend.xp.ascontiguousarray(
                backend.asarray(margin).reshape(self.X.shape[0], booster.n_groups))
        margin = backend.xp.tile(backend.asarray(booster.base_margin), (self.X.shape[0], 1))
        if base_margin is not None:
            margin = backend.xp.ascontiguousarray(
                margin - backend.asarray(booster.base_margin)[None, :]
                + backend.asarray(base_margin.T))
        return margin

    def update(self, backend, booster, new):
        """The margins of ``booster``, whose last round's trees are new (``new``: a
        ``Forest`` of them, or a list of a vector-leaf model's trees, ``_round_trees``):
        those trees added, or (a DART model whose earlier trees' weights changed) every
        tree at its weight added to the rows' start, as ``predict`` adds them."""
        weights = booster.weight_drop
        if isinstance(new, list):  # vector leaves: never DART (gbm.tree.vector_leaf)
            self.add_trees(backend, new)
        elif weights is None or self.weights == weights[:len(weights) - new.n_trees]:
            self.add_trees(backend, new)
        else:
            start = (backend.xp.tile(backend.asarray(booster.base_margin), (self.X.shape[0], 1))
                     if self.base_margin is None else backend.asarray(self.base_margin.T))
            self.margin[...] = start
            trees = booster.forest() if self.old_trees is None else Forest(
                self.old_trees + booster.trees[len(self.old_trees):], booster.tree_group,
                weights)
            self.add_trees(backend, trees, raw=self.raw_walk)
        self.weights = None if weights is None else list(weights)

    def add_trees(self, backend, f, raw=False):
        """Add the margins of the trees of ``f``: a ``Forest``, or a list of vector-leaf
        ``Tree``s, each walked once per row and its leaf vector added
        (``gbm.model.vector_predict``: the same additions in the same order as the
        ``Forest`` of their one-output trees, so the same bits). ``raw``: a ``Forest``
        walked on the raw rows even where they are binned (the leaves are the same)."""
        if isinstance(f, list):
            if not self.binned and backend.name != "cpu":  # raw device rows: the
                f = Forest(f, [0] * len(f))  # one-output trees' kernels read them
            else:
                with backend.threads(self.X.size * max(1, len(f) * self.margin.shape[1] // 8)):
                    if self.binned:
                        add_binned_vector_margins(backend, self.bins, self.rows, f, self.margin)
                    else:
                        add_vector_margins(backend.kernels, self.X, f, self.margin)
                return
        with backend.threads(self.X.size * max(1, f.n_trees // 8)):
            if self.binned and not raw:
                self.bins.predict_binned(backend.kernels, self.rows, f.walk_binned, f.cat_bits,
                                         f.value, f.tree_offsets, f.tree_group, f.tree_depth,
                                         self.margin)
            else:
                add_raw_margins(backend.kernels, self.X, f, self.margin)


class Evaluation(TrainingCallback):
    """Scores the round just trained on every eval set with every metric (``metric_names``,
    then a user's ``custom_metric``), appending to ``booster.evals_result``. Every rank
    gets the same scores (exact sums, gathered rows; a user's metric: rank 0's value)."""

    def __init__(self, eval_sets, metric_names, objective, backend, custom_metric=None,
                 params=None):
        """``custom_metric``: gbm's form, ``f(y, prediction, w)`` (``gbm.data.compat``)."""
        self.eval_sets, self.objective, self.backend = eval_sets, objective, backend
        self.names = list(metric_names)
        self.metrics = [get_metric(name, params) for name in self.names]
        self.custom_metric = custom_metric
        self.round_scores = []  # (eval set, metric, score) of the last round, in order

    def after_iteration(self, booster, epoch, evals_log):
        if not self.eval_sets:
            return False
        new = _round_trees(booster)  # once for every set
        self.round_scores = []
        for es in self.eval_sets:
            es.update(self.backend, booster, new)
            for name, score in self._scores(es):
                evals_log.setdefault(es.name, {}).setdefault(name, []).append(score)
                self.round_scores.append((es.name, name, score))
        return False

    def _scores(self, es):
        # metrics on the host, in NumPy, whatever the backend: a score that drives early
        # stopping must be the same bits everywhere
        collective = self.backend.collective
        host_margin = self.backend.to_host(es.margin)
        pred = self.objective.transform_for_metric(host_margin)
        scores = [(name, _score(metric, es, pred, host_margin, collective))
                  for name, metric in zip(self.names, self.metrics)]
        if self.custom_metric is not None:
            seen = (pred if not getattr(self.custom_metric, "wants_margin", False)
                    else _margin_view(host_margin))
            result = _custom_score(self.custom_metric, es, seen, collective)
            pairs = [result] if isinstance(result, tuple) else list(result)
            scores += [(str(name), float(score)) for name, score in pairs]
        return scores



class RoundMonitor(EvaluationMonitor):
    """``verbose_eval``'s printing: the round's scores in the order ``evaluation`` made
    them (a metric a user's metric names again is printed twice, as scored)."""

    def __init__(self, period, evaluation):
        super().__init__(period)
        self.evaluation = evaluation

    def _round_scores(self, evals_log):
        return self.evaluation.round_scores


class LastScoreStopping(EarlyStopping):
    """``early_stopping_rounds``: watches the last score ``evaluation`` made in the round,
    the last eval set's last metric (a user's metric's, when there is one), whatever a
    caller's callback adds to the log."""

    def __init__(self, rounds, evaluation, maximize=None):
        super().__init__(rounds, maximize=maximize)
        self.evaluation = evaluation

    def _watched(self, evals_log):
        name, metric, _ = self.evaluation.round_scores[-1]
        return name, metric

def _walks_vectors(booster):
    """Whether ``booster``'s trees are added to eval margins as vector-leaf trees, each
    walked once (``gbm.model.vector_predict``), not as one tree per output."""
    return booster.vector_leaf and booster.weight_drop is None


def _round_trees(booster):
    """The last round's trees: a vector-leaf model's as a list of its ``Tree``s (its
    ``num_parallel_tree`` trees), never packed once per output; any other model's as a
    ``Forest`` at their weights."""
    if _walks_vectors(booster):
        return list(booster.trees[booster.iteration_indptr[-2]:booster.iteration_indptr[-1]])
    n = booster.num_boosted_rounds
    return booster.forest(n - 1, n)


def _custom_score(metric, es, pred, collective):
    """A user's metric sees the whole eval set: with several ranks, their rows gathered
    and put in the eval set's own order (by ``row_ids``; rank order without them), and
    rank 0's result taken by every rank (it decides early stopping on every rank)."""
    y, w = es.y, es.w
    if collective.world_size == 1:
        return metric(y, pred, w)
    ids = es.row_ids
    parts = collective.allgather((y, pred, w, ids))
    y, pred = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    w = None if w is None else np.concatenate([p[2] for p in parts])
    if ids is not None:
        order = np.argsort(np.concatenate([p[3] for p in parts]), kind="stable")
        y, pred = y[order], pred[order]
        w = None if w is None else w[order]
    return collective.broadcast(metric(y, pred, w))


def _same_edges(a, b):
    """Whether mappers ``a`` and ``b`` have the same edges (one object, or equal cuts)."""
    if a is b:
        return True
    ca, cb = a.cuts, b.cuts
    return bool(np.array_equal(ca.offsets, cb.offsets) and np.array_equal(ca.values, cb.values)
                and np.array_equal(a.n_bins, b.n_bins))
