"""The pointwise objectives with their own link: squared error, logistic, softmax.

Gradients are computed by the backend's ``pointwise_gradients`` kernel
(``gbm.objectives.gradients``; the formulas, ``exp`` included, in
``kernels/objective_math.py``: the same bits on every backend); links use array
operations, so ``xp`` may be NumPy or CuPy. ``base_margin(y, w, collective)`` estimates
the starting margin from every rank's rows, with exact sums (``gbm.numerics.exact``): the
same whatever the split of the rows.
"""
import numpy as np

from ..collective import LOCAL
from ..kernels.elementary import python as _elementary
from ..kernels.layout import LOGISTIC, SOFTMAX, SQUARED
from ..numerics.elementwise import SAME_BITS, log as _log
from ..numerics.exact import exact_mean, exact_sums
from .base import Objective
from .gradients import pointwise


def _sigmoid(xp, z):
    return 1.0 / (1.0 + xp.exp(-z))


def _softmax(xp, z, out=None):
    """Each row's softmax; ``out``: where to write it (``z`` itself: in place)."""
    e = z - z.max(axis=1, keepdims=True) if out is None else \
        xp.subtract(z, z.max(axis=1, keepdims=True), out=out)
    xp.exp(e, out=e)
    e /= e.sum(axis=1, keepdims=True)
    return e


def _softmax_same_bits(margin):
    """``_softmax(SAME_BITS, margin)``'s bits, host arrays: for C-ordered float64 margins
    (an eval set's), the max-shifted exps of the rows in one parallel pass
    (``shifted_exp_rows``, gbm's exp), then NumPy's row sums and division as ``_softmax``;
    no temporary the size of ``margin`` but the result. Other layouts take ``_softmax``
    (NumPy's sum over a row adds in an order that depends on the layout)."""
    from ..kernels import cpu

    if not (isinstance(margin, np.ndarray) and margin.dtype == np.float64 and margin.ndim == 2
            and margin.flags.c_contiguous):
        return _softmax(SAME_BITS, margin)
    e = np.empty_like(margin)
    if margin.shape[0] and margin.shape[1]:
        cpu.shifted_exp_rows(margin, e)
    e /= e.sum(axis=1, keepdims=True)
    return e


class SquaredError(Objective):
    name = "reg:squarederror"
    default_metric = "rmse"

    def base_margin(self, y, w, collective=LOCAL):
        """Weighted mean of the labels: the one-step Newton optimum from zero."""
        return np.array([exact_mean(y, w, collective)])

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(SQUARED, margin[:, :1], y, w, (), backend)

    def transform(self, margin, xp=np):
        return margin[:, 0]


class Logistic(Objective):
    name = "binary:logistic"
    default_metric = "logloss"

    def check_labels(self, y):
        if ((y < 0) | (y > 1)).any():
            bad = int(np.flatnonzero((y < 0) | (y > 1))[0])
            raise ValueError(f"y[{bad}] = {y[bad]}; {self.name} needs labels in [0, 1]")
        return y

    def base_margin(self, y, w, collective=LOCAL):
        """Logit of the weighted label mean (XGBoost 2+ estimates base_score so)."""
        p = float(np.clip(exact_mean(y, w, collective), 1e-6, 1 - 1e-6))
        return self.base_score_to_margin(p)

    def base_score_to_margin(self, base_score):
        # gbm's own log (NumPy's differs between CPUs): the base margin is in the model file
        return np.array([_elementary.log(float(base_score / (1.0 - base_score)))])

    def margin_to_base_score(self, margin):
        return float(1.0 / (1.0 + _elementary.exp(-float(margin[0]))))

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(LOGISTIC, margin[:, :1], y, w, (), backend)

    def transform(self, margin, xp=np):
        return _sigmoid(xp, margin[:, 0])


class Softprob(Objective):
    name = "multi:softprob"
    default_metric = "mlogloss"

    def __init__(self, params):
        self.n_groups = params["num_class"]

    def check_labels(self, y):
        k = self.n_groups
        if (y != np.floor(y)).any() or (y < 0).any() or (y >= k).any():
            bad = int(np.flatnonzero((y != np.floor(y)) | (y < 0) | (y >= k))[0])
            raise ValueError(f"y[{bad}] = {y[bad]}; {self.name} needs integer labels in [0, {k})")
        return y

    def base_margin(self, y, w, collective=LOCAL):
        """Centred log class priors (what XGBoost 3 estimates for multiclass)."""
        w = np.ones(y.shape[0]) if w is None else w
        onehot = y.astype(np.int64)[None, :] == np.arange(self.n_groups)[:, None]
        counts = np.array(exact_sums(np.where(onehot, w[None, :], 0.0), collective))
        prior = counts / counts.sum()
        # gbm's own log (NumPy's differs between CPUs): the base margins are in the file
        log_prior = _log(np.clip(prior, 1e-6, None))
        return log_prior - log_prior.mean()

    def base_score_to_margin(self, base_score):
        return np.full(self.n_groups, base_score, dtype=np.float64)

    def margin_to_base_score(self, margin):
        return [float(m) for m in margin]

    def gradients(self, margin, y, w, *, backend=None, queries=None, round_=0):
        return pointwise(SOFTMAX, margin, y, w, (), backend)

    def transform(self, margin, xp=np):
        return _softmax(xp, margin)

    def transform_in_place(self, margin, xp=np):
        # the same operations on the margins' own memory: no second (n_rows, k) array
        return _softmax(xp, margin, out=margin)

    def transform_for_metric(self, margin, xp=np):
        # gbm's exp on the host (as the base class), the rows' exps in one parallel pass
        return _softmax_same_bits(margin) if xp is np else _softmax(xp, margin)


class Softmax(Softprob):
    """multi:softmax: trained as multi:softprob; predicts the most probable class index."""

    name = "multi:softmax"
    default_metric = "merror"

    def transform(self, margin, xp=np):
        return xp.argmax(margin, axis=1).astype(xp.float64)

    def transform_in_place(self, margin, xp=np):
        return self.transform(margin, xp)

    # transform_for_metric: Softprob's (mlogloss needs the probabilities)
