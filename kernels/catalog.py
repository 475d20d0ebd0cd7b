"""Every kernel's name, declared once: what the backends' namespaces export
(``kernels/reference/__init__.py``, ``cpu/__init__.py``, ``cuda/__init__.py`` call
``export``), what ``tests/test_kernel_contract.py`` checks, and where
``gbm.runtime.compile_ahead`` finds a CPU kernel (``module_of``).

A kernel lives in the module of its concept, of the same name in each backend's folder
(``split`` -> ``reference/split.py``, ``cpu/split.py``, ``cuda/split.py``), with the same
arguments (docs/architecture.md, "The kernel contract"). Besides:

* ``HOST_ONLY``: concepts whose kernels run on the host on every backend, by design (the
  exact sums of base scores and metrics, the metrics' exp / log, AUC and AFT loss, the
  feature bundles, a paged matrix's pages, softmax's numerators): reference and CPU only,
  so that a score or a bundle is the same bits whatever the device.
* ``PENDING``: kernels a backend does not have yet, on purpose.
* ``ELSEWHERE``: a backend's kernel kept in another module than its concept's.
* ``SHARED``: the modules of a backend's folder that hold no kernel of the contract:
  steps and formulas its kernels share, and the CPU's whole-tree kernel (``grow_tree``,
  called by ``gbm.tree.whole_tree`` only).
"""
import importlib

BACKENDS = ("reference", "cpu", "cuda")

# concept -> its kernels
KERNELS = {
    "binning": ("bin_values",),
    "bundled": ("add_split_values_bundled", "build_histograms_bundled",
                "partition_rows_bundled", "predict_binned_bundled"),
    "csr": ("add_split_values_csr", "bin_values_csr", "build_histograms_csr",
            "partition_rows_csr"),
    "csr_predict": ("predict_binned_csr", "predict_csr", "predict_leaf_csr"),
    "histogram": ("build_histograms", "subtract_histograms"),
    # the linear models' (gbm.linear)
    "linear": ("dual_terms", "gradient_csc", "gradient_dense", "gram_dense",
               "hessian_diagonal_csc", "hessian_diagonal_dense", "loss_terms", "margins_csc",
               "margins_csr", "margins_dense"),
    "linear_cd": ("cd_gram", "cd_residual_csc", "cd_residual_dense", "svc_dual_cd_csr",
                  "svc_dual_cd_dense"),
    # the logistic and softmax gradients that record their maxima: a CPU round's
    "objective": ("pointwise_gradients", "logistic_pair_gradients", "softmax_gradients"),
    "partition": ("add_leaf_values", "add_split_values", "partition_rows"),
    "predict": ("predict", "predict_binned", "predict_leaf"),
    # the gradient pairs converted in their own memory: a CPU round of one output group's
    "quantize": ("max_abs", "quantize_gradients", "max_abs_pairs", "quantize_pairs_in_place"),
    "rank": ("lambdarank_gradients",),
    "shap": ("tree_saabas", "tree_shap", "tree_shap_interactions"),
    "split": ("evaluate_splits", "node_weights"),
    # vector-leaf trees (multi_strategy="multi_output_tree"), their monotone constraints,
    # and their CPU rounds' pairs quantized in the histograms' layout
    "vector_leaf": ("build_vector_histograms", "evaluate_vector_splits",
                    "vector_children_histograms", "vector_node_weights", "vector_segment_sums",
                    "evaluate_vector_splits_monotone", "vector_bounded_weights",
                    "vector_child_bounds", "build_vector_feature_histograms",
                    "quantize_vector_pairs"),
    "vector_categorical": ("evaluate_vector_splits_categorical",),
    # their margins from leaf indices
    "vector_predict": ("add_leaf_vectors",),
    # their CPU rounds on the float gradients of many outputs
    "vector_outputs": ("add_outputs_leaf_values", "max_abs_outputs", "project_outputs",
                       "quantized_segment_sums"),
    # host kernels (HOST_ONLY)
    "exact": ("add_exact_parts",),
    "elementwise": ("exp_into", "log_into", "log2_into"),
    "auc": ("split_by_label", "twice_mann_whitney"),
    "survival": ("aft_loss_into",),
    "bundling": ("propose_bundles", "bundle_conflicts"),
    "paged": ("move_right_rows", "page_add_split_values", "page_histograms",
              "page_partition_build", "sum_private", "page_partition", "page_predict_binned"),
    "softmax_rows": ("shifted_exp_rows",),
}
HOST_ONLY = ("exact", "elementwise", "auc", "survival", "bundling", "paged", "softmax_rows")
# a CUDA round quantizes each output and transposes (gbm.tree.vector_gradients), and takes
# the logistic and softmax gradients' maxima in a pass of its own
PENDING = {"cuda": ("max_abs_pairs", "quantize_pairs_in_place", "quantize_vector_pairs",
                    "logistic_pair_gradients", "softmax_gradients", "add_outputs_leaf_values",
                    "max_abs_outputs", "project_outputs", "quantized_segment_sums")}
ELSEWHERE = {"cuda": {"vector_bounded_weights": "vector_monotone",
                      "vector_child_bounds": "vector_monotone",
                      "build_vector_feature_histograms": "vector_monotone"}}
SHARED = {
    "reference": ("vector_split", "sparse_arrays"),
    "cpu": ("grow_tree", "tree_records", "tree_level", "node_masks", "partition_steps",
            "histogram_steps", "tree_walk", "vector_split", "split_scan", "sorting",
            "sparse_rows", "prefetch", "stack", "thread_count", "views"),
    "cuda": ("_device", "partition_steps", "tree_walk", "vector_split", "page_copy"),
}


def names(backend):
    """The kernels ``backend`` exports, in ``KERNELS``' order."""
    return tuple(name for names_ in placed(backend).values() for name in names_)


def placed(backend):
    """``{module: its kernels}`` of ``backend`` (module names within its folder)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    pending, elsewhere = set(PENDING.get(backend, ())), ELSEWHERE.get(backend, {})
    out = {}
    for concept, kernels in KERNELS.items():
        if backend == "cuda" and concept in HOST_ONLY:
            continue
        for name in kernels:
            if name not in pending:
                out.setdefault(elsewhere.get(name, concept), []).append(name)
    return {module: tuple(kernels) for module, kernels in out.items()}


def module_of(backend, name):
    """The module (within ``backend``'s folder) that holds kernel ``name``."""
    for module, kernels in placed(backend).items():
        if name in kernels:
            return module
    raise KeyError(f"{backend} has no kernel {name!r}")


def export(backend, namespace):
    """Import ``backend``'s kernels into ``namespace`` (its package's globals); returns
    their names, the package's ``__all__``."""
    package = namespace["__name__"]
    for module, kernels in placed(backend).items():
        found = importlib.import_module(f"{package}.{module}")
        for name in kernels:
            namespace[name] = getattr(found, name)
    return names(backend)
