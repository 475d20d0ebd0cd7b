"""Multi-label classification in ``GBMClassifier`` (XGBoost's ``XGBClassifier`` with a
``y`` of shape (n_samples, k)): each column is one binary label, trained with
``binary:logistic`` as ``k`` outputs (one tree per output per round, or one vector-leaf
tree per round with ``multi_strategy="multi_output_tree"``). ``classes_`` is ``[0, 1]``,
``predict_proba`` returns (n_samples, k) probabilities of the labels being 1 and
``predict`` (n_samples, k) indicators (1 where the probability is above 0.5)."""
import numpy as np


def as_array(y):
    """``y`` as a NumPy array (a pandas frame's values, a list of lists' array)."""
    return y.to_numpy() if hasattr(y, "to_numpy") else np.asarray(y)


def is_multilabel(y):
    """Whether ``y`` (array-like) has two dimensions and more than one column: a label
    indicator matrix."""
    arr = as_array(y)
    return arr.ndim == 2 and arr.shape[1] > 1


def encode_multilabel(y, objective, name="y"):
    """``y`` (n_samples, k) of 0/1 -> float64 (n_samples, k), with the training
    parameters; ``ValueError`` naming the first value that is not 0 or 1, or an
    objective other than ``binary:logistic``.

    y : array-like (n_samples, k), bool, integer or float 0/1 indicators
    objective : the estimator's ``objective`` (None or "binary:logistic")
    """
    arr = as_array(y)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} has shape {arr.shape} (multi-label) but dtype {arr.dtype}; "
                         "a label indicator matrix holds 0 and 1")
    values = arr.astype(np.float64)
    bad = np.argwhere(~((values == 0.0) | (values == 1.0)))
    if bad.size:
        r, c = bad[0]
        raise ValueError(f"{name}[{r}, {c}] = {arr[r, c].item()!r}; a multi-label y (shape "
                         f"{arr.shape}) holds 0 or 1 in every cell")
    if objective not in (None, "binary:logistic"):
        raise ValueError(f"objective={objective!r} with a multi-label y (shape {arr.shape}); "
                         "multi-label classification trains 'binary:logistic'")
    return values, {"objective": "binary:logistic"}


def multilabel_predict(proba, classes):
    """(n_samples, k) labels of ``classes``' dtype: ``classes[1]`` where ``proba`` > 0.5."""
    return classes[(proba > 0.5).astype(np.intp)]
