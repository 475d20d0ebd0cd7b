"""Training on a Dask cluster: ``train`` (``gbm.dask.training``), the estimators
(``gbm.dask.estimators``) and the linear models (``gbm.dask.linear``), one model
whatever the number of workers or the chunking (docs/distributed.md).

Needs the ``dask`` extra: ``pip install 'detgbm[dask]'`` (from a checkout:
``pip install -e '.[dask]'``).
"""
try:
    import dask  # noqa: F401
    import distributed  # noqa: F401
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError("gbm.dask needs dask and distributed: pip install 'detgbm[dask]' "
                      "(from a checkout: pip install -e '.[dask]')") from err

from .estimators import DaskGBMClassifier, DaskGBMRanker, DaskGBMRegressor  # noqa: E402
from .linear import (DaskElasticNet, DaskLasso, DaskLinearSVC,  # noqa: E402
                     DaskLogisticRegression, DaskRidge)
from .training import CHECKPOINT_FILE, train  # noqa: E402

__all__ = ["train", "DaskGBMRegressor", "DaskGBMClassifier", "DaskGBMRanker", "CHECKPOINT_FILE",
           "DaskElasticNet", "DaskLasso", "DaskLinearSVC", "DaskLogisticRegression", "DaskRidge"]
