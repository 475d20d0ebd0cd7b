"""A fit's set-up, before its first round: parameters, backend, features (categories
encoded), labels, weights and query groups checked, the objective, the bin edges and
binned rows, the model to continue, the starting margins and the eval sets.

Written once for one rank of a possibly distributed fit: every quantity that depends on
all rows (categories, bin edges, row counts, base scores, query-group weights) goes
through the collective, which is a no-op locally.
"""
import contextlib

import numpy as np

from ..collective import LOCAL
from ..bins.layout import binned_rows
from ..data.sparse import SparseMatrix, from_dense
from ..bins.binning import BinMapper
from ..data.categorical import (check_same_categorical, check_same_categories, encode_X,
                                fit_categories)
from ..data.compat import objective_function
from ..data.dmatrix import DMatrix
from ..data.eval_sets import check_eval, eval_specs
from ..data.inputs import check_base_margin, check_targets, feature_names_of, n_targets, to_host
from ..data.intervals import check_intervals
from ..data.queries import training_queries
from ..bins.quantile import BinnedRows
from ..model.booster import Booster, load_init_model
from ..objectives import OBJECTIVES, get_objective
from ..objectives.custom import CustomObjective
from ..objectives.gradients import unit_weights
from ..params import validate_params
from .intercept import base_score_margins
from ..runtime import compile_ahead
from ..runtime.backend import get_backend
from ..runtime.memory import release_free_memory
from ..tree.constraints import (interaction_matrix, parse_interaction_constraints,
                                parse_monotone_constraints)
from ..tree.grower import HistogramBuffers
from ..tree.growers import choose_grower
from ..tree.tree_data import TreeData
from ..tree.group_threads import GroupRunner
from ..tree.rebin import binned_margins, rebinned_forest
from ..tree.vector_leaf import check_supported as check_vector_leaf
from ..tree.vector_leaf import dense_data
from .arguments import check_rounds
from .callbacks import agree
from .dropout import ContinuedTrees, Dropout
from .evaluation import EvalSet


