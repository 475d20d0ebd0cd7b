"""Training on Ray: ``GBMTrainer``, a Ray Train trainer shaped as Ray's
``XGBoostTrainer`` that trains the model local gbm trains on the same rows, on any
number of workers, and goes on from Ray Train checkpoints after a lost worker
(docs/distributed.md, "Ray").

Needs the ``ray`` extra: ``pip install 'detgbm[ray]'`` (from a checkout:
``pip install -e '.[ray]'``).
"""
try:
    import ray.train  # noqa: F401
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError("gbm.ray needs Ray Train and Ray Data: pip install 'detgbm[ray]' "
                      "(from a checkout: pip install -e '.[ray]')") from err

from .trainer import GBMTrainer  # noqa: E402

__all__ = ["GBMTrainer"]
