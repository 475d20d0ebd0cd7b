"""``Booster``'s inspection (a mixin of ``gbm.model.booster.Booster``): feature names and
types, string attributes, feature importances, dumps of the trees and the categories it
learned, under XGBoost's names."""
import numpy as np

from . import dump
from ..io.validation import FEATURE_TYPES

IMPORTANCE_TYPES = ("weight", "gain", "cover", "total_gain", "total_cover")
# attributes kept in the booster's own fields, shown by attr() / attributes() as XGBoost's
_FIELD_ATTRIBUTES = {"best_iteration": int, "best_score": float}


def _feature_list(values, what):
    """``values`` (a sequence of str, or None) as a list, or None."""
    if values is None:
        return None
    if isinstance(values, str) or not hasattr(values, "__iter__"):
        raise TypeError(f"{what} must be a list of str or None, got {type(values).__name__}")
    out = list(values)
    bad = [v for v in out if not isinstance(v, str)]
    if bad:
        raise TypeError(f"{what} must hold str, got {bad[0]!r}")
    return out


class Inspection:
    """What a ``Booster`` tells about its model."""

    @property
    def feature_names(self):
        """The features' names (list of str), or None. Settable, as XGBoost's: the count is
        checked where the names are used (dumps, importances, saving), not when set."""
        return self._feature_names

    @feature_names.setter
    def feature_names(self, names):
        self._feature_names = _feature_list(names, "feature_names")

    @property
    def feature_types(self):
        """XGBoost's feature type codes ("q", "i", "int", "float", "c"), one per feature,
        as the training DMatrix had them, or None. Settable; they shape the dumps (an
        ``i`` feature prints no threshold, an ``int`` one an integer threshold)."""
        return self._feature_types

    @feature_types.setter
    def feature_types(self, types):
        types = _feature_list(types, "feature_types")
        bad = [t for t in types or [] if t not in FEATURE_TYPES]
        if bad:
            raise ValueError(f"feature_types holds {bad[0]!r}; XGBoost's codes are "
                             f"{list(FEATURE_TYPES)}")
        self._feature_types = types

    def num_features(self):
        """The number of features the model takes."""
        self._check_loaded()
        return self.n_features

    def attr(self, key):
        """The string attribute ``key`` (``set_attr``), or None. ``best_iteration`` and
        ``best_score`` read the booster's fields, as text, as XGBoost keeps them."""
        if key in _FIELD_ATTRIBUTES:
            value = getattr(self, key)
            return None if value is None else str(value)
        return self._attributes.get(key)

    def attributes(self):
        """Every attribute, a dict of str (``best_iteration`` and ``best_score`` when set)."""
        out = {key: self.attr(key) for key in _FIELD_ATTRIBUTES if self.attr(key) is not None}
        out.update(self._attributes)
        return out

    def set_attr(self, **kwargs):
        """Set string attributes, saved with the model: each value is kept as ``str(value)``;
        None deletes one. ``best_iteration`` (a round of the model) and ``best_score`` (a
        number) set the booster's fields of those names."""
        for key, value in kwargs.items():
            if key in _FIELD_ATTRIBUTES:
                self._set_field_attribute(key, value)
            elif value is None:
                self._attributes.pop(key, None)
            else:
                self._attributes[key] = str(value)

    def _set_field_attribute(self, key, value):
        if value is None:
            setattr(self, key, None)
            return
        try:
            number = _FIELD_ATTRIBUTES[key](value)
        except (TypeError, ValueError):
            raise ValueError(f"{key} must be a number, got {value!r}") from None
        if key == "best_iteration" and not 0 <= number < max(1, self.num_boosted_rounds):
            raise ValueError(f"best_iteration must be a round of the model, in [0, "
                             f"{self.num_boosted_rounds}), got {value!r}")
        if key == "best_score" and not np.isfinite(number):
            raise ValueError(f"best_score must be finite, got {value!r}")
        setattr(self, key, number)

    def get_score(self, fmap="", importance_type="weight"):
        """Feature importances as XGBoost reports them: a dict from feature name (from the
        feature map file ``fmap``, else the model's names, else ``f{i}``) to a number, for
        the features used in at least one split.

        importance_type : "weight" (number of splits), "gain" / "cover" (mean loss
        reduction / mean hessian sum of those splits), "total_gain", "total_cover".
        """
        if importance_type not in IMPORTANCE_TYPES:
            raise ValueError(f"importance_type must be one of {list(IMPORTANCE_TYPES)}, got "
                             f"{importance_type!r}")
        self._check_loaded()
        fmap = dump.check_fmap(fmap, IMPORTANCE_TYPES, "importance_type",
                               "(fmap, importance_type)")
        names = dump.feature_info(self, fmap)[0]
        weight, total_gain, total_cover = (np.zeros(self.n_features) for _ in range(3))
        for tree in self.trees:
            inner = tree.left_child >= 0
            np.add.at(weight, tree.split_feature[inner], 1)
            np.add.at(total_gain, tree.split_feature[inner], tree.gain[inner])
            np.add.at(total_cover, tree.split_feature[inner], tree.cover[inner])
        used = weight > 0
        values = {"weight": weight, "total_gain": total_gain, "total_cover": total_cover,
                  "gain": np.divide(total_gain, weight, where=used, out=np.zeros_like(weight)),
                  "cover": np.divide(total_cover, weight, where=used, out=np.zeros_like(weight))}
        return {names[f]: float(values[importance_type][f]) for f in np.flatnonzero(used)}

    def get_fscore(self, fmap=""):
        """``get_score(fmap, importance_type="weight")``: each used feature's split count."""
        return self.get_score(fmap, importance_type="weight")

    def get_dump(self, fmap="", with_stats=False, dump_format="text"):
        """One string per tree, in XGBoost's text, JSON or DOT dump form; ``fmap`` a
        feature map file (see gbm.model.dump)."""
        self._check_loaded()
        return dump.get_dump(self, fmap, with_stats, dump_format)

    def dump_model(self, fout, fmap="", with_stats=False, dump_format="text"):
        """Write the dump of every tree to ``fout`` (a path or an open text file), as
        XGBoost's ``dump_model`` (see gbm.model.dump)."""
        self._check_loaded()
        dump.dump_model(self, fout, fmap, with_stats, dump_format)

    def trees_to_dataframe(self, fmap=""):
        """A pandas DataFrame with one row per node (XGBoost's columns; see gbm.model.dump)."""
        self._check_loaded()
        return dump.trees_to_dataframe(self, fmap)

    def get_split_value_histogram(self, feature, fmap="", bins=None, as_pandas=True):
        """The thresholds of the numeric splits on the feature named ``feature`` as a
        histogram, as XGBoost's: rows of (``SplitValue``: a bin's upper edge, ``Count``)
        for the non-empty bins, in a DataFrame (``as_pandas``) or a float64 array (k, 2).
        ``bins``: at most that many bins (None: one per distinct threshold); a name the
        model does not have gives no rows; a categorical feature raises ``ValueError``."""
        self._check_loaded()
        names = dump.feature_info(self, fmap)[0]
        index = names.index(feature) if feature in names else None
        if index is not None and self.categories is not None \
                and self.categories[index] is not None:
            raise ValueError(f"a split value histogram doesn't support categorical splits: "
                             f"feature {feature!r} is categorical (its splits are sets of "
                             "categories, not values)")
        values = np.array([float(t.threshold[n]) for t in self.trees for n in np.flatnonzero(
            (t.left_child >= 0) & (t.split_feature == index))] if index is not None else [])
        n_unique = len(np.unique(values))
        counts, edges = np.histogram(values, bins=max(
            n_unique if bins is None else min(n_unique, bins), 1))
        table = np.column_stack((edges[1:], counts))
        table = table[table[:, 1] > 0]
        if not as_pandas:
            return table
        import pandas as pd

        return pd.DataFrame(table, columns=["SplitValue", "Count"])

    def get_categories(self, export_to_arrow=False):
        """The categories the model learned, per feature (XGBoost's ``Categories``):
        ``to_arrow()`` gives ``(name, pyarrow array or None)`` pairs with
        ``export_to_arrow=True``."""
        from ..data.category_container import Categories

        self._check_loaded()
        names = self.feature_names or [str(i) for i in range(self.n_features)]
        categories = self.categories or [None] * self.n_features
        return Categories(names, categories, export_to_arrow)
