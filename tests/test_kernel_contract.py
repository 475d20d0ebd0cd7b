"""Every backend's kernels module exports the reference's kernels, with the same names and
the same arguments in the same order (docs/architecture.md, "The kernel contract"); the host kernels
(``HOST_ONLY``) are the CPU's and the reference's only."""
import importlib
import importlib.util
import inspect
from pathlib import Path

import pytest

from gbm.kernels import catalog, reference

# The CUDA launchers import without a GPU (their kernels compile at the first launch), so
# they are checked whenever numba-cuda is installed (it is part of the dev extra), with or
# without the simulator.
BACKENDS = ["cpu"] + (["cuda"] if importlib.util.find_spec("numba_cuda") else [])
# Kernels a backend does not have yet, on purpose (catalog.PENDING):
# ``test_pending_kernels_are_really_missing`` keeps the list honest. Kernels that run on the
# host on every backend, by design, so have no CUDA version (catalog.HOST_ONLY):
# ``test_host_only_kernels_are_not_on_the_gpu`` keeps that list honest.
PENDING = catalog.PENDING
HOST_ONLY = {concept: catalog.KERNELS[concept] for concept in catalog.HOST_ONLY}
HOST_KERNELS = {name for names in HOST_ONLY.values() for name in names}
CONCEPTS = tuple(catalog.KERNELS)


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
    assert found - {"__init__"} == set(CONCEPTS) | set(catalog.SHARED["reference"])
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


@pytest.mark.parametrize("backend", ["reference", "cpu"] + BACKENDS[1:])
def test_every_module_of_a_backend_is_in_the_catalog(backend):
    # a backend's folder holds the modules of its concepts (those with a kernel there) and
    # the shared ones (kernels/catalog.py): none unaccounted for, none missing
    folder = Path(reference.__file__).parent.parent / backend
    found = {path.stem for path in folder.glob("*.py")} - {"__init__"}
    assert found == set(catalog.placed(backend)) | set(catalog.SHARED[backend])


def test_every_public_cpu_kernel_is_in_the_catalog():
    # a compiled kernel (``jit.kernel``, not a ``jit.helper``) with a public name in a
    # concept module is a kernel of the contract: declared in the catalog, exported
    from numba.core.registry import CPUDispatcher

    checked = 0
    for module_name, kernels in catalog.placed("cpu").items():
        module = importlib.import_module(f"gbm.kernels.cpu.{module_name}")
        public = {name for name, value in vars(module).items()
                  if isinstance(value, CPUDispatcher)
                  and not value.targetoptions.get("no_cpython_wrapper")  # a helper
                  and not name.startswith("_")
                  and value.py_func.__module__ == module.__name__}
        assert public <= set(kernels), module_name
        checked += len(public)
    assert checked > 40
