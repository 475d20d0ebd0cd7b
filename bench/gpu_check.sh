#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU and the package index (no other network):
#   1. install gbm with the dev and gpu extras into .venv-gpu, CUDA 12 throughout
#      (numba-cuda[cu12] and its CUDA 12 toolkit wheels, cupy-cuda12x: see setup.py); about
#      2.5 GB of wheels, 55 s from a fresh venv on a fast link to the index, 4 minutes at most;
#      it fails if a CUDA 13 package got in;
#   2. run the CUDA tests on the GPU: every CUDA kernel against the reference and the CPU,
#      device="cuda" training against the CPU's model files (the same-model check on real
#      hardware), the PTX checks (no FMA in the formulas that feed a model) with the
#      CUDA 12 compiler the GPU runs, and Dask training on the GPU(s) (dask-cuda, NCCL
#      with two GPUs or more; two workers on one GPU over host memory), last;
#   3. run the GPU benchmark (python -m bench gpu: clf-10m and reg-10m, 500 rounds, depth 6,
#      against xgboost device="cuda"), written to bench/GPU_RESULTS.md; it prints each case
#      as soon as it is done, so a cut run still leaves the cases it finished.
# Budget: the whole script ends within BUDGET_S (470 s, under 8 minutes). Each step has a
# share (install 240 s, tests 150 s, benchmark 240 s), cut to what the budget has left after
# keeping time for the steps after it: a slow install leaves the benchmark less time, never
# the script more. Not run in CI.
set -uo pipefail
cd "$(dirname "$0")/.."
BUDGET_S=${GBM_GPU_CHECK_BUDGET_S:-470}
started=$(date +%s)
step() { echo; echo "=== $1 ($(( $(date +%s) - started )) s of $BUDGET_S)"; }
# seconds for a step: its share, at most what is left once `keep` seconds are set aside
share() {
    local want=$1 keep=${2:-0} rest
    rest=$(( BUDGET_S - ($(date +%s) - started) - keep ))
    [ "$rest" -lt "$want" ] && want=$rest
    [ "$want" -lt 1 ] && want=1
    echo "$want"
}

step "GPU"
timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true

step "install .[dev,gpu] into .venv-gpu (CUDA 12)"
pip_install() {
    timeout "$(share "$1" "$2")" .venv-gpu/bin/python -m pip install --quiet \
        --progress-bar off --disable-pip-version-check "${@:3}"
}
timeout 60 python3 -m venv .venv-gpu || { echo "venv failed"; exit 1; }
pip_install 60 330 --upgrade pip || { echo "pip upgrade failed"; exit 1; }
# keep 180 s: the tests' share and the checks around it
pip_install 240 180 -e ".[dev,gpu]" || { echo "install failed or ran out of time"; exit 1; }
cuda13=$(.venv-gpu/bin/python -m pip list --disable-pip-version-check 2>/dev/null \
    | grep -Ei '^(nvidia-nvvm|nvidia-cuda-nvrtc|nvidia-cuda-runtime|nvidia-nvjitlink) |-cu13 |^(cuda-bindings|cuda-toolkit) +13\.' || true)
if [ -n "$cuda13" ]; then
    echo "CUDA 13 packages were installed beside CUDA 12 ones:"; echo "$cuda13"; exit 1
fi
timeout 60 .venv-gpu/bin/python -c "import cupy, numba.cuda as c; print('cupy', cupy.__version__, \
'| CUDA runtime', cupy.cuda.runtime.runtimeGetVersion(), '| numba.cuda available:', c.is_available())"

status=0
step "CUDA tests on the GPU (kernels, same model as the CPU, PTX)"
GBM_TEST_GPU=1 timeout "$(share 150 30)" .venv-gpu/bin/python -m pytest -q -p no:cacheprovider \
    tests/cuda tests/test_cuda_ptx.py tests/test_dask_cuda.py || status=$?

step "GPU benchmark"
timeout "$(share 240 5)" .venv-gpu/bin/python -m bench gpu --repeats 1 \
    || { rc=$?; [ "$status" -eq 0 ] && status=$rc; }

step "done (exit $status)"
exit "$status"
