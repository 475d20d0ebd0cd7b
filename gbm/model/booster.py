"""The fitted model, ``Booster``: trees, prediction, inspection and model files
(training is ``gbm.training.loop.train``)."""
import numpy as np

from ..runtime.backend import get_backend
from ..data.categorical import encode_X
from ..data.inputs import feature_names_of, is_device_array
from ..data.sparse import SparseMatrix
from .config import Configuration
from .evaluate import Evaluating
from .explain import predict_contributions, predict_interactions
from .files import ModelFiles
from .inspection import Inspection
from .output_shape import prediction_kind, shape_output
from .slicing import Slicing
from .stepping import Stepping
from ..objectives import get_objective
from ..tree.structure import Forest


class _RoundCount(int):
    """An int that returns itself when called: ``num_boosted_rounds`` as an attribute
    (gbm's first form) and as XGBoost's method ``num_boosted_rounds()``."""

    def __call__(self):
        return int(self)


def _is_c_float32_matrix(X, n_features):
    """Whether ``X`` is a C-ordered float32 matrix of ``n_features`` columns: a NumPy
    array, or a GPU array (CuPy, or anything with ``__cuda_array_interface__``), read
    from its interface (its shape, type string and strides: None means C order)."""
    if is_device_array(X):
        face = X.__cuda_array_interface__
        shape, strides = tuple(face["shape"]), face.get("strides")
        if len(shape) != 2 or np.dtype(face["typestr"]) != np.float32:
            return False
        # a dimension of length 1 may carry any stride
        c_order = strides is None or all(
            n <= 1 or stride == step for n, stride, step in
            zip(shape, strides, (shape[1] * 4, 4)))
        return c_order and shape[1] == n_features
    return (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype == np.float32
            and X.flags.c_contiguous and X.shape[1] == n_features)


