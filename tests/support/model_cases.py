"""Reference models: a set of training runs covering every objective family and tree
feature, whose model files are kept in ``tests/fixtures/models`` as the oracle for
refactors of the engine (``test_model_fixtures.py`` trains each again and compares the
files byte for byte).

Rewrite the files only on purpose, in a commit of its own that says which fields changed
and why::

    python -m tests.support.model_cases --write
"""
import sys
from pathlib import Path

import numpy as np

# gbm's exp for the labels: NumPy's differs between CPUs (its AVX-512 loop and the C
# library's disagree on some inputs), and the models trained on them would too
from gbm.numerics.elementwise import exp as _exp

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"


def _data(n_rows=600, n_features=6, seed=0, missing=0.05):
    """Legacy RandomState streams: stable across NumPy versions."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_rows, n_features)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * 3)  # a feature with few distinct values
    X[rng.uniform(size=X.shape) < missing] = np.nan
    signal = np.nan_to_num(X[:, 0]) * 2 + np.nan_to_num(X[:, 2]) ** 2 - np.nan_to_num(X[:, 3])
    return X, signal, rng


def _regression(seed=0, **kw):
    X, signal, rng = _data(seed=seed, **kw)
    return X, signal + rng.normal(scale=0.5, size=X.shape[0])


def _binary(seed=1):
    X, signal, rng = _data(seed=seed)
    return X, (signal + rng.logistic(size=X.shape[0]) > 0.5).astype(np.float64)


def _multiclass(seed=2, k=3):
    X, signal, rng = _data(seed=seed)
    return X, np.digitize(signal + rng.normal(size=X.shape[0]), [-1.0, 1.0, 3.0][:k - 1]).astype(float)


def _positive(seed=3):
    X, signal, rng = _data(seed=seed)
    return X, _exp(0.3 * signal + rng.normal(scale=0.3, size=X.shape[0]))


def _counts(seed=4):
    X, signal, rng = _data(seed=seed)
    return X, rng.poisson(_exp(0.3 * np.clip(signal, -5, 5))).astype(float)


def _tweedie(seed=5):
    X, y = _counts(seed)
    return X, y * 1.7


def _ranking(seed=6):
    X, signal, rng = _data(seed=seed)
    y = np.clip(np.round(signal / 2 + rng.normal(size=X.shape[0]) + 1), 0, 4)
    group = [40] * 15
    return X, y, group


def _categorical(seed=7):
    import pandas as pd

    X, signal, rng = _data(seed=seed)
    n = X.shape[0]
    many = rng.randint(0, 12, n)
    few = rng.randint(0, 3, n)
    frame = pd.DataFrame(X[:, :4], columns=["a", "b", "c", "d"])
    frame["many"] = pd.Categorical.from_codes(np.where(rng.uniform(size=n) < 0.05, -1, many),
                                              [f"m{i}" for i in range(12)])
    frame["few"] = pd.Categorical.from_codes(few, ["x", "y", "z"])
    frame["ints"] = rng.randint(0, 7, n).astype(np.float32)
    y = signal + (many % 4) * 1.5 - (few == 1) + (frame["ints"].to_numpy() % 3) \
        + rng.normal(scale=0.3, size=n)
    return frame, y


class Spec:
    """One training run: ``gbm.train(params, X, y, rounds, **kwargs)``."""

    def __init__(self, params, X, y, rounds, kwargs):
        self.params, self.X, self.y, self.rounds, self.kwargs = params, X, y, rounds, kwargs

    def train(self, **extra):
        import gbm

        return gbm.train(self.params, self.X, self.y, self.rounds, **self.kwargs, **extra)


def _train(params, X, y, rounds=6, **kw):
    base = {"max_depth": 4, "learning_rate": 0.3, "n_jobs": 2}
    return Spec(dict(base, **params), X, y, rounds, kw)


def case_squared():
    return _train({}, *_regression())


def case_squared_weighted_regularised():
    X, y = _regression(seed=10)
    w = np.random.RandomState(10).uniform(0.1, 3.0, size=X.shape[0])
    return _train({"reg_alpha": 0.7, "reg_lambda": 3.0, "gamma": 0.2, "min_child_weight": 4.0,
                   "max_delta_step": 0.4}, X, y, sample_weight=w)


def case_lossguide():
    return _train({"grow_policy": "lossguide", "max_depth": 0, "max_leaves": 13}, *_regression(seed=11))


def case_depthwise_max_leaves():
    return _train({"max_leaves": 9, "max_depth": 5}, *_regression(seed=12))


def case_sampling():
    return _train({"subsample": 0.7, "colsample_bytree": 0.8, "colsample_bylevel": 0.8,
                   "colsample_bynode": 0.7, "random_state": 5}, *_regression(seed=13))


def case_binning_sample():
    return _train({"max_bin": 16, "bin_sample_size": 250, "random_state": 3},
                  *_regression(seed=14, n_rows=900))


def case_binary():
    return _train({"objective": "binary:logistic"}, *_binary())


def case_softprob():
    return _train({"objective": "multi:softprob", "num_class": 3, "subsample": 0.8},
                  *_multiclass())


def case_softmax():
    return _train({"objective": "multi:softmax", "num_class": 4}, *_multiclass(seed=15, k=4))


def case_absolute():
    return _train({"objective": "reg:absoluteerror", "subsample": 0.8}, *_regression(seed=16))


def case_quantiles():
    X, y = _regression(seed=17)
    w = np.random.RandomState(17).uniform(0.5, 2.0, size=X.shape[0])
    return _train({"objective": "reg:quantileerror", "quantile_alpha": [0.2, 0.8]}, X, y,
                  sample_weight=w)


def case_pseudohuber():
    return _train({"objective": "reg:pseudohubererror", "huber_slope": 2.0}, *_regression(seed=18))


def case_poisson():
    return _train({"objective": "count:poisson"}, *_counts())


def case_gamma():
    return _train({"objective": "reg:gamma"}, *_positive())


def case_tweedie():
    return _train({"objective": "reg:tweedie", "tweedie_variance_power": 1.3}, *_tweedie())


def case_rank_ndcg():
    X, y, group = _ranking()
    return _train({"objective": "rank:ndcg"}, X, y, group=group)


def case_rank_pairwise_mean():
    X, y, group = _ranking(seed=19)
    return _train({"objective": "rank:pairwise", "lambdarank_pair_method": "mean",
                   "lambdarank_num_pair_per_sample": 2, "random_state": 4}, X, y, group=group)


def case_categorical():
    X, y = _categorical()
    return _train({"max_cat_to_onehot": 4, "max_cat_threshold": 5}, X, y,
                  categorical_features=["ints"])


def case_categorical_onehot_lossguide():
    X, y = _categorical(seed=20)
    return _train({"max_cat_to_onehot": 16, "grow_policy": "lossguide", "max_leaves": 10,
                   "colsample_bynode": 0.8}, X, y)


def case_monotone():
    return _train({"monotone_constraints": [1, 0, 0, -1, 0, 0], "max_depth": 5},
                  *_regression(seed=21))


def case_interaction():
    return _train({"interaction_constraints": [[0, 1], [2, 3, 4]], "colsample_bynode": 0.9},
                  *_regression(seed=22))


def case_forest():
    return _train({"num_parallel_tree": 4, "subsample": 0.8, "colsample_bynode": 0.8,
                   "learning_rate": 1.0, "reg_lambda": 1e-5}, *_binary(seed=23), rounds=2,
                  )


def case_forest_multiclass():
    return _train({"objective": "multi:softprob", "num_class": 3, "num_parallel_tree": 2,
                   "subsample": 0.9}, *_multiclass(seed=24), rounds=3)


def case_early_stopping():
    X, y = _binary(seed=25)
    Xv, yv = _binary(seed=26)
    return _train({"objective": "binary:logistic", "eval_metric": ["auc", "logloss"],
                   "learning_rate": 0.6}, X, y, rounds=30, evals=[(Xv, yv, "valid")],
                  early_stopping_rounds=3)


def case_continued():
    X, y = _regression(seed=27)
    first = _train({}, X, y, rounds=3).train()
    return _train({}, X, y, rounds=3, init_model=first)


def case_dart():
    """DART: every class's trees dropped in proportion to their weights, forest
    normalisation, rounds that skip the dropout, an eval set scored at changing weights."""
    X, y = _multiclass(seed=30)
    Xv, yv = _multiclass(seed=31)
    return _train({"objective": "multi:softprob", "num_class": 3, "booster": "dart",
                   "rate_drop": 0.3, "one_drop": True, "skip_drop": 0.3,
                   "sample_type": "weighted", "normalize_type": "forest", "subsample": 0.8,
                   "random_state": 9}, X, y, evals=[(Xv, yv, "valid")])


def case_larger_threaded():
    """Enough rows for the kernels' multi-thread paths (with n_jobs=2)."""
    X, _, _ = _data(n_rows=30000, n_features=8, seed=29, missing=0.02)
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 5]) * np.nan_to_num(X[:, 6]) > 0).astype(float)
    return _train({"objective": "binary:logistic", "max_depth": 6, "subsample": 0.9}, X, y,
                  rounds=3)


