"""Every backend's kernels module exports the reference's kernels, with the same names and
the same arguments in the same order (DESIGN.md, "Kernel contract")."""
import importlib
import importlib.util
import inspect

import pytest

from gbm.kernels import reference

# The CUDA launchers import without a GPU (their kernels compile at the first launch), so
# they are checked whenever numba-cuda is installed (it is part of the dev extra), with or
# without the simulator.
BACKENDS = ["cpu"] + (["cuda"] if importlib.util.find_spec("numba_cuda") else [])
# Kernels a backend does not have yet, on purpose (none today: the linear models' CUDA
# kernels landed). ``test_pending_kernels_are_really_missing`` keeps this list honest.
PENDING = {}


def _parameters(fn):
    fn = getattr(fn, "py_func", fn)  # a Numba dispatcher's Python function
    return [p.name for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_backend_exports_the_reference_kernels(backend):
    module = importlib.import_module(f"gbm.kernels.{backend}")
    expected = [name for name in reference.__all__ if name not in PENDING.get(backend, ())]
    assert sorted(module.__all__) == sorted(expected)
    for name in expected:
        assert _parameters(getattr(module, name)) == _parameters(getattr(reference, name)), name


def test_pending_kernels_are_really_missing():
    for backend, names in PENDING.items():
        if backend in BACKENDS:
            module = importlib.import_module(f"gbm.kernels.{backend}")
            assert not set(names) & set(dir(module)), backend


def test_every_reference_kernel_is_exported():
    # the concept modules' public functions are all in the namespace (none forgotten)
    exported = set(reference.__all__)
    for concept in ("binning", "histogram", "linear", "linear_cd", "objective", "partition",
                    "predict", "quantize", "rank", "shap", "split"):
        module = importlib.import_module(f"gbm.kernels.reference.{concept}")
        public = {name for name, value in vars(module).items()
                  if inspect.isfunction(value) and not name.startswith("_")
                  and value.__module__ == module.__name__}
        helpers = {"codes_of", "categorical_goes_left"}  # decision helpers, not kernels
        assert public - helpers <= exported, concept
