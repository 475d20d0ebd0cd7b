#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU and the package index (no other network):
#   1. install gbm with the gpu extra (numba-cuda, CuPy for CUDA 12) into .venv-gpu;
#   2. run the CUDA tests on the GPU: every CUDA kernel against the reference and the CPU,
#      device="cuda" training against the CPU's model files (the same-model check on real
#      hardware), and the PTX checks (no FMA in the formulas that feed a model);
#   3. run the GPU benchmark (python -m bench gpu: clf-10m and reg-10m, 500 rounds, depth 6,
#      against xgboost device="cuda"), written to bench/GPU_RESULTS.md.
# Budget: under 8 minutes on one GPU (each step has its own timeout). Not run in CI.
set -uo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
step() { echo; echo "=== $1 ($(( $(date +%s) - started )) s)"; }

step "GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true

step "install .[dev,gpu] into .venv-gpu"
python3 -m venv .venv-gpu
.venv-gpu/bin/python -m pip install --quiet --upgrade pip
timeout 120 .venv-gpu/bin/python -m pip install --quiet -e ".[dev,gpu]" || { echo "install failed"; exit 1; }
.venv-gpu/bin/python -c "import cupy, numba.cuda as c; print('cupy', cupy.__version__, '| numba.cuda available:', c.is_available())"

status=0
step "CUDA tests on the GPU (kernels, same model as the CPU, PTX)"
GBM_TEST_GPU=1 timeout 120 .venv-gpu/bin/python -m pytest -q -p no:cacheprovider \
    tests/cuda tests/test_cuda_ptx.py || status=$?

step "GPU benchmark"
# each case prints its raw results as soon as it is done, in case the budget runs out
timeout 210 .venv-gpu/bin/python -m bench gpu --repeats 1 || { rc=$?; [ "$status" -eq 0 ] && status=$rc; }

step "done (exit $status)"
exit "$status"
