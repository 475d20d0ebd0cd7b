"""The features that can split in a tree, and histograms of those only (sparse layouts).

Every candidate split leaves one child with value rows of its feature only (a numeric
split's lower or upper bins, a category set, the other categories), so its hessian sum
is at most the feature's value rows' sum in the node, which is at most the root's when
no hessian is negative. A feature whose value rows weigh less than ``min_child_weight``
at the root (or nothing) can then never split in the tree: leaving it out of every
histogram below the root changes no split, only the memory and the work. On wide sparse
data most features are such (a hashed n-gram seen in three rows): a level's histograms
shrink from the columns to the few thousand features that can split.

The same bound narrows a tree further, none of it changing a split:

* before the root's histogram (``candidate_layout``): a feature's value rows weigh at
  most its stored entries times the tree's largest hessian, so the root's histogram
  never holds every feature's slots (16 bytes each, a million of them on hashed text);
* level by level (``level_layout``, depthwise): a child's value rows are some of its
  parent's, so a feature that falls short in every parent of a level is left out of
  the level's histograms, the parents' kept slots gathered for the siblings.

Each layout's ``slot_map`` takes the bin matrix's slots straight to its own, one map of
every slot a tree, rewritten in place as the layout narrows.

Used for layouts without missing slots (a histogram there holds value bins only), when
every hessian of the tree's rows is non-negative (a user's objective may make some
negative: then every feature stays), and when it leaves out at least half the slots
(a tenth, level by level).
"""
import dataclasses

import numpy as np

_CHUNK = 1 << 16  # features a pass of candidate_layout bounds at once
LEVEL_SHARE = 0.1  # a level narrows the layout when it leaves out this share of its slots


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


def candidate_layout(data, h_max, scales, min_child_weight, backend):
    """The ``HistogramLayout`` of the features that may split in the trees, found before
    any histogram: a feature's value rows weigh at most its stored entries times the
    largest hessian of a tree's rows, so a feature whose bound is 0 or below
    ``min_child_weight`` in every tree is one ``active_layout`` would leave out. The
    roots' histograms then never hold every feature's slots (on hashed text, a
    million). None when the matrix does not count its features' entries (a dense or
    bundled one), on several ranks (a rank's counts bound its own rows only), or when
    too little is left out.

    h_max : int64 (n_trees,), the largest fixed-point hessian of each tree's rows
    scales : float64 (n_trees, 2), each tree's fixed-point scales
    """
    counts = getattr(data.matrix, "feature_counts", None)
    if counts is None or data.missing_slots or backend.collective.world_size > 1:
        return None
    counts = counts()
    keep = np.zeros(counts.shape[0], dtype=bool)
    for t, h in enumerate(np.asarray(h_max, np.int64)):
        h_up = float(h) * (1.0 + 2.0 ** -40)  # above h: count * h_up never below count * h
        for lo in range(0, counts.shape[0], _CHUNK):  # a chunk's temporaries, not 1M's
            part = keep[lo:lo + _CHUNK]
            part |= _can_split(counts[None, lo:lo + _CHUNK] * h_up, scales[t:t + 1],
                               min_child_weight)[0]
    found = _narrowed(HistogramLayout.of(data), keep, backend)
    return None if found is None else found[0]


def _can_split(value_h, scales, min_child_weight):
    """bool (n_trees, n): whether a feature's value rows' hessian sum ``value_h`` (n_trees,
    n), fixed-point or a bound of it, is positive and at least ``min_child_weight``
    (scaled as ``evaluate_splits`` scales it: exact, the scales are powers of two)."""
    weight = value_h * (1.0 / np.asarray(scales, np.float64)[:, 1:2])
    return (value_h > 0) & (weight >= min_child_weight)


def _host_buffer(backend, name, size):
    """int32 (size,) on the host, contents undefined: a CPU backend's workspace memory
    (``Backend.buffer``: the same each tree, no fresh pages), else new."""
    if backend.xp is np:
        return backend.buffer(name, size, np.int32)
    return np.empty(size, dtype=np.int32)


