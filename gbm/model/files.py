"""``Booster``'s model files and copies (a mixin of ``gbm.model.booster.Booster``):
``save_model`` / ``load_model`` by the file's name (``gbm.io.model_file``: ``.json`` gbm's
JSON, ``.ubj`` the same content in UBJSON), ``save_raw`` and loading from its bytes,
XGBoost's constructor forms, ``copy`` and pickling."""
import copy
import functools
import os

from ..data.dmatrix import DMatrix
from ..io import gbm_json, model_file


class _instance_or_class_method:
    """A method bound to the instance when called on one, to the class otherwise."""

    def __init__(self, func):
        self.func = func
        self.__doc__ = func.__doc__

    def __get__(self, obj, cls):
        return functools.partial(self.func, cls if obj is None else obj)


_SOURCES = (str, os.PathLike, bytes, bytearray, memoryview)
# rebuilt on demand: never pickled nor copied (``_session``: update's training state)
_CACHE_ONLY = ("_forest", "_session")


class ModelFiles:
    """Saving, loading and copying a ``Booster``."""

    def _init_xgboost_form(self, params, cache, model_file_or_booster):
        """``Booster(params, cache, model_file)`` (XGBoost's forms; see ``__init__``)."""
        cache = [] if cache is None else cache
        if isinstance(cache, DMatrix) or not isinstance(cache, (list, tuple)):
            raise TypeError(f"cache must be a list of DMatrix, got {type(cache).__name__}")
        for i, d in enumerate(cache):
            if not isinstance(d, DMatrix):
                raise TypeError(f"cache[{i}] must be a DMatrix, got {type(d).__name__}")
        source = model_file_or_booster
        if isinstance(source, ModelFiles):
            self.__setstate__(copy.deepcopy(source.__getstate__()))
        elif isinstance(source, _SOURCES):
            self.load_model(source)
        elif source is not None:
            raise TypeError(f"model_file must be a path, the bytes of save_raw or a Booster, "
                            f"got {type(source).__name__}")
        for d in cache:  # XGBoost's: a model without trees takes the data's feature info
            if not self.trees:
                self.feature_names = d.feature_names or self.feature_names
                self.feature_types = d.feature_types or self.feature_types
        if params:
            self.set_param(params)

    def save_model(self, fname, format="gbm"):
        """Write the model to the file ``fname`` (a path), atomically.

        By its name, as XGBoost: ``.json`` gbm's JSON model file (docs/model_format.md),
        ``.ubj`` the same content in UBJSON (binary JSON, smaller); another name writes
        UBJSON with a ``UserWarning``. With ``format="xgboost"``, XGBoost's model schema
        instead (JSON, or UBJSON for a ``.ubj`` name), which ``xgboost.Booster(model_file=
        path)`` loads (see gbm.io.xgboost_json)."""
        self._check_loaded()
        if format == "xgboost":
            return model_file.save_xgboost(self, fname)
        if format != "gbm":
            raise ValueError(f"format must be 'gbm' or 'xgboost', got {format!r}")
        model_file.save(self, fname)

    def save_raw(self, raw_format="ubj"):
        """The model file's bytes, as ``save_model`` writes them: ``raw_format`` "ubj"
        (UBJSON, XGBoost's default) or "json". ``load_model`` and ``Booster(model_file=)``
        take them back."""
        self._check_loaded()
        return bytearray(model_file.to_bytes(self, raw_format))

    @_instance_or_class_method
    def load_model(self_or_cls, fname):
        """Read a model written by ``save_model``: a path (``.json`` or ``.ubj``; another
        name is read as whichever of the two its bytes are, with a ``UserWarning``), or the
        bytes of ``save_raw`` (``bytes`` / ``bytearray``). A bad file raises ``ValueError``
        naming the problem; a missing one ``FileNotFoundError`` (also a ``ValueError``, as
        XGBoost's ``XGBoostError``).

        Either ``booster = gbm.Booster(); booster.load_model(path)`` (XGBoost's form: the
        booster becomes the file's model, and is returned) or
        ``booster = gbm.Booster.load_model(path)`` (a new Booster).
        """
        cls = self_or_cls if isinstance(self_or_cls, type) else type(self_or_cls)
        if isinstance(fname, (bytes, bytearray, memoryview)):
            loaded = model_file.loads(cls, bytes(fname))
        elif isinstance(fname, (str, os.PathLike)):
            loaded = model_file.load(cls, fname)
        else:
            raise TypeError(f"fname must be a path or the bytes of save_raw, got "
                            f"{type(fname).__name__}")
        if isinstance(self_or_cls, type):
            return loaded
        self_or_cls.__dict__.clear()
        self_or_cls.__dict__.update(loaded.__dict__)
        return self_or_cls

    def to_json(self):
        """The text of the model's JSON file."""
        return gbm_json.dumps(self)

    @classmethod
    def from_json(cls, text):
        """A Booster from the text of a JSON model file."""
        return gbm_json.loads(cls, text)

    @classmethod
    def from_xgboost(cls, model):
        """Import an XGBoost tree model: an ``xgboost.Booster``, a path to its JSON file,
        its JSON text or dict (see gbm.io.xgboost_import.from_xgboost)."""
        from ..io.xgboost_import import from_xgboost

        return from_xgboost(cls, model)

    def __getstate__(self):
        """The fields, without caches (pickling and ``copy``)."""
        return {k: v for k, v in self.__dict__.items() if k not in _CACHE_ONLY}

    def __setstate__(self, state):
        state = dict(state)
        # pickles of gbm before the feature info became properties, and before attributes
        for old, new in (("feature_names", "_feature_names"),
                         ("feature_types", "_feature_types")):
            if old in state:
                state[new] = state.pop(old)
        state.setdefault("_feature_types", None)
        state.setdefault("_attributes", {})
        state["_forest"] = state["_session"] = None
        self.__dict__.update(state)

    def copy(self):
        """An independent copy of the booster (trees, parameters, attributes)."""
        out = type(self).__new__(type(self))
        out.__setstate__(copy.deepcopy(self.__getstate__()))
        return out

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()
