"""bench/mutation.py's mutants follow the code: each edit's text occurs exactly once in
its file (so the mutation check applies every mutant, not a stale one), and each test
selection names files and test functions that exist."""
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def mutation():
    return importlib.import_module("bench.mutation")  # the repository is on the path: tests/


def test_every_mutant_applies_once_and_changes_the_code(mutation):
    names = [m.name for m in mutation.MUTANTS]
    assert len(names) == len(set(names))
    for m in mutation.MUTANTS:
        text = (ROOT / m.path).read_text()
        for old, new in m.edits:
            assert old != new, m.name
            assert text.count(old) == 1, (m.name, m.path, old)
            text = text.replace(old, new)


def test_every_selected_test_exists(mutation):
    for m in mutation.MUTANTS:
        assert m.tests, m.name
        for t in m.tests:
            path, _, name = t.partition("::")
            source = (ROOT / path).read_text()
            if name:
                assert re.search(rf"^def {re.escape(name)}\(", source, re.M), (m.name, t)
