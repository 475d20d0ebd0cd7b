"""docs/parameters.md names every training parameter, alias, objective and metric."""
from pathlib import Path

import pytest

from gbm import params
from gbm.metrics import names, pointwise

DOC = (Path(__file__).resolve().parent.parent / "docs" / "parameters.md").read_text(encoding="utf-8")
NAMES = (list(params.SPEC) + list(params.ALIASES) + list(params.OBJECTIVES)
         + list(names.POINTWISE) + list(names.PARAMETRIC) + list(names.SURVIVAL_METRICS)
         + ["ndcg", "map", "ndcg@k", "map@k", "tweedie-nloglik@rho"])


def test_every_metric_name_has_its_formula():
    assert set(pointwise.METRICS) == set(names.POINTWISE)
    assert set(pointwise.PARAMETRIC) == set(names.PARAMETRIC)


@pytest.mark.parametrize("name", NAMES)
def test_documented(name):
    assert f"`{name}`" in DOC, f"docs/parameters.md does not document `{name}`"
