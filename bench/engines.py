"""What ``bench spark`` and ``bench ray`` share: their command line and their table."""
import argparse
import datetime
import os
import platform
import statistics


def arguments(argv, prog, doc, out_name):
    """The parsed command line of an engine benchmark (``out_name``: its results file)."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-check", action="store_true",
                        help="skip the local fit that checks gbm's model file")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), out_name))
    return parser.parse_args(argv)


def write_table(args, title, command, setup, names, times, same):
    """Write (and print) the Markdown table of median fit times: ``names`` = (gbm's,
    the peer's) keys of ``times``; ``same``: whether gbm's model file was the local
    one (None: not checked)."""
    g, x = (statistics.median(times[n]) for n in names)
    lines = [
        f"# {title}", "",
        f"{datetime.date.today()}, {platform.machine()}, {os.cpu_count()} CPUs; "
        f"`python -m bench {command} --rows {args.rows} --rounds {args.rounds} --workers "
        f"{args.workers} --repeats {args.repeats}`: {setup}; depth 6, learning rate 0.1, "
        "max_bin 256; median fit seconds.", "",
        f"| workers | {names[0]} | {names[1]} | gbm speed-up | gbm = local model file |",
        "|---|---|---|---|---|",
        f"| {args.workers} | {g:.2f} | {x:.2f} | {x / g:.2f}x | "
        f"{'not checked' if same is None else 'yes' if same else 'NO'} |", ""]
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
