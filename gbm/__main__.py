"""``python -m gbm``: the command line (gbm.cli)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
