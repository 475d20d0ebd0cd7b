"""Objectives: gradients and hessians of the loss, starting margins, links and default
metrics (the interface: ``base.Objective``), one module per family;
``get_objective(params)`` picks one."""
from .binary import Hinge, LogisticRegression, LogitRaw
from .expectile import ExpectileError
from .log_link import Gamma, Poisson, Tweedie
from .multi_target import MultiTarget
from .pointwise import Logistic, Softmax, Softprob, SquaredError
from .ranking import MAPLambda, NDCGLambda, Pairwise
from .robust import AbsoluteError, PseudoHuber, QuantileError
from .squared_log import SquaredLogError
from .survival import AFT, Cox

__all__ = ["OBJECTIVES", "get_objective"]

OBJECTIVES = {cls.name: cls for cls in (
    SquaredError, AbsoluteError, QuantileError, PseudoHuber, Logistic, Softprob, Softmax,
    Poisson, Gamma, Tweedie, Pairwise, NDCGLambda,
    LogisticRegression, LogitRaw, Hinge, SquaredLogError, ExpectileError, MAPLambda,
    Cox, AFT)}


def get_objective(params):
    """The objective of validated ``params``; with several regression targets
    (``num_target`` > 1), one output group per target (``MultiTarget``)."""
    if params.get("num_target", 1) > 1:
        return MultiTarget(OBJECTIVES[params["objective"]], params)
    return OBJECTIVES[params["objective"]](params)
