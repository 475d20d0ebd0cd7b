"""What every tree of a fit reads (``TreeData``): the binned rows, as a bin matrix of any
layout (``gbm.bins``), and the features' layout, edges and constraints."""
from dataclasses import dataclass

import numpy as np

from ..kernels.layout import cat_words


@dataclass
class TreeData:
    """What every tree of a fit reads: the binned rows and the features' layout.

    matrix : the binned rows, a bin matrix of any layout (``gbm.bins``: its
        arrays on the backend's device; the small arrays below stay on the host). The
        grower reads the rows only through it: histograms, partitions, leaf values.
    n_bins : int32 (n_features,), value bins (bin n_bins[f] = missing)
    cuts : the bin edges, ``gbm.bins.binning.RaggedCuts`` (for raw thresholds)
    is_categorical : uint8 (n_features,)
    monotone : int8 (n_features,), +1 / -1 / 0
    interaction : bool (n_sets, n_features) or None, ``interaction_constraints``
        (``gbm.tree.constraints.interaction_matrix``)
    """

    matrix: object
    n_bins: np.ndarray
    cuts: object
    is_categorical: np.ndarray
    monotone: np.ndarray
    interaction: np.ndarray = None

    @property
    def n_features(self):
        return self.matrix.n_features

    @property
    def feature_offsets(self):
        """int32 (n_features + 1,): each feature's histogram slots (the matrix's layout)."""
        return self.matrix.feature_offsets

    @property
    def missing_slots(self):
        """1 when a feature's last slot holds its missing rows' sums, 0 when histograms
        have value slots only (``evaluate_splits``' ``missing_slots``)."""
        return self.matrix.missing_slots

    @property
    def n_slots(self):
        return int(self.feature_offsets[-1])

    def thresholds(self, feature, split_bin):
        """float32: the raw thresholds of numeric splits, the cut after each split bin; for
        split bin -1 (no value goes left: a one-bin feature's value rows against its
        missing ones) float32's lowest number, below which no value lies."""
        below = np.asarray(split_bin) < 0
        at = self.cuts.offsets[feature] + np.where(below, 0, split_bin)
        values = self.cuts.values[np.minimum(at, max(0, self.cuts.values.size - 1))] \
            if self.cuts.values.size else np.zeros(at.shape, np.float32)
        return np.where(below, np.finfo(np.float32).min, values).astype(np.float32)

    @property
    def cat_words(self):
        """uint32 words of a category set: enough for the widest categorical feature's
        codes (``CAT_WORDS``, 256 codes, unless a feature has more)."""
        cat = np.asarray(self.is_categorical) == 1
        return cat_words(np.asarray(self.n_bins)[cat].max(initial=0))
