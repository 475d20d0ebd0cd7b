"""Vector-leaf trees (``multi_strategy="multi_output_tree"``) split over 2 and 3 ranks of
one process (``gbm.collective.ThreadGroup``, the collective Dask's ranks use): the local
model file, byte for byte, with uneven rows, a rank without rows, row and column sampling,
``max_leaves``, the projected split search, lossguide growth and a forest whose leaves are
refreshed to residual medians. ``tests/test_dask_vector_leaf.py`` runs the
same on a cluster."""
import numpy as np
import pytest

import gbm
from gbm.collective import ThreadGroup

BASE = dict(multi_strategy="multi_output_tree", max_depth=4, max_bin=32, bin_sample_size=300,
            subsample=0.8, colsample_bytree=0.8)
N = 900


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 5)).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    Z = np.nan_to_num(X)
    classes = (Z[:, 0] > 0) + (Z[:, 1] > 0.5) + (Z[:, 2] > 1.0)
    targets = np.stack([Z[:, 0], Z[:, 1] ** 2, Z[:, 3] - Z[:, 4]], axis=1)
    return X, classes.astype(np.float64), targets


CASES = {
    "softprob": (dict(BASE, objective="multi:softprob", num_class=4), "classes"),
    "projected": (dict(BASE, objective="multi:softprob", num_class=4,
                       gradient_projection=True, projection_dim=2), "classes"),
    "targets_max_leaves": (dict(BASE, max_leaves=6), "targets"),
    "lossguide": (dict(BASE, objective="multi:softprob", num_class=4, grow_policy="lossguide",
                       max_leaves=7), "classes"),
    "forest_absolute_error": (dict(BASE, objective="reg:absoluteerror", num_parallel_tree=2),
                              "targets"),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("cuts", [(0, 300, N), (0, 100, 100, N)], ids=["2ranks", "3ranks"])
def test_ranks_grow_the_local_model(name, cuts):
    params, label = CASES[name]
    X, classes, targets = _data()
    y = classes if label == "classes" else targets
    local = gbm.train(params, X, y, 3)
    assert sum(t.n_nodes for t in local.trees) > 3 * len(local.trees)  # the trees did split

    def rank_fn(c):
        lo, hi = cuts[c.rank], cuts[c.rank + 1]  # rank 1 of 3 holds no rows
        return gbm.train(params, X[lo:hi], y[lo:hi], 3, collective=c,
                         row_ids=np.arange(lo, hi))

    for booster in ThreadGroup(len(cuts) - 1).run(rank_fn):
        assert booster.to_json() == local.to_json()
