"""Checkpoints of a Dask training (``checkpoint_dir=``): resume a fit that died, and never
silently resume another training's.

Rank 0 writes ``gbm-checkpoint.json`` after every round, atomically: the model, the
fingerprint of the training that wrote it, and early stopping's state (best round and
score, whether its patience ran out, the eval scores so far). A fit that finds the file
checks the fingerprint before anything else: a checkpoint of other parameters or data
raises a ``ValueError`` naming what differs. It refuses rather than starts afresh: the
file may hold the only copy of another run's work, and deleting it is the user's call.

Otherwise the fit trains the remaining rounds from the checkpoint's model, early stopping
counting from the checkpoint's best round (not from the resumed one), so it ends with the
model file, ``best_iteration`` and eval scores of an uninterrupted run; a checkpoint whose
early stopping had already stopped trains no more rounds.

The fingerprint: the parameters (run settings such as ``n_jobs`` and ``device`` left out:
they do not change the model), feature count and names, the rows of the training data and
of each eval set, a digest of their labels, weights and query ids, the eval sets' names,
``early_stopping_rounds``, and the bin edges (compared once the resumed fit has binned
its data: they depend on X through the hash-chosen sample). The digest is a sum of
per-row hashes keyed by each row's global index, so it does not depend on how the rows
are partitioned or which worker holds them. Not covered: user callables (``obj``,
``custom_metric``, callbacks) and changes to X that leave every bin edge as it was.
"""
import hashlib
import json
import os

import numpy as np

from ..model.booster import Booster
from ..callback import TrainingCallback
from ..io.atomic import write_atomic
from ..params import RUN_SETTINGS, validate_params
from ..cluster.progress import Checkpoint, _refuse, _Resumed, resumed  # noqa: F401

FILE = "gbm-checkpoint.json"
FORMAT = "gbm-checkpoint"
VERSION = 1


# -- the fingerprint ---------------------------------------------------------------------
def client_fingerprint(params, X, feature_names, shares, eval_shares, evals,
                       early_stopping_rounds, group=None, sample_weight=None, ranking=False,
                       init_model=None):
    """What the client knows of a training (the ranks add their rows' digest)."""
    p = {k: v for k, v in validate_params(params).items() if k not in RUN_SETTINGS}
    n_features = len(X.columns) if hasattr(X, "columns") else int(X.shape[1])
    names = feature_names if feature_names is not None else (
        [str(c) for c in X.columns] if hasattr(X, "columns") else None)
    small = [group] + [e.group for e in evals]
    if ranking:  # per-group weights: small, on the client
        small += [sample_weight] + [e.sample_weight for e in evals]
    return _canonical({
        "params": p, "n_features": n_features, "feature_names": names,
        "rows": [_rows(shares)] + [_rows(s) for _, s in eval_shares],
        "evals": [name for name, _ in eval_shares],
        "early_stopping_rounds": early_stopping_rounds,
        "groups": _sha256(small),
        "init_model": _init_id(init_model),
    })


def _init_id(init_model):
    """A model to continue from: its text's digest, or its path."""
    if isinstance(init_model, Booster):
        return hashlib.sha256(init_model.to_json().encode()).hexdigest()
    return None if init_model is None else str(init_model)


def _rows(shares):
    return int(sum(hi - lo for share in shares for lo, hi in share["ranges"]))


def _canonical(value):
    """``value`` as JSON would read it back (tuples as lists, NumPy scalars as numbers),
    so a fingerprint compares equal to the one a checkpoint file holds."""
    return json.loads(json.dumps(value, sort_keys=True, default=_plain))


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return repr(value)


