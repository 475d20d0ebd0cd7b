"""Exclusive Feature Bundling, exact (LightGBM's EFB, Ke et al. 2017, without its conflict
rate): features never stored in the same row share one column of codes, feature ``f``'s
bin ``b`` being code ``feature_code[f] + b`` of its bundle, code 0 "none of them".

1. **Proposed from the binning sample** (the same rows on every rank, gathered):
   features by decreasing stored count (ties: lower index first) each join the newest of
   up to ``MAX_SEARCH`` bundles with room that holds none of their sample rows, else
   start one (``kernels.propose_bundles``; LightGBM's ``FastFeatureBundling`` greedy,
   its random choice of groups to search made deterministic).
2. **Checked against every row**: each rank flags the features stored in one of its rows
   together with another feature of their bundle (``kernels.bundle_conflicts``); the
   flags are all-reduced (max). A flagged feature leaves its bundle for one of its own,
   so only exactly exclusive features share a column: a row's code in a bundle is the
   one feature stored there, and a split found on it is a split on that feature.
3. **Numbered** by their lowest feature, a bundle's features in increasing order: the
   bundles are a function of the data alone (the sample, every row's entries), the same
   on every worker count and chunking.

A bundled matrix's histograms hold each feature's value bins in feature order, as the
sparse layout's do: bundling on or off gives the same histograms and the same model.
"""
import dataclasses

import numpy as np

MAX_CODES = 65536  # a bundle's codes, 0 included: a uint16 column
MAX_SEARCH = 100  # bundles tried per feature (LightGBM's max_search_group)


@dataclasses.dataclass
class Bundles:
    """bundle_of : int32 (n_features,), each feature's bundle; feature_code : int32
    (n_features,), its first code (>= 1); widths : int64 (n_bundles,), codes per bundle,
    0 included."""

    bundle_of: np.ndarray
    feature_code: np.ndarray
    widths: np.ndarray

    @property
    def n_bundles(self):
        return int(self.widths.shape[0])


def bundles_fit(n_bins):
    """Whether every feature fits a bundle column: its bins and code 0 in ``MAX_CODES``."""
    return int(np.max(n_bins, initial=0)) + 1 <= MAX_CODES


def propose(sample, n_bins, kernels):
    """A bundle per feature (int32 (n_features,), numbered as started) from the sample's
    entries (``sample``: a ``SparseMatrix``)."""
    n_features = sample.shape[1]
    counts = sample.stored_per_feature()
    by_feature = np.argsort(sample.indices, kind="stable")
    col_rows = sample.row_of_entries()[by_feature].astype(np.int32)
    col_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    # decreasing count, ties by index (a stable sort): no lexsort's arrays of every feature
    order = np.argsort(-counts, kind="stable").astype(np.int64, copy=False)
    bundle_of = np.empty(n_features, dtype=np.int32)
    kernels.propose_bundles(col_ptr, col_rows, sample.shape[0], order,
                            np.asarray(n_bins, np.int32), MAX_CODES, MAX_SEARCH, bundle_of)
    return bundle_of


def conflicts(X, bundle_of, collective, kernels):
    """uint8 (n_features,): 1 for a feature stored in a row (of any rank: all-reduced)
    with another feature of its bundle."""
    flags = np.zeros(X.shape[1], dtype=np.uint8)
    kernels.bundle_conflicts(X.indptr, X.indices, bundle_of, int(bundle_of.max(initial=-1)) + 1,
                             flags)
    return collective.allreduce(flags, "max")


def numbered(bundle_of, n_bins):
    """``Bundles`` of a grouping (any bundle ids): bundles by their lowest feature,
    features in increasing order within one, each feature's codes after the ones before
    it (code 0 of every bundle is none)."""
    n_features = bundle_of.shape[0]
    features = np.arange(n_features)
    lowest = np.full(int(bundle_of.max(initial=-1)) + 1, n_features, dtype=np.int64)
    np.minimum.at(lowest, bundle_of, features)
    used = np.flatnonzero(lowest < n_features)
    rank = np.empty(lowest.shape[0], dtype=np.int64)
    rank[used[np.argsort(lowest[used], kind="stable")]] = np.arange(used.shape[0])
    bundle = rank[bundle_of]
    order = np.lexsort((features, bundle))  # bundle by bundle, features increasing
    n_bins = np.asarray(n_bins, np.int64)
    before = np.cumsum(n_bins[order]) - n_bins[order]  # codes of the features before
    starts = np.searchsorted(bundle[order], np.arange(used.shape[0]))
    feature_code = np.empty(n_features, dtype=np.int64)
    feature_code[order] = 1 + before - before[starts][bundle[order]]
    widths = 1 + np.bincount(bundle, weights=n_bins, minlength=used.shape[0]).astype(np.int64)
    return Bundles(bundle.astype(np.int32), feature_code.astype(np.int32), widths)


def find_bundles(sample, X, n_bins, collective, kernels):
    """The exact bundles of ``X`` (this rank's rows, a ``SparseMatrix``) proposed from the
    binning ``sample`` (the same on every rank): proposed, checked against every rank's
    rows, each flagged feature on its own (``numbered``)."""
    proposed = propose(sample, n_bins, kernels)
    flagged = conflicts(X, proposed, collective, kernels) == 1
    alone = proposed.max(initial=-1) + 1 + np.arange(int(flagged.sum()))
    grouping = proposed.astype(np.int64)
    grouping[flagged] = alone
    return numbered(grouping, n_bins)


def code_slots(bundles, feature_offsets):
    """``(code_slot, code_base)``: bundle ``j``'s code ``c`` goes to histogram slot
    ``code_slot[code_base[j] + c]`` (code 0: -1, none), int32 and int64."""
    code_base = np.concatenate(([0], np.cumsum(bundles.widths))).astype(np.int64)
    code_slot = np.full(int(code_base[-1]), -1, dtype=np.int32)
    offsets = np.asarray(feature_offsets, np.int64)
    n_bins = np.diff(offsets)
    features = np.repeat(np.arange(n_bins.shape[0]), n_bins)
    within = np.arange(features.shape[0]) - np.repeat(offsets[:-1], n_bins)
    code_slot[code_base[bundles.bundle_of[features]] + bundles.feature_code[features]
              + within] = offsets[features] + within
    return code_slot, code_base
