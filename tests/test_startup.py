"""Start-up: a light ``import gbm``, and a compile cache that cannot serve stale kernels."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

import gbm
from gbm.kernels import jit


def test_import_gbm_loads_no_heavy_optional_modules():
    code = ("import sys, json, gbm; print(json.dumps(sorted(m for m in sys.modules if "
            "m.split('.')[0] in ('sklearn', 'pandas', 'pyarrow', 'dask', 'matplotlib') or m in "
            "('scipy.stats', 'scipy.special', 'scipy.sparse'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_estimators_load_on_first_use():
    assert issubclass(gbm.GBMClassifier, object) and "GBMRegressor" in dir(gbm)


def test_cache_folder_is_keyed_by_every_kernel_source(tmp_path):
    copy = tmp_path / "kernels"
    shutil.copytree(Path(jit.__file__).parent, copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    assert jit.sources_hash(copy) == jit.sources_hash()  # contents, not location
    assert jit.sources_hash() in jit.CACHE_DIR
    # a change to a helper that kernels inline (not only to the kernel's own file)
    helper = copy / "split_math.py"
    helper.write_text(helper.read_text() + "\n# changed\n")
    assert jit.sources_hash(copy) != jit.sources_hash()


def test_kernels_are_cached_in_the_keyed_folder():
    X = np.random.default_rng(0).normal(size=(200, 3)).astype(np.float32)
    gbm.train({"max_depth": 2}, X, X[:, 0], 2)
    assert list(Path(jit.CACHE_DIR).rglob("*.nbi")), jit.CACHE_DIR


def test_helpers_have_no_python_entry_point_but_python_calls_run_compiled_code():
    from gbm.kernels import hashing
    from gbm.kernels.cpu import split

    for compiled in (hashing.mix, split._evaluate_tasks, split._numeric_best):
        assert compiled.targetoptions["no_cpython_wrapper"], compiled
        assert compiled.targetoptions["no_cfunc_wrapper"], compiled
    assert "no_cpython_wrapper" not in split.evaluate_splits.targetoptions  # an entry point
    # uint64 arithmetic wraps around in compiled code (as in the NumPy twin); the plain
    # Python function would raise on the uint64 overflow warning or differ
    x = np.uint64(0xFFFFFFFFFFFFFFF0)
    assert hashing.mix(x) == hashing.splitmix64(x)
    assert type(hashing.mix(x)) is int  # Numba's boxed uint64, not NumPy's scalar
