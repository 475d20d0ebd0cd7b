"""The features that can split in a tree, and histograms of those only (sparse layouts).

Every candidate split leaves one child with value rows of its feature only (a numeric
split's lower or upper bins, a category set, the other categories), so its hessian sum
is at most the feature's value rows' sum in the node, which is at most the root's when
no hessian is negative. A feature whose value rows weigh less than ``min_child_weight``
at the root (or nothing) can then never split in the tree: leaving it out of every
histogram below the root changes no split, only the memory and the work. On wide sparse
data most features are such (a hashed n-gram seen in three rows): a level's histograms
shrink from the columns to the few thousand features that can split.

Used for layouts without missing slots (a histogram there holds value bins only), when
every hessian of the tree's rows is non-negative (a user's objective may make some
negative: then every feature stays), and when it leaves out at least half the slots.
"""
import dataclasses

import numpy as np


@dataclasses.dataclass
class HistogramLayout:
    """The histograms a tree's nodes get.

    feature_offsets : int32 (n + 1,), each feature's slots; missing_slots : int, as in
        ``evaluate_splits``
    features : int64 (n,) or None: the features' ids (None: every feature, in order)
    is_categorical, monotone : their entries of the fit's arrays
    slot_map : int32 (n_slots of the bin matrix,) on the device, or None: each slot's
        place in these histograms (-1: left out)
    """

    feature_offsets: np.ndarray
    missing_slots: int
    features: np.ndarray
    is_categorical: np.ndarray
    monotone: np.ndarray
    slot_map: object = None

    @property
    def n_slots(self):
        return int(self.feature_offsets[-1])

    @classmethod
    def of(cls, data):
        """Every feature of ``data`` (a ``TreeData``)."""
        return cls(data.feature_offsets, data.missing_slots, None, data.is_categorical,
                   data.monotone)


def active_layout(data, root_hist, scales, min_child_weight, backend):
    """``(HistogramLayout, the roots' histograms in it)`` of the features that can split
    in the trees of ``root_hist`` (int64 (n_roots, n_slots, 2), every feature; ``scales``
    float64 (n_roots, 2), each tree's); None when the full layout stays (a dense matrix,
    a negative hessian, or too little left out). ``min_child_weight``: the fit's.

    A feature is kept when, in any of the trees, its value rows' hessian sum at the root
    is positive and at least ``min_child_weight`` (scaled as ``evaluate_splits`` scales
    it: exact, the scales are powers of two)."""
    if data.missing_slots:
        return None
    offsets = np.asarray(data.feature_offsets, np.int64)
    hess = backend.to_host(root_hist[:, :, 1])
    if (hess < 0).any():  # a negative bin: some hessian is negative, no bound holds
        return None
    value_h = np.add.reduceat(hess, offsets[:-1], axis=1) if offsets[-1] else \
        np.zeros((hess.shape[0], offsets.shape[0] - 1), np.int64)
    value_h[:, offsets[1:] == offsets[:-1]] = 0  # reduceat reads a slot for a width of 0
    weight = value_h * (1.0 / np.asarray(scales, np.float64)[:, 1:2])
    keep = ((value_h > 0) & (weight >= min_child_weight)).any(axis=0)
    widths = np.diff(offsets)
    if 2 * int(widths[keep].sum()) > int(offsets[-1]):
        return None
    features = np.flatnonzero(keep)
    kept_slots = np.flatnonzero(np.repeat(keep, widths))  # the kept features' slots, in order
    slot_map = np.full(int(offsets[-1]), -1, dtype=np.int32)
    slot_map[kept_slots] = np.arange(kept_slots.shape[0], dtype=np.int32)
    layout = HistogramLayout(
        np.concatenate(([0], np.cumsum(widths[features]))).astype(np.int32), 0, features,
        np.asarray(data.is_categorical)[features], np.asarray(data.monotone)[features],
        backend.asarray(slot_map))
    return layout, root_hist[:, backend.asarray(kept_slots)]
