"""``python -m gbm``: the command line (gbm.cli.main)."""
import sys

from .cli.main import main

if __name__ == "__main__":
    sys.exit(main())
