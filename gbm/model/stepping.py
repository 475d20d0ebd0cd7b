"""``Booster``'s training one round at a time (a mixin of ``gbm.model.booster.Booster``):
XGBoost's ``update(dtrain, iteration, fobj=None)`` and ``boost(dtrain, iteration, grad,
hess)``.

Between two calls the booster keeps the training state of the DMatrix it was last called
with (its binned rows, each row's margin, the objective's state): a *session*, held in
the booster's cache field ``_session``, never pickled nor copied, and released when the
DMatrix is garbage-collected, as XGBoost's cache of a DMatrix's predictions is. A booster
never updated holds none.

The rounds themselves are ``gbm.training``'s, a layer above ``gbm.model``
(docs/architecture.md), which this module may not import, not even inside a function.
So ``gbm.training.stepwise`` registers its session class here when ``gbm.training`` is
imported (``import gbm`` does, before any ``Booster`` can be made): the dependency points
downwards, and the booster asks the one registered class.
"""
import numbers
import warnings

import numpy as np

from ..data.compat import objective_function
from ..data.dmatrix import DMatrix

_SESSIONS = {}  # "class": the registered session class (gbm.training.stepwise.Session)

# a booster's fields that are not its model: kept when a session gives it a model
_OWN_STATE = ("_attributes", "evals_result", "best_iteration", "best_score", "_session")


def register_session(session_class):
    """Make ``session_class`` the one that trains a booster's rounds. It is called as
    ``session_class(booster, dtrain)``: it prepares ``dtrain``'s fit (continuing the
    booster's model when it has one) and gives the booster the started model
    (``Booster.take_model``); ``serves(booster, dtrain)`` says whether it still holds
    their state; ``step(booster, round_, gradients)`` trains one round (``gradients``:
    None for the objective's own, else ``f(margin, y, w) -> (grad, hess)``); ``close()``
    frees it."""
    _SESSIONS["class"] = session_class


