"""The categories of a model or a data set under XGBoost's name, ``Categories`` (what its
``Booster.get_categories`` and ``DMatrix.get_categories`` return): per feature, its
name and the labels of its categories in code order (None for a numeric feature)."""


class Categories:
    """Per-feature categories: ``names`` (one str per feature) and ``categories`` (one
    entry per feature: None, or the list of its labels, strings or numbers, the label of
    code ``c`` at ``c``). ``to_arrow()`` exports them as pyarrow arrays when made with
    ``export_to_arrow=True``, as XGBoost's."""

    def __init__(self, names, categories, export_to_arrow=False):
        if len(names) != len(categories):
            raise ValueError(f"names has {len(names)} entries but categories "
                             f"{len(categories)}; one of each per feature")
        self.names = list(names)
        self.categories = [None if c is None else list(c) for c in categories]
        self.export_to_arrow = bool(export_to_arrow)

    def empty(self):
        """Whether no feature is categorical."""
        return all(c is None for c in self.categories)

    def to_arrow(self):
        """``[(name, pyarrow.Array or None), ...]``, one pair per feature (None for a
        numeric one); ``ValueError`` unless made with ``export_to_arrow=True``."""
        if not self.export_to_arrow:
            raise ValueError("to_arrow() needs the categories made with "
                             "get_categories(export_to_arrow=True)")
        try:
            import pyarrow as pa
        except ImportError as err:
            raise ImportError("exporting categories to arrow needs pyarrow: pip install "
                              "pyarrow") from err
        return [(name, None if labels is None else pa.array(labels))
                for name, labels in zip(self.names, self.categories)]

    def __repr__(self):
        n = sum(c is not None for c in self.categories)
        return f"Categories({len(self.names)} features, {n} categorical)"


def recoded(data, reference):
    """``(data, feature_types)`` for ``feature_types=`` a ``Categories`` (XGBoost 3.1's
    reference encoding): each pandas ``category`` column of ``data`` given the reference's
    categories, in its order, so that a code means the reference's category (a label the
    reference lacks becomes missing, as an unseen category does at predict); numbers in a
    non-frame ``data`` are codes already. The types: a frame's by its dtypes (None), else
    ``"c"`` where the reference has categories."""
    import pandas as pd

    from .categorical import as_frame

    frame = as_frame(data)
    cats = reference.categories
    if frame is None:
        return data, ["c" if c is not None else "q" for c in cats]
    if frame.shape[1] != len(cats):
        raise ValueError(f"feature_types (reference categories) has {len(cats)} features but "
                         f"data has {frame.shape[1]} columns")
    frame = frame.copy()
    for f, ref in enumerate(cats):
        col = frame.iloc[:, f]
        if ref is None or not isinstance(col.dtype, pd.CategoricalDtype):
            continue
        ours = list(col.cat.categories)
        if ours and ref and isinstance(ours[0], str) != isinstance(ref[0], str):
            raise ValueError(f"feature {reference.names[f]!r}: the category index "
                             "type must match between the training and test set (strings "
                             "and numbers)")
        frame[frame.columns[f]] = col.cat.set_categories(list(ref))
    return frame, None
