"""The Numba CUDA kernels, one module per concept, with the reference's names and
arguments (``tests/test_kernel_contract.py``). Each public kernel is a host-side
launcher that runs ``@cuda.jit`` kernels on device arrays (CuPy, or anything with
``__cuda_array_interface__``); see ``_device.py`` for how host arrays are handled, the
launch sizes, and the simulator (``NUMBA_ENABLE_CUDASIM=1``: NumPy arrays, Python
threads), under which the test suite checks every kernel against the reference.

Same results as the CPU kernels, bit for bit: integer histograms (64-bit integer
atomics, no float atomics), the split, objective and elementary formulas compiled from
the CPU's source with products that no compiler fuses into an FMA, and every float sum
in a fixed order. ``tree_shap``, ``tree_shap_interactions`` and ``tree_saabas`` run the CPU
kernels on host copies (see ``shap.py``). The linear models' kernels (``linear.py``,
``linear_cd.py``) sum in fixed orders too, but their sums are not the CPU's (which
vectorise them): they agree with the CPU to rounding, and the solvers' certificates, not
bits, make the fits agree.
"""
from .binning import bin_values
from .bundled import (add_split_values_bundled, build_histograms_bundled,
                      partition_rows_bundled, predict_binned_bundled)
from .csr import (add_split_values_csr, bin_values_csr, build_histograms_csr,
                  partition_rows_csr)
from .csr_predict import predict_binned_csr, predict_csr, predict_leaf_csr
from .histogram import build_histograms, subtract_histograms
from .linear import (dual_terms, gradient_csc, gradient_dense, gram_dense, hessian_diagonal_csc,
                     hessian_diagonal_dense, loss_terms, margins_csc, margins_csr, margins_dense)
from .linear_cd import (cd_gram, cd_residual_csc, cd_residual_dense, svc_dual_cd_csr,
                        svc_dual_cd_dense)
from .objective import pointwise_gradients
from .partition import add_leaf_values, add_split_values, partition_rows
from .predict import predict, predict_binned, predict_leaf
from .vector_predict import add_leaf_vectors
from .quantize import max_abs, quantize_gradients
from .rank import lambdarank_gradients
from .shap import tree_saabas, tree_shap, tree_shap_interactions
from .split import evaluate_splits, node_weights
from .vector_leaf import (build_vector_histograms, evaluate_vector_splits,
                          vector_children_histograms, vector_node_weights,
                          vector_segment_sums)
from .vector_leaf import evaluate_vector_splits_monotone
from .vector_monotone import (build_vector_feature_histograms, vector_bounded_weights,
                              vector_child_bounds)
from .vector_categorical import evaluate_vector_splits_categorical

__all__ = ("add_leaf_values", "add_split_values", "bin_values", "build_histograms",
           "evaluate_splits", "lambdarank_gradients", "max_abs", "node_weights",
           "partition_rows", "pointwise_gradients", "predict", "predict_binned",
           "predict_leaf", "quantize_gradients", "subtract_histograms", "tree_shap",
           "tree_shap_interactions", "tree_saabas",
           # sparse bin matrices and raw CSR rows (csr.py, csr_predict.py)
           "add_split_values_csr", "bin_values_csr", "build_histograms_csr",
           "partition_rows_csr", "predict_binned_csr", "predict_csr", "predict_leaf_csr",
           "add_split_values_bundled", "build_histograms_bundled", "partition_rows_bundled",
           "predict_binned_bundled",
           "cd_gram", "cd_residual_csc", "cd_residual_dense", "dual_terms", "gradient_csc",
           "gradient_dense", "gram_dense", "hessian_diagonal_csc",
           "hessian_diagonal_dense", "loss_terms", "margins_csc", "margins_csr",
           "margins_dense", "svc_dual_cd_csr", "svc_dual_cd_dense",
           # vector-leaf trees (multi_strategy="multi_output_tree", vector_leaf.py)
           "build_vector_histograms", "evaluate_vector_splits", "vector_children_histograms",
           "vector_node_weights", "vector_segment_sums",
           # their monotone constraints (vector_leaf.py, vector_monotone.py)
           "evaluate_vector_splits_monotone", "vector_bounded_weights", "vector_child_bounds",
           "build_vector_feature_histograms",
           # their categorical splits (vector_categorical.py)
           "evaluate_vector_splits_categorical",
           # their margins from leaf indices (vector_predict.py)
           "add_leaf_vectors")
