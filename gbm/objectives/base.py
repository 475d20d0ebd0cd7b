"""The interface every objective implements (``Objective``), with its defaults.

An objective is built from validated parameters (``gbm.params``) and gives: the number of
output groups (``n_groups``: one tree per group per round), the label check, the
starting margin estimated from the labels (over every rank), the conversions between
``base_score`` and margins, the gradients and hessians of the loss in the margins, and
the link from margins to predictions.

Margins, gradients and hessians are float64 (n_rows, n_groups). Links take ``xp``, the
array module (NumPy or CuPy), so that predictions stay where the margins are.
"""
import numpy as np

from ..collective import LOCAL
from ..numerics.elementwise import SAME_BITS


class Objective:
    """Base class; ``gradients``, ``base_margin`` and ``transform`` have no default."""

    name = None  # XGBoost's name, e.g. "reg:squarederror"
    default_metric = None  # the eval metric when none is given
    n_groups = 1  # output groups: classes, quantile levels, targets
    # quantile levels of the leaves refreshed to residual quantiles after growing (absolute
    # and quantile losses: gbm.objectives.adaptive), one per output group; None: Newton leaves
    leaf_alphas = None
    needs_queries = False  # ranking: gradients need the training data's query groups
    interval_labels = False  # labels are intervals, (n_rows, 2) [lower, upper]: survival:aft

    def __init__(self, params):
        pass

    def check_labels(self, y):
        """``y`` (float64, checked finite) if this objective accepts it, else ValueError
        naming the first bad row."""
        return y

    def bind_rows(self, y, row_ids, collective=LOCAL):
        """Called once per fit, before ``base_margin``, with the checked labels and each
        row's index in the whole data set (``row_ids``, int64 (n_rows,)): an objective whose
        gradients need every rank's rows (survival:cox) gathers what it needs here."""

    def base_margin(self, y, w, collective=LOCAL):
        """The starting margins, float64 (n_groups,), from every rank's labels and weights
        (``w`` None: unweighted)."""
        raise NotImplementedError

    def base_score_to_margin(self, base_score):
        """float64 (n_groups,): the margins of a user's ``base_score`` (identity link)."""
        return np.full(self.n_groups, float(base_score))

    def margin_to_base_score(self, margin):
        """``base_score`` of margins (the model file's field): a float, or a list of one
        per group."""
        return float(margin[0])

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        """``(grad, hess)``, float64 (n_rows, n_groups), of the loss at ``margin``.

        margin : float64 (n_rows, n_groups); y : labels (n_rows,) (or (n_rows, k));
        w : float64 (n_rows,) row weights, on the backend's device
        backend : gbm.runtime.backend.Backend; None = the CPU kernels on one thread
        queries : gbm.data.queries.QueryGroups of the training rows (ranking), or None
        round_ : the boosting round (ranking draws its pairs per round)
        """
        raise NotImplementedError

    def transform(self, margin, xp=np):
        """Predictions from margins (n_rows, n_groups): (n_rows,) for one group."""
        raise NotImplementedError

    def transform_in_place(self, margin, xp=np):
        """``transform`` of margins the caller gives up (a prediction's own): the same
        bits, written over ``margin`` where the objective can (no second array the size
        of the margins)."""
        return self.transform(margin, xp)

    def transform_for_metric(self, margin, xp=np):
        """``transform`` for the eval metrics (which drive early stopping and
        ``best_score``): on the host with gbm's exp (``gbm.numerics.elementwise``: the
        same bits on every CPU)."""
        return self.transform(margin, SAME_BITS if xp is np else xp)
