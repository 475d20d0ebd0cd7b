"""Every backend's kernels module exports the reference's kernels, with the same names and
the same arguments in the same order (DESIGN.md, "Kernel contract")."""
import importlib
import inspect

import pytest

from gbm.kernels import reference

BACKENDS = ["cpu"]  # the CUDA module joins when it lands


def _parameters(fn):
    fn = getattr(fn, "py_func", fn)  # a Numba dispatcher's Python function
    return [p.name for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_backend_exports_the_reference_kernels(backend):
    module = importlib.import_module(f"gbm.kernels.{backend}")
    assert tuple(module.__all__) == tuple(reference.__all__)
    for name in reference.__all__:
        assert _parameters(getattr(module, name)) == _parameters(getattr(reference, name)), name


def test_every_reference_kernel_is_exported():
    # the concept modules' public functions are all in the namespace (none forgotten)
    exported = set(reference.__all__)
    for concept in ("binning", "histogram", "linear", "linear_cd", "partition", "predict", "quantize",
                    "rank", "shap", "split"):
        module = importlib.import_module(f"gbm.kernels.reference.{concept}")
        public = {name for name, value in vars(module).items()
                  if inspect.isfunction(value) and not name.startswith("_")
                  and value.__module__ == module.__name__}
        helpers = {"codes_of", "categorical_goes_left"}  # decision helpers, not kernels
        assert public - helpers <= exported, concept
