"""Every backend's kernels module exports the reference's kernels, with the same names and
the same arguments in the same order (docs/architecture.md, "The kernel contract"); the host kernels
(``HOST_ONLY``) are the CPU's and the reference's only."""
import importlib
import importlib.util
import inspect
from pathlib import Path

import pytest

from gbm.kernels import reference

# The CUDA launchers import without a GPU (their kernels compile at the first launch), so
# they are checked whenever numba-cuda is installed (it is part of the dev extra), with or
# without the simulator.
BACKENDS = ["cpu"] + (["cuda"] if importlib.util.find_spec("numba_cuda") else [])
# Kernels a backend does not have yet, on purpose.
# ``test_pending_kernels_are_really_missing`` keeps this list honest.
# the gradient pairs converted in their own memory: the CPU rounds' (gbm.training.rounds)
# and the vector-leaf CPU rounds' pairs written in the histograms' layout (a CUDA round
# quantizes each output and transposes: gbm.tree.vector_gradients.quantize_outputs); the logistic
# and softmax gradients that record their maxima (a CUDA round takes them in a pass of its own)
PENDING = {"cuda": ("max_abs_pairs", "quantize_pairs_in_place", "quantize_vector_pairs",
                    "logistic_pair_gradients", "softmax_gradients")}
# Kernels that run on the host on every backend, by design, so have no CUDA version: the
# exact sums behind base scores and metrics (``exact``), the same-bits exp / log / log2 of
# metrics' inputs (``elementwise``), the unweighted binary AUC (``auc``) and the AFT loss
# of ``aft-nloglik`` (``survival``). The metrics
# are computed on the host so that a score is the same bits on every backend (gbm.numerics,
# gbm.metrics). ``test_host_only_kernels_are_not_on_the_gpu`` keeps this list honest.
HOST_ONLY = {"exact": ("add_exact_parts",),
             "elementwise": ("exp_into", "log_into", "log2_into"),
             "auc": ("split_by_label", "twice_mann_whitney"),
             "survival": ("aft_loss_into",),
             "bundling": ("propose_bundles", "bundle_conflicts"),
             # a paged bin matrix's pages on the host (gbm.bins.paged): a device fit calls
             # the device's own kernels page by page
             "paged": ("move_right_rows", "page_add_split_values", "page_histograms",
                       "page_partition_build", "sum_private", "page_partition",
                       "page_predict_binned"),
             # softmax's numerators of an eval set's probabilities (gbm.objectives.pointwise)
             "softmax_rows": ("shifted_exp_rows",)}
HOST_KERNELS = {name for names in HOST_ONLY.values() for name in names}
# a CPU vector-leaf round's steps on the float gradients of many outputs, pending on CUDA
# too (a CUDA round quantizes every output: gbm.tree.vector_gradients.output_gradients)
PENDING["cuda"] += ("add_outputs_leaf_values", "max_abs_outputs", "project_outputs",
                    "quantized_segment_sums")
CONCEPTS = ("binning", "bundled", "csr", "csr_predict", "histogram", "linear", "linear_cd",
            "objective", "partition", "predict", "quantize", "rank", "shap", "split",
            "vector_leaf", "vector_categorical", "vector_predict", "vector_outputs") \
    + tuple(HOST_ONLY)
# modules of reference/ that hold no kernel: what its kernels share
SHARED = ("vector_split", "sparse_arrays")


def _parameters(fn):
    fn = getattr(fn, "py_func", fn)  # a Numba dispatcher's Python function
    return [p.name for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_backend_exports_the_reference_kernels(backend):
    module = importlib.import_module(f"gbm.kernels.{backend}")
    left_out = set(PENDING.get(backend, ())) | (HOST_KERNELS if backend != "cpu" else set())
    expected = [name for name in reference.__all__ if name not in left_out]
    assert sorted(module.__all__) == sorted(expected)
    for name in expected:
        assert _parameters(getattr(module, name)) == _parameters(getattr(reference, name)), name


def test_pending_kernels_are_really_missing():
    for backend, names in PENDING.items():
        if backend in BACKENDS:
            module = importlib.import_module(f"gbm.kernels.{backend}")
            assert not set(names) & set(dir(module)), backend


def test_host_only_kernels_are_not_on_the_gpu():
    for concept, names in HOST_ONLY.items():
        assert set(names) <= set(reference.__all__), concept
        module = importlib.import_module(f"gbm.kernels.reference.{concept}")
        assert all(inspect.isfunction(getattr(module, name)) for name in names), concept
        assert importlib.util.find_spec(f"gbm.kernels.cuda.{concept}") is None, concept
    if "cuda" in BACKENDS:
        cuda = importlib.import_module("gbm.kernels.cuda")
        assert not HOST_KERNELS & set(dir(cuda))


def test_every_reference_kernel_is_exported():
    # the concept modules' public functions are all in the namespace (none forgotten), and
    # every concept module is in CONCEPTS (none unchecked)
    found = {path.stem for path in Path(reference.__file__).parent.glob("*.py")}
    assert found - {"__init__"} == set(CONCEPTS) | set(SHARED)
    exported = set(reference.__all__)
    for concept in CONCEPTS:
        module = importlib.import_module(f"gbm.kernels.reference.{concept}")
        public = {name for name, value in vars(module).items()
                  if inspect.isfunction(value) and not name.startswith("_")
                  and value.__module__ == module.__name__}
        # decision helpers, and the sparse twins' densifying oracles: not kernels
        helpers = {"codes_of", "categorical_goes_left", "dense_bins", "dense_values",
                   "decoded_bins"}
        assert public - helpers <= exported, concept
