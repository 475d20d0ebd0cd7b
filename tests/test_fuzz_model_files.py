"""Hypothesis fuzzing (tests/support/fuzz_models.py), each run in a fresh interpreter so that a
crash fails the test instead of ending the run. The default runs are short; set
``GBM_FUZZ_EXAMPLES`` for a longer search (e.g. 5000)."""
import os

import pytest

from tests.support.isolated import run_isolated

pytest.importorskip("hypothesis")
pytest.importorskip("pandas")

EXAMPLES = int(os.environ.get("GBM_FUZZ_EXAMPLES", "0"))


def _fuzz(kind, default_examples):
    examples = EXAMPLES or default_examples
    out = run_isolated(f"""
        import runpy, sys
        sys.argv = ["tests.support.fuzz_models", {kind!r}, "{examples}"]
        runpy.run_module("tests.support.fuzz_models", run_name="__main__")
    """, timeout=max(300, examples))
    assert out.strip().endswith("ok")


def test_mutated_model_files_load_cleanly_or_are_rejected():
    """Random mutations of valid model files: a clear ValueError, or a model whose
    predictions, leaf indices, contributions, dumps and round trip all work."""
    _fuzz("model-files", 200)


def test_random_training_input_trains_or_is_rejected():
    """Random X, y, weights (NaN, infinities, huge and tiny values) and parameters: a
    clear error, or a model with finite predictions that round-trips."""
    _fuzz("inputs", 60)

