"""The binned rows a fit trains on, and how they are made: bin edges (``binning``; one
feature's, ``cuts``), the bin matrices the grower reads through one interface, dense,
sparse or bundled (``dense``, ``csr``, ``bundled``; which one, ``layout``; exact feature
bundles, ``bundling``), paged on disk (``paged``), and data streamed in batches binned in two
passes (``streaming``) into a ``QuantileDMatrix`` or ``ExtMemQuantileDMatrix``
(``quantile``). User input, checked and converted, is ``gbm.data``'s.

Bin matrices: the binned rows a fit trains on, in one of several layouts behind one small
interface, so that the grower, the margins and the eval sets never ask which
(docs/architecture.md):

* ``DenseBins``: ``bins[n_rows, n_features]`` (uint8/uint16, a missing value in its
  feature's missing bin ``n_bins[f]``), and the same feature-major for the partition;
  each feature's histogram slots are its value bins, then its missing slot.
* ``CsrBins``: CSR over the stored (non-missing) entries only, each entry the histogram
  slot of its (feature, value bin); an absent entry is missing. Histograms have value
  slots only: a feature's missing sums are the node's less its value bins' (integers,
  so exactly what a missing slot would hold). Memory grows with the stored entries.
* ``BundledBins``: exactly exclusive features bundled (``gbm.bins.bundling``), a column
  of codes per bundle (row- and bundle-major), code 0 where none of the bundle's
  features is stored; histograms as ``CsrBins``' (value slots in feature order), so the
  memory and the work of a histogram pass follow the bundles, not the columns.

Every layout gives the same histograms of value bins, the same rows to each child and
the same leaf for each row, so the layout never changes a model (the tests train every
layout and compare the model files). The interface, which a paged layout (a sequence of
such matrices, streamed) implements too:

``n_rows``, ``n_features``, ``nbytes``; ``feature_offsets`` (the histogram layout: feature
``f``'s slots) and ``missing_slots`` (1: its last slot is its missing slot; 0: none);
``row_cost`` (work per row of a histogram pass); ``build_histograms``, ``partition_rows``,
``add_split_values``, ``predict_binned`` (the kernels over it); ``tile`` (the rows
repeated, for a round's groups grown in lockstep). A layout without missing slots also
builds histograms of some features only (``slot_map``: each slot's place in the smaller
histogram, or -1; ``gbm.tree.active``).
"""
