"""Refactors keep the models: every reference case trains to the same model file, byte
for byte, as the one kept in ``tests/fixtures/models`` (see ``tests/support/model_cases.py``)."""
import json

import pytest

from tests.support.model_cases import CASES, FIXTURES, first_difference, model_text

pytest.importorskip("pandas")


@pytest.mark.parametrize("name", sorted(CASES))
def test_model_file_equals_fixture(name):
    expected = (FIXTURES / f"{name}.json").read_text()
    got = model_text(name)
    if got != expected:
        where = first_difference(json.loads(got), json.loads(expected))
        pytest.fail(f"case {name}: the model file changed ({where or 'formatting only'})")


def test_every_fixture_has_a_case():
    assert {p.stem for p in FIXTURES.glob("*.json")} == set(CASES)
