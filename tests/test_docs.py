"""docs/parameters.md names every training parameter, alias, objective and metric."""
from pathlib import Path

import pytest

from gbm import params
from gbm.metrics import pointwise as metrics

DOC = (Path(__file__).resolve().parent.parent / "docs" / "parameters.md").read_text(encoding="utf-8")
NAMES = (list(params.SPEC) + list(params.ALIASES) + list(params.OBJECTIVES)
         + list(metrics.METRICS) + ["quantile", "mphe", "ndcg", "map", "ndcg@k", "map@k",
                                    "tweedie-nloglik@rho"])


@pytest.mark.parametrize("name", NAMES)
def test_documented(name):
    assert f"`{name}`" in DOC, f"docs/parameters.md does not document `{name}`"
