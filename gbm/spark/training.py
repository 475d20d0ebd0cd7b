"""Training on a Spark cluster: one barrier stage, one task per rank, gbm's collective
between the tasks, and going on after a lost task.

The driver (``fit_booster``) prepares the rows (``gbm.spark.data``) and runs one barrier
stage of ``num_workers`` tasks (``DataFrame.mapInArrow(..., barrier=True)``). Each task
builds the ranks' TCP mesh through ``BarrierTaskContext.allGather`` (addresses, rank 0's
secret: ``gbm.cluster.collective.MeshCollective``), reads its rows and runs the same
``gbm.train`` as local training over them (``gbm.cluster.rank.train_rank``), with each
row's global index; rank 0 returns the model.

A task that fails on its own (bad input, a callback's exception) returns its error
instead of failing the stage (Spark would kill the others and throw the error's type
away); the driver raises it. A task that is *lost* (its Python worker killed, its
executor gone) fails the stage, which Spark never retries for a barrier result stage.
The other ranks notice first (the lost rank's connections close), send their state at
the last completed round to the driver (``gbm.spark.keeper``) and stop; the driver runs
the stage again from that state, up to ``max_recoveries`` times. Rows keep their global
indices, so the fit ends with the model file of an uninterrupted one.
"""
import functools
import logging
import pickle
import re
import time

from ..cluster.errors import RankStopped
from ..cluster.progress import newer
from ..collective import CollectiveError
from . import data as sd
from .keeper import Keeper, report

LOG = logging.getLogger("gbm.spark")
_SCHEMA = "rank int, data binary"


def fit_booster(dataset, estimator, columns, num_workers, max_recoveries, timeout):
    """Train ``estimator`` (a local gbm estimator: its parameters) on ``dataset``;
    returns ``(booster, classes or None, recoveries)``. ``columns``: the column
    parameters (``features_col``, ``label_col``, ...)."""
    spark = dataset.sparkSession
    sd.check_slots(spark, num_workers)
    frame, layout = sd.training_frame(dataset, num_workers=num_workers, **columns)
    host = spark.conf.get("spark.driver.host", "127.0.0.1")
    keeper = Keeper(host)
    resume, records = None, []
    try:
        for attempt in range(max_recoveries + 1):
            task = functools.partial(_rank_task, estimator, layout, resume, attempt,
                                     keeper.address, keeper.secret, num_workers, timeout)
            started = time.monotonic()
            try:
                rows = frame.mapInArrow(task, _SCHEMA, barrier=True).collect()
            except Exception as err:  # noqa: BLE001 - the stage failed: a task was lost
                if _interrupted(err) or attempt == max_recoveries:
                    raise _lost_error(err, attempt, max_recoveries) from err
                resume = _recover(keeper.states(attempt), resume, err, records, started)
                continue
            out = _results(rows)
            if out is None:  # every rank finished, but some were stopped by a loss
                resume = _recover(keeper.states(attempt), resume, "ranks stopped",
                                  records, started)
                continue
            return out + (records,)
        raise _lost_error("ranks stopped", max_recoveries, max_recoveries)
    finally:
        keeper.close()


def _interrupted(err):
    return isinstance(err, KeyboardInterrupt) or "cancelled" in str(err).lower() and \
        "job" in str(err).lower() and "barrier" not in str(err).lower()


def _lost_error(err, attempt, max_recoveries):
    return CollectiveError(f"a Spark task of the training was lost ({_first_line(err)}); "
                           f"{attempt} recoveries made (max_recoveries={max_recoveries})")


_PY_ERROR = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)): ?(.*)$")


def _first_line(err):
    """What a failed stage says in one line: the task's Python error where its
    traceback is in the message (the last one), else the message's first line."""
    lines = str(err).strip().splitlines()
    python = [line for line in lines if _PY_ERROR.match(line.strip())
              and not line.strip().startswith(("org.apache", "java.", "py4j"))]
    return (python[-1].strip() if python else lines[0] if lines else type(err).__name__)[:500]


