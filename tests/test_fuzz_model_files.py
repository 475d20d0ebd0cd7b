"""Hypothesis fuzzing (tests/support/fuzz_models.py, tests/support/fuzz_fields.py), each
run in a fresh interpreter so that a crash fails the test instead of ending the run. The
default runs are short; set ``GBM_FUZZ_EXAMPLES`` for a longer search (e.g. 5000)."""
import os

import pytest

from tests.support.isolated import run_isolated

pytest.importorskip("hypothesis")
pytest.importorskip("pandas")

EXAMPLES = int(os.environ.get("GBM_FUZZ_EXAMPLES", "0"))
# one thread: an example's CPU time is its own (tests/support/fuzz_fields.py bounds it)
ONE_THREAD = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def _fuzz(module, kind, default_examples, env=None):
    examples = EXAMPLES or default_examples
    out = run_isolated(f"""
        import runpy, sys
        sys.argv = [{module!r}, {kind!r}, "{examples}"]
        runpy.run_module({module!r}, run_name="__main__")
    """, timeout=max(300, examples), env=env)
    assert out.strip().endswith("ok")


def test_mutated_model_files_load_cleanly_or_are_rejected():
    """Random mutations of valid model files: a clear ValueError, or a model whose
    predictions, leaf indices, contributions, dumps and round trip all work."""
    _fuzz("tests.support.fuzz_models", "model-files", 200)


def test_random_training_input_trains_or_is_rejected():
    """Random X, y, weights (NaN, infinities, huge and tiny values) and parameters: a
    clear error, or a model with finite predictions that round-trips."""
    _fuzz("tests.support.fuzz_models", "inputs", 60)


@pytest.mark.parametrize("kind", ["gbm", "xgboost"])
def test_each_field_of_a_model_file_loads_or_is_named(kind):
    """One field of a gbm model file or an XGBoost JSON model mutated (huge, negative,
    NaN, strings, wrong lengths, indices out of range, keys missing, cycles): the model
    loads and round-trips, or a ValueError names the field (and the tree); within a
    second of CPU time and a memory limit per example."""
    if kind == "xgboost":
        pytest.importorskip("xgboost")
    _fuzz("tests.support.fuzz_fields", kind, 500, env=ONE_THREAD)
