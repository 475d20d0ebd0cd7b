#!/usr/bin/env bash
# The GPU check, for the lent GPU machine (docs/gpu.md, "On a lent GPU machine"): no network
# there, one GPU (CUDA 13 driver), 16 cores, and a python3 (3.12) that already holds numba,
# numba-cuda, cupy-cuda13x, numpy, scipy, pandas, pyarrow, scikit-learn, pytest... but not
# xgboost, lightgbm, dask, distributed, dask-cuda or tbb. gbm runs from this checkout by
# PYTHONPATH (bench/gpu_site maps gbm.kernels to kernels/, as setup.py does); what the image
# lacks comes from the wheels that `bash bench/gpu_wheels.sh` builds here in .gpu-wheels/.
#
# Two runs of the run tool, the second AT ONCE after the first returns (a warm machine keeps
# the first run's files for only 30 s after it):
#   run 1  command "bash bench/gpu_check.sh stash"  carry [".gpu-wheels/run1"]  timeout_s 120
#          carries xgboost's first part (57 MiB with the tree); checks its SHA-256 and keeps
#          it in /var/tmp/gbm-gpu-carry; prints the GPU and the CUDA packages. About 10 s,
#          plus the machine's start (a minute or two).
#   run 2  command "bash bench/gpu_check.sh"  carry [".gpu-wheels/run2"]  timeout_s 560
#          carries the other part and every other wheel (57 MiB with the tree); the check
#          below, 470 s at most (BUDGET_S). Then give the machine back.
# In all about 11 of the 15 minutes of machine time. If run 1's part is gone (run 2 got a
# fresh machine), run 2 goes on without xgboost: the benchmarks run gbm (and LightGBM) and
# say so.
#
# Run 2's steps, each printed as it goes (and into $OUT/gpu_check.log):
#   1. packages (30 s): xgboost's parts joined, every wheel's SHA-256 checked, pip install
#      --no-index --no-deps into /tmp/gbm-gpu-prefix, every module the check needs imported;
#   2. same model on the GPU (150 s): GBM_TEST_GPU=1 pytest -n 8 tests/cuda (every objective
#      family, categorical, constraints, sampling, lossguide, forests, vector leaves,
#      sparse and bundled bins, external-memory pages with the asynchronous copies, and the
#      reference models at full size against tests/fixtures/models), the PTX checks with the
#      image's NVVM, and dask-cuda; results in $OUT/gpu_tests.xml;
#   3. GPU benchmark (170 s): python -m bench gpu (clf-10m, reg-10m, 500 rounds, depth 6,
#      against xgboost device="cuda"); $OUT/GPU_RESULTS.md and gpu.json;
#   4. CPU benchmark at 16 threads (110 s): python -m bench, one case at a time (clf-1m,
#      reg-1m, multi-73k, evals-20k; gbm, xgboost, LightGBM); $OUT/CPU_RESULTS.md.
# Each step's share is cut to what the budget has left after keeping the later steps'
# shares: a slow step leaves the later ones less time, never the script more.
#
# Rehearsed here, offline and under Numba's CUDA simulator: bench/gpu_rehearse.sh. With
# NUMBA_ENABLE_CUDASIM=1 every step runs at a small size. Not run in CI.
set -uo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-check}
PY=${GBM_GPU_PYTHON:-python3}
BUDGET_S=${GBM_GPU_CHECK_BUDGET_S:-470}
STASH=${GBM_GPU_STASH:-/var/tmp/gbm-gpu-carry}
PREFIX=${GBM_GPU_PREFIX:-/tmp/gbm-gpu-prefix}
CPU_THREADS=${GBM_CPU_THREADS:-16}
OUT=${OUT:-$PWD/.gpu-out}
SMALL=0
[ "${NUMBA_ENABLE_CUDASIM:-0}" = 1 ] && SMALL=1
# each step's share of the budget (seconds): tests, GPU benchmark, CPU benchmark and one of
# its cases; the rehearsal's small steps (and its PTX process) need less
T_TESTS=150 T_GPU=170 T_CPU=110 T_CASE=60 T_PTX=0
[ $SMALL = 1 ] && { T_PTX=60; T_TESTS=90; T_GPU=60; T_CPU=150; T_CASE=75; }
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu_check.log") 2>&1
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
# NVVM and libdevice: numba-cuda finds them in CUDA wheels, else under CUDA_HOME; the
# image has no NVVM wheel, but a CUDA toolkit (nvcc)
if [ -z "${CUDA_HOME:-}${CUDA_PATH:-}" ]; then
    nvcc=$(command -v nvcc || true)
    for home in /usr/local/cuda ${nvcc:+"$(dirname "$(dirname "$(readlink -f "$nvcc")")")"}; do
        [ -d "$home/nvvm/libdevice" ] && { export CUDA_HOME=$home; break; }
    done
fi

step "machine (mode $MODE$([ $SMALL = 1 ] && echo ', simulator: small sizes'))"
timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
echo "python3: $(command -v "$PY") ($("$PY" --version 2>&1));" \
    "CUDA_HOME=${CUDA_HOME:-unset}; $(nproc) CPUs"
cuda_packages='numba|numba-cuda|cupy-cuda[0-9x]+|numpy|cuda-(bindings|core|pathfinder|toolkit)'
cuda_packages+='|nvidia-(cuda-nvrtc|cuda-runtime|nvjitlink|nvvm)[-a-z0-9]*'
timeout 60 "$PY" -m pip list --disable-pip-version-check 2>/dev/null \
    | grep -Ei "^($cuda_packages) " || true