class Fit:
    """The prepared state of a fit (one rank's, in a distributed one).

    Built in two steps: the constructor checks the data and bins it; ``start()``, inside
    ``with fit:`` (the backend's threads and the output groups' runner), makes the booster
    (or continues ``init_model``'s) and the starting margins. ``eval_sets(evals)`` then
    checks and bins the eval sets against it.

    Attributes the rounds read: ``params`` (validated), ``backend``, ``objective``,
    ``data`` (``TreeData``: the binned rows), ``margins`` (float64 (n_groups, n_rows),
    group-major), ``y`` / ``y_fit`` (labels on the host / on the device), ``w`` (row
    weights on the host), ``w_fit`` (the gradients' weights on the device: with
    ``scale_pos_weight``), ``refresh_weights`` (the leaf refresh's: None when unweighted),
    ``queries``, ``row_ids`` (None: the rows' positions), ``n_rows_total``, ``grower``
    (``gbm.tree.growers.Grower``: which grower grows the trees), ``runner``,
    ``first_round``,
    ``dropout`` (DART's state, ``gbm.training.dropout``; None unless ``booster="dart"``).
    """

    def __init__(self, params, data, num_boost_round, init_model=None, obj=None,
                 collective=LOCAL):
        p = validate_params(params)
        check_rounds(num_boost_round)
        self.collective, self.shard = collective, collective.world_size > 1
        backend = self.backend = get_backend(p["device"], p["n_jobs"], collective)
        if backend.name == "cpu":
            compile_ahead.prepare()  # an empty compile cache: filled by several processes
        backend.workspace = {}  # a round's large arrays reuse the last round's memory
        X = self._features(data, init_model)
        self.feature_types = getattr(data.dmatrix, "feature_types", None)  # XGBoost's codes
        y, p = labels_and_params(data, p, params, X.shape[0])
        self.params = p
        objective = get_objective(p)
        self.queries, w = training_queries(objective, data.group, data.qid, data.sample_weight,
                                           X.shape[0], self.shard)
        self.y = y = objective.check_labels(y)
        self.w, self.w_grad = w, w  # the gradients' weights: scale_pos_weight scales the positives'
        if p["scale_pos_weight"] != 1.0:
            self.w_grad = np.where(y == 1.0, w * p["scale_pos_weight"], w)
        self.refresh_weights = None if data.sample_weight is None else w
        self._rows(X, data.row_ids)
        objective.bind_rows(y, self.row_ids, collective)  # survival:cox gathers its rows
        if obj is not None:  # the user's gradients, the named objective's everything else
            dtrain = data.dmatrix if data.dmatrix is not None else (
                DMatrix._of_intervals if objective.interval_labels else DMatrix._of_labels)(
                y, data.sample_weight, data.base_margin)
            objective = CustomObjective(objective, objective_function(obj, dtrain))
        self.objective, self.base_margin_rows = objective, data.base_margin
        with backend.threads():
            self.data, self.mapper = _bin(X, w, self.categories, self.names, p, backend,
                                          self.row_ids, self.n_rows_total)
        if data.dmatrix is not None and not isinstance(X, BinnedRows):
            data.dmatrix.fit_edges = (self.mapper.cuts, self.categories)  # get_quantile_cut
        self.X = X  # until start(): the bins are what the rounds read
        self.grower = choose_grower(p, backend, self.data, objective, X.shape[0])
        if self.grower.vector is not None:  # one vector-leaf tree a round
            check_vector_leaf(p, self.data, backend, objective)
            self.data = dense_data(self.data, backend.xp)  # sparse or bundled bins: expanded
        # a round's groups' trees, where they are not grown in lockstep: concurrently in
        # threads where that pays (gbm/tree/group_threads.py), each thread with its own
        # levels' histograms
        self.runner = GroupRunner(backend, 1 if self.grower.lockstep else objective.n_groups,
                                  lambda: HistogramBuffers(backend.xp))
        # the set-up's temporaries: not held through the rounds
        release_free_memory(4 * X.shape[0] * X.shape[1])
        self._context = None

    def _features(self, data, init_model):
        """X with its categories encoded (a continued model's, or fitted), on the host for
        a CPU fit; sets ``names``, ``init`` (the model to continue) and ``categories``."""
        X, names = data.X, data.feature_names
        if isinstance(X, BinnedRows):  # a QuantileDMatrix: binned already
            return self._binned_features(X, names, init_model)
        names = self.names = names if names is not None else feature_names_of(X)
        self.init = None if init_model is None else load_init_model(init_model)
        if self.init is not None:  # continue with the model's categories
            if data.categorical_features is not None:
                check_same_categorical(self.init.categories, data.categorical_features, X, names)
            X = encode_X(X, self.init.categories, shard=self.shard)
            self.categories = self.init.categories
        else:
            X, self.categories = fit_categories(X, data.categorical_features, names,
                                                collective=self.collective)
        if names is not None and len(names) != X.shape[1]:
            raise ValueError(f"feature_names has {len(names)} names but X has {X.shape[1]} columns")
        if self.backend.name == "cpu":  # GPU input to a CPU fit: copied to the host once
            X = to_host(X)
        # every rank's rows of one kind (a rank without rows of a sparse data set gets a
        # dense empty block): the binning then takes the same path, and exchanges, on all
        if self.shard and agree(self.collective, isinstance(X, SparseMatrix)) \
                and not isinstance(X, SparseMatrix):
            X = from_dense(to_host(X))
        return X

    def _binned_features(self, X, names, init_model):
        """``_features`` for rows binned before the fit (``gbm.bins.quantile``)."""
        if self.shard and not X.sharded:  # gbm.dask.paged's rows are binned with the
            raise NotImplementedError("a QuantileDMatrix in a distributed fit is not supported "
                                      "yet")  # global edges: they may train sharded
        self.names = names if names is not None else X.feature_names
        self.init, self.categories = None, X.categories
        if init_model is not None:  # its margins from the bins (``start``)
            self.init = load_init_model(init_model)
            check_same_categories(self.init.categories, X.categories, "init_model")
        return X

    def _rows(self, X, row_ids):
        """Each row's index in the whole data set, the total row count, the checks a rank
        cannot make alone, and the query groups located in the whole data set."""
        collective = self.collective
        # None: each row's position (no array of 8 bytes a row held for the whole fit;
        # those that hash row ids make one while they need it)
        self.row_ids = None if row_ids is None else np.asarray(row_ids, np.int64)
        if self.row_ids is not None and self.row_ids.shape != (X.shape[0],):
            raise ValueError(f"row_ids has shape {self.row_ids.shape}; expected ({X.shape[0]},): "
                             "one index per row of X")
        self.n_rows_total = int(collective.allreduce(np.array([X.shape[0]], np.int64), "sum")[0])
        if self.shard:  # this rank holds a part of the rows (maybe none)
            if self.n_rows_total == 0:
                raise ValueError("X has 0 rows on every worker; training needs at least one")
            if not agree(collective, (self.w > 0).any()):
                raise ValueError("sample_weight is zero for every row of every worker; at "
                                 "least one weight must be positive")
        if self.queries is not None:
            self.queries.locate(self.row_ids, collective)

    def __enter__(self):
        self._context = contextlib.ExitStack()
        self._context.enter_context(self.backend.threads())
        self._context.enter_context(self.runner)
        return self

    def __exit__(self, *exc):
        return self._context.__exit__(*exc)

    def start(self):
        """The booster to train (holding ``init_model``'s trees when continuing) and the
        starting margins; sets ``margins``, ``first_round``, ``y_fit``, ``w_fit``."""
        p, X, init, backend, xp = self.params, self.X, self.init, self.backend, self.backend.xp
        names = self.names
        _check_init_model(init, p, X.shape[1], names)
        if init is not None:
            base = init.base_margin
            names = names if names is not None else init.feature_names
        elif p["base_score"] is None:
            weighted = self.refresh_weights is not None or self.w_grad is not self.w
            base = self.objective.base_margin(self.y, self.w_grad if weighted else None,
                                              self.collective)
        else:
            base = base_score_margins(self.objective, p["base_score"])
        booster = Booster(p, n_features=X.shape[1], feature_names=names, base_margin=base,
                          cuts=self.mapper.cuts, categories=self.categories)
        booster.feature_types = self.feature_types or (None if init is None
                                                        else init.feature_types)
        # margins group-major: each output group's column is contiguous for the kernels;
        # the objectives see the (n_rows, n_groups) view ``margins.T``
        margins = xp.repeat(xp.asarray(base, dtype=np.float64)[:, None], X.shape[0], axis=1)
        self.first_round = 0
        rows_start = None
        if init is not None:
            # a dart model's tree weights; a gbtree model's trees weigh 1 in a dart fit
            weights = init.weight_drop or [1.0] * len(init.trees)
            for tree, group, weight in zip(init.trees, init.tree_group, weights):
                booster.add_tree(tree, group, weight)
            booster.iteration_indptr = list(init.iteration_indptr)
            # the trees' sum from each row's own start when it has one, as an uninterrupted
            # fit sums them: 10 rounds continued by 5 are the bits of 15
            margins = xp.ascontiguousarray(self._init_margins(init, X).T)
            self.first_round = init.num_boosted_rounds
        if self.base_margin_rows is not None:  # each row's own start instead of the base
            start = check_base_margin(self.base_margin_rows, X.shape[0], booster.n_groups)
            if init is None:
                margins = xp.ascontiguousarray(margins - xp.asarray(base)[:, None]
                                               + xp.asarray(start))
            rows_start = start
        self.margins = margins
        self.dropout = None
        if p["booster"] == "dart":  # DART computes the margins again from the rows' start
            start = (xp.repeat(xp.asarray(base, dtype=np.float64)[:, None], X.shape[0], axis=1)
                     if rows_start is None else xp.asarray(rows_start, dtype=np.float64))
            # the margins above are not its sums in a continued fit, nor (zeros' signs
            # aside) with rows' own base margins: the first round computes them again
            self.dropout = Dropout(xp.ascontiguousarray(start),
                                   init is None and rows_start is None,
                                   None if init is None else ContinuedTrees(
                                       init.trees, self.mapper.cuts,
                                       None if isinstance(X, BinnedRows) else X, names))
        self.y_fit, self.w_fit = backend.asarray(self.y), backend.asarray(self.w_grad)
        if backend.name == "cpu" and self.w_grad is self.w and self.refresh_weights is None \
                and self.queries is None:
            # no weights given: ones that hold no memory through the rounds (8 bytes a row)
            self.w = self.w_grad = self.w_fit = unit_weights(X.shape[0])
        # the float matrix is not read again: the rounds read the bins. A copy made from
        # the caller's input (a DataFrame, float64, a list) is freed here, not held
        # through the rounds beside the bins
        self.X = None
        return booster

    def _init_margins(self, init, X):
        """float64 (n_rows, n_groups): the continued model's margins of the training rows,
        from each row's own start when it has one; on raw rows as ``predict`` gives them,
        on binned ones (a QuantileDMatrix) on the bins, the same bits
        (``gbm.tree.rebin``: refused when a split cannot be told on them)."""
        xp = self.backend.xp
        if not isinstance(X, BinnedRows):
            return xp.asarray(init._predict_checked(X, output_margin=True,
                                                    base_margin=self.base_margin_rows)
                              ).reshape(X.shape[0], init.n_groups)
        if X.init_margins is not None:  # from the raw rows, when they were binned
            return xp.asarray(X.init_margins)
        forest = rebinned_forest(init.trees, init.tree_group, init.weight_drop,
                                 X.mapper.cuts, init.feature_names)
        return binned_margins(self.backend, self.data.matrix, forest, init.base_margin,
                              self.base_margin_rows, init.n_groups)

    def eval_sets(self, evals, booster):
        """``evals`` (any form of ``gbm.data.eval_sets``) checked and binned: a list of
        ``EvalSet``, their margins starting where the booster's do."""
        specs = eval_specs(evals)
        names = [spec.name for spec in specs]
        if len(set(names)) != len(names):
            raise ValueError(f"the eval sets are named {names}; each needs a name of its own "
                             "(their scores are kept by name)")
        return [EvalSet(check_eval(spec, i, booster.n_groups, self.queries is not None,
                                   self.shard, self.objective.interval_labels), booster,
                        self.mapper, self.backend)
                for i, spec in enumerate(specs)]


