"""Eval sets, in every form gbm takes, turned into one spec (``EvalSpec``) by one parser:
``gbm.train``, the estimators, ``gbm.dask.train`` and the Dask estimators all use it.

The forms:

* ``evals=`` of ``gbm.train`` and ``gbm.dask.train``: a sequence of ``(X, y, name)``,
  ``(X, y, sample_weight, name)``, ``(DMatrix, name)``, dicts with keys ``X``, ``y``,
  ``name`` and optionally ``sample_weight``, ``group``, ``qid``, ``base_margin``,
  ``row_ids``, ``label_lower_bound``, ``label_upper_bound``, or ``EvalSpec`` objects
  (``eval_specs``); ``survival:aft``'s ``y`` holds [lower, upper] per row (n, 2), or a
  ``DMatrix`` its bounds;
* the estimators' ``fit``: ``eval_set=[(X, y), ...]``, with one entry per eval set in
  each of ``sample_weight_eval_set``, ``base_margin_eval_set``, ``eval_group`` and
  ``eval_qid``; the sets are named ``validation_0``, ``validation_1``, ...
  (``fit_eval_specs``, which takes the estimator's own checks and encodings as
  ``prepare``).

``check_eval`` checks a spec's contents for a fit (its rows, labels, weights, query groups
and base margins) once the model's output groups are known.
"""
import dataclasses

import numpy as np

from .dmatrix import DMatrix
from .inputs import check_base_margin, check_sample_weight, check_targets, check_X
from .intervals import check_intervals
from .queries import make_queries


@dataclasses.dataclass
class EvalSpec:
    """One eval set, unchecked. ``sample_weight`` is per row, or per query group when
    ``group`` / ``qid`` is given (ranking). ``base_margin``: (n_rows,) or (n_rows,
    n_groups), each row's starting margin. ``row_ids``: int64 (n_rows,), the rows' indices
    in the whole eval set when these rows are one part of it (a rank of a distributed
    fit); None: their positions. ``label_lower_bound`` / ``label_upper_bound``:
    ``survival:aft``'s interval labels when not given as ``y`` of shape (n_rows, 2)."""

    name: str
    X: object
    y: object
    sample_weight: object = None
    group: object = None
    qid: object = None
    base_margin: object = None
    row_ids: object = None
    label_lower_bound: object = None
    label_upper_bound: object = None


_KEYS = tuple(f.name for f in dataclasses.fields(EvalSpec))
_FORMS = ("each entry of evals must be (X, y, name), (X, y, sample_weight, name), "
          "(DMatrix, name), an EvalSpec or a dict with keys X, y, name (and sample_weight, "
          "group, qid, base_margin, row_ids, label_lower_bound, label_upper_bound)")


def eval_specs(evals):
    """The entries of ``evals=`` (see the module docstring) as a list of ``EvalSpec``."""
    if evals is None:
        return []
    if isinstance(evals, (dict, EvalSpec)):
        raise TypeError(f"evals must be a sequence of eval sets, e.g. [(X, y, 'valid')], got "
                        f"a single {type(evals).__name__}; put it in a list")
    return [_spec(entry, index) for index, entry in enumerate(evals)]


def _spec(entry, index):
    if isinstance(entry, EvalSpec):
        return entry
    if isinstance(entry, dict):
        unknown, missing = set(entry) - set(_KEYS), {"X", "y", "name"} - set(entry)
        if unknown or missing:
            raise ValueError(f"evals[{index}] is a dict with unknown keys {sorted(unknown)} or "
                             f"missing keys {sorted(missing)}; allowed keys: {sorted(_KEYS)}")
        return EvalSpec(**entry)
    if not isinstance(entry, (tuple, list)):
        raise ValueError(f"{_FORMS}; evals[{index}] is a {type(entry).__name__}")
    if len(entry) == 2 and isinstance(entry[0], DMatrix):
        d, name = entry
        if d.label is None and d.label_lower_bound is None and d.label_upper_bound is None:
            raise ValueError(f"evals[{index}] ({name!r}): the DMatrix has no labels")
        return EvalSpec(name, d.data, d.label, d.weight, d.group, d.qid, d.base_margin,
                        label_lower_bound=d.label_lower_bound,
                        label_upper_bound=d.label_upper_bound)
    if len(entry) == 3:
        return EvalSpec(entry[2], entry[0], entry[1])
    if len(entry) == 4:
        return EvalSpec(entry[3], entry[0], entry[1], entry[2])
    raise ValueError(f"{_FORMS}; evals[{index}] has {len(entry)} items")


