"""``GBMTrainer``: gbm on a Ray Train worker group, shaped as Ray's ``XGBoostTrainer``.

``GBMTrainer(params=..., label_column="y", num_boost_round=100, datasets={"train": ds,
"valid": ds2}, scaling_config=ScalingConfig(num_workers=2), run_config=RunConfig(...))``;
``result = trainer.fit()``; ``GBMTrainer.get_model(result.checkpoint)`` is gbm's
``Booster``: the model file ``gbm.train`` writes on the whole "train" dataset (eval sets:
the other datasets, by name, in order; early stopping on the last), for any number of
workers and however Ray splits the rows.

Each worker reads its shard of every dataset (Ray Train's ``get_dataset_shard``), builds
gbm's TCP mesh with the other workers (``gbm.ray.rendezvous``) and runs the same
``gbm.train`` as local training over its rows, with their global ids
(``gbm.ray.data``). Every ``checkpoint_frequency`` rounds the workers report to Ray
Train, rank 0 with a checkpoint of the state at that round (``gbm.ray.checkpoint``).
A worker lost mid-fit (its process killed, its node gone) fails the worker group; with
``RunConfig(failure_config=FailureConfig(max_failures=k))`` Ray Train starts a new group,
which goes on from the latest checkpoint and ends with the model file of an
uninterrupted fit. ``result.metrics["resumed_from_round"]``: the round the last group
started from (the rounds after it, up to where the lost group had come, were redone).
"""
from ray.train.v2.api.data_parallel_trainer import DataParallelTrainer

from .data import check_columns, with_row_ids


class GBMTrainer(DataParallelTrainer):
    """A Ray Train trainer of gbm models (see the module docstring).

    Parameters
    ----------
    params : dict, as for ``gbm.train`` (``n_jobs`` None: the worker's CPUs)
    label_column : str
    num_boost_round : int
    datasets : dict of Ray Data datasets: "train", and eval sets by name
    scaling_config, run_config, dataset_config : Ray Train's
    feature_columns : list of str, optional (default: every other column)
    weight_column, base_margin_column, qid_column : str, optional
    early_stopping_rounds : int, optional
    checkpoint_frequency : int, rounds between checkpoints (0: only at the end); each is
        a barrier of the workers through Ray Train and a copy of the model to storage
    collective_timeout : float, seconds one exchange between the workers waits
    train_kwargs : more arguments of ``gbm.train`` (``categorical_features``, ...)
    """

    def __init__(self, *, params, label_column, datasets, num_boost_round=10,
                 scaling_config=None, run_config=None, dataset_config=None,
                 feature_columns=None, weight_column=None, base_margin_column=None,
                 qid_column=None, early_stopping_rounds=None, checkpoint_frequency=10,
                 collective_timeout=300.0, resume_from_checkpoint=None, **train_kwargs):
        from ray.train import ScalingConfig

        scaling_config = scaling_config or ScalingConfig(num_workers=1)
        _check_workers(scaling_config.num_workers)
        if not isinstance(datasets, dict) or "train" not in datasets:
            raise ValueError("datasets must be a dict with a 'train' dataset (and eval sets "
                             f"by name), got {type(datasets).__name__}")
        named = {"label_column": label_column, "weight_column": weight_column,
                 "base_margin_column": base_margin_column, "qid_column": qid_column,
                 "feature_columns": feature_columns}
        for name, ds in datasets.items():
            check_columns(ds, name, named if name == "train" else
                          {"label_column": label_column, "feature_columns": feature_columns})
        if feature_columns is None:
            taken = {label_column, weight_column, base_margin_column, qid_column}
            feature_columns = [c for c in datasets["train"].schema().names if c not in taken]
        columns = {"label": label_column, "features": list(feature_columns),
                   "weight": weight_column, "base_margin": base_margin_column,
                   "qid": qid_column}
        config = {"params": dict(params), "columns": columns,
                  "num_boost_round": int(num_boost_round),
                  "evals": [n for n in datasets if n != "train"],
                  "early_stopping_rounds": early_stopping_rounds,
                  "checkpoint_frequency": int(checkpoint_frequency),
                  "timeout": float(collective_timeout), "train_kwargs": train_kwargs}
        super().__init__(train_loop_per_worker=_train_loop, train_loop_config=config,
                         scaling_config=scaling_config, run_config=run_config,
                         datasets={n: with_row_ids(ds) for n, ds in datasets.items()},
                         dataset_config=dataset_config,
                         resume_from_checkpoint=resume_from_checkpoint)

    @classmethod
    def get_model(cls, checkpoint):
        """gbm's ``Booster`` saved in a checkpoint of a ``GBMTrainer`` fit."""
        from .checkpoint import load_model

        with checkpoint.as_directory() as folder:
            return load_model(folder)


def _check_workers(num_workers):
    import numbers

    if isinstance(num_workers, bool) or not isinstance(num_workers, numbers.Integral) \
            or num_workers < 1:
        raise ValueError("scaling_config.num_workers must be an integer >= 1 (the training's "
                         f"workers), got {num_workers!r}")


def _train_loop(config):
    """One worker of the group (Ray Train's ``train_loop_per_worker``)."""
    import ray
    import ray.train
    from ray.train.collective import broadcast_from_rank_zero

    from ..cluster.collective import MeshCollective
    from ..cluster.progress import Progress
    from ..cluster.rank import train_rank
    from ..data.eval_sets import EvalSpec
    from . import checkpoint as ray_checkpoint
    from .data import shard_rows
    from .rendezvous import StarGather

    ctx = ray.train.get_context()
    rank, world = ctx.get_world_rank(), ctx.get_world_size()
    host = ray.util.get_node_ip_address()
    star = StarGather(rank, world, host, broadcast_from_rank_zero, config["timeout"])
    try:
        collective = MeshCollective(rank, world, host, star, config["timeout"])
    finally:
        star.close()
    try:
        columns = config["columns"]
        train = shard_rows(ray.train.get_dataset_shard("train"), columns)
        evals = []
        for name in config["evals"]:
            part = shard_rows(ray.train.get_dataset_shard(name), columns)
            evals.append(EvalSpec(name, part["X"], part["y"], sample_weight=part["w"],
                                  base_margin=part["margin"], qid=part["qid"],
                                  row_ids=part["ids"]))
        resume = None
        checkpoint = ray.train.get_checkpoint()
        if checkpoint is not None:
            with checkpoint.as_directory() as folder:
                resume = ray_checkpoint.load(folder)
        patience = config["early_stopping_rounds"]
        progress = Progress(patience)
        report = ray_checkpoint.Report(
            progress, rank, config["checkpoint_frequency"],
            {"resumed_from_round": 0 if resume is None else resume.rounds})
        params = dict(config["params"])
        if params.get("n_jobs", params.get("nthread")) is None:
            params["n_jobs"] = max(1, int(ray.get_runtime_context().get_assigned_resources()
                                          .get("CPU", 1)))
        train_rank(collective, params, train["X"], train["y"], config["num_boost_round"],
                   row_ids=train["ids"], evals=evals, early_stopping_rounds=patience,
                   resume=resume, progress=progress, after=[report],
                   sample_weight=train["w"], base_margin=train["margin"], qid=train["qid"],
                   feature_names=columns["features"], **config["train_kwargs"])
    finally:
        collective.close()



