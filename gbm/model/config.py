"""``Booster``'s parameters (a mixin of ``gbm.model.booster.Booster``): ``set_param``, and
its configuration as JSON, ``save_config`` / ``load_config``.

``save_config`` gives gbm's own configuration: the section ``"gbm_params"`` holds every
validated parameter under gbm's names and in its types (what ``load_config`` reads back),
and ``"learner"`` the same facts in XGBoost's layout and spelling (values as strings,
aliases repeated: ``eta`` and ``learning_rate``), for code that reads XGBoost's
configuration (``config["learner"]["gradient_booster"]["gbtree_model_param"]
["num_parallel_tree"]``, ``config["learner"]["learner_model_param"]["base_score"]``).
Only fields gbm has are written: none of XGBoost's updater sections, and no
``generic_param`` entry for a setting gbm lacks.
"""
import json
from collections.abc import Mapping

import numpy as np

from ..io.xgboost_json import base_scores, objective_block
from ..objectives import get_objective
from ..params import ALIASES, validate_params

# XGBoost's tree_train_param entries: (its key, gbm's parameter)
_TREE_TRAIN = (("eta", "learning_rate"), ("learning_rate", "learning_rate"),
               ("max_depth", "max_depth"), ("max_leaves", "max_leaves"),
               ("grow_policy", "grow_policy"), ("min_child_weight", "min_child_weight"),
               ("lambda", "reg_lambda"), ("reg_lambda", "reg_lambda"), ("alpha", "reg_alpha"),
               ("reg_alpha", "reg_alpha"), ("gamma", "gamma"), ("min_split_loss", "gamma"),
               ("max_delta_step", "max_delta_step"), ("subsample", "subsample"),
               ("colsample_bytree", "colsample_bytree"),
               ("colsample_bylevel", "colsample_bylevel"),
               ("colsample_bynode", "colsample_bynode"), ("max_bin", "max_bin"),
               ("max_cat_to_onehot", "max_cat_to_onehot"),
               ("max_cat_threshold", "max_cat_threshold"),
               ("monotone_constraints", "monotone_constraints"),
               ("interaction_constraints", "interaction_constraints"))
_GENERIC = (("device", "device"), ("n_jobs", "n_jobs"), ("nthread", "n_jobs"),
            ("random_state", "random_state"), ("seed", "random_state"),
            ("validate_parameters", "validate_parameters"))
_DART = ("rate_drop", "one_drop", "skip_drop", "sample_type", "normalize_type")
# parameters a trained model's trees and base margins were made under
_MODEL_DEFINING = ("multi_strategy", "base_score")


def _text(value):
    """A parameter value as XGBoost's configuration writes it: a string (booleans as
    1 / 0, lists and tuples as Python prints them, as XGBoost's ``set_param`` stores
    them)."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _pairs(params, value):
    """``set_param``'s arguments as a list of (name, value)."""
    if isinstance(params, Mapping):
        return list(params.items())
    if isinstance(params, str):
        if value is None:
            raise TypeError(f"set_param({params!r}) needs a value: set_param(name, value), "
                            "a dict or a list of (name, value) pairs")
        return [(params, value)]
    try:
        pairs = [tuple(p) for p in params]
    except TypeError:
        raise TypeError(f"params must be a dict, a list of (name, value) pairs or a name, "
                        f"got {type(params).__name__}") from None
    if any(len(p) != 2 for p in pairs):
        raise TypeError("params as a list must hold (name, value) pairs")
    return pairs