def _recover(states, resume, err, records, started):
    """The state the next attempt goes on from (the newest of the survivors' and the
    last one), with the recovery recorded and logged."""
    best = resume
    reached = None
    for state, info in states:
        best = newer(best, state)
        if state is not None:
            reached = max(reached or 0, state.rounds)
    rounds = 0 if best is None else best.rounds
    record = {"attempt": len(records), "round": rounds, "reason": _first_line(err),
              "rounds_reached": reached, "ranks_reporting": len(states),
              "rounds_redone": None if reached is None else reached - rounds,
              "seconds_lost": time.monotonic() - started}
    records.append(record)
    LOG.warning("gbm.spark: a task of the training was lost (%s); %d rank(s) reported their "
                "state; going on from round %d (recovery %d)", record["reason"],
                len(states), rounds, len(records))
    return best


def _results(rows):
    """``(booster, classes)`` from the ranks' rows; raises a rank's own error; None when
    ranks were stopped by a loss and none failed on its own."""
    results = sorted((r["rank"], pickle.loads(r["data"])) for r in rows)
    errors = [res[1] for _, res in results if res[0] == "error"]
    if errors:
        raise errors[0]
    if any(res[0] != "done" for _, res in results):
        return None
    digests = {res[1]["digest"] for _, res in results}
    if len(digests) != 1:
        raise CollectiveError("the ranks ended with different models; please report this")
    first = results[0][1][1]
    return first["booster"], first["classes"]


# -- on a task ---------------------------------------------------------------------------
def _rank_task(estimator, layout, resume, attempt, keeper_address, secret, num_workers,
               timeout, batches):
    """One rank (a barrier task): yields one Arrow batch ``(rank, pickled result)``."""
    import pyarrow as pa
    from pyspark import BarrierTaskContext

    from ..cluster.collective import MeshCollective
    from .rank import train_on_rows

    ctx = BarrierTaskContext.get()
    rank = ctx.partitionId()
    host = ctx.getTaskInfos()[rank].address.rsplit(":", 1)[0]
    if getattr(estimator, "n_jobs", None) is None:  # the task's CPUs, not the machine's
        estimator.n_jobs = max(1, int(ctx.cpus()))
    collective = None
    try:  # every rank makes the mesh's all-gathers, whatever its rows
        collective = MeshCollective(rank, num_workers, host, ctx.allGather, timeout)
        rows = sd.rank_rows(list(batches), layout, getattr(estimator, "missing", None))
        out = ("done", train_on_rows(collective, rows, layout, estimator, resume))
    except RankStopped as err:  # a peer was lost: leave this rank's state with the driver
        info = {"rank": rank, "reason": str(err), "times": err.times}
        sent = report(keeper_address, secret, attempt, rank, err.state, info)
        out = ("stopped", dict(info, reported=sent))
    except CollectiveError as err:
        out = ("stopped", {"rank": rank, "reason": str(err)})
    except Exception as err:  # noqa: BLE001 - returned to the driver, which raises it
        out = ("error", _picklable(err))
    finally:
        if collective is not None:
            collective.close()
    if out[0] != "done" or rank != 0:
        out = (out[0], _lean(out[1]))
    yield pa.RecordBatch.from_arrays([pa.array([rank], pa.int32()),
                                      pa.array([pickle.dumps(out, protocol=5)], pa.binary())],
                                     names=["rank", "data"])


def _lean(result):
    """A result without the model (only rank 0's travels)."""
    if isinstance(result, dict) and "booster" in result:
        return dict(result, booster=None)
    return result


def _picklable(err):
    try:
        pickle.loads(pickle.dumps(err))
        return err
    except Exception:  # noqa: BLE001 - an exception type the driver cannot rebuild
        return RuntimeError(f"{type(err).__name__}: {err}")
