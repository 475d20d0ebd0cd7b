"""The binned rows a fit trains on, and how they are made: bin edges (``binning``; one
feature's, ``cuts``), the bin matrices the grower reads through one interface, dense,
sparse or bundled (``bin_matrix``; which one, ``layout``; exact feature bundles,
``bundling``), paged on disk (``paged``), and data streamed in batches binned in two
passes (``streaming``) into a ``QuantileDMatrix`` or ``ExtMemQuantileDMatrix``
(``quantile``). User input, checked and converted, is ``gbm.data``'s."""
