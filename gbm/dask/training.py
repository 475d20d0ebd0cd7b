"""Training on a Dask cluster: one model, whatever the number of workers or the chunking.

SPMD (docs/architecture.md): the client plans which partitions each worker trains on (those
it already holds, ``gbm.dask.data``), then submits one long task per worker. Every task
runs the same ``gbm.train`` as local training over its worker's rows, with a collective
whose exchanges go worker to worker (``gbm.dask.collective``); the client waits, and gets
the model from rank 0. Histograms are integers and bin edges come from a hash-chosen row
sample, so the model file is the one local training writes, byte for byte.

Needs the ``dask`` extra: ``pip install 'detgbm[dask]'`` (from a checkout:
``pip install -e '.[dask]'``).
"""
import hashlib

from . import checkpoint as dask_checkpoint, data as dask_data, nccl as dask_nccl
from . import paged as dask_paged, recovery
from ..collective import CollectiveError
from ..data.eval_sets import EvalSpec, eval_specs
from ..cluster.progress import Progress
from ..cluster.errors import RankStopped
from .spmd import alive_workers, run_ranks, worker_threads
from ..params import validate_params, with_default
from ..training.loop import train as _train

import distributed

CHECKPOINT_FILE = dask_checkpoint.FILE


def train(client, params, X, y, num_boost_round=10, sample_weight=None, evals=(), group=None,
          qid=None, early_stopping_rounds=None, checkpoint_dir=None, workers=None,
          balance=True, collective_timeout=300.0, transport="auto",
          max_recoveries=recovery.DEFAULT_MAX_RECOVERIES, external_memory=False,
          cache_dir=None, min_cache_page_bytes=None, _stats=None, **kwargs):
    """Train on the workers of a Dask cluster; returns the ``Booster`` (the same model
    file as ``gbm.train`` on the same data, for any number of workers and any chunking).

    Parameters
    ----------
    client : distributed.Client or None (the default client)
    params : dict, as for ``gbm.train``; ``n_jobs`` None = each worker's thread count
    X : dask array (n_samples, n_features) or dask DataFrame (pandas ``category`` columns
        included); rows are partitioned along chunks, columns are not
    y, sample_weight, qid : dask arrays or Series partitioned as X; for a ranking
        objective ``sample_weight`` is one weight per query group (a NumPy array)
    base_margin : dask array partitioned as X (keyword), optional, as for ``gbm.train``
    group : array-like of int, optional, sizes of consecutive query groups (NumPy)
    evals : sequence of (X, y, name), (X, y, sample_weight, name), dict (keys X, y,
        name, sample_weight, group, qid, base_margin) or ``gbm.data.eval_sets.EvalSpec``,
        with dask X and y (the forms of ``gbm.train``, ``gbm.data.eval_sets``)
    early_stopping_rounds : int, optional, as for ``gbm.train``
    checkpoint_dir : path, optional
        A folder rank 0's worker can write (shared with later fits): a checkpoint is
        saved there after every round, and a fit that finds one of the same training
        resumes from it, ending with the same model as an uninterrupted run (early
        stopping included); a checkpoint of other parameters or data raises ValueError
        (see ``gbm.dask.checkpoint``).
    workers : list of worker addresses, optional (default: every worker); each is one
        rank, even one that holds no rows
    balance : bool
        Each worker trains on the partitions it holds, except that with ``balance`` a
        worker holding more than 10% above an even share of the rows hands partitions to
        the least loaded workers (moved worker to worker, never through the client).
        The model does not depend on it.
    collective_timeout : float, seconds one exchange waits for the other ranks before
        failing (the backstop for a hung worker; a lost worker fails at once)
    transport : "auto" or "dask"
        How the ranks exchange: "auto" opens direct TCP connections between the ranks
        when every worker has a ``tcp://`` address (falling back to Dask's comms when a
        connection cannot be made), "dask" always uses Dask's comms (TLS clusters do
        too); see ``gbm.dask.collective``. The model does not depend on it.
    max_recoveries : int >= 0, default 3
        How many times one fit goes on after losing workers (killed, crashed, gone, or
        hung past ``collective_timeout``): the survivors' state at the last completed
        round continues on the workers still there and any that joined, Dask computing
        the lost partitions again, and the fit ends with the model, ``best_iteration``
        and eval scores of an uninterrupted one (``gbm.dask.recovery``). 0: a loss fails
        the fit. Each recovery is logged (the ``gbm.dask`` logger) and recorded in
        ``_stats["recoveries"]``.
    external_memory : bool, default False
        Each worker keeps its rows' bins in page files on its disk and reads them a page
        at a time (``gbm.dask.paged``, as ``gbm.ExtMemQuantileDMatrix``) instead of
        holding its bin matrix: the same model file. Dense numeric X only for now.
    cache_dir : path, optional
        With ``external_memory``, an existing folder on every worker where the pages go
        (None: a temporary folder); the pages are removed when the rank's fit ends.
    min_cache_page_bytes : int, optional
        With ``external_memory``, the least bytes of a page file (its bins twice;
        partitions are joined up to it; 16 MiB when None), as ``ExtMemQuantileDMatrix``'s.
    kwargs : the other arguments of ``gbm.train`` (feature_names, callbacks, obj,
        custom_metric, maximize, categorical_features, verbose_eval, init_model), sent to
        every rank; callbacks start again (``before_training``) on each recovery

    Raises the first rank's error (e.g. ``ValueError`` for bad input, with the global row),
    or ``gbm.collective.CollectiveError`` when workers are lost or hang more than
    ``max_recoveries`` times, or the data of a lost worker cannot be computed again.
    """
    max_recoveries = recovery.check_max_recoveries(max_recoveries)
    client = client if client is not None else distributed.default_client()
    # the scheduler asked now: Client.scheduler_info() may return its periodic cache,
    # whose worker list is empty (distributed 2026.7 refreshes it asking for no workers)
    addresses = sorted(workers if workers is not None else alive_workers(client))
    if not addresses:
        raise ValueError("the Dask cluster has no workers")
    ranking = str(params.get("objective", "")).startswith("rank:")
    data = dask_data.layout(client, X, y, sample_weight, group, qid, ranking,
                            base_margin=kwargs.pop("base_margin", None))
    specs = eval_specs(evals)
    eval_data = [(s.name, dask_data.layout(client, s.X, s.y, s.sample_weight, s.group, s.qid,
                                           ranking, what=f"evals[{i}] ",
                                           base_margin=s.base_margin))
                 for i, s in enumerate(specs)]
    if not isinstance(external_memory, bool):
        raise TypeError(f"external_memory must be True or False, got {external_memory!r}")
    spec = dict(params=params, num_boost_round=num_boost_round,
                external_memory=external_memory, cache_dir=cache_dir,
                page_bytes=min_cache_page_bytes,
                early_stopping_rounds=early_stopping_rounds, checkpoint_dir=checkpoint_dir,
                kwargs=kwargs, fingerprint=None, resume=None)

    def attempt(addresses, resume):
        shares = data.shares(client, addresses, balance)
        eval_shares = [(name, d.shares(client, addresses, balance)) for name, d in eval_data]
        if checkpoint_dir is not None and spec["fingerprint"] is None:
            # what a checkpoint must match to be resumed (row counts: the same in any plan)
            spec["fingerprint"] = dask_checkpoint.client_fingerprint(
                params, X, kwargs.get("feature_names"), shares, eval_shares, specs,
                early_stopping_rounds, group, sample_weight, ranking,
                kwargs.get("init_model", kwargs.get("xgb_model")))
        rank_args = [(shares[rank], [(name, s[rank]) for name, s in eval_shares],
                      dict(spec, resume=resume)) for rank in range(len(addresses))]
        return run_ranks(client, addresses, _train_rank, rank_args, collective_timeout,
                         name="gbm-train", transport=transport)

    results, recoveries = recovery.run(client, addresses, attempt,
                                       [data] + [d for _, d in eval_data], max_recoveries,
                                       collective_timeout, fixed=workers)
    done = [r for r in results if r is not None]
    if _stats is not None:  # for the benchmark: rows and collective time of each rank
        _stats["ranks"] = [r[2] for r in done]
        _stats["recoveries"] = recoveries
    digests = {r[1] for r in done}
    if len(digests) != 1:  # the ranks' exchanges kept them in lockstep: they must agree
        raise CollectiveError("the ranks ended with different models; please report this")
    return results[0][0]


