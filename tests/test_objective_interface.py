"""Every objective implements gbm.objectives.base.Objective: one gradients signature,
defaults from the base class, nothing patched onto the classes at import."""
import inspect

import numpy as np
import pytest

import gbm
from gbm import params as gbm_params
from gbm.objectives import OBJECTIVES, get_objective
from gbm.objectives.base import Objective
from gbm.objectives.custom import CustomObjective

REQUIRED = ("base_margin", "gradients", "transform")


def test_the_registry_holds_every_objective_the_parameters_allow():
    assert set(OBJECTIVES) == set(gbm_params.OBJECTIVES)


@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_each_objective_is_an_objective_with_the_one_gradients_signature(name):
    cls = OBJECTIVES[name]
    assert issubclass(cls, Objective) and cls.name == name
    for method in REQUIRED:  # the base class leaves these to each objective
        assert getattr(cls, method) is not getattr(Objective, method), (name, method)
    assert inspect.signature(cls.gradients) == inspect.signature(Objective.gradients)
    extra = {"num_class": 3} if name.startswith("multi:") else {}
    if name == "reg:expectileerror":  # no default level, as in XGBoost
        extra = {"expectile_alpha": 0.5}
    objective = get_objective(gbm_params.validate_params(dict(objective=name, **extra)))
    assert objective.n_groups >= 1 and objective.default_metric


def test_nothing_is_patched_onto_the_classes():
    # transform_for_metric is the base class's unless a class writes its own
    own = {name for name, cls in OBJECTIVES.items() if "transform_for_metric" in vars(cls)}
    assert own == {"multi:softprob"}  # multi:softmax inherits its probabilities


def test_ranking_gradients_take_the_query_groups_as_an_argument():
    p = gbm_params.validate_params({"objective": "rank:ndcg"})
    objective = get_objective(p)
    assert objective.needs_queries and not get_objective(gbm_params.validate_params({})).needs_queries
    from gbm.data.queries import make_queries

    y = np.array([0.0, 1.0, 2.0, 0.0, 1.0])
    queries = make_queries([3, 2], None, None, 5).locate()
    grad, hess = objective.gradients(np.zeros((5, 1)), y, np.ones(5), queries=queries)
    assert grad.shape == hess.shape == (5, 1)
    # the most relevant document of each query is pushed up, the least down
    assert grad[2, 0] < 0 < grad[0, 0] and grad[4, 0] < 0 < grad[3, 0]
    with pytest.raises(ValueError, match="needs query groups"):
        objective.gradients(np.zeros((5, 1)), y, np.ones(5))


def test_a_custom_objective_wraps_the_named_one():
    p = gbm_params.validate_params({"objective": "binary:logistic"})
    base = get_objective(p)

    def squared(margin, y, w):
        return margin - y, np.ones_like(margin)

    custom = CustomObjective(base, squared)
    assert custom.leaf_alphas is None and custom.default_metric == "logloss"
    margin = np.array([[0.5], [-1.0]])
    np.testing.assert_array_equal(custom.transform(margin), base.transform(margin))
    grad, hess = custom.gradients(margin, np.array([1.0, 0.0]), np.ones(2))
    np.testing.assert_array_equal(grad, [[-0.5], [-1.0]])
    with pytest.raises(ValueError, match="gradient has shape"):
        CustomObjective(base, lambda m, y, w: (m[:1], m[:1])).gradients(
            margin, np.ones(2), np.ones(2))
    # through train: the quantile objective's leaf refresh is not applied to a custom one
    X = np.random.default_rng(0).normal(size=(200, 3))
    yq = X[:, 0]
    b = gbm.train({"objective": "reg:quantileerror", "quantile_alpha": 0.5}, X, yq, 2,
                  obj=lambda m, y, w: (m - y, np.ones_like(m)))
    assert b.num_boosted_rounds == 2