if [ "$MODE" = stash ]; then
    step "xgboost's first part: checked and kept for run 2"
    timeout 60 "$PY" -m bench.gpu_carry stash .gpu-wheels/run1 "$STASH"
    exit $?
fi
[ "$MODE" = check ] || { echo "usage: bash bench/gpu_check.sh [stash]"; exit 2; }

step "packages: the carried wheels, checked and installed (no index)"
rm -rf "$PREFIX" "$PREFIX.wheels"
timeout 90 "$PY" -m bench.gpu_carry join "$PREFIX.wheels" .gpu-wheels/run2 .gpu-wheels/run1 "$STASH"
timeout 120 "$PY" -m pip install --quiet --disable-pip-version-check --no-index --no-deps \
    --ignore-installed --no-compile --no-warn-script-location --prefix "$PREFIX" \
    "$PREFIX".wheels/*.whl || { echo "pip install of the carried wheels failed"; exit 1; }
site=$(find "$PREFIX" -maxdepth 4 -type d \( -name site-packages -o -name dist-packages \) | paste -sd:)
export PYTHONPATH="$site:$PWD:$PWD/bench/gpu_site${PYTHONPATH:+:$PYTHONPATH}"
echo "PYTHONPATH=$PYTHONPATH"
timeout 120 "$PY" -m bench.gpu_imports || { echo "a module the check needs is missing"; exit 1; }
LIBS=gbm,xgboost,lightgbm GPU_LIBS=xgboost,gbm
"$PY" -c "import xgboost" 2>/dev/null || {
    LIBS=gbm,lightgbm GPU_LIBS=gbm; echo "NOTE: no xgboost here (its parts did not all" \
        "arrive): the benchmarks run gbm and LightGBM alone"; }

status=0
note() { [ "$status" -eq 0 ] && status=$1; }
# a command within `seconds` of the budget, saying so when it is cut there
bounded() {
    local seconds=$1 rc; shift
    timeout "$seconds" "$@"; rc=$?
    [ $rc -eq 124 ] && echo "[gpu_check] CUT after its share of $seconds s: $*"
    return $rc
}
step "same model on the GPU: CUDA kernels and device=\"cuda\" training against the CPU, PTX, dask-cuda"
tests=(tests/cuda tests/test_cuda_ptx.py tests/test_cuda_linear_ptx.py tests/test_dask_cuda.py)
gpu_env=(GBM_TEST_GPU=1)
if [ $SMALL = 1 ]; then  # the simulator: a few tests; dask-cuda's skip (no GPU)
    gpu_env=()
    tests=("tests/cuda/test_cuda_training.py::test_same_model_as_the_cpu[categorical]"
           "tests/cuda/test_cuda_page_copy.py::test_a_device_fit_through_the_double_buffer_is_the_cpu_model"
           "tests/cuda/test_cuda_fixtures.py::test_full_size_reference_model_on_the_device[squared]"
           tests/test_dask_cuda.py)
    # the PTX checks need the real CUDA target (NVVM; no GPU): a process without the
    # simulator, the FMA trap and the kernels' products
    bounded "$(share $T_PTX $((T_TESTS + T_GPU + T_CPU)))" env -u NUMBA_ENABLE_CUDASIM \
        "$PY" -m pytest -q -p no:cacheprovider tests/test_cuda_ptx.py -k "trap or no_fused" \
        || note $?
fi
# pytest-xdist (in the image): processes side by side on the one GPU, so that NVVM
# compiles the kernels on several cores
workers=()
"$PY" -c "import xdist" 2>/dev/null && workers=(-n "$([ $SMALL = 1 ] && echo 2 || echo 8)")
bounded "$(share $T_TESTS $((T_GPU + T_CPU)))" env "${gpu_env[@]}" "$PY" -m pytest -v \
    -p no:cacheprovider "${workers[@]}" --junitxml="$OUT/gpu_tests.xml" "${tests[@]}" \
    || note $?

step "GPU benchmark (clf-10m, reg-10m; libraries: $GPU_LIBS)"
gpu_size=()
[ $SMALL = 1 ] && gpu_size=(--rows 2000 --rounds 2 --depth 3 --max-bin 16)
bounded "$(share $T_GPU $T_CPU)" "$PY" -m bench gpu --repeats 1 --libs "$GPU_LIBS" \
    "${gpu_size[@]}" --out "$OUT/GPU_RESULTS.md" --json "$OUT/gpu.json" || note $?

cases=(clf-1m reg-1m multi-73k evals-20k)
cpu_size=(--repeats 2)
# the rehearsal: one thread (OpenMP's spinning threads crawl on a busy 2-core machine)
[ $SMALL = 1 ] && { cases=(clf-1m reg-1m); cpu_size=(--rows 5000 --repeats 1); CPU_THREADS=1; }
step "CPU benchmark at $CPU_THREADS threads (${LIBS}; ${cases[*]})"
: > "$OUT/CPU_RESULTS.md"
for case in "${cases[@]}"; do  # one case at a time: a cut run keeps the cases it finished
    bounded "$(share $T_CASE 5)" "$PY" -m bench --cases "$case" --libs "$LIBS" --n-jobs "$CPU_THREADS" \
        --no-probes "${cpu_size[@]}" --out "$OUT/cpu-$case.md" \
        && cat "$OUT/cpu-$case.md" >> "$OUT/CPU_RESULTS.md" || note $?
    rm -f "$OUT/cpu-$case.md"
done

step "done (exit $status)"
exit "$status"