# -- on the worker ---------------------------------------------------------------------
def _train_rank(collective, share, eval_shares, spec):
    """One rank's training (``run_ranks``'s body): ``(booster or None, digest, stats)``.
    A loss stops it with ``RankStopped``, carrying the state of its last completed round
    (``gbm.dask.progress``)."""
    # Numba threads: the worker's share of the machine, unless n_jobs or nthread is given
    params = with_default(spec["params"], "n_jobs", worker_threads())
    # external memory: the rank's partitions are binned into pages below, not joined here
    X = None if spec.get("external_memory") else dask_data.assemble(share, "X")
    y = dask_data.assemble(share, "y")
    w = share.get("group_weight", dask_data.assemble(share, "sample_weight"))
    qid = dask_data.assemble(share, "qid")
    evals = [_rank_eval(name, s) for name, s in eval_shares]
    kwargs = dict(spec["kwargs"])
    if "base_margin" in share["empty"]:
        kwargs["base_margin"] = dask_data.assemble(share, "base_margin")
    callbacks = list(kwargs.pop("callbacks", ()))
    rounds, patience = spec["num_boost_round"], spec["early_stopping_rounds"]
    ids = dask_data.row_ids(share)
    progress = Progress(patience)
    path, reason = "host", "device='cpu'"
    paging = (None, None)  # external memory: (page files, passes over them)
    try:
        if validate_params(params)["device"] == "cuda":  # NCCL when each rank has its own GPU
            collective, path, reason = dask_nccl.device_collective(collective)
        first = []
        if spec["checkpoint_dir"] is not None or spec["resume"] is not None:
            init, rounds, first = _resume(collective, spec, ids, y, w, qid, share, eval_shares,
                                          evals, kwargs)
            if init is not None:
                kwargs.pop("xgb_model", None)  # the state holds the model continued from
                kwargs["init_model"] = init
        if spec.get("external_memory"):  # the rank's bins in page files (gbm.dask.paged)
            checked = validate_params(params)  # n_jobs under any alias (nthread)
            X = dask_paged.paged_rows(share, checked, w, ids, collective,
                                      spec.get("cache_dir"), spec.get("page_bytes"),
                                      n_threads=checked["n_jobs"],
                                      categorical_features=kwargs.pop("categorical_features",
                                                                      None),
                                      init_model=kwargs.get("init_model",
                                                            kwargs.get("xgb_model")),
                                      base_margin=kwargs.get("base_margin"))
        booster = _train(params, X, y, num_boost_round=rounds, sample_weight=w, evals=evals,
                         group=share.get("group"), qid=qid, early_stopping_rounds=patience,
                         callbacks=first + callbacks + [progress], collective=collective,
                         row_ids=ids, **kwargs)
    except CollectiveError as err:  # a peer lost or hung: this rank's last completed round
        if path == "nccl":
            collective.close(failed=True)
        raise RankStopped.of(err, progress.state(), progress.times()) from None
    except BaseException:
        if path == "nccl":
            collective.close(failed=True)
        raise
    finally:
        if spec.get("external_memory") and X is not None:
            paging = (X.matrix.files.n_pages, X.matrix.passes)
            X.matrix.close()  # the page files
    if path == "nccl":
        collective.close()
    digest = hashlib.sha256(booster.to_json().encode()).hexdigest()
    stats = {"rows": int(ids.shape[0]), "exchanges": collective.n_exchanges,
             "transport": getattr(getattr(collective, "host", collective), "transport", None),
             "collective_s": collective.seconds, "device_allreduce": path,
             "device_allreduce_reason": reason, "first_round_at": progress.first_round_at,
             "pages": paging[0], "page_passes": paging[1]}
    return (booster if collective.rank == 0 else None), digest, stats


