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
"""
import numpy as np

from ..tree.dart import drop_trees, normalized_weights
from ..tree.margins import weighted_margins


class Dropout:
    """DART's state over a fit's rounds.

    start : float64 (n_groups, n_rows) on the device, each training row's margin before
        any tree (the base margin, or the row's own ``base_margin``)
    current : bool, whether ``fit.margins`` holds every tree at its weight (computed as
        ``weighted_margins`` computes it)
    """

    def __init__(self, start, current):
        self.start, self.current = start, current
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
        weighted_margins(fit.backend, fit.data, [booster.trees[i] for i in kept],
                         [booster.tree_group[i] for i in kept], [weights[i] for i in kept],
                         self.start, fit.margins)

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
