"""``python -m bench [options]``: the CPU benchmark (``bench/run.py``);
``python -m bench gpu [options]``: the GPU benchmark (``bench/gpu.py``)."""
import sys

if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv[:1] == ["gpu"]:
        from bench.gpu import main as gpu_main

        sys.exit(gpu_main(argv[1:], prog=f"{sys.executable} -m bench gpu"))
    from bench.run import main

    sys.exit(main(argv, prog=f"{sys.executable} -m bench"))
