"""Evaluation sets scored after every round, and early stopping."""
import copy

import numpy as np

from ..data.inputs import check_sample_weight, check_X, to_host
from ..metrics import get_metric, maximizes
from ..objectives.multi_target import check_targets
from ..data.queries import make_queries
from ..tree.structure import Forest


class EvalSet:
    """An evaluation set whose margin is updated tree by tree on its bins."""

    def __init__(self, name, X, y, w, queries, booster, mapper, backend, base_margin=None,
                 row_ids=None):
        """``base_margin``: float64 (n_groups, n_rows), each row's start instead of the
        model's base margin (see ``gbm.data.compat.check_base_margin``), or None. ``row_ids``:
        int64 (n_rows,), this rank's rows' places in the whole eval set (several ranks;
        None: the ranks' rows in rank order are the eval set's)."""
        self.name, self.y, self.w, self.queries = name, y, w, queries
        self.row_ids = row_ids
        self.X = booster._check_predict_X(X, name=f"evals[{name!r}] X",
                                          shard=backend.collective.world_size > 1)
        if backend.name == "cpu":  # GPU input to a CPU fit: copied to the host once
            self.X = to_host(self.X)
        self.binned = True
        try:
            self.bins = mapper.transform(self.X, backend.kernels, backend.xp)
        except ValueError:  # missing values where the training data had none and 256 bins
            self.binned = False
        self.rows = backend.xp.arange(self.X.shape[0])
        self.n_bins = mapper.n_bins
        if booster.trees:  # a model being continued: start from its predictions, on raw
            # values (its trees' split bins belong to the bin edges it was trained with)
            margin = booster._predict_checked(self.X, output_margin=True)
            self.margin = backend.xp.ascontiguousarray(
                backend.asarray(margin).reshape(self.X.shape[0], booster.n_groups))
        else:
            self.margin = backend.xp.tile(backend.asarray(booster.base_margin),
                                          (self.X.shape[0], 1))
        if base_margin is not None:
            self.margin = backend.xp.ascontiguousarray(
                self.margin - backend.asarray(booster.base_margin)[None, :]
                + backend.asarray(base_margin.T))

    def add_trees(self, backend, f):
        """Add the margins of the trees of ``f`` (a ``Forest``: the round's new trees)."""
        with backend.threads(self.X.size * max(1, f.n_trees // 8)):
            if self.binned:
                backend.kernels.predict_binned(self.bins, self.rows, self.n_bins, f.walk_binned,
                                               f.cat_bits, f.value, f.tree_offsets, f.tree_group,
                                               f.tree_depth, self.margin)
            else:
                backend.kernels.predict(self.X, f.walk, f.cat_bits, f.value, f.tree_offsets,
                                        f.tree_group, f.tree_depth, self.margin)


_EVAL_KEYS = {"X", "y", "name", "sample_weight", "group", "qid"}


def unpack_eval(entry, index=0, shard=False):
    """One entry of ``evals``, checked: ``(name, X, y, row_weights, queries)``.

    An entry is ``(X, y, name)``, ``(X, y, sample_weight, name)``, or a dict with keys
    ``X``, ``y``, ``name`` and optionally ``sample_weight``, ``group``, ``qid`` (query
    groups for ranking: then ``sample_weight`` holds one weight per group). ``queries`` is
    a ``gbm.data.queries.QueryGroups`` or None. ``shard``: one rank's part of a distributed
    eval set (it may have no rows).
    """
    group = qid = None
    if isinstance(entry, dict):
        unknown, missing = set(entry) - _EVAL_KEYS, {"X", "y", "name"} - set(entry)
        if unknown or missing:
            raise ValueError(f"evals[{index}] is a dict with unknown keys {sorted(unknown)} or "
                             f"missing keys {sorted(missing)}; allowed keys: {sorted(_EVAL_KEYS)}")
        X, y, name = entry["X"], entry["y"], entry["name"]
        w, group, qid = entry.get("sample_weight"), entry.get("group"), entry.get("qid")
    elif len(entry) == 3:
        X, y, name = entry
        w = None
    elif len(entry) == 4:
        X, y, w, name = entry
    else:
        raise ValueError("each entry of evals must be (X, y, name), (X, y, sample_weight, name) "
                         "or a dict with keys X, y, name (and sample_weight, group, qid)")
    X_checked = check_X(X, name=f"evals[{name!r}] X", allow_category=True, shard=shard)
    n_rows = X_checked.shape[0]
    y = check_targets(y, n_rows, name=f"evals[{name!r}] y")
    queries = make_queries(group, qid, w, n_rows, what=f"evals[{name!r}] ", shard=shard)
    if queries is not None:
        return name, X, y, queries.row_weight(), queries
    return name, X, y, None if w is None else check_sample_weight(w, n_rows, shard=shard), None


class Evaluator:
    """Scores every eval set with every metric after each round, prints XGBoost-style
    lines, and tells when to stop early: when the last metric on the last eval set has
    not improved for ``early_stopping_rounds`` rounds (XGBoost's rule)."""

    def __init__(self, eval_sets, metric_names, objective, early_stopping_rounds, maximize,
                 verbose, custom_metric=None, params=None):
        self.eval_sets, self.objective = eval_sets, objective
        if isinstance(verbose, bool) or verbose is None:
            self.period = int(bool(verbose))
        elif isinstance(verbose, (int, np.integer)) and verbose >= 0:
            self.period = int(verbose)  # XGBoost's verbose_eval=N: every N rounds
        else:
            raise ValueError(f"verbose_eval must be True, False or an integer >= 0 (print every "
                             f"that many rounds), got {verbose!r}")
        self.unprinted = None  # the last round's line when it was not printed
        self.names = list(metric_names)
        self.metrics = [get_metric(name, params) for name in self.names]
        self.custom_metric = custom_metric
        self.patience = early_stopping_rounds
        if early_stopping_rounds is not None and not eval_sets:
            raise ValueError("early_stopping_rounds needs at least one eval set (evals / eval_set)")
        if custom_metric is not None and not callable(custom_metric):
            raise TypeError(f"custom_metric must be callable, got {custom_metric!r}")
        last = self.names[-1]
        default = False if custom_metric is not None else maximizes(last)
        self.maximize = default if maximize is None else bool(maximize)
        self.last_name = None  # the metric early stopping watches
        self.best_score, self.best_iteration = None, None

    def resume(self, booster, best_iteration, best_score, evals_result):
        """Go on from an interrupted fit's state (its eval scores so far and best round),
        so that early stopping ends where the uninterrupted fit would have."""
        booster.evals_result = copy.deepcopy(evals_result)
        booster.best_iteration, booster.best_score = best_iteration, best_score
        self.best_iteration, self.best_score = best_iteration, best_score
        if self.eval_sets and evals_result:
            self.last_name = list(evals_result[self.eval_sets[-1].name])[-1]

    def after_round(self, booster, new_trees, backend):
        """Score the round just trained; returns True when training should stop."""
        if not self.eval_sets:
            return False
        round_ = booster.num_boosted_rounds - 1
        groups = booster.tree_group[len(booster.trees) - len(new_trees):]
        line = [f"[{round_}]"]
        collective = backend.collective
        forest = Forest(new_trees, groups)  # packed once for every eval set
        for es in self.eval_sets:
            es.add_trees(backend, forest)
            # metrics on the host, in NumPy, whatever the backend: a score that drives
            # early stopping must be the same bits everywhere
            pred = self.objective.transform_for_metric(backend.to_host(es.margin))
            scores = [(name, _score(metric, es, pred, collective))
                      for name, metric in zip(self.names, self.metrics)]
            if self.custom_metric is not None:
                seen = (pred if not getattr(self.custom_metric, "wants_margin", False)
                        else _margin_view(backend.to_host(es.margin)))
                result = _custom_score(self.custom_metric, es, seen, collective)
                pairs = [result] if isinstance(result, tuple) else list(result)
                for name, score in pairs:
                    scores.append((str(name), float(score)))
            for name, score in scores:
                booster.evals_result.setdefault(es.name, {}).setdefault(name, []).append(score)
                line.append(f"{es.name}-{name}:{score:.5f}")
            self.last_name = scores[-1][0]
        if self.period and collective.rank == 0:
            if round_ % self.period == 0:
                print("\t".join(line), flush=True)
                self.unprinted = None
            else:
                self.unprinted = "\t".join(line)
        if self.patience is None:
            return False
        score = booster.evals_result[self.eval_sets[-1].name][self.last_name][-1]
        better = self.best_score is None or (score > self.best_score if self.maximize
                                             else score < self.best_score)
        if better:
            self.best_score, self.best_iteration = score, round_
            booster.best_iteration, booster.best_score = round_, score
        # every rank holds the same scores; rank 0's decision binds them all regardless
        return collective.broadcast(round_ - self.best_iteration >= self.patience)


    def finish(self, collective):
        """After training: print the last round's scores if its line was skipped (as
        XGBoost does with ``verbose_eval=N``)."""
        if self.unprinted is not None and collective.rank == 0:
            print(self.unprinted, flush=True)
        self.unprinted = None


def _margin_view(margin):
    return margin[:, 0] if margin.shape[1] == 1 else margin


def _custom_score(metric, es, pred, collective):
    """A user's metric sees the whole eval set: with several ranks, their rows gathered
    and put in the eval set's own order (by ``row_ids``; rank order without them)."""
    y, pred, w = es.y, pred, es.w
    if collective.world_size > 1:
        ids = es.row_ids
        parts = collective.allgather((y, pred, w, ids))
        y, pred = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        w = None if w is None else np.concatenate([p[2] for p in parts])
        if ids is not None:
            order = np.argsort(np.concatenate([p[3] for p in parts]), kind="stable")
            y, pred = y[order], pred[order]
            w = None if w is None else w[order]
    return metric(y, pred, w)


def _score(metric, es, pred, collective):
    """One metric on one eval set (over every rank); ranking metrics also get its query
    groups. With several targets, a pointwise metric is over every (row, target) entry,
    each with its row's weight (as XGBoost scores multi-target regression)."""
    if getattr(metric, "needs_queries", False):
        return metric(es.y, pred, es.w, es.queries, collective)
    if es.y.ndim == 2:
        k = es.y.shape[1]
        w = None if es.w is None else np.repeat(es.w, k)
        return metric(es.y.reshape(-1), np.asarray(pred).reshape(-1), w, collective)
    return metric(es.y, pred, es.w, collective)