def fit_eval_specs(eval_set, sample_weight_eval_set=None, base_margin_eval_set=None,
                   eval_group=None, eval_qid=None, prepare=None):
    """The estimators' eval-set arguments as a list of ``EvalSpec`` named
    ``validation_{i}``; ``prepare(spec) -> spec`` applies the estimator's own checks and
    encodings (its X validation, its label encoding, a ranker's ``qid`` column)."""
    per_set = {"sample_weight_eval_set": sample_weight_eval_set,
               "base_margin_eval_set": base_margin_eval_set, "eval_group": eval_group,
               "eval_qid": eval_qid}
    if eval_set is None:
        for name, value in per_set.items():
            if value is not None:
                raise ValueError(f"{name} is given but eval_set is not")
        return []
    for name, value in per_set.items():
        if value is not None and len(value) != len(eval_set):
            raise ValueError(f"{name} has {len(value)} entries but eval_set has "
                             f"{len(eval_set)}")
    specs = []
    for i, entry in enumerate(eval_set):
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            raise ValueError(f"eval_set[{i}] must be a pair (X, y), got "
                             f"{type(entry).__name__}")
        at = {name: None if value is None else value[i] for name, value in per_set.items()}
        spec = EvalSpec(f"validation_{i}", entry[0], entry[1], at["sample_weight_eval_set"],
                        at["eval_group"], at["eval_qid"], at["base_margin_eval_set"])
        specs.append(spec if prepare is None else prepare(spec))
    return specs


@dataclasses.dataclass
class CheckedEval:
    """An eval set checked for a fit: ``X`` as given (the booster converts it), ``y``
    float64, ``weight`` float64 per row or None, ``queries`` (``QueryGroups`` or None),
    ``base_margin`` float64 (n_groups, n_rows) or None, ``row_ids`` int64 or None."""

    name: str
    X: object
    y: np.ndarray
    weight: object
    queries: object
    base_margin: object
    row_ids: object


def check_eval(spec, index, n_groups, needs_queries=False, shard=False,
               interval_labels=False):
    """``spec``'s contents checked for a fit with ``n_groups`` output groups
    (``needs_queries``: a ranking objective, whose eval sets need query groups; ``shard``:
    one rank's part of a distributed eval set, which may have no rows;
    ``interval_labels``: survival:aft, whose labels are intervals, ``y`` then float64
    (n_rows, 2))."""
    name = spec.name
    n_rows = spec.X.shape[0] if hasattr(spec.X, "mapper") else check_X(  # binned: checked
        spec.X, name=f"evals[{name!r}] X", allow_category=True, shard=shard).shape[0]
    if interval_labels:
        y = check_intervals(spec.y, n_rows, spec.label_lower_bound, spec.label_upper_bound,
                            name=f"evals[{name!r}] y")
    else:
        y = check_targets(spec.y, n_rows, name=f"evals[{name!r}] y")
    queries = make_queries(spec.group, spec.qid, spec.sample_weight, n_rows,
                           what=f"evals[{name!r}] ", shard=shard)
    if needs_queries and queries is None:
        raise ValueError(f"evals[{index}] ({name!r}) has no query groups; with a ranking "
                         "objective pass it as a dict with 'group' or 'qid', e.g. "
                         "{'X': X, 'y': y, 'name': 'valid', 'qid': qid}")
    if queries is not None:
        weight = queries.row_weight()
    elif spec.sample_weight is not None:
        weight = check_sample_weight(spec.sample_weight, n_rows, shard=shard)
    else:
        weight = None
    base_margin = None if spec.base_margin is None else check_base_margin(
        spec.base_margin, n_rows, n_groups, f"evals[{name!r}] base_margin")
    row_ids = None if spec.row_ids is None else np.asarray(spec.row_ids, dtype=np.int64)
    return CheckedEval(name, spec.X, y, weight, queries, base_margin, row_ids)
