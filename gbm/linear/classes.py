"""Labels and class weights of the linear classifiers, agreed over ranks."""
import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from .problem import allsum



def encode_labels(estimator, y, collective):
    """Set ``estimator.classes_`` (sorted, the union over ranks) and return y's class
    indices (int64); ValueError unless there are at least 2 classes."""
    check_classification_targets(y)
    local = np.unique(y)
    parts = collective.allgather(local) if collective.world_size > 1 else [local]
    classes = np.unique(np.concatenate(parts))
    if classes.shape[0] < 2:
        raise ValueError(f"{type(estimator).__name__} needs samples of at least 2 classes in "
                         f"the data, but the data contains only one class: {classes[0]!r}")
    estimator.classes_ = classes
    return np.searchsorted(classes, y).astype(np.int64)


def class_weights(class_weight, classes, encoded, weight, collective):
    """Weight per class, float64 (n_classes,): ones (None), from a dict {label: weight},
    or "balanced" (``W / (n_classes W_k)``, W_k the summed sample weight of class k over
    every rank and W of all rows: scikit-learn's rule, n / (n_classes count_k) unweighted)."""
    n_classes = classes.shape[0]
    if class_weight is None:
        return np.ones(n_classes)
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(f"class_weight must be None, 'balanced' or a dict, got "
                             f"{class_weight!r}")
        counts = allsum(np.bincount(encoded, weights=weight, minlength=n_classes), collective)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(counts > 0, counts.sum() / (n_classes * counts), 1.0)
    if not isinstance(class_weight, dict):
        raise ValueError(f"class_weight must be None, 'balanced' or a dict, got "
                         f"{type(class_weight).__name__}")
    out = np.ones(n_classes)
    for label, value in class_weight.items():
        at = np.flatnonzero(classes == label)
        if at.size == 0:
            raise ValueError(f"class_weight has label {label!r}, which is not a class of y "
                             f"(classes: {classes.tolist()})")
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"class_weight[{label!r}] must be finite and >= 0, got {value!r}")
        out[at[0]] = float(value)
    return out