def case_base_score():
    return _train({"objective": "binary:logistic", "base_score": 0.3}, *_binary(seed=28))


def case_vector_leaf():
    """Vector-leaf trees (multi_strategy="multi_output_tree") on three labels, one of them
    rare: the outputs' hessians, and so their fixed-point scales, differ (covers, gains
    and leaf vectors each read every output in its own scale)."""
    X, signal, rng = _data(seed=32)
    noisy = signal + rng.logistic(size=X.shape[0])
    Y = np.stack([noisy > 0.5, noisy > 4.5, np.nan_to_num(X[:, 1]) > 0], 1).astype(np.float64)
    w = rng.uniform(0.5, 2.0, size=X.shape[0])
    return _train({"objective": "binary:logistic", "multi_strategy": "multi_output_tree",
                   "reg_alpha": 0.3, "min_child_weight": 0.5}, X, Y, sample_weight=w)


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items())
         if name.startswith("case_")}  # name -> function returning the case's Spec


def model_text(name):
    """The model file of case ``name``, trained now (the text ``save_model`` writes)."""
    return CASES[name]().train().to_json()


def first_difference(a, b, path="model"):
    """Where two parsed model files first differ, for a readable failure."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}: present in only one file"
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def main(argv):
    if argv != ["--write"]:
        print(__doc__)
        return 2
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name in CASES:
        (FIXTURES / f"{name}.json").write_text(model_text(name))
        print("wrote", name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
