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


def interaction_matrix(sets, n_features):
    """The constraint sets as bool (n_sets, n_features), or None for no constraints."""
    if sets is None:
        return None
    matrix = np.zeros((len(sets), n_features), dtype=bool)
    for i, s in enumerate(sets):
        matrix[i, list(s)] = True
    return matrix


def allowed_features(matrix, paths):
    """bool (n_nodes, n_features): the features each node may split on.

    ``matrix``: ``interaction_matrix``; ``paths``: bool (n_nodes, n_features), the
    features used between the root and each node. A node may use the features of every
    set holding its whole path, and its path's features; the root (empty path) any.
    """
    paths = np.asarray(paths, dtype=bool)
    outside = paths.astype(np.int32) @ (~matrix).T.astype(np.int32)  # path features not in set
    allowed = ((outside == 0).astype(np.int32) @ matrix.astype(np.int32) > 0) | paths
    allowed[~paths.any(axis=1)] = True
    return allowed


def parse_monotone_constraints(value, feature_names, n_features):
    """``monotone_constraints`` as int8 (n_features,) of +1 / -1 / 0, or None if all free.

    ``value``: None, a sequence of one int per feature, XGBoost's string form
    (``"(1,0,-1)"``), or a dict from feature name (or index) to +1 / -1.
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if not (text[:1] in "([" and text[-1:] in ")]"):
            raise ValueError(f"monotone_constraints {value!r} is not of the form '(1,0,-1)'")
        try:
            value = [int(v) for v in text[1:-1].split(",") if v.strip()]
        except ValueError:
            raise ValueError(f"monotone_constraints {value!r} is not of the form '(1,0,-1)'") from None
    if isinstance(value, dict):
        out = np.zeros(n_features, dtype=np.int8)
        for key, sign in value.items():
            if isinstance(key, str):
                if not feature_names or key not in feature_names:
                    raise ValueError(f"monotone_constraints names feature {key!r}, which is not "
                                     f"among the feature names {feature_names}")
                key = feature_names.index(key)
            out[_index(key, n_features)] = _sign(sign)
    else:
        value = list(value)
        if len(value) != n_features:
            raise ValueError(f"monotone_constraints has {len(value)} entries but X has "
                             f"{n_features} features")
        out = np.array([_sign(v) for v in value], dtype=np.int8)
    return out if out.any() else None


def _index(key, n_features):
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= key < n_features:
        return int(key)
    raise ValueError(f"monotone_constraints holds feature {key!r}; expected an index in "
                     f"[0, {n_features}) or a feature name")


def _sign(value):
    if value in (-1, 0, 1) and not isinstance(value, bool):
        return int(value)
    raise ValueError(f"monotone_constraints values must be -1, 0 or 1, got {value!r}")