class Stepping:
    """Training a ``Booster`` round by round, as XGBoost's ``update`` and ``boost``."""

    def update(self, dtrain, iteration, fobj=None):
        """Train one round on ``dtrain``, as XGBoost's ``Booster.update``: N calls with
        ``iteration`` 0 .. N - 1 give the model ``gbm.train(params, dtrain, N)`` gives (the
        same bits), from the booster's parameters (``Booster(params, [dtrain])``), or
        continuing the model it holds.

        Parameters
        ----------
        dtrain : gbm.DMatrix with labels
            The state of the last DMatrix trained on is kept between calls (see the
            module docstring); another DMatrix, a field of it set again (``set_label``
            ...), a parameter set (``set_param``) or a model changed otherwise starts from
            the booster's current model (as ``train``'s ``init_model``).
        iteration : int >= 0
            The round's number, which keys its row and column samples (as ``train``
            numbers its rounds from the model's round count).
        fobj : callable, optional
            A custom objective, ``fobj(predt, dtrain) -> (grad, hess)`` (XGBoost's form,
            ``predt`` the margins, (n,) or (n, n_groups)) or gbm's ``fobj(margin, y, w)``;
            the named objective still gives the starting margin and the link.
        """
        self._train_round(dtrain, iteration, fobj, None)

    def boost(self, dtrain, iteration, grad=None, hess=None, *, fobj=None):
        """Train one round on ``dtrain`` from the given gradient and hessian, as XGBoost's
        ``Booster.boost``: arrays of shape (n_rows,) for one output, (n_rows, n_groups)
        for several (a flat array of n_rows * n_groups is taken row by row with a
        ``FutureWarning``, as XGBoost); weights are the caller's to apply. Or, instead of
        them, ``fobj`` as ``update``'s. Rows and rounds as ``update``."""
        given = grad is not None or hess is not None
        if given and fobj is not None:
            raise ValueError("Provide either the objective, or the gradient and hessian, "
                             "not both (boost's grad / hess, or fobj)")
        if not given and fobj is None:
            raise ValueError("boost needs the gradient and hessian (grad=, hess=) or an "
                             "objective (fobj=)")
        if given and (grad is None or hess is None):
            raise ValueError(f"boost needs both grad and hess; "
                             f"{'hess' if hess is None else 'grad'} is None")
        self._train_round(dtrain, iteration, fobj, (grad, hess) if given else None)

    def _train_round(self, dtrain, iteration, fobj, pair):
        if not isinstance(dtrain, DMatrix):
            raise TypeError(f"Invalid training matrix: dtrain must be a gbm.DMatrix, got "
                            f"{type(dtrain).__name__}")
        if isinstance(iteration, bool) or not isinstance(iteration, numbers.Integral):
            raise TypeError(f"iteration must be an int >= 0, got {iteration!r}")
        if iteration < 0:
            raise ValueError(f"iteration must be an int >= 0, got {iteration!r}")
        if fobj is not None and not callable(fobj):
            raise TypeError(f"fobj must be callable, got {type(fobj).__name__}")
        session = self._session_for(dtrain)
        gradients = None
        if pair is not None:
            shape = (dtrain.num_row(),) + ((self.n_groups,) if self.n_groups > 1 else ())
            grad, hess = (_gradient_array(v, name, shape) for v, name in
                          zip(pair, ("grad", "hess")))
            gradients = lambda margin, y, w: (grad, hess)  # noqa: E731
        elif fobj is not None:
            # XGBoost's fobj(predt, dtrain) is given the DMatrix (train's rule)
            gradients = objective_function(fobj, dtrain)
        kept = self._model_state()
        try:
            session.step(self, int(iteration), gradients)
        except BaseException:  # a round that failed half-way adds nothing
            self._restore_model_state(kept)
            raise

    def _session_for(self, dtrain):
        """The session of ``dtrain``: the kept one while it serves, else a new one (the
        old one freed first: one fit's state held at a time)."""
        session = self._session
        if session is not None and session.serves(self, dtrain):
            return session
        if session is not None:
            session.close()
            self._session = None
        if "class" not in _SESSIONS:
            raise RuntimeError("Booster.update needs gbm.training (import gbm)")
        self._session = _SESSIONS["class"](self, dtrain)
        return self._session

    def _model_state(self):
        return (len(self.trees), None if self.weight_drop is None else
                list(self.weight_drop), len(self.iteration_indptr))

    def _restore_model_state(self, kept):
        """The trees, DART weights and rounds back to ``_model_state``'s ``kept``."""
        n_trees, weights, n_rounds = kept
        del self.trees[n_trees:], self.tree_group[n_trees:]
        del self.iteration_indptr[n_rounds:]
        self.weight_drop = weights
        self._forest = None

    def take_model(self, other):
        """Make this booster hold ``other``'s model (trees, parameters, base margins, bin
        edges, feature information), keeping its own attributes, eval history and early
        stopping's results (what a session does with the model it starts)."""
        for key, value in vars(other).items():
            if key not in _OWN_STATE:
                self.__dict__[key] = value
        self._forest = None


def _gradient_array(value, name, shape):
    """``boost``'s ``grad`` or ``hess`` as float64 of ``shape`` ((n,) or (n, k)); an
    (n, 1) array for one output, and a flat one of n * k entries, are accepted (the
    latter with XGBoost's ``FutureWarning``)."""
    if hasattr(value, "__cuda_array_interface__") and hasattr(value, "get"):
        value = value.get()  # a CuPy array: the round reads the host copy
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of numbers, got {type(value).__name__}") \
            from None
    n = shape[0]
    if array.shape != shape:
        if array.size == int(np.prod(shape)) and array.ndim in (1, 2):
            if array.ndim == 1 and len(shape) == 2:
                warnings.warn("the gradient and hessian should have the shape (n_samples, "
                              "n_groups); a flat array is taken row by row", FutureWarning,
                              stacklevel=4)
            elif array.shape != (n, 1):
                raise ValueError(f"{name} has shape {array.shape}; expected {shape}")
            array = array.reshape(shape)
        else:
            raise ValueError(f"{name} has shape {array.shape}; expected {shape} (one value "
                             f"per row of dtrain{' and output group' if len(shape) > 1 else ''})")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} holds NaN or infinity")
    return array
