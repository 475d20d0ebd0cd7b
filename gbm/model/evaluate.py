"""``Booster``'s evaluation (a mixin of ``gbm.model.booster.Booster``): ``eval`` and
``eval_set``, XGBoost's, which score the model on labelled DMatrices with its eval metrics
and return XGBoost's text, ``"[0]\\teval-rmse:0.10000000000000001"``."""
import types

import numpy as np

from ..collective import LOCAL
from ..data.dmatrix import DMatrix
from ..data.eval_sets import check_eval, eval_specs
from ..metrics import get_metric
from ..objectives import get_objective
from .scoring import score


def _check_evals(evals):
    """``evals`` as a list of (DMatrix, name), with XGBoost's errors."""
    if isinstance(evals, tuple) and len(evals) == 2 and isinstance(evals[0], DMatrix):
        raise TypeError("evals must be a list of (DMatrix, name) pairs, got one pair; put "
                        "it in a list")
    pairs = list(evals)
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"evals[{i}] must be a (DMatrix, name) pair, got {pair!r}")
        if not isinstance(pair[0], DMatrix):
            raise TypeError(f"evals[{i}]: expected DMatrix, got {type(pair[0]).__name__}")
        if not isinstance(pair[1], str):
            raise TypeError(f"evals[{i}]: expected string, got {type(pair[1]).__name__}")
    return pairs


def _custom_text(feval, predt, dmatrix, name):
    """``feval(predt, dmatrix)``'s result, ``(name, value)`` or a list of them, as
    XGBoost writes it after the metrics: ``\\t{set}-{metric}:{value:f}``."""
    result = feval(predt, dmatrix)
    pairs = [result] if isinstance(result, tuple) else list(result)
    return "".join(f"\t{name}-{metric}:{float(value):f}" for metric, value in pairs)


class Evaluating:
    """Scores of a ``Booster`` on labelled data."""

    def eval_set(self, evals, iteration=0, feval=None, output_margin=True):
        """Score the model on each labelled DMatrix of ``evals`` (a list of (DMatrix,
        name)) with its eval metrics (the ``eval_metric`` parameter, else the objective's),
        as XGBoost's ``eval_set``: ``"[{iteration}]\\t{name}-{metric}:{score}..."``, each
        score with 17 significant digits; ``iteration`` only labels the line (the whole
        model is scored). ``feval(predt, dmatrix)``: a custom metric, given ``predict``'s
        margins (``output_margin=True``) or predictions, returning ``(name, value)`` or a
        list of them, appended as ``{value:f}``."""
        self._check_loaded()
        pairs = _check_evals(evals)
        objective = get_objective(self.params)
        names = self.params["eval_metric"] or [objective.default_metric]
        metrics = [get_metric(name, self.params) for name in names]
        needs_queries = objective.needs_queries or any(
            getattr(m, "needs_queries", False) for m in metrics)
        parts = [f"[{int(iteration)}]"]
        for i, (dmatrix, name) in enumerate(pairs):
            checked = check_eval(eval_specs([(dmatrix, name)])[0], i, self.n_groups,
                                 needs_queries, interval_labels=objective.interval_labels)
            margin = np.asarray(self.predict(dmatrix, output_margin=True),
                                dtype=np.float64).reshape(checked.y.shape[0], self.n_groups)
            pred = objective.transform_for_metric(margin)
            es = types.SimpleNamespace(y=checked.y, w=checked.weight, queries=checked.queries)
            parts += [f"\t{name}-{metric_name}:{score(metric, es, pred, margin, LOCAL):.17g}"
                      for metric_name, metric in zip(names, metrics)]
            if feval is not None:
                predt = self.predict(dmatrix, output_margin=output_margin)
                parts.append(_custom_text(feval, predt, dmatrix, name))
        return "".join(parts)

    def eval(self, data, name="eval", iteration=0):
        """``eval_set([(data, name)], iteration)``: the model's scores on one DMatrix."""
        return self.eval_set([(data, name)], iteration)
