"""Kernels over a bundled bin matrix (``gbm.bins.bundled.BundledBins``): features never
stored in the same row (Exclusive Feature Bundling, Ke et al. 2017, exact: see
``gbm.bins.bundling``) share one column of codes, feature ``f``'s bin ``b`` being code
``feature_code[f] + b`` of its bundle and code 0 "none of the bundle's features".

Histograms have the sparse layout's slots (each feature's value bins, in feature order,
no missing slot), so a bundled and a CSR matrix of the same rows give the same
histograms and the same splits: a code is placed by a table (``code_slot``), and a row's
bin of a feature is its bundle's code less the feature's first code, missing when the
code belongs to another feature or to none. The loops are ``csr.py``'s, over
``sparse_rows``' bundled row access.
"""
from ..jit import kernel
from .csr import add_split_values_of, build_histograms_of, partition_rows_of
from .csr_predict import predict_binned_of


@kernel
def build_histograms_bundled(bins, code_slot, code_base, feature_offsets, gpair, rows,
                             node_starts, node_ends, hist, n_threads):
    """Sum the gradient pairs of each node's rows into its histogram, a row's stored
    codes at their slots.

    bins : uint8/uint16 (n_rows, n_bundles), C order   # IN  each row's code per bundle
    code_slot : int32 (n_codes,)                  # IN  code c of bundle j: slot
                                                  #     ``code_slot[code_base[j] + c]``
    code_base : int64 (n_bundles + 1,)            # IN
    feature_offsets : int32 (n_features + 1,)     # IN  the histogram's layout
    gpair ... n_threads : as in ``build_histograms_csr``
    """
    build_histograms_of((bins, code_slot, code_base, feature_offsets), gpair, rows,
                        node_starts, node_ends, hist, n_threads)


@kernel
def partition_rows_bundled(bins_by_bundle, feature_bundle, feature_code, feature_offsets, rows,
                           node_starts, node_ends, split_feature, split_bin, default_left,
                           split_type, cat_bits, scratch, out_n_left):
    """``partition_rows`` on a bundled bin matrix (a row whose bundle code is not the
    split feature's goes the missing way).

    bins_by_bundle : uint8/uint16 (n_bundles, n_rows), C order   # IN  codes, bundle-major
    feature_bundle, feature_code : int32 (n_features,)           # IN  feature f's bundle
                                                                 #     and first code
    feature_offsets : int32 (n_features + 1,)                    # IN
    rows ... out_n_left : as in ``partition_rows``
    """
    partition_rows_of((bins_by_bundle, feature_bundle, feature_code, feature_offsets), rows,
                      node_starts, node_ends, split_feature, split_bin, default_left,
                      split_type, cat_bits, scratch, out_n_left)


@kernel
def add_split_values_bundled(bins_by_bundle, feature_bundle, feature_code, feature_offsets,
                             rows, node_starts, node_ends, split_feature, split_bin,
                             default_left, split_type, cat_bits, left_values, right_values,
                             out):
    """``add_split_values`` on a bundled bin matrix (arguments as in
    ``partition_rows_bundled`` and ``add_split_values``)."""
    add_split_values_of((bins_by_bundle, feature_bundle, feature_code, feature_offsets), rows,
                        node_starts, node_ends, split_feature, split_bin, default_left,
                        split_type, cat_bits, left_values, right_values, out)


@kernel
def predict_binned_bundled(bins_by_bundle, feature_bundle, feature_code, feature_offsets, rows,
                           walk, cat_bits, value, tree_offsets, tree_group, tree_depth, out):
    """``predict_binned`` on a bundled bin matrix (arguments as in
    ``partition_rows_bundled`` and ``predict_binned``)."""
    predict_binned_of((bins_by_bundle, feature_bundle, feature_code, feature_offsets), rows,
                      walk, cat_bits, value, tree_offsets, tree_group, tree_depth, out)
