"""A user's objective: their function gives the gradients, the built-in objective that
``params["objective"]`` names gives the rest (label checks, starting margin, link,
default metric), as in XGBoost."""
import numpy as np

from ..collective import LOCAL
from .base import Objective


class CustomObjective(Objective):
    """``fn(margin, y, w) -> (grad, hess)`` over ``base``'s other methods. ``fn`` sees
    NumPy arrays (a copy from the device on a GPU): ``margin`` (n,) for one output group,
    else (n, n_groups), and returns arrays of that shape, the weights applied by itself.
    Its trees keep their Newton leaves (no leaf refresh, whatever ``base`` does)."""

    def __init__(self, base, fn):
        self.base, self.fn = base, fn
        self.name, self.default_metric, self.n_groups = base.name, base.default_metric, base.n_groups
        self.needs_queries, self.interval_labels = base.needs_queries, base.interval_labels

    def bind_rows(self, y, row_ids, collective=LOCAL):
        self.base.bind_rows(y, row_ids, collective)

    def check_labels(self, y):
        return self.base.check_labels(y)

    def base_margin(self, y, w, collective=LOCAL):
        return self.base.base_margin(y, w, collective)

    def base_score_to_margin(self, base_score):
        return self.base.base_score_to_margin(base_score)

    def margin_to_base_score(self, margin):
        return self.base.margin_to_base_score(margin)

    def transform(self, margin, xp=np):
        return self.base.transform(margin, xp)

    def transform_for_metric(self, margin, xp=np):
        return self.base.transform_for_metric(margin, xp)

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        """The user's gradients, checked: the margin's shape, finite; float64 on the
        backend's device, (n_rows, n_groups)."""
        host = (lambda a: a) if backend is None else backend.to_host
        shape = margin.shape if margin.shape[1] > 1 else (margin.shape[0],)
        # the weights as an array of their own (an unweighted fit's are one value seen n
        # times, gbm.objectives.gradients.unit_weights)
        grad, hess = self.fn(np.array(host(margin).reshape(shape), order="C"), host(y),
                             np.ascontiguousarray(host(w)))
        out = []
        for name, value in (("gradient", grad), ("hessian", hess)):
            value = np.asarray(value, dtype=np.float64)
            if value.shape != shape:
                raise ValueError(f"the objective's {name} has shape {value.shape}, expected {shape}")
            if not np.isfinite(value).all():
                raise ValueError(f"the objective's {name} holds NaN or infinity")
            value = value.reshape(margin.shape)
            out.append(value if backend is None else backend.asarray(value))
        return out
