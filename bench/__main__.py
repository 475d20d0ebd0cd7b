"""``python -m bench [options]``: the CPU benchmark (``bench/run.py``);
``python -m bench SUBCOMMAND [options]`` for the others:

* ``binning``: the bin-edge accuracy study (``bench/binning.py``);
* ``gpu``: the GPU benchmark (``bench/gpu.py``);
* ``linear``: the linear models against scikit-learn and Snap ML (``bench/linear.py``);
* ``mutation``: the mutation score of the tests (``bench/mutation.py``);
* ``dask``: distributed scaling, collective times and xgboost.dask (``bench/dask.py``);
* ``profile``: where a small fit's time goes (``bench/profile_small.py``);
* ``sparse``: wide sparse data against xgboost and LightGBM (``bench/sparse.py``);
* ``extmem``: data larger than memory, streamed batches (``bench/extmem.py``);
* ``multiclass``: many classes and targets, one tree per output against vector leaves
  (``bench/multiclass.py``);
* ``spark``, ``ray``: fit times against xgboost.spark and Ray Train's XGBoostTrainer on
  the same workers (``bench/spark.py``, ``bench/ray.py``).
"""
import importlib
import sys

SUBCOMMANDS = {"binning": "bench.binning", "gpu": "bench.gpu", "linear": "bench.linear",
               "mutation": "bench.mutation", "dask": "bench.dask",
               "profile": "bench.profile_small", "sparse": "bench.sparse",
               "multiclass": "bench.multiclass"}
SUBCOMMANDS["extmem"] = "bench.extmem"
SUBCOMMANDS.update(spark="bench.spark", ray="bench.ray")

if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv[:1] and argv[0] in SUBCOMMANDS:
        main = importlib.import_module(SUBCOMMANDS[argv[0]]).main
        sys.exit(main(argv[1:], prog=f"{sys.executable} -m bench {argv[0]}"))
    from bench.run import main

    sys.exit(main(argv, prog=f"{sys.executable} -m bench"))
