"""``python -m bench [options]``: see ``bench/run.py``."""
import sys

from bench.run import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prog=f"{sys.executable} -m bench"))
