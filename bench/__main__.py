"""``python -m bench [options]``: see ``bench/run.py``; ``python -m bench linear [options]``:
the linear models' benchmark, see ``bench/linear.py``."""
import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["linear"]:
        from bench.linear import main as linear_main
        sys.exit(linear_main(sys.argv[2:], prog=f"{sys.executable} -m bench linear"))
    from bench.run import main
    sys.exit(main(sys.argv[1:], prog=f"{sys.executable} -m bench"))
