"""A round of DART training (``booster="dart"``) around the growth of its trees
(``gbm.training.rounds``): before it, the round's dropped trees are drawn and the training
rows' margins set to the model's without them, where the gradients are taken; after it,
the tree weights are normalised (``gbm.tree.dart``).

The margins are computed again from the rows' start, tree by tree (``weighted_margins``),
whenever a round drops trees or the margins do not hold every tree at its weight (after
a round that dropped trees, and at the start of a continued fit): so they are the same
bits in a fit of 15 rounds and in one of 10 continued by 5. A round that drops none
keeps the margins its growth left, which are those bits too (trees of weight 1, added in
order). Cost: a round that drops trees walks every training row through every kept tree
once, as XGBoost's DART does (it cannot use its prediction cache either).

A continued model's trees split at thresholds, and their ``split_bin`` are bins of the
edges that model was trained on, which may not be the fit's (a model imported from
XGBoost, or trained on other rows or with another ``max_bin``): each is walked on the
fit's bins with its thresholds' bins among the fit's edges (``gbm.tree.rebin``) when every
threshold is one of them, else on the training rows' raw values (held for the fit then),
as the continued fit's first margins are (``ContinuedTrees``).
"""
import itertools

import numpy as np

from ..model.booster import add_raw_margins
from ..tree.dart import drop_trees, normalized_weights
from ..tree.margins import add_weighted
from ..tree.rebin import rebinned_tree
from ..tree.structure import Forest


class Dropout:
    """DART's state over a fit's rounds.

    start : float64 (n_groups, n_rows) on the device, each training row's margin before
        any tree (the base margin, or the row's own ``base_margin``)
    current : bool, whether ``fit.margins`` holds every tree at its weight (computed as
        ``weighted_margins`` computes it)
    continued : ``ContinuedTrees`` of the continued model, or None
    """

    def __init__(self, start, current, continued=None):
        self.start, self.current, self.continued = start, current, continued
        self.dropped, self.n_old = None, 0

    def begin_round(self, fit, booster, round_):
        """Draw the round's dropped trees and set ``fit.margins`` to the margins of the
        others, at their weights."""
        weights = booster.weight_drop
        self.n_old = len(weights)
        self.dropped = drop_trees(weights, fit.params, round_)
        if self.dropped.size == 0 and self.current:
            return
        kept = np.setdiff1d(np.arange(self.n_old), self.dropped).tolist()
        fit.margins[...] = self.start
        old = self.continued
        # runs of trees walked alike, in the trees' order: each row sums them in order
        for raw, run in itertools.groupby(kept, lambda i: old is not None and old.raw(i)):
            run = list(run)
            trees = [old.trees[i] if old is not None and i < len(old.trees)
                     else booster.trees[i] for i in run]
            groups, w = [booster.tree_group[i] for i in run], [weights[i] for i in run]
            if raw:
                old.add_raw(fit.backend, trees, groups, w, fit.margins)
            else:
                add_weighted(fit.backend, fit.data, trees, groups, w, fit.margins)

    def end_round(self, fit, booster):
        """Weigh the round's new trees and the dropped ones (``normalized_weights``)."""
        p = fit.params
        n_new = len(booster.trees) - self.n_old
        booster.set_tree_weights(normalized_weights(
            booster.weight_drop[:self.n_old], self.dropped, n_new, p["learning_rate"],
            p["normalize_type"]))
        # with no drop, the growth added the new trees (weight 1) to the margins of all
        # the others: every tree at its weight
        self.current = self.dropped.size == 0


class ContinuedTrees:
    """A continued model's trees as DART's rounds walk them: ``trees`` (each with its
    ``split_bin`` among the fit's edges, ``gbm.tree.rebin``, where every threshold is one
    of them) and the rows' raw values ``X`` (float32 matrix or ``SparseMatrix``, on the
    fit's device) for the trees that are not (None when none is). ``X`` given as None
    (rows binned before the fit): a tree that cannot be walked on the bins is refused
    (``ValueError``, ``gbm.tree.rebin``'s)."""

    def __init__(self, trees, cuts, X, feature_names=None):
        self.trees, self._raw = [], []
        for i, tree in enumerate(trees):
            try:
                tree = rebinned_tree(tree, i, cuts, feature_names)
                self._raw.append(False)
            except ValueError:
                if X is None:
                    raise  # rows binned before the fit: no raw values to walk
                self._raw.append(True)
            self.trees.append(tree)
        self.X = X if any(self._raw) else None

    def raw(self, i):
        """Whether tree ``i`` of the model is walked on the raw values."""
        return i < len(self._raw) and self._raw[i]

    def add_raw(self, backend, trees, groups, weights, margins):
        """``margins`` (float64 (n_groups, n_rows)) ``+=`` the trees' leaf values times
        their weights on the raw rows, tree by tree in order."""
        for group in range(margins.shape[0]):
            ids = [i for i, g in enumerate(groups) if g == group]
            if ids:
                forest = Forest([trees[i] for i in ids], [0] * len(ids),
                                [weights[i] for i in ids])
                with backend.threads(self.X.shape[0] * self.X.shape[1] * max(1, len(ids) // 8)):
                    add_raw_margins(backend.kernels, self.X, forest,
                                    margins[group].reshape(-1, 1))
