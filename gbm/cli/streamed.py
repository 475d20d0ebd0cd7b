"""``python -m gbm train`` on data streamed in batches: a folder or glob of Parquet/CSV
files, or any DATA with ``--external-memory`` (``gbm.ParquetIter``; pages on disk with
``--external-memory``, binned rows in memory otherwise), with a progress bar over the
batches while they are binned and over the rounds while training."""
import os
import sys


def _bar(desc, quiet):
    """A tqdm bar over rows (None when quiet or without tqdm) and its update function."""
    if quiet:
        return None, None
    try:
        from tqdm import tqdm
    except ImportError:
        return None, None
    bar = tqdm(desc=desc, unit="row", unit_scale=True, file=sys.stderr, dynamic_ncols=True)
    return bar, bar.update


def _matrix(files, args, ref, quiet, desc):
    from ..data.files import ParquetIter
    from ..bins.quantile import ExtMemQuantileDMatrix, QuantileDMatrix

    bar, update = _bar(desc, quiet)
    try:
        it = ParquetIter(files, args.target, weight=args.weight, qid=args.qid,
                         cache_prefix=args.cache_prefix, on_batch=update)
        if args.external_memory:
            return ExtMemQuantileDMatrix(it, ref=ref)
        return QuantileDMatrix(it, ref=ref)
    except RuntimeError as err:  # the reader's error, named by batch: a user error here
        raise ValueError(str(err)) from err
    finally:
        if bar is not None:
            bar.close()


def train_streamed(args, params, progress):
    from .. import train

    dtrain = _matrix(args.data, args, None, args.quiet, "binning (2 passes)")
    if str(params.get("objective", "")).startswith("multi:") and "num_class" not in params:
        params["num_class"] = int(dtrain.label.max()) + 1 if dtrain.label.size else 2
    evals = []
    for i, path in enumerate(args.eval):
        name = os.path.splitext(os.path.basename(path.rstrip("/")))[0] or f"eval{i}"
        evals.append((_matrix(path, args, dtrain, args.quiet, f"binning {name}"), name))
    callbacks = [] if args.quiet else [progress(args.rounds, args.eval_every)]
    booster = train(params, dtrain, num_boost_round=args.rounds, evals=evals,
                    early_stopping_rounds=args.early_stopping_rounds, callbacks=callbacks,
                    verbose_eval=False)
    booster.save_model(args.model, format=args.format)
    for d in [dtrain] + [e[0] for e in evals]:
        if hasattr(d, "close"):
            d.close()
    if not args.quiet:
        best = "" if booster.best_iteration is None else f", best round {booster.best_iteration}"
        print(f"saved {booster.num_boosted_rounds} rounds to {args.model}{best}", file=sys.stderr)
    return 0
