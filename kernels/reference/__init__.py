"""Plain NumPy twins of the kernels: obviously correct, slow, the test oracle. Same names
and signatures as every backend's kernels module (``n_threads`` is accepted and ignored);
the host kernels (``exact``, ``elementwise``, ``auc``, ``survival``, ``bundling``) are the
CPU's only (see
``kernels/cpu/__init__.py``).
"""
from .auc import split_by_label, twice_mann_whitney
from .binning import bin_values
from .bundling import bundle_conflicts, propose_bundles
from .bundled import (add_split_values_bundled, build_histograms_bundled,
                      partition_rows_bundled, predict_binned_bundled)
from .csr import (add_split_values_csr, bin_values_csr, build_histograms_csr,
                  partition_rows_csr)
from .csr_predict import predict_binned_csr, predict_csr, predict_leaf_csr
from .elementwise import exp_into, log2_into, log_into
from .exact import add_exact_parts
from .histogram import build_histograms, subtract_histograms
from .linear import (dual_terms, gradient_csc, gradient_dense, gram_dense, hessian_diagonal_csc,
                     hessian_diagonal_dense, loss_terms, margins_csc, margins_csr, margins_dense)
from .linear_cd import (cd_gram, cd_residual_csc, cd_residual_dense, svc_dual_cd_csr,
                        svc_dual_cd_dense)
from .objective import logistic_pair_gradients, pointwise_gradients, softmax_gradients
from .partition import add_leaf_values, add_split_values, partition_rows
from .paged import (move_right_rows, page_add_split_values, page_histograms,
                    page_partition, page_partition_build, page_predict_binned, sum_private)
from .predict import predict, predict_binned, predict_leaf
from .vector_predict import add_leaf_vectors
from .quantize import max_abs, max_abs_pairs, quantize_gradients, quantize_pairs_in_place
from .rank import lambdarank_gradients
from .softmax_rows import shifted_exp_rows
from .shap import tree_saabas, tree_shap, tree_shap_interactions
from .split import evaluate_splits, node_weights
from .survival import aft_loss_into
from .vector_leaf import (build_vector_histograms, evaluate_vector_splits,
                          vector_children_histograms, vector_node_weights,
                          vector_segment_sums)
from .vector_leaf import (evaluate_vector_splits_monotone, vector_bounded_weights,
                          vector_child_bounds, build_vector_feature_histograms)
from .vector_categorical import evaluate_vector_splits_categorical
from .vector_leaf import quantize_vector_pairs
from .vector_outputs import (add_outputs_leaf_values, max_abs_outputs, project_outputs,
                             quantized_segment_sums)

__all__ = ("add_leaf_values", "add_split_values", "bin_values", "build_histograms",
           "evaluate_splits", "lambdarank_gradients", "max_abs", "node_weights",
           "partition_rows", "pointwise_gradients", "predict", "predict_binned",
           "predict_leaf", "quantize_gradients", "subtract_histograms", "tree_shap",
           "tree_shap_interactions", "tree_saabas",
           # the gradient pairs converted in their own memory, a CPU round of one output
           # group's (no CUDA version: tests/test_kernel_contract.py)
           "max_abs_pairs", "quantize_pairs_in_place", "logistic_pair_gradients",
           # softmax's gradients with each class's maxima in the same pass (no CUDA version)
           "softmax_gradients",
           # sparse bin matrices and raw CSR rows (csr.py, csr_predict.py)
           "add_split_values_csr", "bin_values_csr", "build_histograms_csr",
           "partition_rows_csr", "predict_binned_csr", "predict_csr", "predict_leaf_csr",
           "add_split_values_bundled", "build_histograms_bundled", "partition_rows_bundled",
           "predict_binned_bundled",
           "cd_gram", "cd_residual_csc", "cd_residual_dense", "dual_terms", "gradient_csc",
           "gradient_dense", "gram_dense", "hessian_diagonal_csc",
           "hessian_diagonal_dense", "loss_terms", "margins_csc", "margins_csr",
           "margins_dense", "svc_dual_cd_csr", "svc_dual_cd_dense",
           # host kernels (no CUDA twin by design: run on the host on every backend)
           "add_exact_parts", "exp_into", "log_into", "log2_into", "split_by_label",
           "twice_mann_whitney", "aft_loss_into", "bundle_conflicts", "propose_bundles",
           # a paged bin matrix's pages on the host (gbm.bins.paged; a device fit calls the
           # device's whole-matrix kernels page by page)
           "move_right_rows", "page_add_split_values", "page_histograms",
           "page_partition_build", "sum_private", "page_partition", "page_predict_binned",
           # vector-leaf trees (multi_strategy="multi_output_tree")
           "build_vector_histograms", "evaluate_vector_splits", "vector_children_histograms",
           "vector_node_weights", "vector_segment_sums",
           # their monotone constraints (no CUDA version yet: tests/test_kernel_contract.py)
           "evaluate_vector_splits_monotone", "vector_bounded_weights", "vector_child_bounds",
           "build_vector_feature_histograms",
           # their categorical splits
           "evaluate_vector_splits_categorical",
           # their CPU rounds' pairs, quantized in the histograms' layout
           "quantize_vector_pairs",
           # their margins from leaf indices (vector_predict.py)
           "add_leaf_vectors",
           # their CPU rounds on the float gradients of many outputs
           "add_outputs_leaf_values", "max_abs_outputs", "project_outputs",
           "quantized_segment_sums",
           # softmax's numerators for the metrics (host kernel, softmax_rows.py)
           "shifted_exp_rows")
# the linear models' kernels (gbm.linear), on every backend (CUDA: kernels/cuda/linear*.py)
LINEAR_KERNELS = ("cd_gram", "cd_residual_csc", "cd_residual_dense", "dual_terms",
                  "gradient_csc", "gradient_dense", "gram_dense", "hessian_diagonal_csc",
                  "hessian_diagonal_dense", "loss_terms", "margins_csc", "margins_csr",
                  "margins_dense", "svc_dual_cd_csr", "svc_dual_cd_dense")