class Configuration:
    """A ``Booster``'s parameters and their JSON configuration."""

    def set_param(self, params, value=None):
        """Set parameters, as XGBoost's: a dict, a list of (name, value) pairs, or
        ``set_param(name, value)``. Names may be XGBoost's aliases (``eta``); a value of
        None is skipped; ``eval_metric`` adds metrics to the model's list. The parameters
        are validated as ``gbm.train`` validates them; they apply to what the booster does
        next (``predict``'s ``n_jobs`` / ``device``, ``eval``, a continued fit's defaults).
        On a trained model, a change that would not fit its trees or base margins (its
        output count, ``multi_strategy``, ``base_score``; ``booster`` from "dart" with
        tree weights other than 1) raises ``ValueError``."""
        current = dict(self.params or {})
        metrics = list(current.get("eval_metric") or [])
        for key, val in _pairs(params, value):
            if val is None:
                continue
            val = val.tolist() if hasattr(val, "tolist") and not np.isscalar(val) else val
            name = ALIASES.get(key, key)
            if name == "eval_metric":
                new = [val] if isinstance(val, str) else list(val)
                metrics += [m for m in new if m not in metrics]
                current[name] = metrics
            else:
                current[name] = val
        validated = validate_params(current)
        if self.n_features is not None:
            self._check_fits_model(validated)
            if validated["booster"] == "dart" and self.weight_drop is None:
                self.weight_drop = [1.0] * len(self.trees)  # a gbtree model's trees weigh 1
            elif validated["booster"] != "dart":
                self.weight_drop = None
        self.params = validated
        self._forest = None

    def _check_fits_model(self, new):
        old = self.params
        if get_objective(new).n_groups != self.n_groups:
            raise ValueError(f"set_param cannot give this model {get_objective(new).n_groups} "
                             f"outputs: its trees and base margins make {self.n_groups} "
                             "(objective, num_class, num_target and the alpha levels fix it)")
        for name in _MODEL_DEFINING:
            if self.trees and new[name] != old[name]:
                raise ValueError(f"set_param cannot change {name} of a trained model (from "
                                 f"{old[name]!r} to {new[name]!r}): its trees and base "
                                 "margins were made under it")
        if new["booster"] != "dart" and any(w != 1.0 for w in self.weight_drop or []):
            raise ValueError("set_param cannot make this dart model a gbtree one: its trees "
                             "have weights other than 1 (booster='dart' keeps them)")

    def save_config(self):
        """The booster's configuration as JSON text (see the module docstring)."""
        p = self.params
        if p is None:
            raise ValueError("this Booster has no parameters yet: train one, load a model or "
                             "set_param first")
        return json.dumps({"learner": self._learner_config(p), "gbm_params": p})

    def load_config(self, config):
        """Set the parameters of a ``save_config`` text (its ``gbm_params``), as
        ``set_param`` sets them."""
        if not isinstance(config, str):
            raise TypeError(f"config must be the JSON text of save_config, got "
                            f"{type(config).__name__}")
        try:
            parsed = json.loads(config)
        except json.JSONDecodeError as err:
            raise ValueError(f"config is not JSON text: {err}") from None
        if not isinstance(parsed, dict) or not isinstance(parsed.get("gbm_params"), dict):
            raise ValueError("config has no 'gbm_params' object: load_config reads the text "
                             "of gbm's save_config (XGBoost's configuration has no such "
                             "section)")
        self.set_param(parsed["gbm_params"])

    def _learner_config(self, p):
        """XGBoost's ``learner`` section of ``save_config``."""
        tree_train = {key: _text(p[name]) for key, name in _TREE_TRAIN if p[name] is not None}
        gbtree = {"gbtree_model_param": {"num_parallel_tree": str(p["num_parallel_tree"]),
                                         "num_trees": str(len(self.trees))},
                  "gbtree_train_param": {"tree_method": p["tree_method"]},
                  "name": "gbtree", "tree_train_param": tree_train}
        booster = gbtree
        if p["booster"] == "dart":
            booster = {"name": "dart", "gbtree": gbtree,
                       "dart_train_param": {k: _text(p[k]) for k in _DART}}
        return {
            "generic_param": {key: _text(0 if p[name] is None else p[name])
                              for key, name in _GENERIC},
            "gradient_booster": booster,
            "learner_model_param": self._model_param(p),
            "learner_train_param": {"booster": p["booster"], "objective": p["objective"],
                                    "multi_strategy": p["multi_strategy"]},
            "metrics": [{"name": m} for m in p["eval_metric"] or []],
            "objective": objective_block(p),
        }

    def _model_param(self, p):
        """``learner_model_param``: the output counts, and the base score (XGBoost's
        prediction-space list) and feature count of a trained model."""
        multiclass = p["objective"].startswith("multi:")
        out = {"boost_from_average": "1" if p["base_score"] is None else "0",
               "num_class": str(p["num_class"]) if multiclass else "0",
               "num_target": str(1 if multiclass else get_objective(p).n_groups)}
        if self.n_features is not None:
            scores = base_scores(p, self.base_margin)
            out["base_score"] = "[" + ",".join(repr(float(s)) for s in scores) + "]"
            out["num_feature"] = str(self.n_features)
        return out
