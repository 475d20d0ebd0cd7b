"""Interaction constraints: which features a node may split on, given its path.

``interaction_constraints`` lists sets of features allowed to interact (XGBoost's rule):
the root may split on any feature; below it, a node may split on the features of every
set that holds all the features already used on its path, and on those features
themselves (so a feature in no set can only interact with itself).
"""
import json

import numpy as np


def parse_interaction_constraints(value, feature_names, n_features):
    """The constraint sets as a list of frozensets of feature indices, or None.

    ``value``: None, a list of lists of feature indices or names, or that list as a JSON
    string (XGBoost's form, e.g. ``"[[0, 1], [2, 3, 4]]"``).
    """
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError(f"interaction_constraints {value!r} is not a JSON list of lists") from None
    if not isinstance(value, (list, tuple)) or not all(isinstance(s, (list, tuple)) for s in value):
        raise ValueError(f"interaction_constraints must be a list of lists of features, got {value!r}")
    sets = []
    for group in value:
        indices = set()
        for feature in group:
            if isinstance(feature, str):
                if not feature_names or feature not in feature_names:
                    raise ValueError(f"interaction_constraints names feature {feature!r}, which "
                                     f"is not among the feature names {feature_names}")
                indices.add(feature_names.index(feature))
            elif isinstance(feature, (int, np.integer)) and not isinstance(feature, bool) \
                    and 0 <= feature < n_features:
                indices.add(int(feature))
            else:
                raise ValueError(f"interaction_constraints holds {feature!r}; features are "
                                 f"indices in [0, {n_features}) or feature names")
        sets.append(frozenset(indices))
    return sets


def allowed_features(sets, path, n_features):
    """uint8 (n_features,): 1 for the features a node whose path used ``path`` may split on."""
    mask = np.zeros(n_features, dtype=np.uint8)
    if not path:
        mask[:] = 1
        return mask
    for s in sets:
        if path <= s:
            mask[list(s)] = 1
    mask[list(path)] = 1
    return mask
