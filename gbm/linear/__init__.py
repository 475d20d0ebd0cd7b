"""Generalized linear models on gbm's engine, with scikit-learn's names and objectives.

``LogisticRegression`` (binary and multinomial; L2, L1, elastic net), ``Ridge``, ``Lasso``,
``ElasticNet`` and ``LinearSVC`` (hinge and squared hinge). Every fit stops on a duality
gap: ``tol`` bounds the objective's relative distance to the optimum, and
``duality_gap_`` / ``objective_`` report it. Sparse CSR/CSC input is used as it is.
See docs/linear.md.
"""
from .logistic import LogisticRegression
from .regression import ElasticNet, Lasso, Ridge
from .svm import LinearSVC

__all__ = ["ElasticNet", "Lasso", "LinearSVC", "LogisticRegression", "Ridge"]
