"""``python -m bench [options]``: see ``bench/run.py``;
``python -m bench binning [options]``: the bin-edge accuracy study, see ``bench/binning.py``."""
import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["binning"]:
        from bench.binning import main as binning_main
        sys.exit(binning_main(sys.argv[2:], prog=f"{sys.executable} -m bench binning"))
    from bench.run import main
    sys.exit(main(sys.argv[1:], prog=f"{sys.executable} -m bench"))
