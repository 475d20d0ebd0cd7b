"""Training one round at a time: the state ``Booster.update`` / ``Booster.boost`` keep
between calls (``gbm.model.stepping``), built from ``train``'s own pieces: the prepared
fit (``gbm.training.prepare.Fit``) and its rounds (``grow_round``,
``grow_vector_round``). N calls of ``update`` therefore train the model ``train`` trains
in N rounds, bit for bit.

Importing this module registers ``Session`` with ``gbm.model.stepping`` (``gbm.training``
imports it): ``gbm.model`` sits below ``gbm.training`` and may not import it.
"""
import weakref

from ..data.inputs import n_targets
from ..data.training_data import training_data
from ..model.stepping import register_session
from ..objectives.custom import CustomObjective
from .prepare import Fit
from .rounds import grow_round
from .vector_round import grow_vector_round

# the DMatrix fields a fit reads: another object in one of them (set_label, set_info...)
# means another fit
_ARRAY_FIELDS = ("data", "label", "weight", "base_margin", "group", "qid",
                 "label_lower_bound", "label_upper_bound")
_LIST_FIELDS = ("feature_names", "feature_types")


class Session:
    """One DMatrix's training state for one booster: the prepared ``Fit`` (binned rows,
    margins, objective, DART's state), the booster's parameters and tree count it
    matches, and the DMatrix's fields it was made from.

    Made by ``Booster.update`` (``gbm.model.stepping``): it prepares the fit, continuing
    the booster's model when it has one (``train``'s ``init_model``), and gives the
    booster the started model. Released (``close``) when the DMatrix is
    garbage-collected; the booster then makes a new one if it trains again.
    """

    def __init__(self, booster, dtrain):
        data, _ = training_data(dtrain, None, 1, None)
        init = booster if booster.n_features is not None else None
        params = dict(booster.params or {})
        if params.get("num_target") == 1 and data.y is not None:
            # the default: the labels' columns, set in its place (the model file keeps
            # the parameters' order)
            params["num_target"] = n_targets(data.y)
        fit = Fit(params, data, 1, init_model=init)
        with fit.backend.threads():
            booster.take_model(fit.start())
        self.fit = fit
        self.params = dict(booster.params)
        self.n_trees = len(booster.trees)
        self._fields = _fields_of(dtrain)
        # freed with the DMatrix; the callback holds neither it nor this session (no
        # cycle: a booster let go frees its session at once, not at a garbage collection)
        self._dtrain = weakref.ref(dtrain, _closer(weakref.ref(self)))
        # the output groups' threads (gbm.tree.group_threads) end with the session
        self._finalizer = weakref.finalize(self, fit.runner.__exit__, None, None, None)

    def serves(self, booster, dtrain):
        """Whether this session holds the state of ``booster`` training on ``dtrain``:
        the same DMatrix with the same fields, the same parameters, and no tree added or
        removed since its last round."""
        return (self.fit is not None and self._dtrain() is dtrain
                and self.params == booster.params and self.n_trees == len(booster.trees)
                and _same_fields(self._fields, _fields_of(dtrain)))

    def step(self, booster, round_, gradients=None):
        """Train round ``round_`` into ``booster``: from the objective's gradients, or
        from ``gradients(margin, y, w) -> (grad, hess)`` (a custom objective, or the
        arrays ``boost`` was given). On an error the session is closed (its margins may
        be part-updated); the booster takes the round's trees back itself."""
        fit = self.fit
        grow = grow_vector_round if fit.grower.vector is not None else grow_round
        objective = fit.objective
        if gradients is not None:  # the named objective still checks labels and links
            fit.objective = CustomObjective(objective, gradients)
        try:
            with fit.backend.threads():
                grow(fit, booster, round_)
        except BaseException:
            self.close()
            raise
        finally:
            fit.objective = objective
        self.n_trees = len(booster.trees)

    def close(self):
        """Free the fit (bins, margins, threads)."""
        if self.fit is not None:
            self._finalizer()
            self.fit = self._fields = None


def _closer(session_ref):
    """A weakref callback that closes the session ``session_ref`` refers to, if any."""
    def close(_ref):
        session = session_ref()
        if session is not None:
            session.close()
    return close


def _fields_of(dmatrix):
    return (tuple(getattr(dmatrix, name, None) for name in _ARRAY_FIELDS),
            tuple(getattr(dmatrix, name, None) for name in _LIST_FIELDS))


def _same_fields(old, new):
    """The same arrays (the very objects: a field set again is another fit) and equal
    names and types."""
    return all(a is b for a, b in zip(old[0], new[0])) and old[1] == new[1]


register_session(Session)