def _labels(data, p, n_rows):
    """The labels, checked: float64 (n_rows,), (n_rows, k) for k targets, or the
    intervals of survival:aft (n_rows, 2) (``gbm.data.intervals``: from ``y`` or a
    DMatrix's bounds)."""
    name = p["objective"]
    if OBJECTIVES[name].interval_labels:
        return check_intervals(data.y, n_rows, data.label_lower_bound, data.label_upper_bound)
    if data.y is None:
        raise ValueError(f"the training data has label bounds but no labels; objective "
                         f"{name!r} needs labels (label_lower_bound and label_upper_bound "
                         "are survival:aft's)")
    return check_targets(data.y, n_rows)


def labels_and_params(data, p, params, n_rows):
    """``(y, p)``: the labels checked (``_labels``) and the validated parameters ``p`` with
    ``num_target`` taken from y's columns (``params``: the caller's, unvalidated)."""
    y = _labels(data, p, n_rows)
    if not OBJECTIVES[p["objective"]].interval_labels:  # AFT's 2 columns are 1 label
        p = _with_targets(p, params, y)
    return y, p


def _with_targets(p, params, y):
    """``p`` with ``num_target`` set from the columns of ``y`` (several: one output group
    per target); a ``num_target`` the user gave must agree."""
    k = n_targets(y)
    given = params.get("num_target") if isinstance(params, dict) else None
    if given is not None and p["num_target"] != k:
        raise ValueError(f"num_target={p['num_target']} but y has {k} column(s); leave "
                         "num_target out, it is taken from y")
    return p if k == p["num_target"] else validate_params(dict(params or {}, num_target=k))


