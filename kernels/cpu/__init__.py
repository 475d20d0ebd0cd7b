"""The Numba CPU kernels, one module per concept; this namespace is the backend's kernels
module (``gbm.runtime.backend``). Same names, signatures and results as ``kernels.reference``
(checked by ``tests/test_kernel_contract.py``).

Conventions (docs/architecture.md, "The kernel contract"): kernels are stateless functions that
write into ``out`` arrays the caller owns; a batch of nodes is given as segments of one
``rows`` array (int32), node ``k`` owning ``rows[node_starts[k]:node_ends[k]]``;
histograms are ragged (``kernels/layout.py``); ``n_threads`` is passed in where a kernel
cuts its work by it, never read inside a cached kernel; every sum that feeds a split is
an integer sum, so the thread count cannot change any result.

Host kernels (``catalog.HOST_ONLY``: ``exact``, ``elementwise``, ``auc``, ``survival``,
``bundling``, ...; no CUDA twin, by design) are called by host code on every backend
(``gbm.numerics``, ``gbm.metrics``, ``gbm.bins.bundling``): the metrics, exact sums and
feature bundles they compute are then the same bits whatever the device. The kernels'
names, and the modules that hold them, are declared in ``kernels/catalog.py``.
"""
from ..catalog import export

__all__ = export("cpu", globals())  # its kernels, named in kernels/catalog.py
