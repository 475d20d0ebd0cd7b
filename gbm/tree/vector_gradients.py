"""The gradients of a vector-leaf round as fixed-point pairs, every output with its own
scales (``gbm.tree.quantize``'s, agreed over the ranks in one exchange for all outputs):
row-major pairs for the histograms (``quantize_outputs``), output-major ones, or, for a
projected CPU round, the float gradients with their scales (``FloatOutputs``: the nodes'
sums quantize each value as they read it, no pairs written)."""
import numpy as np

from .quantize import quantization_scale, quantize

def quantize_outputs(grad, hess, backend, n_rows_total, row_major=True, name="vector_pairs"):
    """Each output's gradients as fixed-point pairs with its own scales.

    grad, hess : float64 (k, n_rows), output-major
    Returns ``(gpair, scales float64 (k, 2))``: ``gpair`` int64 (n_rows, k, 2)
    (``row_major``: what the histograms read) or (k, n_rows, 2). On the CPU the pairs
    are the backend's buffers ``name`` (the same memory every round: fresh pages cost more
    than the copy; the caller is done with the last round's pairs).
    """
    k, n = grad.shape
    if backend.name == "cpu" and row_major:  # straight into the histograms' layout
        return _quantize_rows(grad, hess, backend, n_rows_total, name)
    maxima, scales = _agreed_scales(grad, hess, backend, n_rows_total)
    by_output = _by_output(grad, hess, maxima, backend, n_rows_total, f"{name}_by_output")
    if not row_major:
        return by_output, scales
    # row-major for the histograms (a row's k pairs side by side): one transposing copy
    return np.ascontiguousarray(by_output.transpose(1, 0, 2)), scales


def output_gradients(grad, hess, backend, n_rows_total, local_max=None):
    """The full gradients of a projected round (their pairs give the nodes' sums only):
    on the CPU a ``FloatOutputs`` (no pairs written: each leaf's sums quantized as they
    are read), elsewhere ``quantize_outputs``' output-major pairs. Returns ``(gpair,
    scales float64 (k, 2))``, the scales the pairs' either way. ``local_max``: float64
    (k, 2), optional, this rank's maxima when a pass has taken them already (the CPU
    projection's, ``project_gradients``; still agreed through the collective)."""
    if backend.name != "cpu":
        return quantize_outputs(grad, hess, backend, n_rows_total, row_major=False)
    grad, hess = np.ascontiguousarray(grad), np.ascontiguousarray(hess)
    maxima, scales = _agreed_scales(grad, hess, backend, n_rows_total, local_max)
    return FloatOutputs(grad, hess, maxima, scales, backend, n_rows_total), scales


class FloatOutputs:
    """Every output's float gradients and the fixed-point scales agreed for them (CPU):
    what a projected round's full pairs are read from without being written (1,000
    outputs of 100,000 rows: 1.6 GB of pairs, and fresh memory costs seconds a GB to
    touch). The nodes' sums quantize each value as they read it
    (``quantized_segment_sums``: the same integers as the pairs'); ``pairs()`` writes the
    pairs themselves, once, for the steps that read them (the monotone re-check).

    grad, hess : float64 (k, n_rows), C order; maxima, scales : float64 (k, 2)
    """

    def __init__(self, grad, hess, maxima, scales, backend, n_rows_total):
        self.grad, self.hess, self.maxima, self.scales = grad, hess, maxima, scales
        self.backend, self.n_rows_total = backend, n_rows_total
        self._pairs = None

    def pairs(self):
        """int64 (k, n_rows, 2): every output's pairs (``quantize_outputs``' output-major
        ones), written at the first call."""
        if self._pairs is None:
            self._pairs = _by_output(self.grad, self.hess, self.maxima, self.backend,
                                     self.n_rows_total, "vector_pairs_by_output")
        return self._pairs


def _agreed_scales(grad, hess, backend, n_rows_total, local_max=None):
    """``(maxima, scales)``, float64 (k, 2) each: every output's global ``max |g|``,
    ``max |h|`` (one exchange for all outputs; ``local_max``: this rank's, taken
    already) and ``quantize``'s scales for them."""
    k, n = grad.shape
    if local_max is not None:
        maxima = np.asarray(local_max, dtype=np.float64).reshape(k, 2)
    elif backend.name == "cpu":  # every output in one call
        maxima = np.empty((k, 2))
        with backend.threads(2 * k * n):
            backend.kernels.max_abs_outputs(grad, hess, maxima)
    else:
        maxima = np.array([[backend.kernels.max_abs(grad[j]), backend.kernels.max_abs(hess[j])]
                           for j in range(k)]).reshape(k, 2)
    maxima = backend.collective.allreduce(maxima, "max")
    rows = n if n_rows_total is None else n_rows_total
    scales = np.array([[quantization_scale(maxima[j, 0], rows),
                        quantization_scale(maxima[j, 1], rows)] for j in range(k)]).reshape(k, 2)
    return maxima, scales


def _by_output(grad, hess, maxima, backend, n_rows_total, name):
    """int64 (k, n_rows, 2): each output's pairs (``quantize`` with the agreed maxima),
    contiguous; on the CPU in the backend's buffer ``name``."""
    k, n = grad.shape
    by_output = backend.buffer(name, (k, n, 2), np.int64) if backend.xp is np \
        else np.empty((k, n, 2), dtype=np.int64)
    for j in range(k):
        quantize(grad[j], hess[j], backend, n_rows_total, out=by_output[j], max_abs=maxima[j])
    return by_output


def _quantize_rows(grad, hess, backend, n_rows_total, name):
    """``quantize_outputs``'s row-major pairs on the CPU, written in that layout by one
    kernel (``quantize_vector_pairs``) with ``quantize``'s scales: the same integers."""
    k, n = grad.shape
    grad, hess = np.ascontiguousarray(grad), np.ascontiguousarray(hess)
    _, scales = _agreed_scales(grad, hess, backend, n_rows_total)
    gpair = backend.buffer(name, (n, k, 2), np.int64)
    with backend.threads(n * k):
        backend.kernels.quantize_vector_pairs(grad, hess, scales, gpair)
    return gpair, scales