def _bin(X, w, categories, names, p, backend, row_ids, n_rows_total):
    """Bin edges (the same for any split of the rows), the binned rows (a bin matrix of
    the layout ``bin_layout`` asks for or the data's density picks) and the features'
    layout and constraints: ``(TreeData, BinMapper)``."""
    n_categories = None if categories is None else np.array(
        [-1 if c is None else len(c) for c in categories], dtype=np.int64)
    if isinstance(X, BinnedRows):  # a QuantileDMatrix's: its edges, its bins
        X.check_params(p)
        mapper, matrix = X.mapper, X.on_device(backend)
    else:
        mapper = BinMapper(p["max_bin"], p["bin_sample_size"], p["random_state"])
        mapper.fit(X, w, n_rows_total=n_rows_total, n_threads=backend.n_threads,
                   n_categories=n_categories, row_ids=row_ids, collective=backend.collective)
        layout = p["bin_layout"]
        if layout == "auto" and p["multi_strategy"] == "multi_output_tree":
            layout = "dense"  # vector-leaf trees read dense bins (gbm.tree.vector_leaf)
        matrix = binned_rows(mapper, X, layout, backend.kernels, backend.xp,
                             backend.collective)
    mapper.sample = mapper._sample_mask = None  # what bundles were proposed from: not kept
    is_categorical = np.zeros(X.shape[1], dtype=np.uint8)
    if categories is not None:
        is_categorical[[f for f, c in enumerate(categories) if c is not None]] = 1
    monotone = parse_monotone_constraints(p["monotone_constraints"], names, X.shape[1])
    if monotone is not None and (monotone[is_categorical == 1] != 0).any():
        f = int(np.flatnonzero((monotone != 0) & (is_categorical == 1))[0])
        raise ValueError(f"monotone_constraints puts a constraint on feature "
                         f"{names[f] if names else f}, which is categorical; categories "
                         "have no order, so only numeric features can be monotone")
    interaction = interaction_matrix(
        parse_interaction_constraints(p["interaction_constraints"], names, X.shape[1]), X.shape[1])
    data = TreeData(matrix, mapper.n_bins, mapper.cuts, is_categorical,
                    np.zeros(X.shape[1], np.int8) if monotone is None else monotone, interaction)
    return data, mapper


def _check_init_model(init, p, n_features, names):
    """The model to continue from, checked against the data."""
    if init is None:
        return
    if init.n_features != n_features:
        raise ValueError(f"init_model was trained on {init.n_features} features but X has {n_features}")
    same = ("objective", "num_class", "num_target", "multi_strategy") + (("quantile_alpha",) if p["objective"] == "reg:quantileerror"
                                         else ())
    if p["objective"] == "reg:expectileerror":
        same += ("expectile_alpha",)
    for key in same:  # the output groups and their base margins must mean the same
        if init.params[key] != p[key]:
            raise ValueError(f"init_model was trained with {key}={init.params[key]!r}, "
                             f"not {p[key]!r}; continue with the same {key}")
    if init.weight_drop is not None and p["booster"] != "dart":
        raise ValueError("init_model is a dart model (its trees are weighted); continue it "
                         "with booster='dart'")
    if names is not None and init.feature_names is not None and names != init.feature_names:
        raise ValueError(f"X has feature names {names} but init_model was trained with "
                         f"{init.feature_names}")