def _narrowed(layout, keep, backend, share=0.5):
    """``(the HistogramLayout of layout's features where keep, their slots in layout)``:
    None when that leaves out less than ``share`` of ``layout``'s slots. ``keep``: bool
    (features of ``layout``,); the new ``slot_map`` maps the bin matrix's slots straight
    to the new layout's: ``layout``'s own map rewritten (``layout`` is done with), or
    workspace memory (one map of every slot a tree, whatever its levels)."""
    offsets = np.asarray(layout.feature_offsets)
    ids = np.flatnonzero(keep)
    starts = offsets[ids].astype(np.int64)
    widths = offsets[ids + 1] - starts
    if int(widths.sum()) > (1.0 - share) * int(offsets[-1]):
        return None
    # the kept features' slots, in order: each one's first slot plus 0 .. width - 1
    within = np.arange(int(widths.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(widths) - widths, widths)
    kept_slots = np.repeat(starts, widths) + within
    # each slot of ``layout`` to its new place, then -1 (where "left out" reads); without
    # a map before, that is the new map itself
    first = layout.slot_map is None
    remap = _host_buffer(backend, "slot_map" if first else "slot_remap", int(offsets[-1]) + 1)
    remap.fill(-1)
    remap[kept_slots] = np.arange(kept_slots.shape[0], dtype=np.int32)
    if first:
        slot_map = remap[:-1]
    else:  # the layout's own map, rewritten in place (its layout is not used again); -1
        # wraps to remap's last entry, -1; in chunks: take widens its indices to intp
        before = backend.to_host(layout.slot_map)
        for lo in range(0, before.shape[0], _CHUNK):
            part = before[lo:lo + _CHUNK]
            np.take(remap, part, out=part, mode="wrap")
        slot_map = before[:]  # a new view (BundledBins caches by the map's identity)
    features = ids if layout.features is None else layout.features[ids]
    narrowed = HistogramLayout(
        np.concatenate(([0], np.cumsum(widths))).astype(np.int32), 0, features,
        np.asarray(layout.is_categorical)[ids], np.asarray(layout.monotone)[ids],
        backend.asarray(slot_map))
    return narrowed, kept_slots


def active_layout(data, root_hist, scales, min_child_weight, backend, layout=None):
    """``(HistogramLayout, the roots' histograms in it)`` of the features that can split
    in the trees of ``root_hist`` (int64 (n_roots, n_slots, 2), in ``layout``: every
    feature when None; ``scales`` float64 (n_roots, 2), each tree's); None when
    ``layout`` stays (a dense matrix, a negative hessian, or too little left out).
    ``min_child_weight``: the fit's.

    A feature is kept when, in any of the trees, its value rows' hessian sum at the root
    is positive and at least ``min_child_weight`` (scaled as ``evaluate_splits`` scales
    it: exact, the scales are powers of two)."""
    if data.missing_slots:
        return None
    layout = HistogramLayout.of(data) if layout is None else layout
    offsets = np.asarray(layout.feature_offsets, np.int64)
    hess = backend.to_host(root_hist[:, :, 1])
    if (hess < 0).any():  # a negative bin: some hessian is negative, no bound holds
        return None
    value_h = np.add.reduceat(hess, offsets[:-1], axis=1) if offsets[-1] else \
        np.zeros((hess.shape[0], offsets.shape[0] - 1), np.int64)
    value_h[:, offsets[1:] == offsets[:-1]] = 0  # reduceat reads a slot for a width of 0
    keep = _can_split(value_h, scales, min_child_weight).any(axis=0)
    found = _narrowed(layout, keep, backend)
    if found is None:
        return None
    return found[0], root_hist[:, backend.asarray(found[1])]


def level_layout(layout, level_hist, positions, scales, min_child_weight, backend):
    """``(HistogramLayout, kept slots of layout)`` of the features of ``layout`` that can
    split in a child of some parent (the parents' histograms: ``level_hist[positions]``,
    int64 (n, n_slots, 2) in ``layout``, ``positions`` None: all of them; ``scales``
    float64 (n_parents, 2), their trees'):
    a child's value rows are some of its parent's, so its feature's value rows weigh at
    most the parent's. None when ``layout`` is every feature's, or when less than a
    tenth of its slots would go (a new layout costs a pass over a map of every slot).
    ``layout`` is not used again: its map becomes the new one."""
    if layout.slot_map is None or layout.missing_slots:
        return None
    offsets = np.asarray(layout.feature_offsets, np.int64)
    if not offsets[-1]:
        return None
    empty = offsets[1:] == offsets[:-1]
    keep = np.zeros(offsets.shape[0] - 1, dtype=bool)
    for i, at in enumerate(range(level_hist.shape[0]) if positions is None else positions):
        hess = backend.to_host(level_hist[int(at), :, 1])  # a view on the host: no copy
        value_h = np.add.reduceat(hess, offsets[:-1])
        value_h[empty] = 0  # reduceat reads a slot for a width of 0
        keep |= _can_split(value_h[None], scales[i:i + 1], min_child_weight)[0]
    return _narrowed(layout, keep, backend, LEVEL_SHARE)


def gather_slots(level_hist, positions, kept_slots, out, backend):
    """``out[i] = level_hist[positions[i]][kept_slots]`` (``positions`` None: ``i``), a
    parent at a time (no copy of every parent's histogram); returns ``out``."""
    xp = backend.xp
    kept = backend.asarray(kept_slots)
    # NumPy buffers ``out`` of a take in its default mode ("raise"); the slots are valid
    mode = {"mode": "clip"} if xp is np else {}  # CuPy's take has no mode
    for i in range(out.shape[0]):
        at = i if positions is None else int(positions[i])
        xp.take(level_hist[at], kept, axis=0, out=out[i], **mode)
    return out


def largest_hessians(gpair, rows, segments, backend):
    """int64 (n_trees,): the largest fixed-point hessian (``gpair[:, 1]``) of each tree's
    rows ``rows[segments[t]:segments[t + 1]]`` over every rank (-1 for a tree without
    rows), or -1 everywhere when a hessian of the trees' rows is negative on some rank (a
    user's objective may give some): the bounds of this module hold only without those."""
    n_trees = segments.shape[0] - 1
    local = np.full(n_trees + 1, -1, dtype=np.int64)
    local[-1] = 0
    if rows.shape[0]:
        hess = gpair[rows, 1]
        if int(hess.min()) < 0:
            local[-1] = 1
        for t in range(n_trees):
            if segments[t + 1] > segments[t]:
                local[t] = int(hess[segments[t]:segments[t + 1]].max())
    found = backend.collective.allreduce(local, "max")
    return np.full(n_trees, -1, np.int64) if found[-1] else found[:-1]
