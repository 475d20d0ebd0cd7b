"""Refactors keep the models: every reference case trains to the same model file, byte
for byte, as the one kept in ``tests/fixtures/models`` (see ``tests/model_cases.py``)."""
import json

import pytest

from model_cases import CASES, FIXTURES, model_text

pytest.importorskip("pandas")


def _first_difference(a, b, path="model"):
    """Where two parsed model files first differ, for a readable failure."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}: present in only one file"
            found = _first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = _first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_model_file_equals_fixture(name):
    expected = (FIXTURES / f"{name}.json").read_text()
    got = model_text(name)
    if got != expected:
        where = _first_difference(json.loads(got), json.loads(expected))
        pytest.fail(f"case {name}: the model file changed ({where or 'formatting only'})")


def test_every_fixture_has_a_case():
    assert {p.stem for p in FIXTURES.glob("*.json")} == set(CASES)
