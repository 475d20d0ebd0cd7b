"""The Numba CUDA kernels, one module per concept, with the reference's names and
arguments (``tests/test_kernel_contract.py``). Each public kernel is a host-side
launcher that runs ``@cuda.jit`` kernels on device arrays (CuPy, or anything with
``__cuda_array_interface__``); see ``_device.py`` for how host arrays are handled, the
launch sizes, and the simulator (``NUMBA_ENABLE_CUDASIM=1``: NumPy arrays, Python
threads), under which the test suite checks every kernel against the reference.

Same results as the CPU kernels, bit for bit: integer histograms (64-bit integer
atomics, no float atomics), the split, objective and elementary formulas compiled from
the CPU's source with products that no compiler fuses into an FMA, and every float sum
in a fixed order. ``tree_shap`` runs the CPU kernel on host copies (see ``shap.py``).
"""
from .binning import bin_values
from .histogram import build_histograms, subtract_histograms
from .objective import pointwise_gradients
from .partition import add_leaf_values, partition_rows
from .predict import predict, predict_binned, predict_leaf
from .quantize import max_abs, quantize_gradients
from .rank import lambdarank_gradients
from .shap import tree_shap
from .split import evaluate_splits, node_weights

__all__ = ("add_leaf_values", "bin_values", "build_histograms", "evaluate_splits",
           "lambdarank_gradients", "max_abs", "node_weights", "partition_rows",
           "pointwise_gradients", "predict", "predict_binned", "predict_leaf",
           "quantize_gradients", "subtract_histograms", "tree_shap")