class Booster(ModelFiles, Inspection, Configuration, Evaluating, Slicing, Stepping):
    """A fitted model: the trees, how to start and how to turn margins into predictions.
    Model files, inspection (dumps, importances, attributes), parameters and
    configuration, evaluation, slicing and training round by round (``update``,
    ``boost``) are in the mixins' modules (``gbm.model.files``, ``inspection``,
    ``config``, ``evaluate``, ``slicing``, ``stepping``).

    Attributes
    ----------
    params : dict, the validated training parameters
    trees : list of Tree; ``tree_group[i]`` is the output column tree ``i`` adds to
    iteration_indptr : list of int; round ``r`` grew ``trees[iteration_indptr[r]:
        iteration_indptr[r + 1]]``: ``num_parallel_tree`` trees per output group, group by
        group (XGBoost's order and its ``iteration_indptr``)
    base_margin : float64 (n_groups,), the margin before any tree
    feature_names : list of str or None (a property: see ``gbm.model.inspection``)
    feature_types : list of str or None, XGBoost's type codes ("q", "i", "int", "float",
        "c") as the training DMatrix gave them; they shape the dumps (``get_dump``)
    n_features : int
    cuts : list of float32 arrays, the bin edges the trees were grown on
    categories : list or None
        Per feature, None (numeric) or the categories seen at fit (strings or numbers;
        see gbm.data.categorical); None when no feature is categorical.
    evals_result : dict, eval set name -> metric name -> list of values per round
    weight_drop : list of float or None
        A DART model's (``booster="dart"``) tree weights, one per tree: a prediction adds
        each tree's leaf value times its weight (``gbm.tree.dart``). None for a gbtree
        model (every weight 1).
    """

    def __init__(self, params=None, cache=None, model_file=None, *, n_features=None,
                 feature_names=None, base_margin=None, cuts=None, categories=None):
        """XGBoost's forms: ``Booster()`` is an empty model to ``load_model`` into;
        ``Booster(model_file=path)`` loads one (a path, the bytes of ``save_raw``, or
        another Booster to copy), and ``params`` given too are then set on it
        (``set_param``); ``Booster(params, cache=[dmatrix, ...])`` is an empty model that
        knows the DMatrices' feature names and types. Training builds one with the
        keyword fields (``n_features`` and the rest: see the class docstring)."""
        internal = n_features is not None
        self.params = params if internal else None  # XGBoost's forms: set_param's below
        self.categories = categories
        self.n_features = n_features
        self.feature_names = feature_names
        self.feature_types = None
        self._attributes = {}
        self.base_margin = np.zeros(0) if base_margin is None else np.asarray(base_margin,
                                                                             dtype=np.float64)
        self.cuts = cuts
        self.trees, self.tree_group = [], []
        self.weight_drop = [] if (self.params or {}).get("booster") == "dart" else None
        self.iteration_indptr = [0]
        self.evals_result = {}
        self.best_iteration = None
        self.best_score = None
        self._forest = None
        self._session = None  # update's training state (gbm.model.stepping)
        if not internal:
            self._init_xgboost_form(params, cache, model_file)

    @property
    def n_groups(self):
        return self.base_margin.shape[0]

    @property
    def vector_leaf(self):
        """Whether the trees have vector leaves (``multi_strategy="multi_output_tree"``):
        one tree per round, each leaf a value per output group."""
        return (self.params or {}).get("multi_strategy") == "multi_output_tree"

    @property
    def num_boosted_rounds(self):
        """Rounds trained; a round holds ``num_parallel_tree`` trees per output group.

        Both ``booster.num_boosted_rounds()`` (XGBoost's method) and the older attribute
        form ``booster.num_boosted_rounds`` give the count: it is an int that can be called.
        """
        return _RoundCount(len(self.iteration_indptr) - 1)

    def _check_loaded(self):
        if self.n_features is None:
            raise ValueError("this Booster is empty: load a model first "
                             "(booster.load_model(path)) or train one with gbm.train")

    def add_tree(self, tree, group, weight=1.0):
        """Append a tree of the round being grown; ``end_round`` closes the round.
        ``weight``: its DART weight (kept by a dart model only).

        A tree whose values overflowed (NaN or infinity, e.g. from a huge learning_rate)
        raises ``FloatingPointError``: it would give NaN predictions and could not be saved.
        """
        if not (np.isfinite(tree.value).all() and np.isfinite(tree.gain).all()):
            raise FloatingPointError(
                f"tree {len(self.trees)} has NaN or infinite leaf values or gains: training "
                "overflowed; lower learning_rate or scale down the labels or weights")
        self.trees.append(tree)
        self.tree_group.append(group)
        if self.weight_drop is not None:
            self.weight_drop.append(float(weight))
        self._forest = None

    def _weight(self, i):
        return 1.0 if self.weight_drop is None else self.weight_drop[i]

    def set_tree_weights(self, weights):
        """Replace a dart model's tree weights (one float per tree), as a round of DART
        training leaves them."""
        if self.weight_drop is None or len(weights) != len(self.trees):
            raise ValueError(f"set_tree_weights needs a dart model and {len(self.trees)} "
                             f"weights, got {len(weights)}")
        self.weight_drop = [float(w) for w in weights]
        self._forest = None

    def end_round(self):
        """Mark the trees added since the last round as one round."""
        self.iteration_indptr.append(len(self.trees))

    def forest(self, begin=0, end=None):
        """Trees of rounds ``[begin, end)`` packed for the prediction kernels."""
        end = self.num_boosted_rounds if end is None else end
        if begin == 0 and end == self.num_boosted_rounds:
            if self._forest is None:
                self._forest = Forest(self.trees, self.tree_group, self.weight_drop)
            return self._forest
        lo, hi = self.iteration_indptr[begin], self.iteration_indptr[end]
        weights = None if self.weight_drop is None else self.weight_drop[lo:hi]
        return Forest(self.trees[lo:hi], self.tree_group[lo:hi], weights)

    def _check_predict_X(self, X, name="X", shard=False):
        """``X`` checked against the model (names, categories, column count); ``name``
        says which argument it is in the messages; ``shard``: ``X`` may have no rows (one
        rank's part of a distributed data set; rows to predict, as XGBoost takes them)."""
        self._check_loaded()
        names = feature_names_of(X)
        if names is not None and self.feature_names is not None and names != self.feature_names:
            raise ValueError(
                f"feature_names mismatch: {name} has feature names {names} but the model was "
                f"trained with {self.feature_names}; pass columns with the same names in the "
                "same order")
        X = encode_X(X, self.categories, name=name, shard=shard)
        if X.shape[1] != self.n_features:
            raise ValueError(
                f"{name} has {X.shape[1]} features, but the model was trained with {self.n_features}"
            )
        return X

    def predict(self, X, output_margin=False, iteration_range=(0, 0), n_jobs=None,
                pred_leaf=False, pred_contribs=False, base_margin=None, approx_contribs=False,
                pred_interactions=False, strict_shape=False, validate_features=True,
                training=False):
        """Predict for raw feature rows.

        Parameters
        ----------
        X : array-like (n_samples, n_features), or a ``gbm.DMatrix`` (its data, and its
            base margins unless ``base_margin`` is given)
        output_margin : bool
            Return the raw margin (before the link function).
        iteration_range : (int, int)
            Use the trees of rounds ``[begin, end)``; ``(0, 0)`` = all rounds. A round is
            ``num_parallel_tree`` trees per output group.
        pred_leaf : bool
            Return the leaf each row reaches in each tree instead: int32
            (n_samples, n_trees), node ids within each tree (as in the model file).
        pred_contribs : bool
            Return each feature's contribution to each row's margin instead (exact
            TreeSHAP, Lundberg, Erion & Lee 2018, with node covers as weights; see
            ``gbm.model.explain``): float64 (n_samples, n_features + 1), or (n_samples,
            n_groups, n_features + 1) for several output groups. The last column is the
            bias (base margin plus each tree's cover-weighted mean leaf value); a row's
            columns sum to its ``output_margin=True`` prediction. ``output_margin`` does
            not apply (contributions are always margins); ``pred_leaf`` may not be set too.
        base_margin : array-like (n_samples,) or (n_samples, n_groups), optional
            Each row's starting margin, instead of the model's base margin (XGBoost's
            ``base_margin``; give the same as in training).
        approx_contribs : bool
            With ``pred_contribs`` (or ``pred_interactions``): Saabas's approximation
            instead of exact SHAP values, as XGBoost's: along the row's path, each split's
            feature gets the change of the cover-weighted expected value from the node to
            the child taken (same shape; rows still sum to the margin).
        pred_interactions : bool
            Return SHAP interaction values instead (Lundberg, Erion & Lee 2018, as
            XGBoost's): float64 (n_samples, n_features + 1, n_features + 1), or
            (n_samples, n_groups, n_features + 1, n_features + 1). Entry ``[i, j]`` (``i !=
            j``) is half the interaction of features ``i`` and ``j``; the diagonal holds
            each feature's SHAP value less its interactions, so row ``i`` sums to
            ``pred_contribs``'s column ``i``; ``[n_features, n_features]`` is the bias and
            the whole matrix sums to the margin (see ``gbm.model.explain``).
        strict_shape : bool
            XGBoost's ``strict_shape``: never drop an axis. Predictions (n_samples, k) (k = 1
            for one output or a class label), margins (n_samples, n_groups), contributions
            (n_samples, n_groups, n_features + 1), interactions (n_samples, n_groups,
            n_features + 1, n_features + 1), leaves (n_samples, n_rounds, n_groups,
            num_parallel_tree).
        validate_features : bool
            For a DMatrix ``X``: its feature names must be the model's (XGBoost's check:
            a model with names refuses a DMatrix without them). A DataFrame's column names
            are always checked.
        training : bool
            XGBoost's flag for a prediction made during training (its DART booster then
            drops trees). It changes nothing here: a prediction uses every tree with its
            weight, and a DART fit's dropouts stay inside the fit (``Booster.update``'s
            custom objective is given the dropped margins, as ``train``'s).

        Returns
        -------
        ndarray of float64: (n_samples,) for one output group, (n_samples, n_groups) else;
        a CuPy array when ``X`` is a GPU array (``__cuda_array_interface__``): it is then
        predicted on the GPU, whatever the model's ``device``.
        """
        from ..data.dmatrix import DMatrix

        if not isinstance(training, (bool, np.bool_)):
            raise TypeError(f"training must be True or False, got {training!r}")
        if isinstance(X, DMatrix):
            if validate_features:
                _check_dmatrix_names(self.feature_names, X.feature_names)
            if base_margin is None:
                base_margin = X.base_margin
            X = X.data
            if hasattr(X, "mapper") and hasattr(X, "matrix"):  # a QuantileDMatrix's bins
                return self._predict_binned_rows(X, base_margin, output_margin,
                                                 iteration_range, n_jobs, pred_leaf,
                                                 pred_contribs, approx_contribs,
                                                 pred_interactions, strict_shape)
        return self._predict_checked(self._check_predict_X(X, shard=True), output_margin,
                                     iteration_range, n_jobs, pred_leaf, pred_contribs,
                                     base_margin, approx_contribs, pred_interactions,
                                     strict_shape)

    def _predict_binned_rows(self, binned, base_margin, *args):
        """``predict`` on a QuantileDMatrix's bins: each bin's value (the value a model
        trained on these bin edges sends every row of the bin the same way as; see
        ``gbm.bins.quantile_values``), a block of rows at a time."""
        from ..bins.quantile_values import model_row_blocks

        self._check_loaded()
        output_margin, iteration_range, n_jobs, pred_leaf, pred_contribs, approx, \
            interactions, strict_shape = args
        parts = [self._predict_checked(
            block, output_margin, iteration_range, n_jobs, pred_leaf, pred_contribs,
            None if base_margin is None else np.asarray(base_margin)[lo:hi], approx,
            interactions, strict_shape)
            for lo, hi, block in model_row_blocks(binned, self.categories, self.n_features,
                                                  self.feature_names)]
        return np.concatenate(parts)

    def _predict_checked(self, X, output_margin=False, iteration_range=(0, 0), n_jobs=None,
                         pred_leaf=False, pred_contribs=False, base_margin=None,
                         approx_contribs=False, pred_interactions=False, strict_shape=False):
        """``predict`` for X already checked: float32, C order, ``n_features`` columns.

        The kernels index rows by ``n_features`` without bounds checks, so the width is
        checked here too, against this booster (a caller may hold another's checks).
        """
        sparse = isinstance(X, SparseMatrix)  # raw CSR rows: never densified
        if not (_is_c_float32_matrix(X, self.n_features)
                or (sparse and X.shape[1] == self.n_features)):
            raise ValueError(
                f"X must be a C-ordered float32 matrix with {self.n_features} columns, the "
                f"model's feature count (or a gbm.data.sparse.SparseMatrix of them); got "
                f"{getattr(X, 'shape', None)} {getattr(X, 'dtype', type(X).__name__)}")
        begin, end = _check_iteration_range(iteration_range, self.num_boosted_rounds)
        on_device = is_device_array(X)  # GPU input: predicted on the GPU, returned there
        device = "cuda" if on_device else self.params["device"]
        backend = get_backend(device, self.params["n_jobs"] if n_jobs is None else n_jobs)
        xp = backend.xp if on_device else np
        kind = prediction_kind(pred_leaf, pred_contribs, pred_interactions, approx_contribs,
                               strict_shape, output_margin)
        if base_margin is not None and kind in ("contribs", "interactions", "leaf"):
            raise ValueError("base_margin applies to predictions and margins, not to "
                             "pred_contribs, pred_interactions or pred_leaf")
        if self.vector_leaf and xp is np and kind in ("leaf", "margin", "value"):
            # each tree walked once (gbm.model.vector_predict), never packed once per output
            return self._predict_vector(X, kind, begin, end, backend, base_margin,
                                        strict_shape)
        forest = self.forest(begin, end)
        if kind in ("contribs", "interactions"):
            explain = predict_contributions if kind == "contribs" else predict_interactions
            values = xp.asarray(explain(self, X, forest, backend, approximate=approx_contribs))
            return shape_output(values, kind, self.n_groups, strict_shape)
        k = backend.kernels
        if kind == "leaf":
            leaves = xp.empty((X.shape[0], forest.n_trees), dtype=np.int32)
            with backend.threads():
                if sparse:
                    k.predict_leaf_csr(X.indptr, X.indices, X.data, forest.walk,
                                       forest.cat_bits, forest.tree_offsets, forest.tree_depth,
                                       leaves)
                else:
                    k.predict_leaf(X, forest.walk, forest.cat_bits, forest.tree_offsets,
                                   forest.tree_depth, leaves)
            if self.vector_leaf:  # the forest holds each tree once per output: one column
                return shape_output(xp.ascontiguousarray(leaves[:, ::self.n_groups]), kind, 1,
                                    strict_shape, end - begin)
            return shape_output(leaves, kind, self.n_groups, strict_shape, end - begin)
        margin = self._start_margin(X, base_margin, backend, xp)
        with backend.threads(X.size * max(1, forest.n_trees // 8)):
            add_raw_margins(k, X, forest, margin)
        if kind == "value":
            margin = get_objective(self.params).transform_in_place(margin, xp)
        return shape_output(margin, kind, self.n_groups, strict_shape)

    def _start_margin(self, X, base_margin, backend, xp):
        """float64 (n_rows, n_groups), C order: each row's margin before any tree."""
        if base_margin is None:
            return xp.tile(xp.asarray(self.base_margin), (X.shape[0], 1))
        from ..data.inputs import check_base_margin

        start = check_base_margin(backend.to_host(base_margin), X.shape[0], self.n_groups)
        return xp.ascontiguousarray(xp.asarray(start).T)

    def _predict_vector(self, X, kind, begin, end, backend, base_margin, strict_shape):
        """``_predict_checked``'s leaves, margins or predictions of a vector-leaf model for
        host rows: each tree walked once per row (gbm.model.vector_predict)."""
        from .vector_predict import VectorTrees, add_packed_margins, vector_leaves

        lo, hi = self.iteration_indptr[begin], self.iteration_indptr[end]
        packed = VectorTrees(self.trees[lo:hi])
        k = backend.kernels
        if kind == "leaf":
            with backend.threads(X.size * max(1, packed.n_trees // 8)):
                leaves = vector_leaves(k, X, packed)
            return shape_output(leaves, kind, 1, strict_shape, end - begin)
        margin = self._start_margin(X, base_margin, backend, np)
        with backend.threads(X.size * max(1, packed.n_trees * self.n_groups // 8)):
            add_packed_margins(k, X, packed, margin)
        if kind == "value":
            margin = get_objective(self.params).transform_in_place(margin, np)
        return shape_output(margin, kind, self.n_groups, strict_shape)

    def inplace_predict(self, data, *, iteration_range=(0, 0), predict_type="value",
                        missing=np.nan, validate_features=True, base_margin=None,
                        strict_shape=False):
        """Predict for the data itself, as XGBoost's ``inplace_predict``: no DMatrix.

        Parameters
        ----------
        data : NumPy array or list, pandas DataFrame (``category`` columns included) or
            Series, SciPy sparse matrix (absent entries are missing), CuPy or any
            ``__cuda_array_interface__`` array (predicted on the GPU and returned there,
            as ``predict`` does); (n_samples, n_features), or a 1-D NumPy array or list
            read as one column (n_samples,), as XGBoost reads it
        iteration_range : (int, int), as ``predict``'s
        predict_type : "value" (predictions) or "margin" (raw margins)
        missing : float
            The value that marks a missing entry, besides NaN: entries equal to it (in
            float32, as XGBoost compares) are treated as NaN. In a DataFrame's
            ``category`` column, as in XGBoost, the rows whose category code (position in
            the column's categories) equals ``missing``.
        validate_features : bool
            Check a DataFrame's column names against the model's (the column count is
            always checked).
        base_margin : array-like (n_samples,) or (n_samples, n_groups), optional
        strict_shape : bool, as ``predict``'s

        Returns
        -------
        ndarray of float64, as ``predict`` with ``output_margin=(predict_type == "margin")``.
        """
        from .inplace import inplace_input, output_margin_of

        output_margin = output_margin_of(predict_type)
        X = inplace_input(self, data, missing, validate_features)
        return self._predict_checked(X, output_margin, iteration_range, base_margin=base_margin,
                                     strict_shape=strict_shape)

def add_raw_margins(kernels, X, forest, out):
    """``out`` (float64 (n_rows, n_groups)) += the leaf values of the trees of ``forest``
    (a ``Forest``) for raw rows ``X``: a float32 matrix, or a ``SparseMatrix`` walked as
    CSR (an absent entry is missing)."""
    if isinstance(X, SparseMatrix):
        kernels.predict_csr(X.indptr, X.indices, X.data, forest.walk, forest.cat_bits,
                            forest.value, forest.tree_offsets, forest.tree_group,
                            forest.tree_depth, out)
    else:
        kernels.predict(X, forest.walk, forest.cat_bits, forest.value, forest.tree_offsets,
                        forest.tree_group, forest.tree_depth, out)


def _check_dmatrix_names(model_names, names):
    """A DMatrix's feature names against the model's, as XGBoost checks them."""
    if model_names is None or names == model_names:
        return
    if names is None:
        raise ValueError(f"data did not contain feature names, but the model was trained "
                         f"with feature_names {model_names}")
    raise ValueError(f"feature_names mismatch: the model has {model_names}, the DMatrix "
                     f"{names}")


def _check_iteration_range(iteration_range, n_rounds):
    try:
        begin, end = (int(v) for v in iteration_range)
    except (TypeError, ValueError):
        raise TypeError(f"iteration_range must be a pair of ints, got {iteration_range!r}") from None
    if (begin, end) == (0, 0):
        return 0, n_rounds
    if not 0 <= begin < end <= n_rounds:
        raise ValueError(
            f"iteration_range {iteration_range} is outside the model's rounds [0, {n_rounds}]"
        )
    return begin, end


def load_init_model(init_model):
    return init_model if isinstance(init_model, Booster) else Booster.load_model(init_model)