def _sha256(arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(b"|" if a is None else np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()


def _mix(h):
    """splitmix64's finaliser, element-wise on uint64 (wrapping arithmetic)."""
    h = h ^ (h >> np.uint64(30))
    h = h * np.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> np.uint64(27))
    h = h * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


def rows_digest(ids, values):
    """uint64: the sum over rows of a hash of (global row index, the row's values), the
    same however the rows are split between ranks (sums wrap modulo 2**64). ``values``
    (n,) or (n, k), or None (0); values that are not numbers give 0 (training then
    raises its own error about them)."""
    if values is None or len(ids) == 0:
        return np.uint64(0)
    try:
        v = np.asarray(values, dtype=np.float64).reshape(len(ids), -1)
    except (TypeError, ValueError):
        return np.uint64(0)
    h = _mix(np.asarray(ids, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15))
    bits = np.ascontiguousarray(v).view(np.uint64)
    for j in range(bits.shape[1]):
        h = _mix(h ^ bits[:, j])
    return h.sum(dtype=np.uint64)


def with_rows_digest(collective, expected, parts):
    """``expected`` plus the digest of every rank's rows: ``parts`` is a list of
    ``(global row ids, values or None)``, the same list on every rank (one exchange)."""
    mine = np.array([rows_digest(ids, values) for ids, values in parts], dtype=np.uint64)
    total = collective.allreduce(mine, "sum")
    return dict(expected, data=[f"{int(d):016x}" for d in np.asarray(total).tolist()])


# -- the file ----------------------------------------------------------------------------
def dumps(booster, fingerprint, stopped):
    return json.dumps({"format": FORMAT, "version": VERSION, "fingerprint": fingerprint,
                       "best_iteration": booster.best_iteration,
                       "best_score": booster.best_score, "stopped": bool(stopped),
                       "evals_result": booster.evals_result,
                       "model": json.loads(booster.to_json())})


def loads(text, source):
    """A ``Checkpoint`` from a checkpoint file's text; ``ValueError`` naming ``source``
    for anything else (a model file included)."""
    try:
        d = json.loads(text)
    except ValueError:
        d = None
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise ValueError(f"{source} is not a gbm checkpoint (a plain model file, another "
                         "program's file or an older gbm's checkpoint); delete it or give "
                         "another checkpoint_dir")
    if d.get("version") != VERSION:
        raise ValueError(f"{source} is a version {d.get('version')!r} checkpoint; this gbm "
                         f"reads version {VERSION}: delete it to start afresh")
    booster = Booster.from_json(json.dumps(d["model"]))
    return Checkpoint(booster, d["fingerprint"], d["best_iteration"], d["best_score"],
                      d["stopped"], d["evals_result"])


def read(folder):
    """The ``Checkpoint`` in ``folder`` (a ``checkpoint_dir``), or None when there is none."""
    path = os.path.join(os.fspath(folder), FILE)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return loads(f.read(), path)


def differences(saved, expected):
    """What differs between a checkpoint's fingerprint and this fit's, in words."""
    out = []
    for key in sorted(set(saved) | set(expected)):
        a, b = saved.get(key), expected.get(key)
        if a == b:
            continue
        if key == "params" and isinstance(a, dict) and isinstance(b, dict):
            out += [f"{k}={a.get(k)!r} in the checkpoint, {b.get(k)!r} now"
                    for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        elif key in ("data", "groups"):
            out.append("the labels, weights or query groups")
        else:
            out.append(f"{key}: {a!r} in the checkpoint, {b!r} now")
    return out


# -- on the ranks ------------------------------------------------------------------------
def resume(collective, folder, expected, rounds, patience):
    """Rank 0 reads the checkpoint and every rank gets it (one exchange).

    Returns ``(init_model or None, rounds left, callbacks to run first)``: the callbacks
    check a resumed fit's bin edges and give its booster the checkpoint's eval scores and
    early stopping's best round, and rank 0's saves the checkpoint after every round.
    Raises ``ValueError`` (on every rank) for a checkpoint of another training.
    """
    path = os.path.join(os.fspath(folder), FILE)
    text = None
    if collective.rank == 0 and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    text = collective.broadcast(text, root=0)
    save = saver(collective, folder, expected, patience)
    if text is None:
        return None, rounds, save
    ck = loads(text, path)
    what = differences(ck.fingerprint, expected)
    if what:
        raise _refuse(path, what)
    done = ck.booster.num_boosted_rounds
    if done > rounds:
        raise ValueError(f"{path} holds {done} rounds, more than num_boost_round={rounds}; "
                         "delete it or ask for at least as many rounds")
    left = 0 if ck.stopped else rounds - done
    return ck.booster, left, [_Resumed(ck, path)] + save


def saved_rounds(collective, folder, expected):
    """The rounds of the checkpoint in ``folder`` when it is one of this training (its
    fingerprint ``expected``), else -1 (none, or another training's: ``resume`` says
    why); the same on every rank (one exchange)."""
    rounds = -1
    if collective.rank == 0:
        try:
            ck = read(folder)
        except ValueError:
            ck = None
        if ck is not None and not differences(ck.fingerprint, expected):
            rounds = int(ck.booster.num_boosted_rounds)
    return collective.broadcast(rounds, root=0)


def saver(collective, folder, expected, patience):
    """The callbacks that save a checkpoint after every round: rank 0's, none elsewhere."""
    path = os.path.join(os.fspath(folder), FILE)
    return [_Save(path, expected, patience)] if collective.rank == 0 else []


def _stopped(booster, epoch, patience):
    """Early stopping's rule (``gbm.callback.EarlyStopping``): no better score for
    ``patience`` rounds."""
    return (patience is not None and booster.best_iteration is not None
            and epoch - booster.best_iteration >= patience)


class _Save(TrainingCallback):
    """Rank 0 writes the checkpoint after every round (atomically)."""

    def __init__(self, path, fingerprint, patience):
        self.path, self.fingerprint, self.patience = path, fingerprint, patience

    def before_training(self, booster):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        return booster

    def after_iteration(self, booster, epoch, evals_log):
        write_atomic(self.path, dumps(booster, self.fingerprint,
                                      _stopped(booster, epoch, self.patience)))
        return False
