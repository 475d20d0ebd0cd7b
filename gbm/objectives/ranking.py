"""Learning-to-rank objectives ``rank:pairwise``, ``rank:ndcg`` and ``rank:map``
(LambdaMART), as in XGBoost 2+ (``src/objective/lambdarank_obj.cc``).

Within each query group, for each pair of documents (i, j) with label_i > label_j, the
pairwise logistic loss ``log(1 + exp(-(s_i - s_j)))`` of RankNet, weighted by |delta Z|:
1 for ``rank:pairwise``, the change in NDCG when i and j swap places in the model's
ranking for ``rank:ndcg`` (Burges 2010, "From RankNet to LambdaRank to LambdaMART"),
the change in average precision for ``rank:map`` (binary labels: XGBoost's ``DeltaMAP``,
from the relevant documents counted along the rank list).
The pair's lambda ``(sigma(s_i - s_j) - 1) |dZ|`` goes to i, its negation to j; both get
the hessian ``2 sigma (1 - sigma) |dZ|`` (XGBoost's factor 2). The arithmetic is in the
kernel ``lambdarank_gradients`` (``kernels/cpu/rank.py``).

Pairs (``lambdarank_pair_method``):

* ``"topk"`` (default): every pair with at least one document among the model's top
  ``lambdarank_num_pair_per_sample`` (default 32) of the query; no randomness.
* ``"mean"``: ``lambdarank_num_pair_per_sample`` (default 1) partners per document, drawn
  among the query's documents of another label. Each draw is a counter-based hash of
  (random_state, round, row, draw number), never a generator's state or a thread's turn,
  so a given data set and seed always draw the same pairs.
"""
import numpy as np

from ..collective import LOCAL
from ..kernels.hashing import splitmix64
from ..kernels.layout import MAP, NDCG, PAIRWISE
from ..runtime.backend import get_backend
from .base import Objective

_MAX_EXP_LABEL = 31  # 2^label - 1 must fit XGBoost's 32-bit gain


class LambdaRank(Objective):
    """Shared part of the two ranking objectives; ``delta_kind`` tells them apart."""

    needs_queries = True
    delta_kind = PAIRWISE
    metric = "ndcg"  # the default metric's kind

    def __init__(self, params):
        self.topk = params["lambdarank_pair_method"] == "topk"
        self.num_pair = params["lambdarank_num_pair_per_sample"]
        self.exp_gain = params["ndcg_exp_gain"]
        self.normalization = params["lambdarank_normalization"]
        self.score_normalization = params["lambdarank_score_normalization"]
        self.seed = params["random_state"]
        # XGBoost's default metric: truncated at the top-k the objective looks at
        self.default_metric = f"{self.metric}@{self.num_pair}" if self.topk else self.metric

    def check_labels(self, y):
        if (y < 0).any():
            row = int(np.flatnonzero(y < 0)[0])
            raise ValueError(f"y[{row}] = {y[row]}; {self.name} needs relevance labels >= 0")
        return y

    def base_margin(self, y, w, collective=LOCAL):
        """0: scores are compared within a query, a constant shift changes nothing
        (XGBoost 3 estimates 0 up to rounding)."""
        return np.zeros(1)

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        """(grad, hess), float64 (n_rows, 1); ``w`` is ignored: the query groups' weights
        apply (weights are per query group for ranking), ``queries.scaled_weight``: scaled
        to average 1 over every rank's groups, as XGBoost does. ``queries``: the training
        rows' groups, located in the whole data set (``QueryGroups.locate``)."""
        if queries is None:
            raise ValueError(f"{self.name} needs query groups: pass group= or qid= to train")
        backend = get_backend("cpu", 1) if backend is None else backend
        key = splitmix64(np.uint64(self.seed) ^ splitmix64(np.uint64(round_)))
        xp = backend.xp
        grad, hess = xp.empty(margin.shape[0]), xp.empty(margin.shape[0])
        with backend.threads() as n_threads:
            backend.kernels.lambdarank_gradients(
                xp.ascontiguousarray(margin[:, 0]), xp.asarray(y), queries.ptr,
                queries.first_row, queries.scaled_weight, self.delta_kind,
                self.exp_gain, self.topk, self.num_pair, self.score_normalization,
                self.normalization, np.uint64(key), grad, hess, n_threads)
        return grad[:, None], hess[:, None]

    def transform(self, margin, xp=np):
        return margin[:, 0]


class Pairwise(LambdaRank):
    """rank:pairwise: RankNet's pairwise logistic loss, every pair weighted 1."""

    name = "rank:pairwise"
    delta_kind = PAIRWISE


class NDCGLambda(LambdaRank):
    """rank:ndcg: LambdaMART, each pair weighted by |delta NDCG| of swapping it."""

    name = "rank:ndcg"
    delta_kind = NDCG

    def check_labels(self, y):
        y = super().check_labels(y)
        if self.exp_gain:
            bad = (y != np.floor(y)) | (y > _MAX_EXP_LABEL)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"y[{row}] = {y[row]}; rank:ndcg with ndcg_exp_gain=True needs integer "
                    f"relevance labels in [0, {_MAX_EXP_LABEL}]. Set `ndcg_exp_gain` to "
                    "False for other labels"
                )
        return y


class MAPLambda(LambdaRank):
    """rank:map: LambdaMART, each pair weighted by |delta MAP| of swapping it; binary
    relevance labels (0 or 1), as XGBoost requires; default metric ``map@k``."""

    name = "rank:map"
    delta_kind = MAP
    metric = "map"

    def check_labels(self, y):
        bad = (y != 0.0) & (y != 1.0)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(f"y[{row}] = {y[row]}; rank:map needs binary relevance labels "
                             "(0 or 1)")
        return y