def _resume(collective, spec, ids, y, w, qid, share, eval_shares, evals, kwargs):
    """Where this attempt starts: ``(init_model or None, rounds to train, callbacks to
    run first)``. A recovery's state in memory (``spec["resume"]``) comes first; else
    ``gbm.dask.checkpoint.resume`` with this training's fingerprint, completed by the
    digest of every rank's labels, weights and query ids. With ``checkpoint_dir``, rank
    0 saves a checkpoint after every round either way."""
    save = []
    if spec["checkpoint_dir"] is not None:
        parts = [(ids, y), (ids, _row_weights(share, w)), (ids, qid),
                 (ids, kwargs.get("base_margin"))]
        for (_, s), e in zip(eval_shares, evals):
            e_ids = dask_data.row_ids(s)
            parts += [(e_ids, e.y), (e_ids, _row_weights(s, e.sample_weight)), (e_ids, e.qid),
                      (e_ids, e.base_margin)]
        expected = dask_checkpoint.with_rows_digest(collective, spec["fingerprint"], parts)
        memory = spec["resume"]
        # the file, unless a recovery holds a state at least as new (the file is newer
        # only when every rank that held the last state was lost)
        if memory is None or memory.rounds < dask_checkpoint.saved_rounds(
                collective, spec["checkpoint_dir"], expected):
            return dask_checkpoint.resume(collective, spec["checkpoint_dir"], expected,
                                          spec["num_boost_round"],
                                          spec["early_stopping_rounds"])
        save = dask_checkpoint.saver(collective, spec["checkpoint_dir"], expected,
                                     spec["early_stopping_rounds"])
    resume = spec["resume"]
    if resume is None:
        return None, spec["num_boost_round"], save
    return resume.booster, resume.rounds_left(), [dask_checkpoint.resumed(resume)] + save


def _row_weights(share, w):
    """``w`` when it holds one weight per row (a ranking objective's are per group)."""
    return w if "sample_weight" in share["empty"] else None


def _rank_eval(name, share):
    """This rank's part of an eval set, its rows' indices in the whole set with it."""
    spec = EvalSpec(name, dask_data.assemble(share, "X"), dask_data.assemble(share, "y"),
                    row_ids=dask_data.row_ids(share))
    if "group_weight" in share:
        spec.sample_weight = share["group_weight"]
    elif "sample_weight" in share["empty"]:
        spec.sample_weight = dask_data.assemble(share, "sample_weight")
    spec.group = share.get("group")
    for field in ("qid", "base_margin"):
        if field in share["empty"]:
            setattr(spec, field, dask_data.assemble(share, field))
    return spec

