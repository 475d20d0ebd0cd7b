"""Multi-target regression: ``y`` of shape (n_rows, n_targets), one output group per
target, each with its own trees (XGBoost's ``multi_strategy="one_output_per_tree"``).

``MultiTarget`` wraps any single-output regression objective: target ``j``'s gradients,
starting margin, link and leaf refresh are the wrapped objective's on column ``j`` of
``y``. The training loop sees ``n_groups = n_targets`` output groups, exactly as for
several quantile levels or classes, so nothing else changes: a model with ``k`` targets
is ``k`` single-target models trained side by side (without row or column sampling, which
draw per output group, the same trees as ``k`` separate fits with the same parameters).
"""
import numpy as np

from ..collective import LOCAL
from .base import Objective


class MultiTarget(Objective):
    """``base_cls``'s objective on each of ``params["num_target"]`` label columns."""

    def __init__(self, base_cls, params):
        self.base = base_cls(params)
        if self.base.n_groups != 1:
            raise ValueError(f"objective {self.base.name!r} with {self.base.n_groups} outputs "
                             "(e.g. several quantile_alpha levels) cannot be combined with "
                             "several targets; fit one model per target")
        self.k = params["num_target"]
        self.n_groups = self.k
        self.name, self.default_metric = self.base.name, self.base.default_metric
        alphas = self.base.leaf_alphas
        if alphas is not None:
            self.leaf_alphas = list(alphas) * self.k

    def _check_shape(self, y):
        if y.ndim != 2 or y.shape[1] != self.k:
            raise ValueError(f"y has shape {y.shape}; num_target={self.k} needs "
                             f"(n_rows, {self.k})")

    def check_labels(self, y):
        self._check_shape(y)
        for j in range(self.k):
            try:
                self.base.check_labels(y[:, j])
            except ValueError as err:
                raise ValueError(f"target {j} (y[:, {j}]): {err}") from None
        return y

    def base_margin(self, y, w, collective=LOCAL):
        return np.concatenate([self.base.base_margin(np.ascontiguousarray(y[:, j]), w,
                                                     collective) for j in range(self.k)])

    def base_score_to_margin(self, base_score):
        return np.tile(self.base.base_score_to_margin(base_score), self.k)

    def margin_to_base_score(self, margin):
        return [self.base.margin_to_base_score(margin[j:j + 1]) for j in range(self.k)]

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        xp = np if backend is None else backend.xp
        # group-major, seen as (n_rows, k): what the training loop reads without a copy
        grads = xp.empty((self.k, margin.shape[0]))
        hesses = xp.empty((self.k, margin.shape[0]))
        for j in range(self.k):
            g, h = self.base.gradients(margin[:, j:j + 1], xp.ascontiguousarray(y[:, j]), w,
                                       backend=backend)
            # copied at once: the next target's may reuse the same memory (Backend.buffer)
            grads[j], hesses[j] = g.reshape(-1), h.reshape(-1)
        return grads.T, hesses.T

    def _columns(self, margin, xp, method):
        return xp.stack([getattr(self.base, method)(margin[:, j:j + 1], xp)
                         for j in range(self.k)], axis=1)

    def transform(self, margin, xp=np):
        return self._columns(margin, xp, "transform")

    def transform_for_metric(self, margin, xp=np):
        return self._columns(margin, xp, "transform_for_metric")
